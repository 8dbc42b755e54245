"""Every zero has a reason in the LMS's feedback column (issue 52, point 4): ``rl4llm export --feedback``.

Moodle's rules for a feedback column, stated as facts (Moodle 4.1: moodleulpgc/moodle41ulpgc at a472de21e, the same
lines as moodle/moodle's MOODLE_401_STABLE; the ru pack: projectestac/moodle-langpacks at 6340d351), and the
kit's column checked through a model built from them alone:

- mod/assign/feedback/comments/locallib.php ``get_editor_fields()``: ``array('comments' =>
  get_string('pluginname', 'assignfeedback_comments'))``: the column's header is the plugin's name;
- mod/assign/feedback/comments/lang/en/assignfeedback_comments.php:29 ``$string['pluginname'] = 'Feedback
  comments';`` and ru/assignfeedback_comments.php:36 ``$string['pluginname'] = 'Отзыв в виде комментария';``;
- mod/assign/feedback/offline/importgradeslib.php ``init()``, lines 117 and 129: a column is mapped to a feedback
  field only for a plugin that ``is_enabled() && is_visible()``, by its header compared whole (``isset``);
  ``next()``, line 216: ``if (!empty($details['index']))``: a column at index 0 is never read;
- mod/assign/feedback/offline/locallib.php ``process_import_grades``, lines 192 and 205: the feedback of a row is
  stored unless the grade was changed in Moodle more than 60 s after the row's modified time, whenever it differs
  from the comment Moodle holds (an empty cell clears one); comments/locallib.php:196, 226: stored as HTML.

Canvas's gradebook import (app/models/gradebook_importer.rb) reads grades only: ``--feedback`` is refused there.

The column carries only what the kit said (a missing file and its "is that your ...?", an empty file, a syntax
error's line, an encoding; "not implemented yet"; else the status word), never a check's feedback text, which may
quote what the learner's code printed on a hidden input.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from graders.engine.outputs import lms, lms_grades
from graders.engine.outputs.reports import report_json

MOODLE_COMMENTS = {"en": "Feedback comments", "ru": "Отзыв в виде комментария"}  # the facts above
SECRET = "HIDDEN-INPUT-7f3a91"  # what a learner's code printed on a hidden input
STUDENTS = {"1201": "Анна Петрова", "1202": "José García", "1203": "O'Brien, Seán"}
MAXIMUM = 12


def _exercise(name, status, points, feedback="", **extra):
    return {"id": f"module_9_reference.{name}", "status": status, "points": points, "max_points": 4,
            "feedback": feedback, "misconceptions": [], **extra}


REPORTS = {
    # full marks: no reason
    "1201": [_exercise("k3_kl", "passed", 4), _exercise("grpo_loss", "passed", 4), _exercise("entropy", "passed", 4)],
    # a syntax error in one function (the kit's cause), a check whose feedback quotes the learner's output, a stub
    "1202": [_exercise("k3_kl", "missing", 0, f"printed {SECRET}", cause={"kind": "file unreadable", "text": {
                 "en": "module_9_reference.py, line 8: invalid syntax", "ru": "module_9_reference.py, строка 8: "
                 "синтаксическая ошибка"}}),
             _exercise("grpo_loss", "failed", 0, f"on a hidden input your function printed {SECRET}\nexpected 1.0"),
             _exercise("entropy", "error", 0, f"ValueError: {SECRET}", not_implemented=True)],
    # a wrong file name: every exercise missing, with the near miss
    "1203": [_exercise(name, "missing", 0, f"<{SECRET}>", cause={"kind": "file missing", "text": {
                 "en": "no module_9_reference.py; is that your module9.py?",
                 "ru": "нет module_9_reference.py; это ваш module9.py?"}}) for name in ("k3_kl", "grpo_loss", "entropy")],
}


def graded_folder(folder: Path) -> Path:
    folder.mkdir()
    lines = ["submission,name,lms_id,total,max_total"]
    for number, name in STUDENTS.items():
        total = sum(entry["points"] for entry in REPORTS[number])
        lines.append(f"s-{number},{name.replace(',', ' ')},{number},{total},{MAXIMUM}")
        (folder / f"s-{number}").mkdir()
        report = {"submission": f"s-{number}", "name": name, "lms_id": number, "exercises": REPORTS[number],
                  "score": total, "max_score": MAXIMUM}
        (folder / f"s-{number}" / "report.json").write_text(report_json(report), encoding="utf-8")
    (folder / "grades.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lms.write_ids(folder, "moodle", STUDENTS)
    return folder


def moodle_feedback(text: str, language: str, enabled: bool = True) -> dict[str, str] | None:
    """What Moodle's importer stores as each participant's feedback comment (participant id -> comment), from the
    facts above: the column found by the comments plugin's name when it is enabled, never at index 0."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    header = rows[0]
    words = lms_grades.moodle_words(language)
    if not enabled or MOODLE_COMMENTS[language] not in header:
        return None
    at = header.index(MOODLE_COMMENTS[language])
    if not at:  # !empty($details['index'])
        return None
    at_id = header.index(words.identifier)
    return {row[at_id].encode()[len(words.participant.encode()):].decode(): row[at] for row in rows[1:]}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_column_is_headed_as_moodles_importer_finds_it(tmp_path, language):
    assert lms_grades.moodle_words(language).comments == MOODLE_COMMENTS[language]
    exported = lms_grades.export(graded_folder(tmp_path / "g"), "moodle", language=language, feedback=True, now=0)
    comments = moodle_feedback(exported.text, language)
    assert comments is not None and set(comments) == set(STUDENTS)
    assert comments["1201"] == ""  # no zero, no reason
    assert exported.feedback == 2
    # the reasons are the kit's, in the worksheet's language, one line each (HTML: Moodle stores the comment so)
    lines = comments["1202"].split("<br>")
    assert len(lines) == 3
    assert lines[0] == "module_9_reference.k3_kl: " + REPORTS["1202"][0]["cause"]["text"][language]
    assert lines[1] == "module_9_reference.grpo_loss: " + {"en": "failed", "ru": "неверно"}[language]
    assert lines[2] == "module_9_reference.entropy: " + {"en": "not implemented yet", "ru": "не реализован"}[language]
    assert comments["1203"].count("module9.py") == 3
    # the importer still takes the grades: every row as long as the header
    rows = list(csv.reader(io.StringIO(exported.text.removeprefix("\ufeff"))))
    assert {len(row) for row in rows} == {6}


def test_without_the_option_no_column_and_a_disabled_plugin_reads_none(tmp_path):
    folder = graded_folder(tmp_path / "g")
    plain = lms_grades.export(folder, "moodle", now=0)
    assert moodle_feedback(plain.text, "en") is None and plain.feedback == 0
    assert moodle_feedback(lms_grades.export(folder, "moodle", feedback=True, now=0).text, "en", enabled=False) is None


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_secret_in_a_reports_feedback_never_reaches_the_export(tmp_path, language):
    folder = graded_folder(tmp_path / "g")
    complete = lms_grades.export(folder, "moodle", language=language, feedback=True, now=0)
    assert SECRET not in complete.text and SECRET[:10] not in complete.text
    words = lms_grades.moodle_words(language)
    sheet = tmp_path / "worksheet.csv"
    sheet.write_text(_worksheet(words), encoding="utf-8")
    filled = lms_grades.export(folder, "moodle", worksheet=sheet, feedback=True, now=0)
    assert SECRET not in filled.text


def test_a_cause_is_escaped_as_html_and_a_report_of_another_id_is_not_read(tmp_path):
    folder = graded_folder(tmp_path / "g")
    report = json.loads((folder / "s-1203" / "report.json").read_text(encoding="utf-8"))
    report["exercises"][0]["cause"]["text"]["en"] = "no module_9_reference.py; is that your <b>x</b>.py?"
    (folder / "s-1203" / "report.json").write_text(json.dumps(report), encoding="utf-8")
    comments = moodle_feedback(lms_grades.export(folder, "moodle", feedback=True, now=0).text, "en")
    assert "&lt;b&gt;x&lt;/b&gt;.py" in comments["1203"] and "<b>" not in comments["1203"]
    report["lms_id"] = "1202"  # a report that is not this row's student's
    (folder / "s-1203" / "report.json").write_text(json.dumps(report), encoding="utf-8")
    assert moodle_feedback(lms_grades.export(folder, "moodle", feedback=True, now=0).text, "en")["1203"] == ""


def _worksheet(words, comments: bool = True) -> str:
    header = [words.identifier, "Status", words.full_name, words.grade, words.maximum, words.modified]
    header += [words.comments] * comments
    rows = [header]
    for number, name in [*STUDENTS.items(), ("1300", "Someone Else")]:
        rows.append([words.participant + number, "Submitted", name, "", "100", "", *(["held comment"] * comments)])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return "\ufeff" + buffer.getvalue()


@pytest.mark.parametrize("language", ["en", "ru"])
def test_moodles_own_worksheet_keeps_its_comments_and_adds_the_reasons(tmp_path, language):
    folder = graded_folder(tmp_path / "g")
    words = lms_grades.moodle_words(language)
    sheet = tmp_path / "worksheet.csv"
    sheet.write_text(_worksheet(words), encoding="utf-8")
    exported = lms_grades.export(folder, "moodle", worksheet=sheet, feedback=True, now=0)
    comments = moodle_feedback(exported.text, language)
    assert comments["1201"] == "held comment" and comments["1300"] == "held comment"  # untouched: no change
    assert comments["1202"].startswith("held comment<br>module_9_reference.k3_kl: ")
    again = tmp_path / "again.csv"  # exported into its own output again: the reasons are not added twice
    again.write_text(exported.text, encoding="utf-8")
    assert moodle_feedback(lms_grades.export(folder, "moodle", worksheet=again, feedback=True, now=0).text,
                           language) == comments
    sheet.write_text(_worksheet(words, comments=False), encoding="utf-8")  # the plugin disabled at download
    with pytest.raises(lms_grades.ExportError, match="Feedback comments"):
        lms_grades.export(folder, "moodle", worksheet=sheet, feedback=True, now=0)
    assert lms_grades.export(folder, "moodle", worksheet=sheet, now=0).count == 3  # without --feedback: as before


def test_canvas_takes_no_comments(tmp_path):
    folder = graded_folder(tmp_path / "g")
    lms.write_ids(folder, "canvas", STUDENTS)
    with pytest.raises(lms_grades.ExportError) as raised:
        lms_grades.export(folder, "canvas", assignment="Module 9 (4321)", feedback=True)
    assert "Canvas" in str(raised.value) and "комментарии" in raised.value.in_("ru")
    assert SECRET not in lms_grades.export(folder, "canvas", assignment="Module 9 (4321)").text


@pytest.mark.parametrize("language", ["en", "ru"])
def test_export_feedback_on_the_command_line(tmp_path, capsys, language):
    from graders.cli import main

    folder = graded_folder(tmp_path / "g")
    assert main(["export", str(folder), "--lms", "moodle", "--feedback", "--lang", language]) == 0
    said = capsys.readouterr().out
    assert MOODLE_COMMENTS[language] in said and ("Feedback types" in said or "Типы отзывов" in said)
    text = (folder / "moodle_grades.csv").read_text(encoding="utf-8")
    assert MOODLE_COMMENTS[language] in text and SECRET not in text
    lms.write_ids(folder, "canvas", STUDENTS)
    assert main(["export", str(folder), "--lms", "canvas", "--assignment", "M9 (1)", "--feedback",
                 "--lang", language]) == 2
