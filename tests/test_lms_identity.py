"""Identity by the LMS's own id (issue 51, point 6; point 9's fuzzing of the LMS name parsers).

A Moodle or Canvas student is their id, carried from the download through ``report.json`` and ``grades.csv``
to the export; a display name is only text. A student who renames themselves to the folder name the kit gives
a classmate, two students of one name, a name that holds the LMS's own naming, or a name of 130 Cyrillic
letters (260 bytes, over a file name's 255) never moves a grade to another id, nor stops the class.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from graders import checks, course
from graders.engine.outputs import lms, lms_grades
from graders.paths import REPO_ROOT, SOLUTIONS_DIR

REFERENCE = (SOLUTIONS_DIR / "module_09" / "module_9_reference.py").read_bytes()
TRAINING = (SOLUTIONS_DIR / "module_09" / "module_9_training.py").read_bytes()
FULL = {"module_9_reference.py": REFERENCE, "module_9_training.py": TRAINING}
BROKEN = {"module_9_reference.py": b"def broken(:\n"}
TOTAL = sum(checks.points(e) for e in course.exercises(["9"]))
# 130 Cyrillic letters: 260 bytes of UTF-8, over the 255 bytes a file name may hold
LONG_NAME = ("Константинопольская" * 7)[:130]
assert len(LONG_NAME) == 130 and len(LONG_NAME.encode()) == 260


def _old_folder(name: str) -> str:
    """The output name the kit gave a name before identity was the id: Latin letters, '-', a digest."""
    latin = name.lower().translate(str.maketrans({"а": "a", "н": "n", "п": "p", "е": "e", "т": "t", "р": "r",
                                                  "о": "o", "в": "v", " ": "_"}))
    return f"{latin}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


# the victim, then a classmate named as the kit named her folder before ids, and one named as it names it now
MOODLE_CLASS = [("Анна Петрова", "1201", FULL), (_old_folder("Анна Петрова"), "1305", BROKEN),
                ("anna_petrova-1201", "1306", BROKEN), ("Ivan Petrov", "1401", FULL), ("Ivan Petrov", "1402", BROKEN)]
CANVAS_CLASS = [("петроваанна", "5101", FULL), (_old_folder("петроваанна"), "5102", BROKEN),
                ("petrovaanna-5101", "5103", BROKEN), ("petrovivan", "5201", FULL), ("petrovivan", "5202", BROKEN)]


def moodle_zip(path: Path, students, folders: bool = True) -> Path:
    """Moodle's "Download all submissions": ``Full Name_<id>_assignsubmission_file_<file>`` (or a folder)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, number, files in students:
            for file, data in files.items():
                prefix = f"{name}_{number}_assignsubmission_file_"
                archive.writestr(f"{prefix}/{file}" if folders else f"{prefix}{file}", data)
    return path


def canvas_zip(path: Path, students) -> Path:
    """Canvas's "Download Submissions": ``<sortable name>_<user id>_<submission id>_<file>``."""
    with zipfile.ZipFile(path, "w") as archive:
        for index, (name, number, files) in enumerate(students):
            for count, (file, data) in enumerate(files.items()):
                archive.writestr(f"{name}_{number}_{90000 + 10 * index + count}_{file}", data)
    return path


def _rl4llm(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graders.cli", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600)


def _exported(out: Path, system: str) -> dict[str, list[str]]:
    exported = _rl4llm("export", str(out), "--lms", system, "--assignment", "Module 9 (4321)", "--lang", "en")
    assert exported.returncode == 0, exported.stderr
    assert "left out" not in exported.stdout and "not graded" not in exported.stdout, exported.stdout
    rows = list(csv.reader(io.StringIO((out / f"{system}_grades.csv").read_text(encoding="utf-8-sig"))))
    if system == "moodle":
        return {row[0].removeprefix("Participant "): row for row in rows[1:]}
    return {row[1]: row for row in rows[2:]}


def _reports_by_id(out: Path) -> dict[str, dict]:
    """Every report.json of the run, by the LMS id it carries (each id once)."""
    found: dict[str, dict] = {}
    for path in sorted(out.glob("*/report.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        assert report["lms_id"] not in found, (report, found)
        found[report["lms_id"]] = report
    return found


# ----------------------------------------------------------------------------------------------- the real route
@pytest.mark.slow
@pytest.mark.parametrize("system", ["moodle", "canvas"])
def test_every_grade_lands_on_its_id_when_a_name_copies_a_classmates_folder(tmp_path, system):
    """Анна Петрова's folder was ``anna_petrova-ed8495ed``; a classmate who renames themselves so once got
    their 0 exported under her id and hers left out. Now every grade is exported under the id it was earned by."""
    students = MOODLE_CLASS if system == "moodle" else CANVAS_CLASS
    download = (moodle_zip if system == "moodle" else canvas_zip)(tmp_path / "download.zip", students)
    out = tmp_path / "grades"
    graded = _rl4llm("grade", str(download), "--out", str(out), "--quiet", "--no-class-report")
    assert graded.returncode == 0, graded.stderr
    assert f"bulk download: {len(students)} student(s)" in graded.stderr
    expected = {number: (name, TOTAL if files is FULL else 0) for name, number, files in students}
    exported = _exported(out, system)  # what the LMS imports, first: the kit before ids left Анна out here
    assert {number: ((cells[1], float(cells[2])) if system == "moodle" else (cells[0], float(cells[5])))
            for number, cells in exported.items()} == expected
    reports = _reports_by_id(out)  # and on the way: each report, each row of grades.csv carries its id
    assert {number: (report["name"], report["score"]) for number, report in reports.items()} == expected
    assert len({report["submission"] for report in reports.values()}) == len(students)
    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    assert {row["lms_id"]: float(row["total"]) for row in rows} == {n: p for n, (_, p) in expected.items()}


@pytest.mark.slow
def test_a_class_with_a_130_letter_name_is_graded_whole(tmp_path):
    """260 bytes of name once stopped the class with a traceback; now every student gets a report, that one
    too, and a file name of 283 bytes is staged cut, with a digest."""
    long_file = "Ж" * 140 + ".py"
    students = [(LONG_NAME, "1501", {**FULL, long_file: b"x = 1\n"}), ("Ivan Petrov", "1502", BROKEN),
                ("José García", "1503", {"module_9_reference.py": REFERENCE})]
    download = moodle_zip(tmp_path / "download.zip", students, folders=False)
    out = tmp_path / "grades"
    graded = _rl4llm("grade", str(download), "--out", str(out), "--quiet")
    assert graded.returncode == 0, graded.stderr
    assert "Traceback" not in graded.stderr
    reports = _reports_by_id(out)
    assert set(reports) == {"1501", "1502", "1503"}
    assert reports["1501"]["name"] == LONG_NAME and reports["1501"]["score"] == TOTAL
    assert all(len(report["submission"].encode()) <= 255 for report in reports.values())
    assert (out / "class_report.html").is_file()
    exported = _exported(out, "moodle")
    assert exported["1501"][1] == LONG_NAME and float(exported["1501"][2]) == TOTAL
    assert float(exported["1502"][2]) == 0


@pytest.mark.slow
def test_a_student_whose_files_cannot_be_written_is_graded_with_that_reason(tmp_path, monkeypatch):
    """An OSError on one student's files is that student's error: their report says why, the class is graded."""
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    real = lms._write_files

    def failing(home, files):
        if home.name == "1602":
            raise OSError(28, "No space left on device")
        return real(home, files)

    monkeypatch.setattr(lms, "_write_files", failing)
    download = moodle_zip(tmp_path / "d.zip", [("Анна Петрова", "1601", FULL), ("Ivan Petrov", "1602", FULL)])
    (tmp_path / "staged").mkdir()
    staged = lms.stage(download, tmp_path / "staged")
    assert [key for key, _ in staged.notes] == ["unwritten"]
    result = grade_paths(staged.paths, tmp_path / "out", GradeOptions(modules=("9",)), jobs=2, progress=False,
                         log=lambda _message: None)
    by_id = {report["lms_id"]: report for report in result.reports}
    assert by_id["1601"]["score"] == TOTAL and by_id["1602"]["score"] == 0
    assert all("No space left on device" in entry["feedback"] for entry in by_id["1602"]["exercises"])
    assert not result.internal_errors


# ------------------------------------------------------------------------------------------ staging, export
def test_a_name_holding_the_lms_naming_puts_no_file_under_another_id(tmp_path):
    """Moodle writes a name's own ``_`` as a space, Canvas keeps it: a name that spells a classmate's id in the
    LMS's naming is read as nobody's (a note names the file), and the classmate keeps their own files."""
    for folders in (True, False):
        moodle = moodle_zip(tmp_path / f"m{folders}.zip", [
            ("Анна Петрова", "1201", FULL), ("Анна Петрова_1201_assignsubmission_file_-", "1305", BROKEN)], folders)
        found = lms.read_download(moodle)
        assert [(s.lms_id, s.files) for s in found.students] == [("1201", FULL)]
        assert [key for key, _ in found.notes] == ["nobody"]
    canvas = canvas_zip(tmp_path / "c.zip", [("петроваанна", "5101", FULL),
                                             ("petrovaanna_5101_1", "5102", {"x.zip": b"PK"})])
    found = lms.read_download(canvas)
    assert [(s.lms_id, s.files) for s in found.students] == [("5101", FULL)]
    assert [key for key, _ in found.notes] == ["nobody"]


def test_staged_students_carry_their_id_and_name_and_fit_the_file_system(tmp_path):
    from graders.engine.intake.submission import display_name, lms_id, submission_name
    from graders.engine.routes.batch import unique_names

    long_file = "Ж" * 140 + ".py"
    download = moodle_zip(tmp_path / "d.zip", [*MOODLE_CLASS, (LONG_NAME, "1501", {**BROKEN, long_file: b""})])
    (tmp_path / "staged").mkdir()
    staged = lms.stage(download, tmp_path / "staged")
    assert not staged.notes
    seen = {lms_id(path): (display_name(path), submission_name(path)) for path in staged.paths}
    assert {number: name for number, (name, _) in seen.items()} == {
        **{number: name for name, number, _ in MOODLE_CLASS}, "1501": LONG_NAME}
    folders = [folder for _, folder in seen.values()]
    assert unique_names(folders) == folders and len(set(folders)) == len(folders)
    assert seen["1201"][1] == "anna_petrova-1201" and seen["1305"][1] == f"{_old_folder('Анна Петрова')}-1305"
    assert all(len(folder.encode()) <= 255 for folder in folders)
    written = [path.name for path in (tmp_path / "staged" / "1501" / "submission").iterdir()]
    assert "module_9_reference.py" in written and all(len(name.encode()) <= 255 for name in written)
    assert any(name.startswith("ЖЖЖ") and name.endswith(".py") for name in written)


def _graded_folder(folder: Path, rows: list[tuple[str, str, str, float]], students: dict, system="moodle") -> Path:
    """A graded LMS folder as `rl4llm grade` leaves it: grades.csv (with lms_id) and _lms.json."""
    folder.mkdir()
    lines = ["submission,name,lms_id,module_9_reference.x,total,max_total"]
    lines += [f"{submission},{name},{number},{points},{points},10" for submission, name, number, points in rows]
    (folder / "grades.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lms.write_ids(folder, system, students)
    return folder


def test_the_export_keys_each_grade_by_the_id_of_its_row(tmp_path):
    students = {"1201": "Анна Петрова", "1305": "anna_petrova-ed8495ed", "1400": "Absent"}
    folder = _graded_folder(tmp_path / "g", [("anna_petrova-ed8495ed-1305", "anna_petrova-ed8495ed", "1305", 0),
                                             ("anna_petrova-1201", "Анна Петрова", "1201", 10),
                                             ("by_hand", "by_hand", "", 5)], students)
    found = lms_grades.export(folder, "moodle", now=0)
    rows = {row[0]: row for row in csv.reader(io.StringIO(found.text.removeprefix(lms_grades.BOM)))}
    assert rows["Participant 1201"][1:] == ["Анна Петрова", "10", "10", "1970-01-01T00:00:00+00:00"]
    assert rows["Participant 1305"][1:] == ["anna_petrova-ed8495ed", "0", "10", "1970-01-01T00:00:00+00:00"]
    assert found.left_out == ["by_hand"] and found.ungraded == ["Absent (1400)"]
    with pytest.raises(lms.LmsError, match="graded from a moodle download") as refused:
        lms_grades.export(folder, "canvas", assignment="Module 9 (4321)")
    assert "выгрузки moodle" in refused.value.in_("ru")


def test_the_export_refuses_one_id_on_two_rows_and_a_folder_without_ids(tmp_path):
    folder = _graded_folder(tmp_path / "twice", [("a-1201", "a", "1201", 0), ("b-1201", "b", "1201", 10)],
                            {"1201": "a"})
    with pytest.raises(lms.LmsError, match=r"two rows of grades.csv carry moodle id 1201 \(a-1201 and b-1201\)"):
        lms_grades.export(folder, "moodle")
    old = tmp_path / "old"
    old.mkdir()
    (old / "grades.csv").write_text("submission,name,total,max_total\nann,Ann,1,1\n", encoding="utf-8")
    (old / "_lms.json").write_text('{"system": "moodle", "ids": {"ann": "1201"}}', encoding="utf-8")
    with pytest.raises(lms.LmsError, match="no lms_id column"):
        lms_grades.export(old, "moodle")


def test_every_lms_message_is_in_both_languages():
    from graders.lms_cli import SAID
    from graders.text import Text

    for table in (lms.TEXTS, lms_grades.TEXTS, SAID):  # a Text refuses an empty language and placeholders that differ
        assert all(isinstance(text, Text) for text in table.values())
    assert lms.LmsError("no_ids", folder="g").in_("ru").startswith("g: в grades.csv нет столбца lms_id")


# ------------------------------------------------------------------------------------------------- fuzzing
NAMES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
IDS = st.from_regex(r"[1-9][0-9]{0,11}", fullmatch=True)
FILES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/"), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_the_name_parsers_never_raise_and_give_only_ids(relative):
    """Any member name: None, nobody's, or a name, an id of ASCII digits and a file name without a folder."""
    for parse in (lms._moodle, lms._canvas):
        member = parse(relative)
        if member is None or member == lms.NOBODY:
            continue
        assert member.name and lms._is_id(member.lms_id) and member.file not in ("", ".", "..")
        assert "/" not in member.file
    lms.detect([relative])


@settings(max_examples=300, deadline=None)
@given(NAMES.filter(lambda name: "/" not in name), IDS, FILES, st.booleans())
def test_a_moodle_member_is_its_own_students_or_nobodys(name, number, file, folders):
    """Whatever the name and the file: never another id; with Moodle's own names (``_`` written as a space) and
    a file without the mark, exactly the student and the file."""
    prefix = f"{name}_{number}_assignsubmission_file_"
    member = lms._moodle(f"{prefix}/{file}" if folders else f"{prefix}{file}")
    assert member is None or member == lms.NOBODY or member.lms_id == number
    moodle_name = name.replace("_", " ")
    prefix = f"{moodle_name}_{number}_assignsubmission_file_"
    relative = f"{prefix}/{file}" if folders else f"{prefix}{file}"
    once = relative.find(lms.MOODLE_MARK, relative.find(lms.MOODLE_MARK) + 1) < 0
    if moodle_name and file not in (".", "..") and once:
        assert lms._moodle(relative) == (moodle_name, number, file)


WORDS = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(WORDS, IDS, IDS, FILES, st.booleans())
def test_a_canvas_member_is_its_own_students_or_nobodys(name, number, submission, file, late):
    """Canvas keeps ``_`` and digits in a name: whatever they spell, never another id; a plain name and file
    are read exactly."""
    member = lms._canvas(f"{name}_{'LATE_' if late else ''}{number}_{submission}_{file}")
    assert member is None or member == lms.NOBODY or member.lms_id == number
    if name.isalpha() and name.lower() != "late" and "_" not in file and "-" not in file and file not in (".", ".."):
        assert member == (name, number, file)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400), st.text(max_size=400), st.one_of(st.none(), IDS, st.text(max_size=60)),
       st.one_of(st.none(), IDS, st.text(max_size=60)))
@example("\x80" * 150 + ".ğd̵̨ļř͟Ṱ", "Ж" * 130, None, "1201")  # an extension of 16 bytes in 9 characters
def test_folder_names_fit_a_file_system_and_ids_keep_them_apart(first, second, first_id, second_id):
    from graders.engine.intake.submission import capped, folder_name
    from graders.engine.outputs.outfolder import NAME

    for name, number in ((first, first_id), (second, second_id)):
        folder = folder_name(name, number)
        assert len(folder.encode()) <= 255 and NAME.fullmatch(folder), folder
        assert len(capped(name, 200).encode("utf-8", "surrogatepass")) <= 200
    if first_id is not None and second_id is not None and first_id != second_id:
        assert folder_name(first, first_id) != folder_name(second, second_id)
    if first_id is None and second_id is None and first != second:
        assert folder_name(first) != folder_name(second)
