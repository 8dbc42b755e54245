"""LMS in and out (issue 33, point 3): Moodle's and Canvas's bulk downloads graded with each student's name,
and the grade file each imports (Moodle's grading worksheet, Canvas's gradebook CSV)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from graders import checks, course
from graders.engine.outputs import lms
from graders.paths import REPO_ROOT, SOLUTIONS_DIR

REFERENCE = (SOLUTIONS_DIR / "module_09" / "module_9_reference.py").read_bytes()
TRAINING = (SOLUTIONS_DIR / "module_09" / "module_9_training.py").read_bytes()


def _moodle_zip(path: Path, folders: bool) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, number, files in (("Иван Петров", "1201", {"module_9_reference.py": REFERENCE,
                                                             "module_9_training.py": TRAINING}),
                                    ("José García", "1202", {"module_9_reference.py": b"def broken(:\n"})):
            for file, data in files.items():
                member = (f"{name}_{number}_assignsubmission_file_/{file}" if folders
                          else f"{name}_{number}_assignsubmission_file_{file}")
                archive.writestr(member, data)
    return path


def _canvas_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("petrovivan_5101_90001_module_9_reference.py", REFERENCE)
        archive.writestr("petrovivan_5101_90002_module_9_training-1.py", TRAINING)  # a resubmission
        archive.writestr("garciajose_late_5102_90003_module_9_reference.py", b"x = 1\n")
    return path


@pytest.mark.parametrize("folders", [False, True], ids=["flat", "in folders"])
def test_a_moodle_download_is_read_student_by_student(tmp_path, folders):
    download = _moodle_zip(tmp_path / "moodle.zip", folders)
    assert lms.looks_like_download(download)
    download = lms.read_download(download)
    assert download.system == "moodle" and not download.notes
    assert {(s.name, s.lms_id): sorted(s.files) for s in download.students} == {
        ("Иван Петров", "1201"): ["module_9_reference.py", "module_9_training.py"],
        ("José García", "1202"): ["module_9_reference.py"]}


def test_a_canvas_download_is_read_with_late_and_resubmitted_files(tmp_path):
    download = lms.read_download(_canvas_zip(tmp_path / "canvas.zip"))
    assert download.system == "canvas" and not download.notes
    assert {(s.name, s.lms_id): sorted(s.files) for s in download.students} == {
        ("petrovivan", "5101"): ["module_9_reference.py", "module_9_training.py"],
        ("garciajose", "5102"): ["module_9_reference.py"]}


def test_a_class_of_plain_folders_is_no_download(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "module_9_reference.py").write_bytes(REFERENCE)
    assert not lms.looks_like_download(tmp_path / "alice")
    with pytest.raises(lms.LmsError, match="not a Moodle or Canvas bulk download"):
        lms.read_download(tmp_path / "alice")


def test_names_are_parsed_in_linear_time():
    """A learner names its uploaded file: only literal string operations run over it."""
    import time

    def cost(n: int) -> float:
        name = "a_" * n + "assignsubmission_" + "_1" * n + ".py"
        started = time.process_time()
        for _ in range(20):
            lms._moodle(name), lms._canvas(name)
        return time.process_time() - started

    assert cost(400_000) / max(cost(100_000), 1e-4) < 8.0


def test_the_near_miss_hint_recognises_an_lms_prefix():
    from graders.engine.intake.submission import _near_misses

    files = {"alice_1234_module_9_reference.py": b"", "notes.py": b""}
    assert _near_misses("module_9_reference", files) == ["alice_1234_module_9_reference.py"]


def _rl4llm(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graders.cli", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("system", ["moodle", "canvas"])
def test_a_download_graded_and_exported_for_its_lms(tmp_path, system):
    download = _moodle_zip(tmp_path / "d.zip", True) if system == "moodle" else _canvas_zip(tmp_path / "d.zip")
    out = tmp_path / "grades"
    graded = _rl4llm("grade", str(download), "--out", str(out), "--quiet", "--no-class-report")
    assert graded.returncode == 0, graded.stderr
    assert "bulk download: 2 student(s)" in graded.stderr and "grading Module 9" in graded.stderr
    exported = _rl4llm("export", str(out), "--lms", system, "--assignment", "Module 9 (4321)", "--lang", "en")
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.reader(io.StringIO((out / f"{system}_grades.csv").read_text(encoding="utf-8-sig"))))
    total = sum(checks.points(e) for e in course.exercises(["9"]))
    if system == "moodle":
        assert rows[0] == ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"]
        by_id = {row[0]: row for row in rows[1:]}
        assert by_id["Participant 1201"][1] == "Иван Петров" and float(by_id["Participant 1201"][2]) == total
        assert by_id["Participant 1202"][1] == "José García" and float(by_id["Participant 1202"][2]) == 0
    else:
        assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Module 9 (4321)"]
        assert rows[1][0] == "Points Possible" and float(rows[1][5]) == total
        by_id = {row[1]: row for row in rows[2:]}
        assert by_id["5101"][0] == "petrovivan" and float(by_id["5101"][5]) == total
        assert float(by_id["5102"][5]) == 0
    assert "wrote" in exported.stdout and "2 grade(s)" in exported.stdout


def test_students_whose_names_meet_get_folders_of_their_own(tmp_path):
    """Two "Ann"s and a third student really called "Ann (2)": three ids, three staged folders, three output
    folders, each carrying its id."""
    from graders.engine.intake.submission import display_name, lms_id, submission_name

    with zipfile.ZipFile(tmp_path / "d.zip", "w") as archive:
        for name, number in (("Ann (2)", "9"), ("Ann", "2"), ("Ann", "3")):
            archive.writestr(f"{name}_{number}_assignsubmission_file_module_9_reference.py", REFERENCE)
    staged = tmp_path / "staged"
    staged.mkdir()
    found = lms.stage(tmp_path / "d.zip", staged)
    assert found.system == "moodle" and len(set(found.paths)) == 3
    assert found.students == {"2": "Ann", "3": "Ann", "9": "Ann (2)"}
    assert sorted((lms_id(path), display_name(path), submission_name(path)) for path in found.paths) == [
        ("2", "Ann", "Ann-2"), ("3", "Ann", "Ann-3"), ("9", "Ann (2)", "Ann_2-9")]


# ------------------------------------------------------------------ downloads read as the LMS writes them
def test_a_canvas_reupload_is_graded_by_canvass_numbering_and_the_rest_named(tmp_path):
    """The old stub sorts first by name; Canvas's `-1`, `-2` (and the file id after the user id) say which is
    newest: that one is graded, and a note names the ones set aside."""
    with zipfile.ZipFile(tmp_path / "c.zip", "w") as archive:
        archive.writestr("petrov_ivan_5101_90001_module_9_reference.py", b"def stub(): pass\n")
        archive.writestr("petrov_ivan_5101_90009_module_9_reference-2.py", REFERENCE)
        archive.writestr("petrov_ivan_5101_90007_module_9_reference-1.py", b"x = 1\n")
        archive.writestr("o_brien_sean_5102_90003_module_9_reference.py", REFERENCE)  # underscores kept by Canvas
    found = lms.read_download(tmp_path / "c.zip")
    assert {(s.name, s.lms_id): s.files for s in found.students} == {
        ("petrov_ivan", "5101"): {"module_9_reference.py": REFERENCE},
        ("o_brien_sean", "5102"): {"module_9_reference.py": REFERENCE}}
    (note,) = found.notes
    said = lms.note_in(note, "en")
    assert note[0] == "resubmitted" and "3 times: graded petrov_ivan_5101_90009_module_9_reference-2.py" in said
    assert "set aside petrov_ivan_5101_90001_module_9_reference.py, petrov_ivan_5101_90007" in said
    assert "отложены" in lms.note_in(note, "ru")


def test_a_student_with_online_text_only_is_listed_as_handing_in_nothing(tmp_path):
    with zipfile.ZipFile(tmp_path / "m.zip", "w") as archive:
        archive.writestr("Иван Петров_1201_assignsubmission_file_module_9_reference.py", REFERENCE)
        archive.writestr("Анна Петрова_1202_assignsubmission_onlinetext_onlinetext.html", b"<p>my answer</p>")
    (tmp_path / "staged").mkdir()
    staged = lms.stage(tmp_path / "m.zip", tmp_path / "staged")
    assert staged.students == {"1201": "Иван Петров", "1202": "Анна Петрова"}
    assert [key for key, _ in staged.notes] == ["online_text"]
    assert "онлайн" in lms.note_in(staged.notes[0], "ru")
    empty = next(path for path in staged.paths if path.parent.name == "1202")
    assert empty.is_dir() and not any(empty.iterdir())


def test_a_zip_beside_other_files_is_opened_through_the_capped_reader(tmp_path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("hw/module_9_training.py", TRAINING)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("module_9_training.py", b"0" * (64 << 20))  # over a submission's caps: refused
    with zipfile.ZipFile(tmp_path / "m.zip", "w") as archive:
        archive.writestr("Иван Петров_1201_assignsubmission_file_module_9_reference.py", REFERENCE)
        archive.writestr("Иван Петров_1201_assignsubmission_file_extra.zip", inner.getvalue())
        archive.writestr("Анна Петрова_1202_assignsubmission_file_module_9_reference.py", REFERENCE)
        archive.writestr("Анна Петрова_1202_assignsubmission_file_big.zip", bomb.getvalue())
    (tmp_path / "staged").mkdir()
    staged = lms.stage(tmp_path / "m.zip", tmp_path / "staged")
    from graders.engine.intake.reader import read_submission

    by_id = {path.parent.name: read_submission(path) for path in staged.paths}
    assert by_id["1201"] == {"module_9_reference.py": REFERENCE, "extra.zip/module_9_training.py": TRAINING}
    assert by_id["1202"] == {"module_9_reference.py": REFERENCE}


@pytest.mark.parametrize("system", ["moodle", "canvas"])
def test_an_unzipped_download_keeps_names_and_ids(tmp_path, system):
    """`rl4llm grade submissions/*`: the entries of the unzipped download are one download, read by id."""
    download = _moodle_zip(tmp_path / "d.zip", True) if system == "moodle" else _canvas_zip(tmp_path / "d.zip")
    with zipfile.ZipFile(download) as archive:
        archive.extractall(tmp_path / "submissions")
    entries = sorted((tmp_path / "submissions").iterdir())
    assert lms.names_a_download(entries) and not lms.names_a_download(entries[:1])
    (tmp_path / "staged").mkdir()
    staged = lms.stage(entries, tmp_path / "staged")
    expected = ({"1201": "Иван Петров", "1202": "José García"} if system == "moodle"
                else {"5101": "petrovivan", "5102": "garciajose"})
    assert staged.system == system and staged.students == expected and len(staged.paths) == 2
