"""A Canvas student who handed in one file several times (re-uploads): the newest is graded, the others set aside,
and the student's own feedback says which, in the learner's language -- not only the instructor's log (issue 52,
point 2). The note travels in the staged ``.lms.json`` (``resubmitted``) and :func:`discover` reads it."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from graders import course
from graders import checks
from graders.engine.intake.submission import STAGED_FILE, discover
from graders.engine.outputs import lms
from graders.engine.values.texts import translated
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

REFERENCE = (SOLUTIONS_DIR / "module_09" / "module_9_reference.py").read_bytes()
STUB = (STARTER_DIR / "module_09" / "module_9_reference.py").read_bytes()
OLD, NEW = "petrov_ivan_5101_90001_module_9_reference.py", "petrov_ivan_5101_90009_module_9_reference-1.py"
NOTE = {"en": f"module_9_reference.py was handed in 2 times: the newest, {NEW}, was graded; set aside: {OLD}",
        "ru": f"файл module_9_reference.py сдан несколько раз (2): проверена последняя версия, {NEW}; "
              f"не проверялись: {OLD}"}


def _download(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(OLD, STUB)  # sorts first by name: the old stub
        archive.writestr(NEW, REFERENCE)  # Canvas's "-1": the re-upload
        archive.writestr("garcia_jose_5102_90003_module_9_reference.py", STUB)
    return path


def _stems() -> dict[str, list[str]]:
    return {"module_9_reference": [e.split(".", 1)[1] for e in course.exercises(["9"])
                                   if e.startswith("module_9_reference.")]}


def test_the_staged_record_carries_the_set_aside_files_to_the_students_notes(tmp_path):
    staged = tmp_path / "staged"
    staged.mkdir()
    found = lms.stage(_download(tmp_path / "c.zip"), staged)
    by_id = {path.parent.name: path for path in found.paths}
    record = json.loads((staged / "5101" / STAGED_FILE).read_text(encoding="ascii"))
    (resubmitted,) = record["resubmitted"]
    assert (resubmitted["graded"], resubmitted["aside"], resubmitted["count"]) == (NEW, OLD, 2)
    assert json.loads((staged / "5102" / STAGED_FILE).read_text(encoding="ascii"))["resubmitted"] == []
    submission = discover(by_id["5101"], _stems())
    assert submission.raw["module_9_reference"] == REFERENCE  # the newest is graded, as before
    (note,) = submission.notes["module_9_reference"]
    assert note == NOTE["en"] and translated(note, "ru") == NOTE["ru"]
    assert not discover(by_id["5102"], _stems()).notes.get("module_9_reference")


def test_a_malformed_record_adds_no_note(tmp_path):
    staged = tmp_path / "staged"
    staged.mkdir()
    found = lms.stage(_download(tmp_path / "c.zip"), staged)
    path = next(path for path in found.paths if path.parent.name == "5101")
    record = json.loads((path.parent / STAGED_FILE).read_text(encoding="ascii"))
    for broken in ("x", ["x"], [{"file": ["a"], "count": 2, "graded": "g", "aside": "a"}], None):
        (path.parent / STAGED_FILE).write_text(json.dumps(dict(record, resubmitted=broken)), encoding="ascii")
        assert not discover(path, _stems()).notes.get("module_9_reference"), broken


@pytest.mark.parametrize("language", ["en", "ru"])
def test_rl4llm_grade_tells_the_student_which_file_was_graded(tmp_path, language):
    out = tmp_path / "out"
    graded = subprocess.run([sys.executable, "-m", "graders.cli", "grade", str(_download(tmp_path / "c.zip")),
                             "--out", str(out), "--quiet", "--no-class-report", "--lang", language],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stderr
    reports = {report["lms_id"]: report for report in
               (json.loads(path.read_text(encoding="utf-8")) for path in out.glob("*/report.json"))}
    total = sum(checks.points(e) for e in course.exercises(["9"]) if e.startswith("module_9_reference."))
    petrov, garcia = reports["5101"], reports["5102"]
    assert sum(e["points"] for e in petrov["exercises"]) == total  # the re-upload, not the old stub
    assert all(e["feedback"].splitlines()[0] == NOTE[language] for e in petrov["exercises"]
               if e["id"].startswith("module_9_reference."))
    assert not any(OLD in e["feedback"] or "90001" in e["feedback"] for e in garcia["exercises"])
    assert sum(e["points"] for e in garcia["exercises"]) == 0
