"""A grade without --module grades the module the class handed in (issue 33, point 4): one module's files only,
that module with a note; a mix, both with one warning naming the commands; in English and Russian."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from graders import checks, course
from graders.engine.intake.class_modules import MAX_NAMES, file_names, infer, modules_in
from graders.paths import REPO_ROOT, SOLUTIONS_DIR


def _student(root, name, files):
    folder = root / name
    folder.mkdir(parents=True)
    for target, source in files.items():
        shutil.copy(SOLUTIONS_DIR / source, folder / target)
    return folder


def test_the_names_say_the_module_lms_prefixes_and_copies_included():
    assert modules_in(["alice_1234_module_9_reference.py", "notes.txt"]) == {"9"}
    assert modules_in(["Module_8_Training (1).py"]) == {"8"} and modules_in(["module09.ipynb"]) == {"9"}
    assert modules_in(["module_8_reference.py", "module_9_training.py"]) == {"8", "9"}
    assert modules_in(["readme.md", "solution.py"]) == set()


def test_a_class_of_one_module_is_graded_as_that_module(tmp_path):
    a = _student(tmp_path, "a", {"module_9_reference.py": "module_09/module_9_reference.py"})
    b = tmp_path / "b.zip"
    with zipfile.ZipFile(b, "w") as archive:
        archive.write(SOLUTIONS_DIR / "module_09" / "module_9_training.py", "work/bob_77_module_9_training.py")
    empty = tmp_path / "c"
    empty.mkdir()  # handed in nothing: says nothing either way
    modules, note = infer([a, b, empty])
    assert modules == ("9",) and "grading Module 9" in note
    assert "проверяется модуль 9" in infer([a, b], "ru")[1]


def test_a_mixed_class_warns_once_with_the_commands(tmp_path):
    a = _student(tmp_path, "a", {"module_9_reference.py": "module_09/module_9_reference.py"})
    b = _student(tmp_path, "b", {"module_8_reference.py": "module_08/module_8_reference.py"})
    modules, warning = infer([a, b])
    assert modules == course.NUMBERS
    assert "--module 8" in warning and "--module 9" in warning and warning.startswith("warning:")
    both = _student(tmp_path, "both", {"module_9_reference.py": "module_09/module_9_reference.py",
                                       "module_8_reference.py": "module_08/module_8_reference.py"})
    assert infer([both, both]) == (course.NUMBERS, None)  # the both-modules assignment: nothing to say


def test_a_huge_folder_is_read_only_so_far(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(MAX_NAMES + 50):
        (folder / f"f{index}.txt").touch()
    assert len(file_names(folder)) == MAX_NAMES
    (tmp_path / "link").symlink_to(SOLUTIONS_DIR)
    assert file_names(tmp_path / "link") == ["link"]  # a link is a name, never followed


@pytest.mark.slow
def test_grade_without_module_shows_a_perfect_module_9_submission_as_full_marks(tmp_path):
    student = _student(tmp_path / "class", "zoe", {"module_9_reference.py": "module_09/module_9_reference.py",
                                                   "module_9_training.py": "module_09/module_9_training.py"})
    done = subprocess.run([sys.executable, "-m", "graders.cli", "grade", str(student), "--out", str(tmp_path / "g"),
                           "--quiet"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "grading Module 9" in done.stderr
    total = sum(checks.points(e) for e in course.exercises(["9"]))
    row = (tmp_path / "g" / "grades.csv").read_text(encoding="utf-8").splitlines()[1].split(",")
    assert row[0] == "zoe" and float(row[-2]) == total == float(row[-1]), row
