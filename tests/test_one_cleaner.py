"""One cleaner for every string a person reads (issue 31, point 4).

Control characters reached the instructor's terminal: passport strings (`rl4llm capstone grade`), a shard
manifest's text (`rl4llm merge`) and an unreadable notebook cell's first line (nbgrader's WARNING) were
printed raw, so an OSC 52 sequence (``ESC ] 52 ; c ; <base64> BEL``) could put a command on the
instructor's clipboard. Now every terminal line of those commands goes through :func:`graders.cleaner.say`,
every log line through :func:`graders.cleaner.log_line`, every report field through ``clean``/``csv_cell``/
the class page's ``_e``; this file

- checks by the syntax tree that the modules that print call nothing else (no ``print``, no
  ``sys.stdout.write``, no logger method called directly);
- sends the SAME hostile strings (:data:`HOSTILE`) through every command that prints -- `rl4llm grade`
  (the submission's name, a file name, an exception's text), `rl4llm capstone check` and `capstone grade`
  (passport strings), `rl4llm merge` (a shard manifest's text), nbgrader's WARNING on an unreadable cell --
  and finds no ESC, BEL, NUL, C1 control, bidirectional control, lone surrogate or over-long line in
  stdout, stderr or the files written, beside a correct submission or run that keeps its full score;
- for each, a control: with the cleaner made the identity, the raw ESC reaches the output;
- times the cleaner on megabyte inputs as a ratio (linear time).
"""

from __future__ import annotations

import ast
import json
import logging
import shutil
import sys
import time
from pathlib import Path

import pytest

import graders.cleaner as cleaner
from graders.cleaner import BIDI_CONTROLS, FIELD_LIMIT, LINE_LIMIT, clean, clean_line, clean_text, say
from graders.paths import REPO_ROOT
from test_capstone_hardening import stubbed, templates  # noqa: F401 - fixtures: a valid run, no model

OSC52 = "\x1b]52;c;" + "cm0gLXJmIH4K" + "\x07"  # base64 of "rm -rf ~": onto the clipboard
CSI_CLEAR = "\x1b[2J\x1b[H"
BIDI = "\u202eexe.txt\u202c \u2066isolate\u2069 \u200f"
HOSTILE = {
    "osc52": f"a{OSC52}b",
    "csi": f"clear{CSI_CLEAR}screen",
    "dcs": "\x1bP1$qm\x1b\\",
    "c1_csi": "c1\x9b2J",
    "bidi": BIDI,
    "bel": "ring\x07",
    "nul": "nul\x00byte",
    "cr": "overwrite\rscore: 100/100",
    "surrogate": "lone\ud800",
}
BIG = "x" * (1 << 20)  # a 1 MB line
ALL = " ".join(HOSTILE.values())
FORBIDDEN = set("\x1b\x07\x00\x9b\r") | set(BIDI_CONTROLS)

# the modules whose output a person reads: they print through graders.cleaner only
PRINTING_MODULES = ["graders/cli.py", "graders/capstone/cli.py", "graders/engine/nbgrader/log.py",
                    "graders/engine/nbgrader/scoring.py", "graders/engine/routes/shards.py", "graders/engine/outputs/reports.py",
                    "graders/engine/routes/gradescope.py", "graders/engine/routes/demo.py", "graders/engine/routes/batch.py",
                    *sorted(p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "graders/classreport").glob("*.py"))]
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}


def bad(text: str, *, line_limit: int | None = LINE_LIMIT) -> list[str]:
    """What no output may hold: ESC, BEL, NUL, C1, CR, bidi controls, lone surrogates, over-long lines."""
    found = sorted({repr(c) for c in text if c in FORBIDDEN or 0x80 <= ord(c) <= 0x9f or 0xD800 <= ord(c) <= 0xDFFF})
    if line_limit is not None:
        found += [f"a line of {len(line)} characters" for line in text.split("\n") if len(line) > line_limit]
    return found


def _files_text(folder: Path) -> dict[str, str]:
    """Every text file written under ``folder`` (PNG figures left out), decoded as it is."""
    return {p.relative_to(folder).as_posix(): p.read_bytes().decode("utf-8", "surrogateescape")
            for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in (".json", ".csv", ".xml", ".html")}


def assert_clean_files(folder: Path) -> None:
    for name, text in _files_text(folder).items():
        assert not bad(text, line_limit=None), (name, bad(text, line_limit=None))
        assert "\\u001b" not in text and "\\u0007" not in text, name  # not even as a JSON escape


def cleaner_off(monkeypatch) -> None:
    """The control: every name bound to the cleaner's functions, in every loaded module of the kit, made the
    identity (what the output would be without the cleaner)."""
    originals = {cleaner.clean: lambda value, limit=None: value,
                 cleaner.clean_text: lambda text, limit=None: text,
                 cleaner.clean_line: lambda text, limit=None: text if isinstance(text, str) else str(text)}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "graders" or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            for original, identity in originals.items():
                if value is original:
                    monkeypatch.setattr(module, attribute, identity)


# ----------------------------------------------------------------------------- the cleaner itself
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_every_hostile_kind_is_made_visible_not_acted_on(kind):
    line = clean_line(HOSTILE[kind])
    assert not bad(line), (kind, line)
    assert clean_line(line) == line  # cleaning twice is cleaning once
    if kind == "osc52":
        assert line == "a\\x1b]52;c;cm0gLXJmIH4K\\x07b"  # visible, as Python writes it
    if kind == "surrogate":
        assert clean_text(HOSTILE[kind]) == "lone\\ud800"  # the behaviour the reports rely on


def test_newlines_and_tabs_stay_and_each_line_is_cut_with_a_visible_marker():
    text = "one\ttab\n" + BIG + "\nlast"
    line = clean_line(text)
    parts = line.split("\n")
    assert parts[0] == "one\ttab" and parts[2] == "last"
    assert len(parts[1]) == LINE_LIMIT and parts[1].endswith(f"...[{len(BIG)} chars]")
    assert clean_line(line) == line
    field = clean_text(BIG, FIELD_LIMIT)
    assert len(field) == FIELD_LIMIT and field.endswith(f"...[{len(BIG)} chars]") and clean_text(field, FIELD_LIMIT) == field
    assert clean_text("a\rb") == clean_line("a\rb") == "a\\x0db"  # nowhere a line written over


def test_plain_text_is_the_same_object_and_the_kits_own_words_pass_unchanged():
    text = "ok: 22/22 баллы 😀 \"quotes\" <tag> & é\n\tindented"
    assert clean_line(text) is text and clean_text(text, FIELD_LIMIT) is text and clean(text) is text


def _seconds(function, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()  # CPU time: a busy machine steals wall time, not this process's CPU
        function(text)
        best = min(best, time.process_time() - started)
    return best


# slow: megabytes cleaned six times each (about 2 s of CPU for the four); what the cleaner keeps and removes stays in
# the fast tier, its growth is not an everyday change
@pytest.mark.slow
@pytest.mark.parametrize("function", [clean_text, clean_line, lambda t: clean_text(t, FIELD_LIMIT),
                                      lambda t: clean({"k": [t]})], ids=["text", "line", "field", "structure"])
def test_the_cleaner_is_linear_on_megabyte_inputs(function):
    """time(4n)/time(n) on 0.5 and 2 MB of hostile text: about 4 for a linear cleaner (16 for a quadratic one);
    the threshold 8 lies a factor 2 from both, so load noise cannot flip the verdict."""
    unit = "\x1b]52;c;\u202e\n" + "a" * 40 + "\x07\r\ud800 "
    small = unit * ((1 << 19) // len(unit))
    ratio = _seconds(function, small * 4) / max(_seconds(function, small), 1e-3)  # 1 ms: above timer noise
    assert ratio < 8.0, ratio


def test_say_writes_cleaned_text_and_never_raises_on_an_ascii_stream():
    import io

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    say(ALL, "é", BIG, file=stream, flush=True)
    written = raw.getvalue().decode("ascii")
    assert not bad(written, line_limit=LINE_LIMIT + 16) and "\\xe9" in written  # an escape is longer


# ----------------------------------------------------------------------------- the choke points, by syntax tree
def _bypasses(path: Path) -> list[str]:
    """Calls in ``path`` that write a person's text without graders.cleaner: print(), sys.stdout/err.write(),
    a logger method called directly, a call of a conditional expression (``(log.info if v else log.debug)(...)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        where = f"{path.name}:{node.lineno}"
        if isinstance(func, ast.Name) and func.id == "print":
            found.append(f"{where} print()")
        elif isinstance(func, ast.Attribute):
            if func.attr in ("write", "writelines") and isinstance(func.value, ast.Attribute) \
                    and func.value.attr in STREAMS:
                found.append(f"{where} {func.value.attr}.{func.attr}()")
            elif func.attr in LOG_METHODS and isinstance(func.value, (ast.Attribute, ast.Name)) \
                    and (getattr(func.value, "attr", None) or getattr(func.value, "id", "")) in ("log", "logger",
                                                                                                 "logging", "_log"):
                found.append(f"{where} {func.attr}() called directly")
        elif isinstance(func, ast.IfExp):
            found.append(f"{where} a conditional expression called")
    return found


def test_the_modules_that_print_go_through_the_cleaner_only():
    problems = [problem for name in PRINTING_MODULES for problem in _bypasses(REPO_ROOT / name)]
    assert not problems, problems


def test_the_syntax_check_finds_each_kind_of_bypass(tmp_path):
    """The meta-test can fail: one of each bypass it looks for, in a module of its own."""
    source = ("import sys, logging\nprint('x')\nsys.stderr.write('x')\nsys.stdout.write('x')\n"
              "self.log.warning('%s', x)\nlogging.info('x')\n(log.info if v else log.debug)('x')\n")
    path = tmp_path / "bypass_probe.py"
    path.write_text(source, encoding="utf-8")
    assert len(_bypasses(path)) == 6



# ----------------------------------------------------------------------------- every command that prints
def _hostile_versions(run_dir: Path) -> None:
    """A passport whose library versions (printed raw by the versions check) are the hostile strings, each
    padded to 4000 characters (a passport string's limit is 4096): one line of some 28,000 characters."""
    passport = json.loads((run_dir / "passport.json").read_text(encoding="utf-8"))
    texts = " ".join(text for kind, text in HOSTILE.items() if kind != "surrogate")
    passport["versions"] = {name: texts + "x" * 3800 for name in passport["versions"]}
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")


def _surrogate_path(run_dir: Path) -> None:
    passport = json.loads((run_dir / "passport.json").read_text(encoding="utf-8"))
    passport["verifier"]["path"] = HOSTILE["surrogate"] + ALL.replace("\ud800", "")
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")


def _capstone(run_dir: Path, out: Path, capsys) -> str:
    from graders.cli import main

    assert main(["capstone", "check", str(run_dir)]) == 0
    assert main(["capstone", "grade", str(run_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    return printed.out + printed.err


@pytest.mark.slow  # the capstone's tooling: the templates fixture imports TRL (about 4 s a worker)
@pytest.mark.parametrize("hostile", [_hostile_versions, _surrogate_path], ids=["versions", "surrogate"])
def test_capstone_check_and_grade_print_and_write_passport_strings_cleaned(templates, stubbed, tmp_path, capsys,
                                                                           hostile):
    valid = shutil.copytree(templates["grpo"], tmp_path / "valid")
    run_dir = shutil.copytree(templates["grpo"], tmp_path / "run")
    hostile(run_dir)
    printed = _capstone(run_dir, tmp_path / "out", capsys)
    assert not bad(printed), bad(printed)
    if hostile is _hostile_versions:  # shown, cleaned and cut
        assert "passport.versions: python a\\x1b]52;c;" in printed and " chars]" in printed
    assert_clean_files(tmp_path / "out")
    assert not bad((run_dir / "capstone_report.json").read_text(encoding="utf-8"), line_limit=None)
    assert "score: 22/22" in _capstone(valid, tmp_path / "out-valid", capsys)  # the valid run beside it


@pytest.mark.slow  # the capstone's tooling: the templates fixture imports TRL (about 4 s a worker)
def test_capstone_control_without_the_cleaner_the_escape_reaches_the_terminal(templates, stubbed, tmp_path, capsys,
                                                                              monkeypatch):
    run_dir = shutil.copytree(templates["grpo"], tmp_path / "run")
    _hostile_versions(run_dir)
    cleaner_off(monkeypatch)
    printed = _capstone(run_dir, tmp_path / "out", capsys)
    assert OSC52 in printed and "\u202e" in printed and any(len(line) > LINE_LIMIT for line in printed.split("\n"))


def _merge_with_hostile_manifest(tmp_path: Path, capsys) -> tuple[str, Path, list[dict]]:
    from test_shards import IDS, NAMES, _edit_manifest, _fake_batch

    from graders.cli import main

    folders, every = _fake_batch(tmp_path, NAMES, 2)
    _edit_manifest(folders[0], internal_errors=[*HOSTILE.values(), BIG])  # a shard's recorded errors: anyone's text
    out = tmp_path / "merged"
    assert main(["merge", str(out), *map(str, folders)]) == 1  # merged; the recorded errors named, exit 1
    refused = tmp_path / f"gone{OSC52}{BIDI}"  # a shard folder's name, echoed in the refusal
    assert main(["merge", str(tmp_path / "again"), str(refused)]) == 2
    printed = capsys.readouterr()
    from graders.engine.outputs import reports

    assert (out / "grades.csv").read_bytes() == reports.grades_csv(every, IDS).encode()  # every score kept
    return printed.out + printed.err, out, every


def test_merge_prints_a_manifests_text_cleaned(tmp_path, capsys):
    printed, out, _ = _merge_with_hostile_manifest(tmp_path, capsys)
    assert "overwrite" in printed and "gone" in printed  # the texts are shown, cleaned
    assert not bad(printed), bad(printed)
    assert_clean_files(out)


@pytest.mark.slow  # the control (a merge with the cleaner off, about 1 s); the guarded merge above stays fast
def test_merge_control_without_the_cleaner_the_escape_reaches_the_terminal(tmp_path, capsys, monkeypatch):
    cleaner_off(monkeypatch)
    printed, _, _ = _merge_with_hostile_manifest(tmp_path, capsys)
    assert OSC52 in printed and "\x00" in printed and "\u202e" in printed


def _nbgrader_log(monkeypatch, student: str) -> str:
    """nbgrader's autograde log (EngineScores, the engine stubbed: nothing graded) for the kit's module 9 notebook
    with one more code cell that Python cannot read, its first line the hostile strings and 1 MB long."""
    import io

    import nbformat

    from graders.engine.nbgrader import scoring as nbgrader_scoring

    notebook = nbformat.read(REPO_ROOT / "assignments/source/module_09/module_9_reference.ipynb", as_version=4)
    first_line = CSI_CLEAR + " ".join(HOSTILE.values()) + BIG  # the WARNING shows its first 40 characters or so
    notebook.cells.append(nbformat.v4.new_code_cell(first_line + "\ndef broken(:\n"))
    monkeypatch.setattr(nbgrader_scoring, "grade_notebook", lambda *args, **kwargs: {})
    stream = io.StringIO()
    logger = logging.getLogger(f"rl4llm-test-nbgrader-{id(stream)}")
    logger.addHandler(logging.StreamHandler(stream))
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    scores = nbgrader_scoring.EngineScores(guard_course=False, language="en")
    scores.log = logger
    resources = {"nbgrader": {"notebook": "module_9_reference", "assignment": "module_09", "student": student}}
    scores.preprocess(notebook, resources)
    return stream.getvalue()


# slow: nbgrader's preprocessor run for real, with nbgrader's first import (about 3 s of CPU for the two); the fast
# tier keeps the rule that every printing module writes through the cleaner
# (test_the_modules_that_print_go_through_the_cleaner_only) and the cleaner's own cases
# (test_every_hostile_kind_is_made_visible_not_acted_on)
@pytest.mark.slow
def test_nbgraders_warning_on_an_unreadable_cell_is_cleaned(monkeypatch):
    log = _nbgrader_log(monkeypatch, student=f"st{OSC52}")
    warning = [line for line in log.split("\n") if "module_9_reference.ipynb cell " in line]
    assert warning and "\\x1b[2J" in warning[0] and "\\x1b]52;c;" in log  # the WARNING, its text visible
    assert not bad(log), bad(log)


@pytest.mark.slow  # the control of the test above (the same nbgrader run)
def test_nbgrader_control_without_the_cleaner_the_escape_reaches_the_log(monkeypatch):
    cleaner_off(monkeypatch)
    log = _nbgrader_log(monkeypatch, student=f"st{OSC52}")
    assert OSC52 in log and "\x1b[2J" in log  # the student id and the cell's first line, raw


RAISE_HOSTILE = """
    raise ValueError({text!r} + "y" * (1 << 20))
"""


def _grade_batch(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A hostile submission (a file named with ESC and a bidi override; an exercise that raises the hostile
    strings and a 1 MB line) beside the kit's reference, module 9."""
    from test_grader_survival import _override

    correct, hostile = tmp_path / "correct", tmp_path / f"hostile{OSC52}{BIDI}"
    for folder in (correct, hostile):
        folder.mkdir()
        for path in (REPO_ROOT / "solutions" / "module_09").glob("*.py"):
            if path.name != "__init__.py":
                shutil.copy(path, folder / path.name)
    text = " ".join(HOSTILE.values())
    (hostile / "module_9_reference.py").write_text(_override(RAISE_HOSTILE.format(text=text)), encoding="utf-8",
                                                   errors="surrogatepass")
    (hostile / f"notes{CSI_CLEAR}\u202e.py").write_text("x = 1\n", encoding="utf-8")
    return correct, hostile, tmp_path / "out"


@pytest.mark.slow
def test_grade_prints_and_writes_a_hostile_submission_cleaned_beside_full_marks(tmp_path, capsys):
    from graders.cli import main

    correct, hostile, out = _grade_batch(tmp_path)
    main(["grade", str(correct), str(hostile), "--out", str(out), "--module", "9", "--feedback", "--quiet",
          "--lang", "en", "--timeout", "10"])
    printed = capsys.readouterr()
    assert not bad(printed.out + printed.err), bad(printed.out + printed.err)
    assert "\\x1b]52;c;" in printed.out  # the exception's text is shown, cleaned
    assert_clean_files(out)
    report = json.loads((out / "correct" / "report.json").read_text(encoding="utf-8"))
    assert report["score"] == report["max_score"] > 0  # the correct submission keeps full marks


def test_grade_control_without_the_cleaner_the_escape_reaches_the_terminal(tmp_path, capsys, monkeypatch):
    """What `rl4llm grade` prints of a report holding the raw strings (as a worker's event would, were it not
    cleaned where it enters): with the cleaner the identity, the ESC reaches stdout and stderr; with it, not."""
    from graders.cli import main
    from graders.engine.routes import batch
    from graders.engine.values.protocol import ExerciseReport, Status, SubmissionReport

    text = " ".join(HOSTILE.values()) + BIG
    raw = SubmissionReport(f"h{OSC52}", (ExerciseReport("m.f", Status.ERROR, 0.0, 1.0, text),)).to_dict()
    result = batch.BatchResult([raw], ["m.f"], tmp_path, ["h"], [f"internal: {text}"], "")
    monkeypatch.setattr(batch, "grade_paths", lambda *args, **kwargs: result)
    arguments = ["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--feedback", "--no-class-report"]
    assert main(arguments) == 1
    printed = capsys.readouterr()
    assert not bad(printed.out + printed.err), bad(printed.out + printed.err)
    cleaner_off(monkeypatch)
    assert main(arguments) == 1
    printed = capsys.readouterr()
    assert OSC52 in printed.out and OSC52 in printed.err and "\x00" in printed.out
