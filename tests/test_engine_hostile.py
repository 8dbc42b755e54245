"""Hostile submissions: each costs only the exercise (or file) it hits, inside one batch
that also grades a correct submission in full."""

from __future__ import annotations

import json
import stat
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from graders.checks import spec_for
from graders.engine.intake import submission as submission_module
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT

pytestmark = pytest.mark.slow  # one batch of hostile submissions: about 20 s

STEM = "module_9_reference"
TARGET = f"{STEM}.group_relative_advantages"  # where the hostile code lands
SIGNATURE = "def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):"
OPTIONS = GradeOptions(modules=("9",), timeout=5.0, memory_mb=512, load_timeout=8.0)
ZIP_MEMBER_CAP = 200_000


def _reference() -> str:
    return DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")


def _override(body: str, *, keep_right: bool = False) -> str:
    right = "_right_answer = group_relative_advantages\n\n" if keep_right else ""
    return _reference() + "\n\n" + right + SIGNATURE + "\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _write(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True)
    target = folder / f"{STEM}.py"
    target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return folder


def _zip(path: Path, members: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info, data)
    return path


SOLUTION = str(DEFAULT_KIT.solution_path(STEM))
HOSTILE = {
    "infinite_loop": _override("while True:\n    pass\n"),
    "memory_blowup": _override("blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))\n"),
    "sys_exit": _override("import sys\nsys.exit(3)\n"),
    "os_exit": _override("import os\nos._exit(7)\n"),
    "segfault": _override("import ctypes\nctypes.string_at(0)\n"),
    "print_flood": _override("for i in range(5_000):\n    print('flood', i, 'x' * 80)\nprint('y' * 20_000_000)\n"
                             "return _right_answer(rewards, scale, eps=eps, ddof=ddof)\n", keep_right=True),
    "numpy_patched": _reference() + "\n\nnp.mean = lambda *args, **kwargs: 42.0\nnp.std = lambda *a, **k: 0.5\n",
    "garbage_return": _override("return object()\n"),
    "string_return": _override("return 'banana'\n"),
    "reads_solutions": _override(f"try:\n    open({SOLUTION!r}).read()\nexcept PermissionError:\n    pass\n"
                                 "return _right_answer(rewards, scale, eps=eps, ddof=ddof)\n", keep_right=True),
    "imports_solutions": _override("try:\n    import solutions.module_09.module_9_reference as ref\n"
                                   "except Exception:\n    pass\n"
                                   "return _right_answer(rewards, scale, eps=eps, ddof=ddof)\n", keep_right=True),
    "imports_checks": _override("import graders.checks.module_9_reference\n"),
    "modifies_input": _override("np.asarray(rewards)[...] = 0.0\nreturn np.zeros(np.shape(rewards))\n"),
    "missing_function": _reference() + "\n\ndel group_relative_advantages\n",
    "load_hang": _reference() + "\n\nwhile True:\n    pass\n",
    "load_os_exit": _reference() + "\n\nimport os\nos._exit(0)\n",
    "syntax_error": _reference() + "\n\ndef broken(:\n    pass\n",
}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    paths = [_write(root / "correct", _reference())]
    for name, text in HOSTILE.items():
        paths.append(_write(root / name, text))
    paths.append(_write(root / "non_utf8", _reference().encode("utf-8") + b"\n# caf\xe9 \xff\n"))
    (root / "empty").mkdir()
    paths.append(root / "empty")
    duplicated = _write(root / "duplicates", _reference())
    nested = duplicated / "old" / "copy"
    nested.mkdir(parents=True)
    (nested / f"{STEM}.py").write_text("raise SystemExit('not this one')\n")
    paths.append(duplicated)
    paths.append(_zip(root / "zipped_correct.zip", [(f"work/{STEM}.py", _reference().encode())]))
    paths.append(_zip(root / "zip_traversal.zip", [(f"{STEM}.py", _reference().encode()),
                                                     ("../../evil.py", b"print('escaped')\n")]))
    link = zipfile.ZipInfo("link.py")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    paths.append(_zip(root / "zip_symlink.zip", [(f"{STEM}.py", _reference().encode()), (link, SOLUTION.encode())]))
    paths.append(_zip(root / "zip_oversized.zip", [(f"{STEM}.py", _reference().encode()),
                                                     ("data.bin", b"\0" * (ZIP_MEMBER_CAP * 3))]))
    monkey = pytest.MonkeyPatch()
    monkey.setattr(submission_module, "MAX_MEMBER_BYTES", ZIP_MEMBER_CAP)
    try:
        result = grade_paths(paths, root / "out", OPTIONS, jobs=2, progress=False)
    finally:
        monkey.undo()
    return {report["submission"]: report for report in result.reports}, result


def _entry(report: dict, exercise_id: str) -> dict:
    return next(e for e in report["exercises"] if e["id"] == exercise_id)


def _checked(report: dict) -> list[dict]:
    """Exercises of the submitted file that the kit has checks for."""
    return [e for e in report["exercises"] if e["id"].startswith(f"{STEM}.") and spec_for(e["id"]) is not None]


def _others_passed(report: dict, hit: str = TARGET, gated: bool = False) -> None:
    """Every other exercise at full marks; with ``gated`` (the hit function is not written at all), those that
    call it earn nothing, by the one rule for dependents (graders.engine.judging.answers.gate), and say why."""
    for entry in _checked(report):
        if entry["id"] == hit:
            continue
        if gated and hit.split(".")[1] in getattr(spec_for(entry["id"]).call, "answers", ()):
            assert entry["points"] == 0 and "depends on" in entry["feedback"], (entry["id"], entry["feedback"])
            continue
        assert entry["status"] == "passed", (entry["id"], entry["feedback"])
        assert entry["points"] == entry["max_points"]


def test_the_correct_submission_is_graded_in_full(batch):
    reports, _ = batch
    for name in ("correct", "zipped_correct", "duplicates"):
        report = reports[name]
        assert _checked(report), "no exercise has checks"
        for entry in _checked(report):
            assert entry["status"] == "passed", (name, entry["id"], entry["feedback"])
            assert entry["points"] == entry["max_points"] > 0
        assert [e["id"] for e in report["exercises"]] == DEFAULT_KIT.exercises(("9",))
        assert all(e["status"] == "missing" for e in report["exercises"] if not e["id"].startswith(STEM))


@pytest.mark.parametrize("name, status, words", [
    ("infinite_loop", "timeout", "did not finish within 5 s"),
    ("memory_blowup", "error", "memory"),
    ("sys_exit", "error", "sys.exit(3)"),
    ("os_exit", "error", "exited with code 7"),
    ("segfault", "error", "SIGSEGV"),
    ("garbage_return", "failed", "got an object of type object"),
    ("string_return", "failed", "got a string"),
    ("reads_solutions", "error", "refuses"),
    ("imports_solutions", "error", "refuses"),
    ("imports_checks", "error", "refuses"),
    ("modifies_input", "failed", "modified its input(s) in place: rewards"),
    ("missing_function", "missing", "has no function group_relative_advantages"),
])
def test_a_hostile_exercise_costs_only_itself(batch, name, status, words):
    reports, _ = batch
    entry = _entry(reports[name], TARGET)
    assert entry["status"] == status, entry["feedback"]
    assert words in entry["feedback"]
    if status != "failed":
        assert entry["points"] == 0
    else:
        assert entry["points"] < entry["max_points"]
    _others_passed(reports[name], gated=status == "missing")  # a missing function is not written: its callers
    # earn nothing for calling it; one written, however hostile, costs only itself


def test_print_flood_is_still_graded(batch):
    reports, _ = batch
    entry = _entry(reports["print_flood"], TARGET)
    assert entry["status"] == "passed", entry["feedback"]
    _others_passed(reports["print_flood"])


def test_monkey_patched_numpy_stays_in_its_worker(batch):
    reports, _ = batch
    for entry in _checked(reports["numpy_patched"]):
        assert entry["status"] in ("passed", "failed", "error")
    assert np.mean(np.array([1.0, 3.0])) == 2.0  # the grader's numpy is untouched
    _others_passed(reports["correct"], hit="")


@pytest.mark.parametrize("name, status, words", [
    ("load_hang", "timeout", f"loading {STEM}.py did not finish"),
    ("load_os_exit", "error", f"loading {STEM}.py ended the grading process"),
    ("zip_traversal", "error", "escapes the folder"),
    ("zip_symlink", "error", "symbolic link"),
    ("zip_oversized", "error", "too large"),
    ("empty", "missing", f"no {STEM}.py in the submission"),
])
def test_a_broken_file_or_submission_costs_its_exercises(batch, name, status, words):
    reports, _ = batch
    for entry in _checked(reports[name]):
        if entry["id"].startswith(STEM):
            assert entry["status"] == status, (entry["id"], entry["feedback"])
            assert words in entry["feedback"], entry["feedback"]
            assert entry["points"] == 0
    assert reports[name]["score"] == 0


@pytest.mark.parametrize("name, words", [
    ("syntax_error", "SyntaxError: invalid syntax; Python cannot compile it, so line(s) "),
    ("non_utf8", "is not UTF-8"),
])
def test_a_syntax_error_or_a_bad_byte_costs_only_the_definition_it_is_in(batch, name, words):
    """A `def broken(:` or a comment that is not UTF-8 after a complete file: that part is left out, said in every
    exercise's feedback, and the rest of the file is graded (graders/engine/intake/source_parts.py)."""
    reports, _ = batch
    for entry in _checked(reports[name]):
        if entry["id"].startswith(STEM):
            assert words in entry["feedback"] and "the rest of the file was graded" in entry["feedback"]
    _others_passed(reports[name], hit="")


def test_duplicates_grade_the_shallowest_copy_and_say_so(batch):
    reports, _ = batch
    entry = _entry(reports["duplicates"], TARGET)
    assert "found 2 copies" in entry["feedback"] and "graded the shallowest" in entry["feedback"]


def test_every_report_file_is_written(batch):
    reports, result = batch
    assert len(result.reports) == len(reports)  # names are unique
    for name in reports:
        folder = result.out_dir / name
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        from graders.engine.routes.shard_files import ENTRY_KEYS, ENTRY_OPTIONAL, REPORT_KEYS, REPORT_OPTIONAL

        assert REPORT_KEYS <= set(report) <= REPORT_KEYS | REPORT_OPTIONAL and "sandbox" in report
        for entry in report["exercises"]:  # the fields the merge's checks know, every one the grader writes
            assert ENTRY_KEYS <= set(entry) <= ENTRY_KEYS | ENTRY_OPTIONAL, set(entry)
            assert entry["status"] in ("passed", "failed", "error", "timeout", "missing")
        assert (folder / "results.json").exists() and (folder / "junit.xml").exists()
    assert not result.internal_errors
