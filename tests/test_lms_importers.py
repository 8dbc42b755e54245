"""The exports against the LMSs' own importers (issue 52, point 1), not against a list the kit keeps.

Each importer's rules are stated below as facts, read from its source and quoted with file and line, and a model
of each (``moodle_import``, ``canvas_import``) is built from those facts alone; the kit's exports are checked
through the models. Moodle's own importer code runs too, under ``php`` (``test_moodles_own_importer_*``), when a
Moodle source tree is named:

    MOODLE_SRC=/path/to/moodle [MOODLE_LANGPACKS=/path/to/langpacks] pytest tests/test_lms_importers.py

``MOODLE_SRC``: a Moodle checkout (git clone https://github.com/moodle/moodle, any 4.x); ``MOODLE_LANGPACKS``: a
folder holding ``ru/*.php`` (a site's ``moodledata/lang``, or https://github.com/projectestac/moodle-langpacks)
for the Russian run. tests/moodle_harness.php includes Moodle's importer and CSV reader from the tree; no Moodle
code is in the kit. Without them those tests are skipped, saying what to set. The English strings must be the
tree's own: the language packs' ``en`` export trims ``'Participant '`` to ``'Participant'``, and a worksheet read
with it gives no rows (the Russian pack is what a Russian site installs, so its ``'Участник'`` is the site's).
Run here on 2026-12-07 with importgradeslib.php as of Moodle 4.x (``get_string('gradenoun')``) and csvlib.class.php
from moodle/moodle, core English strings, the ru pack at projectestac/moodle-langpacks 6340d351: 6 passed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from graders.engine.outputs import lms, lms_grades
from graders.paths import REPO_ROOT

# ------------------------------------------------------------------------------------------ Moodle's facts
# Moodle 4.2.3 (moodle/moodle, MOODLE_402_STABLE; the same lines in 4.1-4.5), English:
MOODLE_EN = {
    "recordid": "Identifier",  # mod/assign/lang/en/assign.php:479 $string['recordid'] = 'Identifier';
    "gradenoun": "Grade",  # lang/en/moodle.php:982 $string['gradenoun'] = 'Grade';
    "lastmodifiedgrade": "Last modified (grade)",  # mod/assign/lang/en/assign.php:334
    "hiddenuser": "Participant ",  # mod/assign/lang/en/assign.php:315 $string['hiddenuser'] = 'Participant ';
    "fullname": "Full name",  # lang/en/moodle.php:954 $string['fullname'] = 'Full name';
    "maxgrade": "Maximum Grade",  # mod/assign/lang/en/assign.php:367 (line 366's 'Maximum grade' is overwritten)
    "decsep": ".",  # lang/en/langconfig.php:30 $string['decsep'] = '.';
}
# Russian: the ru language pack, version '4.5' (projectestac/moodle-langpacks at 6340d351):
MOODLE_RU = {
    "recordid": "Идентификатор",  # ru/assign.php:512 $string['recordid'] = 'Идентификатор';
    "gradenoun": "Оценка",  # ru/moodle.php:1035 $string['gradenoun'] = 'Оценка';
    "lastmodifiedgrade": "Последнее изменение (оценка)",  # ru/assign.php:367
    "hiddenuser": "Участник",  # ru/assign.php:343 $string['hiddenuser'] = 'Участник'; (no space)
    "fullname": "Полное имя",  # ru/moodle.php:1001 $string['fullname'] = 'Полное имя';
    "maxgrade": "Максимальная оценка",  # ru/assign.php:403
    "decsep": ",",  # ru/langconfig.php:96 $string['decsep'] = ',';
}
MOODLE = {"en": MOODLE_EN, "ru": MOODLE_RU}


def strtotime(text: str) -> int | None:
    """PHP's strtotime for the forms these tests write (ISO 8601 with an offset); None (PHP: false) for the
    rest, such as the date Moodle's Russian worksheet writes (userdate: "понедельник, 5 февраля 2024, 10:00")."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return int(moment.timestamp()) if moment.tzinfo else None


def unformat_float(text: str, language: str) -> float | None:
    """lib/moodlelib.php unformat_float (4.2.3, line 8913): trimmed, '' is null, spaces removed, the language's
    decsep read as '.', then PHP's (float) cast (the longest leading number; none is 0)."""
    text = text.strip()
    if text == "":
        return None
    text = text.replace(" ", "").replace(MOODLE[language]["decsep"], ".")
    number = re.match(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text)
    return float(number[0]) if number else 0.0


def moodle_import(text: str, language: str, participants: dict[str, int], current: dict[int, tuple[float, int]],
                  maximum: float) -> dict | None:
    """What Moodle's "Upload grading worksheet" does with ``text``: None when it imports nothing, else
    {user id: (grade, taken, why)}. ``participants``: participant id -> user id (assign_user_mapping);
    ``current``: user id -> (grade, timemodified) of a grade Moodle already holds."""
    words = MOODLE[language]
    # lib/csvlib.class.php load_csv_content (4.2.3, lines 98-109): the BOM dropped, \r\n and \r read as \n,
    # the whole trimmed; lines 163-172: a row whose length differs from the header's stops the load (no rows).
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip()
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    if not rows or any(len(row) != len(rows[0]) for row in rows):
        return None
    header = rows[0]
    # importgradeslib.php init() (4.2.3, lines 104-106, 119-133, 136): the three columns found by their
    # translated headers, compared whole (==); without any one of them, init() is false: nothing imported.
    found = {key: header.index(words[key]) for key in ("recordid", "gradenoun", "lastmodifiedgrade")
             if words[key] in header}
    if len(found) != 3:
        return None
    result = {}
    for row in rows[1:]:
        # next() (line 181): the id is substr(cell, strlen(hiddenuser)): the cell's bytes after as many bytes
        # as the prefix has (PHP's strlen counts bytes); get_user_id_for_uniqueid looks it up.
        number = row[found["recordid"]].encode()[len(words["hiddenuser"].encode()):].decode("utf-8", "replace")
        user = participants.get(number) if number.isascii() and number.isdigit() else None
        if user is None:
            continue
        # locallib.php process_import_grades (4.2.3, lines 153-175): unformat_float, then its skip rules in order
        grade = unformat_float(row[found["gradenoun"]], language)
        modified = strtotime(row[found["lastmodifiedgrade"]])
        held = current.get(user)
        stale = held is not None and held[1] > (modified or 0) + 60
        why = ("grade not modified" if held is not None and held[0] == grade else
               "grade has no value" if grade is None or grade < 0 else
               "grade has been modified in Moodle since" if stale else
               "out of range" if maximum > -1 and grade > maximum else None)
        result[user] = (grade, why is None, why)
    return result


# ------------------------------------------------------------------------------------------ Canvas's facts
# app/models/gradebook_importer.rb (instructure/canvas-lms, 2024-2025):
#  row_has_student_headers?: row.length > 3 && row[0].include?("Student") && row[1].include?("ID");
#  update_column_count: 3 student columns, +2 when row[2] =~ /SIS\s+User\s+ID/ and row[3] =~ /SIS\s+Login\s+ID/;
#  header?: the last student column (row[student_columns - 1]) must include "Section", else InvalidHeaderRow;
#  check_for_non_student_row: a row whose row[0] includes "Points Possible" sets the points, no student;
#  process_student: the student is @all_students[row[1].to_i] (the ID column), by name only when it is absent;
#  parse_assignments: Assignment.title_and_id(header) (app/models/assignment.rb: /\A(.*)\s\((\d+)\)\z/) finds
#  the assignment by id, else by its exact title, else Assignment.new: a new gradebook column.


def canvas_import(text: str, assignments: dict[int, str], students: set[int]) -> dict:
    """What Canvas's gradebook import reads: {"assignment": (id or "new", title), "points": cell,
    "grades": {user id: grade}}; raises ValueError for what Canvas calls an invalid header row."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    header = rows[0]
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise ValueError("Invalid header row")
    columns = 3
    if "SIS User ID" in header[2] and "SIS Login ID" in header[3]:
        columns += 2
    if "Section" not in header[columns - 1]:
        raise ValueError("Invalid header row")
    title = header[columns]
    found = lms_grades_title_and_id(title)
    if found[1] is not None and int(found[1]) in assignments:
        assignment = (int(found[1]), assignments[int(found[1])])
    else:
        by_title = [number for number, name in assignments.items() if name == title]
        assignment = (by_title[0], title) if by_title else ("new", found[0])
    points, grades = None, {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            points = row[columns]
            continue
        user = int(row[1]) if row[1].isdigit() else None
        if user in students:
            grades[user] = row[columns].replace(",", ".")  # its decimal_comma_to_period converter
    return {"assignment": assignment, "points": points, "grades": grades}


def lms_grades_title_and_id(header: str):
    found = re.fullmatch(r"(.*)\s\((\d+)\)", header, flags=re.ASCII)
    return (found[1], found[2]) if found else (header, None)


# ------------------------------------------------------------------------------------------ a graded folder
STUDENTS = {"1201": "Анна Петрова", "1202": "José García", "1203": "O'Brien, Seán", "1204": "=HYPERLINK(1)"}
TOTALS = {"1201": 50, "1202": 40, "1203": 0, "1204": 12.5}  # out of MAXIMUM
MAXIMUM = 50  # the kit's maximum in these folders (not a module's)
USERS = {"1201": 501, "1202": 502, "1203": 503, "1204": 504, "1300": 600}  # 1300: a participant not graded


def graded_folder(folder: Path, system: str = "moodle", students=STUDENTS, totals=TOTALS) -> Path:
    folder.mkdir()
    lines = ["submission,name,lms_id,total,max_total"]
    lines += [f"s-{number},{name.replace(',', ' ')},{number},{totals[number]},{MAXIMUM}" for number, name in students.items()]
    (folder / "grades.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lms.write_ids(folder, system, students)
    return folder


NOW = 1_767_261_600  # 2026-01-01 10:00 UTC


def _points(number: str, out_of: float = MAXIMUM) -> float:
    return round(TOTALS[number] * out_of / MAXIMUM, 2)


# ----------------------------------------------------------------------------------------------- the tests
def test_the_kit_writes_moodles_own_strings():
    assert [words.language for words in lms_grades.MOODLE_SITES] == ["en", "ru"]
    for words in lms_grades.MOODLE_SITES:
        fact = MOODLE[words.language]
        assert (words.identifier, words.grade, words.modified, words.participant, words.full_name, words.maximum,
                words.decimal) == (fact["recordid"], fact["gradenoun"], fact["lastmodifiedgrade"],
                                   fact["hiddenuser"], fact["fullname"], fact["maxgrade"], fact["decsep"])


def test_the_old_worksheet_imported_nothing():
    """The kit's worksheet before: no "Last modified (grade)", so init() is false in English; a Russian Moodle
    matches none of its headers."""
    old = "Identifier,Full name,Grade,Maximum Grade\nParticipant 1201,Анна Петрова,46,46\n"
    assert moodle_import(old, "en", USERS, {}, 100) is None
    assert moodle_import(old, "ru", USERS, {}, 100) is None


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_complete_worksheet_lands_every_grade_on_its_participant(tmp_path, language):
    folder = graded_folder(tmp_path / "g")
    exported = lms_grades.export(folder, "moodle", language=language, now=NOW)
    assert exported.text.startswith("\ufeff") and exported.count == 4 and exported.language == language
    header = next(csv.reader(io.StringIO(exported.text.removeprefix("\ufeff"))))
    words = MOODLE[language]
    assert header == [words["recordid"], words["fullname"], words["gradenoun"], words["maxgrade"],
                      words["lastmodifiedgrade"]]
    # 1202 and 1203 already hold a grade, set an hour before the export: the export's time replaces them
    current = {502: (10.0, NOW - 3600), 503: (5.0, NOW - 3600)}
    landed = moodle_import(exported.text, language, USERS, current, MAXIMUM)
    assert landed == {USERS[n]: (float(TOTALS[n]), True, None) for n in STUDENTS}
    assert 600 not in landed  # a participant the kit did not grade: no row, untouched
    # a grade changed in Moodle after the export is kept (more than Moodle's 60 s later)
    kept = moodle_import(exported.text, language, USERS, {502: (10.0, NOW + 61)}, MAXIMUM)
    assert kept[502] == (40.0, False, "grade has been modified in Moodle since")


def test_the_identifier_prefix_is_counted_in_bytes():
    """'Участник' is 16 bytes: Moodle's Russian worksheet writes 'Участник1201'; with a space the id would be
    ' 1201', and 'Participant 1201' in a Russian Moodle reads as no one."""
    good = "Идентификатор,Оценка,Последнее изменение (оценка)\nУчастник1201,46,2026-01-01T10:00:00+00:00\n"
    assert moodle_import(good, "ru", USERS, {}, 100) == {501: (46.0, True, None)}
    for wrong in ("Участник 1201", "Participant 1201"):
        assert moodle_import(good.replace("Участник1201", wrong), "ru", USERS, {}, 100) == {}


def test_moodle_rescales_nothing_so_the_export_does(tmp_path):
    """Moodle takes a grade as points out of the assignment's maximum and skips one above it: full marks of the
    kit's into an assignment out of 10 are skipped; --out-of 10 writes 10."""
    folder = graded_folder(tmp_path / "g")
    plain = lms_grades.export(folder, "moodle", now=NOW)
    assert moodle_import(plain.text, "en", USERS, {}, 10)[501] == (float(MAXIMUM), False, "out of range")
    scaled = lms_grades.export(folder, "moodle", now=NOW, out_of=10)
    assert (scaled.out_of, scaled.kit_maximum) == (10, MAXIMUM)
    assert moodle_import(scaled.text, "en", USERS, {}, 10) == {USERS[n]: (_points(n, 10), True, None)
                                                               for n in STUDENTS}


def moodles_worksheet(language: str, numbers=("1201", "1202", "1300", "1203", "1204"), maximum="100") -> str:
    """A worksheet as Moodle's "Download grading worksheet" writes it (assign_grading_table as CSV): its
    columns, the identifier prefix, format_float numbers and userdate times in the site's language."""
    if language == "en":
        header = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments"]
        date, decimal = "Thursday, 1 January 2026, 9:00 AM", "."
    else:
        header = ["Идентификатор", "Полное имя", "Адрес электронной почты", "Статус", "Оценка",
                  "Максимальная оценка", "Оценка может быть изменена", "Последнее изменение (ответ)",
                  "Последнее изменение (оценка)", "Отзыв в виде комментария"]
        date, decimal = "четверг, 1 января 2026, 09:00", ","
    rows = [header]
    for number in numbers:
        name = STUDENTS.get(number, "Не проверен")
        rows.append([MOODLE[language]["hiddenuser"] + number, name, f"u{number}@example.org", "Submitted",
                     "", maximum + decimal + "00", "Yes", date, "-", "good, and \"quoted\"\nline two"])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return "\ufeff" + buffer.getvalue()


@pytest.mark.parametrize("language", ["en", "ru"])
def test_moodles_own_worksheet_is_filled_and_every_column_kept(tmp_path, language):
    folder = graded_folder(tmp_path / "g")
    sheet = tmp_path / "worksheet.csv"
    sheet.write_text(moodles_worksheet(language), encoding="utf-8")
    exported = lms_grades.export(folder, "moodle", language="en", worksheet=sheet, now=NOW)
    assert exported.language == language and exported.out_of == 100 and not exported.notes
    before = list(csv.reader(io.StringIO(sheet.read_text(encoding="utf-8").removeprefix("\ufeff"))))
    after = list(csv.reader(io.StringIO(exported.text.removeprefix("\ufeff"))))
    assert exported.text.startswith("\ufeff") and len(after) == len(before) and after[0] == before[0]
    at_grade, at_modified = before[0].index(MOODLE[language]["gradenoun"]), 8
    for old, new in zip(before[1:], after[1:]):
        number = old[0].encode()[len(MOODLE[language]["hiddenuser"].encode()):].decode()
        changed = {at_grade, at_modified} if number in STUDENTS else set()
        assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == sorted(
            i for i in changed if old[i] != new[i])
        if number in STUDENTS:
            assert float(new[at_grade]) == _points(number, 100)
            assert new[at_modified] == "2026-01-01T10:00:00+00:00"
    landed = moodle_import(exported.text, language, USERS, {502: (1.0, NOW - 3600)}, 100)
    assert landed == {**{USERS[n]: (_points(n, 100), True, None) for n in STUDENTS},
                      600: (None, False, "grade has no value")}  # the participant not graded: left as it was
    # Moodle's own Russian date reads as no time (strtotime: false), so a grade Moodle already holds counts as
    # newer and the row is skipped: why the export sets the modified time rather than keep Moodle's
    russian = ("Идентификатор,Оценка,Последнее изменение (оценка)\n"
               "Участник1201,46,\"четверг, 1 января 2026, 10:00\"\n")
    assert moodle_import(russian, "ru", USERS, {501: (1.0, 100)}, 100) == {
        501: (46.0, False, "grade has been modified in Moodle since")}


def test_a_worksheet_that_is_not_moodles_is_refused_and_a_missing_row_named(tmp_path):
    folder = graded_folder(tmp_path / "g")
    sheet = tmp_path / "other.csv"
    sheet.write_text("Name,Score\nAnna,4\n", encoding="utf-8")
    with pytest.raises(lms.LmsError, match="not a Moodle grading worksheet") as refused:
        lms_grades.export(folder, "moodle", worksheet=sheet)
    assert "Last modified (grade)" in str(refused.value) and "не ведомость оценок Moodle" in refused.value.in_("ru")
    sheet.write_text(moodles_worksheet("en", numbers=("1201", "1202", "1203")), encoding="utf-8")
    exported = lms_grades.export(folder, "moodle", worksheet=sheet, now=NOW)
    assert exported.notes == [("not_in_worksheet", {"name": "=HYPERLINK(1)", "id": "1204"})]
    sheet.write_text(moodles_worksheet("en", maximum="").replace(",.00,", ",,"), encoding="utf-8")
    with pytest.raises(lms.LmsError, match="no usable 'Maximum Grade'"):
        lms_grades.export(folder, "moodle", worksheet=sheet)


def test_the_canvas_file_fills_the_named_assignment_and_refuses_without_one(tmp_path):
    folder = graded_folder(tmp_path / "g", "canvas")
    users = {int(number) for number in STUDENTS}
    exported = lms_grades.export(folder, "canvas", assignment="Module 9 (4321)")
    read = canvas_import(exported.text, {4321: "Module 9", 4400: "Quiz"}, users)
    assert read["assignment"] == (4321, "Module 9") and read["points"] == str(MAXIMUM)
    assert read["grades"] == {int(n): lms_grades.points(TOTALS[n]) for n in STUDENTS}
    by_title = lms_grades.export(folder, "canvas", assignment="Module 9", out_of=100)
    read = canvas_import(by_title.text, {4321: "Module 9"}, users)
    assert read["assignment"] == (4321, "Module 9") and read["points"] == "100"
    assert canvas_import(by_title.text, {4321: "Модуль 9"}, users)["assignment"] == ("new", "Module 9")
    for missing in (None, "  "):
        with pytest.raises(lms.LmsError, match="--assignment") as refused:
            lms_grades.export(folder, "canvas", assignment=missing)
        assert "Canvas добавит новый столбец" in refused.value.in_("ru")
    with pytest.raises(lms.LmsError, match="graded from a canvas download"):
        lms_grades.export(folder, "moodle")


def test_export_on_the_command_line(tmp_path, capsys):
    from graders.cli import main

    folder = graded_folder(tmp_path / "g", "canvas")
    assert main(["export", str(folder), "--lms", "canvas", "--lang", "ru"]) == 2
    assert "--assignment" in capsys.readouterr().err
    assert main(["export", str(folder), "--lms", "canvas", "--assignment", "Module 9 (4321)", "--lang", "en"]) == 0
    said = capsys.readouterr().out
    assert "4 grade(s) for Canvas" in said and "assignment of id 4321" in said and f"must be {MAXIMUM}" in said
    assert main(["export", str(folder), "--lms", "canvas", "--assignment", "Module 9", "--lang", "ru",
                 "--to", str(tmp_path / "no" / "such" / "x.csv")]) == 2
    assert "ничего не экспортировано" in capsys.readouterr().err
    moodle = graded_folder(tmp_path / "m")
    assert main(["export", str(moodle), "--lms", "moodle", "--lang", "ru", "--out-of", "100"]) == 0
    said = capsys.readouterr().out
    assert "на русском" in said and f"из {MAXIMUM} баллов набора в 100" in said and "Загрузить ведомость" in said
    written = (moodle / "moodle_grades.csv").read_text(encoding="utf-8")
    assert written.startswith("\ufeffИдентификатор,") and "Участник1201," in written


# ------------------------------------------------------------------------------- Moodle's own code under php
MOODLE_SRC = os.environ.get("MOODLE_SRC")
MOODLE_LANGPACKS = os.environ.get("MOODLE_LANGPACKS")
HARNESS = REPO_ROOT / "tests" / "moodle_harness.php"


def _moodle_runs(language: str) -> None:
    if not MOODLE_SRC:
        pytest.skip("Moodle's own importer runs when MOODLE_SRC names a Moodle source tree "
                    "(git clone https://github.com/moodle/moodle); php-cli is needed too")
    if not shutil.which("php"):
        pytest.skip("php is not installed (Debian: apt-get install php-cli)")
    if not (Path(MOODLE_SRC) / "mod/assign/feedback/offline/importgradeslib.php").is_file():
        pytest.fail(f"MOODLE_SRC={MOODLE_SRC} has no mod/assign/feedback/offline/importgradeslib.php")
    if language == "ru" and not MOODLE_LANGPACKS:
        pytest.skip("the Russian run needs MOODLE_LANGPACKS: a folder holding ru/*.php (moodledata/lang, or "
                    "https://github.com/projectestac/moodle-langpacks)")


def run_moodle(tmp_path: Path, text: str, language: str, current: dict, maximum: float) -> dict:
    (tmp_path / "sheet.csv").write_text(text, encoding="utf-8")
    job = {"src": MOODLE_SRC, "langs": MOODLE_LANGPACKS, "lang": language, "csv": str(tmp_path / "sheet.csv"),
           "maxgrade": maximum, "participants": USERS,
           "current": {str(user): {"grade": grade, "timemodified": at} for user, (grade, at) in current.items()}}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    ran = subprocess.run(["php", str(HARNESS), str(tmp_path / "job.json")], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads(ran.stdout)


def _as_model(result: dict) -> dict | None:
    if not result["init"]:
        return None
    return {int(user): (found["grade"], found["taken"], found["why"]) for user, found in result["outcome"].items()}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_moodles_own_importer_takes_the_complete_worksheet(tmp_path, language):
    _moodle_runs(language)
    folder = graded_folder(tmp_path / "g")
    exported = lms_grades.export(folder, "moodle", language=language, now=NOW, out_of=100)
    current = {502: (10.0, NOW - 3600), 503: (5.0, NOW - 3600)}
    result = run_moodle(tmp_path, exported.text, language, current, 100)
    assert result["init"] is True, result
    assert _as_model(result) == {USERS[n]: (_points(n, 100), True, None) for n in STUDENTS}, result
    assert _as_model(result) == moodle_import(exported.text, language, USERS, current, 100)  # the facts hold
    print(f"Moodle {result['moodle']} ({language}): {len(result['rows'])} rows, every grade on its participant")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_moodles_own_importer_takes_its_worksheet_filled(tmp_path, language):
    _moodle_runs(language)
    folder = graded_folder(tmp_path / "g")
    sheet = tmp_path / "downloaded.csv"
    sheet.write_text(moodles_worksheet(language), encoding="utf-8")
    exported = lms_grades.export(folder, "moodle", worksheet=sheet, now=NOW)
    current = {501: (3.0, NOW - 7200), 502: (80.0, NOW - 7200)}  # 502 already holds 40/50 as 80: "not modified"
    result = run_moodle(tmp_path, exported.text, language, current, 100)
    expected = {USERS[n]: (_points(n, 100), True, None) for n in STUDENTS}
    expected[502] = (80.0, False, "grade not modified")
    expected[600] = (None, False, "grade has no value")  # the participant the kit did not grade: untouched
    assert _as_model(result) == expected, result
    assert _as_model(result) == moodle_import(exported.text, language, USERS, current, 100)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_moodles_own_importer_refused_the_old_worksheet(tmp_path, language):
    """The control: the harness does reject what Moodle rejects."""
    _moodle_runs(language)
    old = "Identifier,Full name,Grade,Maximum Grade\nParticipant 1201,Анна Петрова,46,46\n"
    result = run_moodle(tmp_path, old, language, {}, 100)
    assert result["init"] is False and result["rows"] == []
    english = lms_grades.export(graded_folder(tmp_path / "g"), "moodle", language="en", now=NOW).text
    if language == "ru":  # an English worksheet in a Russian Moodle: no column found
        assert run_moodle(tmp_path, english, "ru", {}, 100)["init"] is False
