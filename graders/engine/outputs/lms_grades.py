"""The grade file each LMS's own importer takes, written from a graded LMS download (``rl4llm export``).

**Moodle** ("Upload grading worksheet" of the offline-worksheet feedback plugin,
``mod/assign/feedback/offline/importgradeslib.php`` and ``locallib.php``): the importer finds three columns by
their *translated* headers, ``get_string('recordid', 'assign')``, ``get_string('gradenoun')`` and
``get_string('lastmodifiedgrade', 'assign')``, and imports nothing without any one of them; it reads the
participant id as ``substr(cell, strlen(get_string('hiddenuser', 'assign')))`` (bytes: ``"Participant "`` in
English, ``"Участник"``, no space, in Russian); it parses the modified time with ``strtotime`` and skips a grade
whose current modification in Moodle is more than 60 s later; it skips a grade above the assignment's Maximum
grade (it never rescales: 40 of the kit's points are 40 of Moodle's 100). Its CSV reader drops a UTF-8 BOM and
takes nothing from a file whose rows differ in length. So :func:`export` writes either

- a complete worksheet in the course's language (``MOODLE_SITES``): identifier, full name, grade, maximum grade,
  and "Last modified (grade)" set to the export's time (ISO 8601 with its offset, which ``strtotime`` reads in
  any language): a grade changed in Moodle after the export is kept, any earlier one is replaced; or
- the worksheet the instructor downloaded from Moodle, filled in: every column and row Moodle wrote kept, the
  grade and its modified time set on the rows of the download's students, the grades scaled to the worksheet's
  "Maximum Grade" (the assignment's).

**Canvas** (the gradebook's Import, ``app/models/gradebook_importer.rb``): a header whose first cell holds
``Student`` and second ``ID``, ``SIS User ID`` and ``SIS Login ID`` after them, the student columns ending at
``Section``; students found by ``ID`` (Canvas's user id); an assignment column found by the id in its header,
``Title (id)``, else by its exact title, else created as a new assignment; a first cell holding
``Points Possible`` marks the points row. So the column's name is required (``--assignment``), and a name
without ``(id)`` is said to be matched by title or added.

**Feedback** (``feedback=True``, ``rl4llm export --feedback``; Moodle only): a column headed as the feedback comments
plugin describes its one editor field, ``get_string('pluginname', 'assignfeedback_comments')`` ("Feedback comments";
"Отзыв в виде комментария" in the ru pack), which the importer's ``init()`` maps to that plugin when it is enabled
and visible in the assignment (``get_editor_fields``; a disabled plugin's column is ignored) and whose cell
``process_import_grades`` stores (HTML) whenever it differs from the comment Moodle holds. A cell holds one line per
exercise that scored 0, ``<br>`` between them, in the worksheet's language (:func:`kit_reasons`): **kit-made reasons
only** (a missing file and its "did you mean", an empty file, a syntax error's line, an undecodable file's
encoding, else the status word; "not implemented yet" for the untouched stub), never the feedback text a check
wrote, which may quote what a learner's code printed on a hidden input. A filled worksheet must hold the column
(Moodle writes it only with the plugin enabled); the kit's reasons are added after the comment it holds. Canvas's
gradebook import reads no comments: asking for them there is refused.

Every grade is written against the LMS id of its row of ``grades.csv`` (``lms_id``); see :mod:`.lms`.
"""

from __future__ import annotations

import csv
import io
import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from graders.engine.intake import reader as intake
from graders.engine.outputs.lms import SYSTEMS, LmsError, Note, _is_id, _shown
from graders.text import Text

BOM = "\ufeff"


class MoodleWords(NamedTuple):
    """Moodle's strings for one language: the worksheet's headers and the identifier's prefix."""

    language: str  # the site's language (a Moodle language pack's code)
    identifier: str  # get_string('recordid', 'assign')
    full_name: str  # get_string('fullname')
    grade: str  # get_string('gradenoun') (Moodle < 4.0: get_string('grade'), the same text)
    maximum: str  # get_string('maxgrade', 'assign')
    modified: str  # get_string('lastmodifiedgrade', 'assign')
    participant: str  # get_string('hiddenuser', 'assign'): the identifier is this and the participant id
    decimal: str  # get_string('decsep', 'langconfig'): how Moodle writes a number it formats
    comments: str  # get_string('pluginname', 'assignfeedback_comments'): the feedback comments column


# English: Moodle's lang/en/moodle.php and mod/assign/lang/en/assign.php; Russian: its ru language pack
# (ru/moodle.php, ru/assign.php, ru/langconfig.php, ru/assignfeedback_comments.php). tests/test_lms_importers.py
# and tests/test_lms_feedback.py quote the lines.
MOODLE_SITES = (
    MoodleWords("en", "Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)", "Participant ",
                ".", "Feedback comments"),
    MoodleWords("ru", "Идентификатор", "Полное имя", "Оценка", "Максимальная оценка",
                "Последнее изменение (оценка)", "Участник", ",", "Отзыв в виде комментария"),
)


def moodle_words(language: str) -> MoodleWords:
    """Moodle's strings in ``language`` (English for a language the kit has no Moodle strings of)."""
    return next((words for words in MOODLE_SITES if words.language == language), MOODLE_SITES[0])


CANVAS_STUDENT = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "Points Possible"

TEXTS = {
    "no_assignment": Text("Canvas needs the gradebook column to fill: --assignment \"Module 9 (4321)\" (the "
                          "assignment's name and, in brackets, its id: the number at the end of its address, "
                          ".../assignments/4321); without it Canvas would add a new column",
                          "Canvas нужен столбец журнала, который заполнить: --assignment \"Модуль 9 (4321)\" "
                          "(название задания и в скобках его id — число в конце его адреса, .../assignments/4321); "
                          "без него Canvas добавит новый столбец"),
    "worksheet_canvas": Text("--worksheet is Moodle's grading worksheet; for Canvas name the column with "
                             "--assignment",
                             "--worksheet — это ведомость оценок Moodle; для Canvas укажите столбец через "
                             "--assignment"),
    "not_worksheet": Text("{path} is not a Moodle grading worksheet in English or Russian: its first row lacks "
                          "{missing} (download it in the assignment: View all submissions > Grading action > "
                          "Download grading worksheet)",
                          "{path} — не ведомость оценок Moodle на английском или русском: в первой строке нет "
                          "{missing} (скачайте её в задании: Просмотр всех ответов > Действие оценивания > "
                          "Скачать ведомость с оценками)"),
    "bad_worksheet": Text("{path}: {error}", "{path}: {error}"),
    "no_maximum": Text("{path}: the worksheet has no usable '{column}' (the assignment grades on a scale, or the "
                       "cell is empty): give the assignment a point grade, or pass --out-of its maximum",
                       "{path}: в ведомости нет пригодного столбца «{column}» (задание оценивается по шкале или "
                       "ячейка пуста): задайте заданию оценку в баллах или передайте --out-of с её максимумом"),
    "not_in_worksheet": Text("{name} (Moodle id {id}) has no row in the worksheet (not a participant of the "
                             "assignment, or another group's): not exported",
                             "у {name} (id {id} в Moodle) нет строки в ведомости (не участник задания или из "
                             "другой группы): не экспортировано"),
    "feedback_canvas": Text("Canvas's gradebook import reads no comments, so --feedback is for Moodle only; each "
                            "student's reasons for a zero are in their report.json and the class report",
                            "импорт журнала Canvas не читает комментарии, поэтому --feedback только для Moodle; "
                            "причины нулей каждого студента есть в его report.json и в отчёте по группе"),
    "no_comments_column": Text("{path} has no '{column}' column: Moodle writes it only when the assignment's "
                               "Feedback types include \"Feedback comments\"; tick it (Edit settings > Feedback "
                               "types) and download the worksheet again, or export without --feedback",
                               "в {path} нет столбца «{column}»: Moodle пишет его, только когда в типах отзыва "
                               "задания включён «Отзыв в виде комментария»; включите его (Редактировать настройки "
                               "> Типы отзывов) и скачайте ведомость заново или экспортируйте без --feedback"),
    "bad_out_of": Text("--out-of must be a number above 0, not {value}", "--out-of должно быть числом больше 0, "
                       "а не {value}"),
}


class ExportError(LmsError):
    TABLE = TEXTS


class Graded(NamedTuple):
    """A graded LMS folder: the download's students (id -> name as the LMS gives it) and the rows by id."""

    students: dict[str, str]
    rows: list[dict]  # rows of grades.csv that carry an id of the download
    left_out: list[str]  # rows that carry none (a folder added by hand): not exported


def read_graded(out_dir: Path, system: str) -> Graded:
    """``grades.csv`` and ``_lms.json`` of a folder graded from ``system``'s download, checked: each row carries
    the id it was graded under, no id twice, the folder from this LMS."""
    from graders.engine.outputs.lms import LMS_FILE

    out_dir = Path(out_dir)
    try:
        lms = json.loads(intake.read_file(out_dir / LMS_FILE, 16 << 20).decode("utf-8"))
        rows = list(csv.DictReader(io.StringIO(intake.read_file(out_dir / "grades.csv", 64 << 20)
                                               .decode("utf-8-sig"))))
    except (intake.UnsafeSubmission, OSError, ValueError) as error:
        raise LmsError("no_grades", folder=out_dir, error=error, system=system) from None
    lms = lms if isinstance(lms, dict) else {}
    students = lms.get("students")
    if not isinstance(students, dict) or any(row.get("lms_id") is None for row in rows):
        raise LmsError("no_ids", folder=out_dir)
    if lms.get("system") in SYSTEMS and lms["system"] != system:
        raise LmsError("other_system", folder=out_dir, graded=lms["system"])
    seen: dict[str, str] = {}
    for row in rows:
        number = row["lms_id"]
        if number and number in seen:
            raise LmsError("same_id", folder=out_dir, system=system, id=number, first=seen[number],
                           second=row.get("submission", ""))
        seen[number] = row.get("submission", "")
    kept, left_out = [], []
    for row in rows:
        if _is_id(row["lms_id"]) and isinstance(students.get(row["lms_id"]), str):
            kept.append(row)
        else:
            name = row.get("name") or row.get("submission", "")
            left_out.append(name[1:] if name.startswith("'") else name)  # grades.csv's guard against formulas
    return Graded(students, kept, left_out)


class Export(NamedTuple):
    text: str  # the grade file's CSV (a UTF-8 BOM first: both importers drop it, Excel needs it for Cyrillic)
    count: int  # grades written
    left_out: list[str]  # rows of grades.csv with no id of the download (a folder added by hand): not exported
    ungraded: list[str]  # students of the download with no row in grades.csv (an interrupted run)
    out_of: float  # the maximum the grades are written against
    kit_maximum: float  # the kit's maximum (what the grades were scaled from)
    language: str  # the worksheet's language (Moodle)
    notes: list[Note]  # the download's students a filled worksheet has no row for
    feedback: int = 0  # students whose feedback cell got reasons for a zero (feedback=True)


def points(value: float) -> str:
    """A grade as both importers read it in any language: '.' decimals, at most two places (Moodle's
    unformat_float reads '.' when its decimal separator is ','; Canvas normalises either)."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def moodle_time(now: float) -> str:
    """A time ``strtotime`` reads whatever the site's language and timezone: ISO 8601 with its offset."""
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _scaled(row: dict, out_of: float | None) -> float:
    total, maximum = float(row["total"]), float(row["max_total"])
    return total if out_of is None or maximum <= 0 else total * out_of / maximum


def export(out_dir: Path, system: str, *, assignment: str | None = None, language: str = "en",
           worksheet: Path | None = None, out_of: float | None = None, now: float | None = None,
           feedback: bool = False) -> Export:
    """The grade file of a graded folder for ``system``'s importer: each row of ``grades.csv`` written against
    the LMS id it carries. ``out_of``: the LMS's maximum (grades scaled to it; default the kit's own, or a filled
    worksheet's); ``now``: the Moodle worksheet's modified time (default: the time of the call); ``feedback``:
    Moodle's feedback comments column, each zero's kit-made reason (see the module's docstring)."""
    if out_of is not None and not out_of > 0:
        raise ExportError("bad_out_of", value=out_of)
    if system == "canvas" and worksheet is not None:
        raise ExportError("worksheet_canvas")
    if system == "canvas" and feedback:
        raise ExportError("feedback_canvas")
    if system == "canvas" and not (assignment or "").strip():
        raise ExportError("no_assignment")
    graded = read_graded(out_dir, system)
    kit_maximum = max((float(row["max_total"]) for row in graded.rows), default=0.0)
    ungraded = [f"{name} ({number})" for number, name in sorted(graded.students.items())
                if number not in {row["lms_id"] for row in graded.rows}]
    now = time.time() if now is None else now
    commented = 0
    if worksheet is not None:
        text, language, out_of, notes, commented = _fill_moodle(Path(worksheet), graded, out_of, now,
                                                                Path(out_dir) if feedback else None)
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        maximum = kit_maximum if out_of is None else out_of
        if system == "moodle":
            words = moodle_words(language)
            writer.writerow([words.identifier, words.full_name, words.grade, words.maximum, words.modified]
                            + [words.comments] * feedback)
            for row in graded.rows:
                comment = [feedback_cell(Path(out_dir), row, words.language)] * feedback
                commented += bool(comment and comment[0])
                writer.writerow([words.participant + row["lms_id"], _cell(graded.students[row["lms_id"]]),
                                 points(_scaled(row, out_of)), points(maximum), moodle_time(now), *comment])
        else:
            writer.writerow([*CANVAS_STUDENT, assignment.strip()])
            writer.writerow([POINTS_POSSIBLE, "", "", "", "", points(maximum)])
            for row in graded.rows:
                writer.writerow([_cell(graded.students[row["lms_id"]]), row["lms_id"], "", "", "",
                                 points(_scaled(row, out_of))])
        text, notes, out_of = BOM + buffer.getvalue(), [], maximum
    return Export(text, len(graded.rows), graded.left_out, ungraded, out_of, kit_maximum, language, notes,
                  commented)


def kit_reasons(report: dict, language: str) -> list[str]:
    """The report's zeros, one line each, ``<id>: <why>`` in ``language``: the kit's own reasons only.

    :func:`graders.engine.outputs.reports.zero_reasons` reads an exercise's ``cause`` (made by the kit from the
    submission's files: a missing file, an empty file, a syntax error's line, an encoding), else "not
    implemented yet" for the untouched stub, else its status word; never its ``feedback`` (which may quote what
    the learner's code printed or raised on a hidden input), and here it is not even handed one."""
    from graders.engine.outputs.reports import zero_reasons

    exercises = report.get("exercises") if isinstance(report, dict) else None
    if not isinstance(exercises, list):
        return []
    kept = []
    for entry in exercises:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        kept.append({key: entry[key] for key in ("id", "points", "status", "cause", "not_implemented")
                     if key in entry})
    text = zero_reasons({"exercises": kept}, language)
    return text.splitlines() if text else []


def feedback_cell(out_dir: Path, row: dict, language: str) -> str:
    """The feedback comments cell of a row of ``grades.csv``: its student's ``report.json`` (the folder
    ``grades.csv`` names, which must carry the row's LMS id) read through :func:`kit_reasons`, as HTML
    (Moodle stores the comment as HTML: each line escaped, ``<br>`` between them); empty when there is none."""
    import html

    name = row.get("submission") or ""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return ""
    try:
        report = json.loads(intake.read_file(Path(out_dir) / name / "report.json", 16 << 20).decode("utf-8"))
    except (intake.UnsafeSubmission, OSError, ValueError):
        return ""
    if not isinstance(report, dict) or str(report.get("lms_id", "")) != row.get("lms_id"):
        return ""
    return _cell("<br>".join(html.escape(line, quote=False) for line in kit_reasons(report, language)))


def worksheet_language(header: list[str]) -> str | None:
    """The language whose three headers Moodle's importer needs are all in ``header``."""
    for words in MOODLE_SITES:
        if {words.identifier, words.grade, words.modified} <= set(header):
            return words.language
    return None


def _moodle_number(text: str, words: MoodleWords) -> float | None:
    """A number Moodle formatted (format_float: the language's decimal separator, no thousands separator)."""
    text = text.replace(" ", "").replace("\u00a0", "").replace(words.decimal, ".")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def _fill_moodle(path: Path, graded: Graded, out_of: float | None, now: float, reports: Path | None = None):
    """The worksheet Moodle wrote, with the download's students' grades and modified times set (and, with
    ``reports``, the graded folder, their reasons for a zero added to its feedback comments column)."""
    try:
        raw = intake.read_file(path, 64 << 20).decode("utf-8")
        rows = list(csv.reader(io.StringIO(raw.removeprefix(BOM))))
    except (intake.UnsafeSubmission, OSError, ValueError, csv.Error) as error:
        raise ExportError("bad_worksheet", path=path, error=getattr(error, "strerror", None) or error) from None
    header = rows[0] if rows else []
    language = worksheet_language(header)
    if language is None:
        english = moodle_words("en")
        needed = [f"'{word}'" for word in (english.identifier, english.grade, english.modified) if word not in header]
        raise ExportError("not_worksheet", path=path, missing=", ".join(needed))
    words = moodle_words(language)
    at_id, at_grade, at_modified = (header.index(word) for word in (words.identifier, words.grade, words.modified))
    if reports is not None and words.comments not in header:
        raise ExportError("no_comments_column", path=path, column=words.comments)
    at_comments = header.index(words.comments) if reports is not None else None
    commented = 0
    if out_of is None:
        maxima = {_moodle_number(row[header.index(words.maximum)], words) for row in rows[1:]
                  if words.maximum in header and len(row) == len(header)}
        if len(maxima) != 1 or None in maxima or not next(iter(maxima)) > 0:
            raise ExportError("no_maximum", path=path, column=words.maximum)
        out_of = maxima.pop()
    by_id = {row["lms_id"]: row for row in graded.rows}
    prefix = words.participant.encode()
    filled: set[str] = set()
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        cell = row[at_id].encode()
        number = cell[len(prefix):].decode("utf-8", "replace") if cell.startswith(prefix) else ""
        if number in by_id and number not in filled:
            row[at_grade] = points(_scaled(by_id[number], out_of))
            row[at_modified] = moodle_time(now)
            filled.add(number)
            reasons = feedback_cell(reports, by_id[number], language) if at_comments is not None else ""
            if reasons:
                held = row[at_comments]
                row[at_comments] = held if reasons in held else f"{held}<br>{reasons}" if held.strip() else reasons
                commented += 1
    missing = [("not_in_worksheet", {"name": _shown(graded.students[number]), "id": number})
               for number in by_id if number not in filled]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return (BOM if raw.startswith(BOM) else "") + buffer.getvalue(), language, out_of, missing, commented


def _cell(text: str) -> str:
    """A name as a CSV cell an LMS (or a spreadsheet) reads as text, never as a formula."""
    from graders.engine.outputs.reports import csv_cell

    return csv_cell(text)
