"""A grader that survives any learner input, and outputs safe for the tools that open them (issue 19).

Every learner is an adversary. Each hostile input below once stopped the grader, broke a file it
writes, or reached a spreadsheet or a browser as something other than text:

- learner text with a lone surrogate (``raise ValueError("\\ud800")``, a file name that is not
  UTF-8) made ``report.json`` unwritable and stopped the batch (no ``grades.csv``); NUL, ESC and
  ``\\x01`` made ``junit.xml`` ill-formed (:mod:`graders.engine.values.learner_text` cleans them where they
  enter, and every report writer again);
- a 200,000-term expression, a notebook of 200,000 nested JSON arrays, a cell too deep for
  ``ast.unparse``: RecursionError inside the grader, an "internal grader error" and a non-zero exit
  (now the submission's own error, or the cell left out);
- a name, id or feedback beginning with ``=``, ``+``, ``-``, ``@``: a formula in ``grades.csv`` or
  the class CSVs (now neutralised with a leading ``'``);
- ``[a_dup, a_dup, a_dup-2]`` numbered into two folders called ``a_dup-2``;
- an nbgrader student id ``$\\x{$`` stopped matplotlib's mathtext (no class report), ``..`` or a NUL
  broke its report folder.

Fast tests work on the parts; the one batch (slow: about 25 s) grades the hostile submissions
beside correct ones, which keep full marks.
"""

from __future__ import annotations

import csv
import io
import json
import os
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graders.checks import spec_for
from graders.classreport import MISCONCEPTIONS_FILE, REPORT_FILE, SUMMARY_FILE, build_class_report
from graders.engine.routes import batch as batch_module
from graders.engine.outputs import reports
from graders.engine.routes.batch import RESERVED_NAMES, grade_paths, unique_names
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.values.learner_text import clean, clean_text, file_name
from graders.engine.values.protocol import ExerciseReport, Status, SubmissionReport
from graders.engine.intake.submission import discover, learner_source, notebook_definitions
from graders.engine.values.protocol import Submission

STEM = "module_9_reference"
TARGET = f"{STEM}.group_relative_advantages"
SIGNATURE = "def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):"
OPTIONS = GradeOptions(modules=("9",), timeout=5.0, memory_mb=512, load_timeout=8.0)
# one of every kind of character that broke a file: NUL, ESC, \x01, DEL, C1, a lone surrogate, U+FFFE, U+FFFF
ODD = "nul\x00 esc\x1b[2J one\x01 del\x7f csi\x9b lone\ud800 fffe\ufffe ffff\uffff"
# and what must pass through XML and JSON as the characters they are
PLAIN = "]]> \"quotes\" 'single' <tag> & &amp; tab\t é ё 😀"
FORMULAS = ["=HYPERLINK(\"http://evil\",\"x\")", "@SUM(1)", "+1", "-1", "\tx", "\rx"]
DEEP_SUM = "x = " + "+".join(["1"] * 200_000) + "\n"  # RecursionError in compile() and ast.parse()
UNPARSE_DEEP = "def _helper():\n    return " + "+".join(["1"] * 2000) + "\n"  # parses; ast.unparse recurses


def _reference() -> str:
    return DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")


def _override(body: str) -> str:
    return _reference() + "\n\n" + SIGNATURE + "\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _unsafe(text: str) -> list[str]:
    """The characters of ``text`` that no report may hold."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\t\n\r") or 0x7f <= ord(c) <= 0x9f
            or 0xD800 <= ord(c) <= 0xDFFF or c in "\ufffe\uffff"]


def _hostile_report(name: str = "hostile") -> dict:
    feedback = f"{ODD}\n{PLAIN}\n" + "\n".join(FORMULAS)
    exercises = (ExerciseReport("m.f", Status.FAILED, 0.5, 2.0, feedback, (f"=cmd{ODD}",)),
                 ExerciseReport("m.g", Status.ERROR, 0.0, 1.0, FORMULAS[0]),
                 ExerciseReport("m.h", Status.PASSED, 1.0, 1.0, ""))
    return SubmissionReport(name, exercises).to_dict()


def _notebook(*cells: str | list) -> bytes:
    return json.dumps({"cells": [{"cell_type": "code", "source": cell} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode("utf-8")


def _csv_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


# ---------------------------------------------------------------------------- cleaning learner text
def test_clean_escapes_every_unsafe_character_visibly_and_keeps_the_rest():
    """Each unsafe character becomes its visible escape; ordinary text (tabs, newlines, any script,
    emoji) is the same object; cleaning twice is cleaning once."""
    cleaned = clean_text(ODD)
    assert not _unsafe(cleaned)
    for escape in ("\\x00", "\\x1b", "\\x01", "\\x7f", "\\x9b", "\\ud800", "\\ufffe", "\\uffff"):
        assert escape in cleaned
    assert clean_text(PLAIN) is PLAIN
    assert clean_text(cleaned) == cleaned
    cleaned.encode("utf-8")  # no surrogate left


def test_clean_walks_json_like_structures_without_recursion_and_never_changes_its_input():
    """Dict keys and values, list items and tuples are cleaned; numbers and None stay; a structure as deep
    as json.loads accepts (the worker's events) is cleaned without a RecursionError; the input is a copy."""
    value = {"k\x01": ["\ud800", ("\x00", 1), {"n": 1.5, "z": None}]}
    assert clean(value) == {"k\\x01": ["\\ud800", ("\\x00", 1), {"n": 1.5, "z": None}]}
    assert value == {"k\x01": ["\ud800", ("\x00", 1), {"n": 1.5, "z": None}]}
    deep = json.loads("[" * 950 + '"\\u0001"' + "]" * 950)
    inner = clean(deep)
    for _ in range(950):
        inner = inner[0]
    assert inner == "\\x01"


@pytest.mark.parametrize("student", ["$\\x{$", "<script>alert(1)</script>", "../x", "..", ".", "a\x00b",
                                     "lone\ud800", "-rf", "x" * 400, ""])
def test_file_name_is_one_safe_path_component_and_keeps_ids_apart(student):
    """A student id as a folder name: no separator, never hidden, "." or "..", never an option, no NUL,
    encodable, at most 200 characters; a changed name carries a digest of the id (ids stay apart)."""
    name = file_name(student)
    assert name and "/" not in name and "\x00" not in name and not name.startswith((".", "-"))
    assert len(name) <= 200 and not _unsafe(name)
    name.encode("utf-8")
    assert file_name(student) == name  # deterministic
    assert file_name(student + "!") != name
    for plain in ("alice", "иванов", "alice@uni.edu", "a_b-2"):
        assert file_name(plain) == plain


# ---------------------------------------------------------------------------- report files
def test_every_report_file_is_written_and_well_formed_for_any_feedback(tmp_path):
    """junit.xml parses (ElementTree) and results.json / report.json parse as JSON, for a report holding
    every character class that once broke them; the ordinary characters come back as they were."""
    folder = reports.write_submission_reports(tmp_path, "hostile", _hostile_report())
    root = ET.parse(folder / "junit.xml").getroot()
    failure = root.find("testsuite/testcase/failure")
    assert PLAIN in failure.text and "\\x00" in failure.text and "\\ud800" in failure.text
    for name, text in (("report.json", lambda data: data["exercises"][0]["feedback"]),
                       ("results.json", lambda data: data["tests"][0]["output"])):
        parsed = json.loads((folder / name).read_bytes().decode("utf-8"))  # strict: no surrogate written
        assert PLAIN in text(parsed) and "\\ud800" in text(parsed)
        assert not _unsafe(json.dumps(parsed, ensure_ascii=False))
    ET.fromstring(reports.junit_xml(_hostile_report("name\x00<&>\ud800")))
    assert not _unsafe(reports.scoreboard([_hostile_report("esc\x1b[2J")], feedback=True, language="en"))


def test_an_ordinary_report_is_written_byte_for_byte_as_before(tmp_path):
    """Cleaning changes nothing for ordinary text: report.json is exactly json.dumps of the report."""
    report = SubmissionReport("alice", (ExerciseReport("m.f", Status.FAILED, 0.5, 2.0, PLAIN),)).to_dict()
    folder = reports.write_submission_reports(tmp_path, "alice", report)
    expected = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert (folder / "report.json").read_text(encoding="utf-8") == expected


# ---------------------------------------------------------------------------- CSV injection
def test_grades_csv_neutralises_formulas_and_keeps_numbers():
    """Names and ids that begin like a formula get a leading quote (OWASP); the points stay numbers."""
    text = reports.grades_csv([_hostile_report(name) for name in FORMULAS] + [_hostile_report("alice")],
                              ["m.f", "m.g", "=bad.id"])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["submission", "name", "m.f", "m.g", "'=bad.id", "total", "max_total"]
    names = {row[0] for row in rows[1:]}
    # a carriage return is written visibly: csv.writer would leave it unquoted, and a reader split the row
    assert names == {"'" + name for name in FORMULAS[:5]} | {"\\rx", "alice"}
    for row in rows[1:]:
        assert row[1] == row[0] and row[2:] == ["0.5", "0", "0", "1.5", "4"]
    assert reports.csv_cell(-0.5) == -0.5 and reports.csv_cell(3) == 3


# ---------------------------------------------------------------------------- unique names
def test_renumbered_names_never_take_another_submissions_name():
    """[a_dup, a_dup, a_dup-2]: three folders, and a_dup-2 keeps its own name; earlier numbering kept."""
    assert unique_names(["a_dup", "a_dup", "a_dup-2"]) == ["a_dup", "a_dup-3", "a_dup-2"]
    assert unique_names(["x", "x", "grades.csv", "x"]) == ["x", "x-2", "grades.csv-submission", "x-3"]
    assert unique_names(["class_report.html", "a"]) == ["class_report.html-submission", "a"]
    long = unique_names(["y" * 300, "y" * 300])
    assert len(set(long)) == 2 and all(len(name) <= 200 for name in long)


NAMES = st.lists(st.one_of(st.sampled_from(["a", "a-2", "a-3", "a-2-2", "grades.csv", "GRADES.CSV",
                                            "grades.csv-submission", "class_report.html", "z" * 199]),
                           st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,8}", fullmatch=True)), max_size=30)


# slow: 300 drawn folder lists (about 2.6 s of CPU); the fast tier keeps the rule's fixed rows (the test above:
# duplicates, reserved names, 300-character names) and tests/test_sandbox.py's case-folded reserved names
@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(NAMES)
def test_unique_names_are_unique_deterministic_and_never_reserved(names):
    """Whatever the folder names: one distinct name each, the same on every call (every shard agrees),
    never a reserved output file, a unique name kept as it is, at most 200 characters."""
    out = unique_names(names)
    assert len(out) == len(names) and len(set(out)) == len(out)
    assert out == unique_names(list(names))
    assert not any(name.lower() in RESERVED_NAMES for name in out)
    assert all(len(name) <= 200 for name in out)
    for name, given_name in zip(out, names):
        if names.count(given_name) == 1 and given_name.lower() not in RESERVED_NAMES and len(given_name) <= 200:
            assert name == given_name


# ---------------------------------------------------------------------------- parsing learner input
def test_a_file_too_deep_to_compile_is_the_learners_error():
    """A 200,000-term sum: RecursionError in compile() becomes this file's problem, in words."""
    submission = Submission("s", Path("."), raw={STEM: DEEP_SUM.encode()}, where={STEM: f"{STEM}.py"})
    source, problem = learner_source(submission, STEM)
    assert source is None and "too deeply nested or too long to be compiled (RecursionError)" in problem


def test_the_russian_feedback_says_it_too():
    """The new particular is translated like the others (texts.DETAILS, both languages)."""
    from graders.engine.intake.submission import _compiled
    from graders.engine.values.texts import translated

    text = _compiled("x = " + "+".join(["1"] * 200_000) + "\n", f"{STEM}.py", STEM)[1]  # as the intake says it
    assert text == f"{STEM}.py is too deeply nested or too long to be compiled (RecursionError); shorten its " \
                   "longest expression or its deepest nesting and resubmit"
    russian = translated(text, "ru")
    assert russian.startswith(f"в файле {STEM}.py слишком глубокая вложенность")
    assert "(RecursionError)" in russian


def test_a_notebook_too_deep_for_json_is_unreadable_and_discovery_goes_on(tmp_path):
    """200,000 nested JSON arrays: a ValueError (an unreadable notebook), never a RecursionError; the
    submission is still discovered."""
    with pytest.raises(ValueError, match="RecursionError"):
        notebook_definitions(b"[" * 200_000 + b"]" * 200_000)
    (tmp_path / f"{STEM}.ipynb").write_bytes(b"[" * 200_000 + b"]" * 200_000)
    found = discover(tmp_path, {STEM: ["group_relative_advantages"]})
    assert STEM not in found.sources and found.problem is None


def test_a_notebook_cell_the_parser_cannot_take_is_left_out_and_the_rest_is_graded():
    """Cells too deep for the parser or ast.unparse, a lone surrogate, a NUL, a source list of numbers:
    each such cell is left out; the cell with the learner's functions is kept."""
    source = notebook_definitions(_notebook(DEEP_SUM, UNPARSE_DEEP, "y = '\ud800'\n", "z = 1\x00\n", [1, 2],
                                            _reference()))
    assert "def group_relative_advantages" in source and "_helper" not in source
    compile(source, "nb", "exec")


def test_learner_file_names_reach_the_feedback_cleaned(tmp_path):
    """A copy in a folder named with ESC and one not UTF-8 (a lone surrogate from os.walk): the notes that
    name them are cleaned, so the report can be written."""
    (tmp_path / f"{STEM}.py").write_text(_reference(), encoding="utf-8")
    for folder in (b"esc\x1b[2J", b"caf\xff"):
        os.makedirs(os.path.join(os.fsencode(tmp_path), folder))
        Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), folder, f"{STEM}.py".encode()))).write_text("x = 1\n")
    found = discover(tmp_path, {STEM: ["group_relative_advantages"]})
    note = " ".join(found.notes[STEM])
    assert "found 3 copies" in note and "\\x1b" in note and "\\udcff" in note and not _unsafe(note)


def test_in_process_grading_cleans_what_the_learner_raised():
    """graders.engine.routes.inline: the message, the type name, the output of learner code are cleaned where
    they come back, so the entry encodes and its XML is well-formed."""
    from graders.engine.routes.inline import grade_exercise

    def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
        print("printed \x1b[31m\x00")
        raise ValueError("lone \ud800 nul \x00")

    entry = grade_exercise(TARGET, group_relative_advantages, namespace={})
    assert entry["status"] == "error" and "\\ud800" in entry["feedback"]
    assert not _unsafe(json.dumps(entry, ensure_ascii=False))
    odd_type = type("Odd\x01\x1b", (), {})()
    entry = grade_exercise(TARGET, odd_type, namespace={})
    assert entry["status"] == "missing" and "Odd\\x01\\x1b" in entry["feedback"]


# slow: nbgrader's import and a notebook's grading (about 1.8 s); the cleaner's own tests (test_one_cleaner.py)
# stay fast
@pytest.mark.slow
def test_nbgrader_grades_a_notebook_with_a_lone_surrogate(monkeypatch):
    """nbformat writes a cell's lone surrogate as it is: the notebook handed to the engine is still written
    (the surrogate back as its JSON escape), and the stubs are still read."""
    from graders.engine.nbgrader import scoring as nbgrader_scoring
    from graders.engine.routes.batch import BatchResult

    seen = {}

    def fake_grade_paths(paths, out_dir, options, **_):
        data = (paths[0] / f"{STEM}.ipynb").read_bytes()
        seen["definitions"] = notebook_definitions(data)
        report = SubmissionReport("submission", (ExerciseReport(TARGET, Status.PASSED, 1.0, 1.0, ""),)).to_dict()
        return BatchResult([report], [TARGET], out_dir, ["submission"], [], "")

    monkeypatch.setattr(batch_module, "grade_paths", fake_grade_paths)
    text = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": "y = '\ud800'\n"},
                                 {"cell_type": "code", "metadata": {}, "source": _reference()}]},
                      ensure_ascii=False)
    entries = nbgrader_scoring.grade_notebook(text, STEM, hide_hidden_inputs=False)
    assert entries[TARGET]["status"] == "passed"
    assert "def group_relative_advantages" in seen["definitions"]


# ---------------------------------------------------------------------------- the class report
HOSTILE_IDS = ["$\\x{$", "<script>alert(1)</script>", "../x", "a\x00b", "lone\ud800", *FORMULAS[:4]]


# slow: nbgrader's kept reports and a class report (about 2 s); test_class_report_action.py's hostile name stays fast
@pytest.mark.slow
def test_the_class_report_survives_hostile_student_ids(tmp_path):
    """nbgrader's kept reports for hostile student ids: every folder inside the assignment's, the class
    report written (no mathtext error), its page escapes the ids, its CSVs hold no formula."""
    from graders.engine.nbgrader.scoring import keep_report

    report_dir = tmp_path / "engine_reports"
    exercise = DEFAULT_KIT.exercises(("9",))[0]
    for index, student in enumerate(HOSTILE_IDS + ["alice"]):
        # errors are listed by submission on the page: the ids reach the HTML
        entry = {"id": exercise, "status": "passed" if student == "alice" else "error",
                 "points": float(student == "alice"), "max_points": 1.0, "feedback": ODD,
                 "misconceptions": [f"=cmd{index}"] if index % 3 == 0 else []}
        path = keep_report(report_dir, "module_09", student, {exercise: entry})
        assert path.parent.parent == report_dir / "module_09" and path.is_file()
    assert (report_dir / "module_09" / "alice" / "report.json").is_file()
    written = build_class_report(report_dir / "module_09", "en")
    page = written["report"].read_bytes().decode("utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not _unsafe(page)
    for name in (SUMMARY_FILE, MISCONCEPTIONS_FILE):
        for cell in _csv_cells((report_dir / "module_09" / name).read_text(encoding="utf-8")):
            assert not _formula(cell), cell
    assert written["heatmap"].stat().st_size > 0 and (report_dir / "module_09" / REPORT_FILE).exists()


def _formula(cell: str) -> bool:
    """A CSV cell a spreadsheet would run: begins like a formula and is not a number (-0.25 is one)."""
    try:
        float(cell)
    except ValueError:
        return cell.startswith(reports.FORMULA_STARTS)
    return False


def test_the_class_report_of_a_batch_folder_with_hostile_names(tmp_path):
    """Reports written by the batch's own writer, names beginning like formulas or holding mathtext:
    the class report is built and its CSV cells are neutralised."""
    for index, name in enumerate(["$\\x{$", "=1+1", "-2", "@x", "plain"]):
        report = _hostile_report(name)
        report["exercises"][0]["misconceptions"] = ["@SUM(1)"] if index % 2 else []
        reports.write_submission_reports(tmp_path, f"s{index}", report)
    build_class_report(tmp_path, "en")
    cells = _csv_cells((tmp_path / MISCONCEPTIONS_FILE).read_text(encoding="utf-8"))
    assert "'@SUM(1)" in cells and not any(_formula(cell) for cell in cells)


# ---------------------------------------------------------------------------- one batch
def _write(folder: Path, text: str | bytes, name: str = f"{STEM}.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One batch: correct submissions beside each hostile one; the writer refuses one submission's reports."""
    root = tmp_path_factory.mktemp("survival")
    paths = {
        "correct": _write(root / "correct", _reference()),
        "surrogate_error": _write(root / "surrogate_error", _override(f"raise ValueError({ODD!r})\n")),
        "deep_expression": _write(root / "deep_expression", _reference() + "\n\n" + DEEP_SUM),
        "deep_notebook": _write(root / "deep_notebook", b"[" * 200_000 + b"]" * 200_000, f"{STEM}.ipynb"),
        "odd_cells": _write(root / "odd_cells", _notebook(DEEP_SUM, UNPARSE_DEEP, "y = '\ud800'\n", [1, 2],
                                                           _reference()), f"{STEM}.ipynb"),
        "-1": _write(root / "-1", _reference()),
        "unwritable": _write(root / "unwritable", _reference()),
        "dup_a": _write(root / "one" / "a_dup", _reference()),
        "dup_b": _write(root / "two" / "a_dup", _reference()),
        "dup_c": _write(root / "a_dup-2", _reference()),
        "odd_file_names": _write(root / "odd_file_names", _reference()),
    }
    base = os.fsencode(paths["odd_file_names"])
    for folder in (b"esc\x1b[2J", b"caf\xff"):
        os.makedirs(os.path.join(base, folder))
        with open(os.path.join(base, folder, f"{STEM}.py".encode()), "w", encoding="utf-8") as handle:
            handle.write("x = 1\n")
    write = reports.write_submission_reports
    refused = []

    def writer(out_dir, name, report):
        if name == "unwritable" and "internal grader error" not in json.dumps(report):
            refused.append(name)
            raise RuntimeError("a writer bug")
        return write(out_dir, name, report)

    logged: list[str] = []
    monkey = pytest.MonkeyPatch()
    monkey.setattr(reports, "write_submission_reports", writer)
    try:
        result = grade_paths(list(paths.values()), root / "out", OPTIONS, jobs=2, progress=False,
                             log=logged.append)
    finally:
        monkey.undo()
    names = dict(zip(paths, result.names))
    return {key: result.reports[index] for index, key in enumerate(paths)}, names, result, logged, refused


def _checked(report: dict) -> list[dict]:
    return [e for e in report["exercises"] if e["id"].startswith(f"{STEM}.") and spec_for(e["id"]) is not None]


def _full_marks(report: dict) -> None:
    assert _checked(report)
    for entry in _checked(report):
        assert entry["status"] == "passed", (report["submission"], entry["id"], entry["feedback"])
        assert entry["points"] == entry["max_points"] > 0


@pytest.mark.slow
def test_the_batch_finishes_and_the_correct_submissions_keep_full_marks(graded):
    """Whatever the hostile ones did, the batch ends, grades.csv is written, and every correct submission
    (the notebook whose other cells the parser cannot take, too) is graded in full."""
    reports_by_key, names, result, _, _ = graded
    for key in ("correct", "-1", "dup_a", "dup_b", "dup_c", "odd_file_names", "odd_cells"):
        _full_marks(reports_by_key[key])
    assert (result.out_dir / "grades.csv").is_file()


@pytest.mark.slow
def test_a_lone_surrogate_in_a_learner_exception_costs_only_its_exercise(graded):
    """raise ValueError("...\\ud800...\\x00..."): that exercise is an error whose feedback shows the escapes;
    its report files are written and well-formed; the others of the file pass."""
    reports_by_key, names, result, _, _ = graded
    report = reports_by_key["surrogate_error"]
    entry = next(e for e in report["exercises"] if e["id"] == TARGET)
    assert entry["status"] == "error" and "\\ud800" in entry["feedback"] and "\\x00" in entry["feedback"]
    for other in _checked(report):
        if other["id"] != TARGET:
            assert other["status"] == "passed", other["feedback"]
    folder = result.out_dir / names["surrogate_error"]
    ET.parse(folder / "junit.xml")
    json.loads((folder / "results.json").read_bytes().decode("utf-8"))
    json.loads((folder / "report.json").read_bytes().decode("utf-8"))


@pytest.mark.slow
def test_input_too_deep_to_parse_is_the_submissions_own_error(graded):
    """The 200,000-term expression is its own part's error, in words: the part left out (as a cell Jupyter cannot
    run; graders/engine/intake/source_parts.py) and the reference's functions above it graded; the notebook of
    nested arrays is an unreadable notebook (its exercises missing); neither is an internal error."""
    reports_by_key, _, result, _, _ = graded
    for entry in _checked(reports_by_key["deep_expression"]):
        assert entry["status"] == "passed" and "too deeply nested or too long to compile" in entry["feedback"], entry
    assert all(e["status"] == "missing" for e in _checked(reports_by_key["deep_notebook"]))
    assert not [e for e in result.internal_errors if not e.startswith("unwritable")], result.internal_errors


@pytest.mark.slow
def test_odd_file_names_reach_the_feedback_cleaned(graded):
    """Copies in folders named with ESC and with a byte that is not UTF-8: graded the shallowest, and the
    note naming the others is cleaned."""
    reports_by_key, _, _, _, _ = graded
    entry = _checked(reports_by_key["odd_file_names"])[0]
    assert "found 3 copies" in entry["feedback"] and "\\x1b" in entry["feedback"] and "\\udcff" in entry["feedback"]


@pytest.mark.slow
def test_names_stay_unique_and_grades_csv_holds_no_formula(graded):
    """[a_dup, a_dup, a_dup-2]: three report folders; a submission named -1 is '-1 in grades.csv."""
    reports_by_key, names, result, _, _ = graded
    assert len(set(result.names)) == len(result.names)
    assert names["dup_c"] == "a_dup-2" and names["dup_b"] == "a_dup-3"
    rows = list(csv.reader((result.out_dir / "grades.csv").open(encoding="utf-8")))
    assert "'-1" in [row[0] for row in rows] and "-1" not in [row[0] for row in rows]
    assert (result.out_dir / "-1" / "report.json").is_file()


@pytest.mark.slow
def test_a_report_that_cannot_be_written_is_that_submissions_internal_error(graded):
    """The writer raising (not an OSError) for one submission: logged with its traceback, that submission
    an internal error (its folder and grades.csv row say so), every other report and grades.csv written."""
    reports_by_key, names, result, logged, refused = graded
    assert refused == ["unwritable"]
    assert [e for e in result.internal_errors] == ["unwritable: the reports could not be written "
                                                   "(RuntimeError: a writer bug)"]
    assert any("unwritable" in line and "Traceback" in line for line in logged)
    written = json.loads((result.out_dir / "unwritable" / "report.json").read_text(encoding="utf-8"))
    assert written == reports_by_key["unwritable"] and written["score"] == 0
    assert all("internal grader error" in e["feedback"] for e in written["exercises"])
    rows = {row[0]: row for row in csv.reader((result.out_dir / "grades.csv").open(encoding="utf-8"))}
    assert rows["unwritable"][-2] == "0" and rows["correct"][-2] != "0"
    for name in result.names:
        assert (result.out_dir / name / "report.json").is_file()
