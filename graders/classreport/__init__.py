"""The class report: where a graded batch stands, who holds which mistake, and whom to talk to about what.

``rl4llm report DIR`` (and ``rl4llm grade ... --out DIR`` for a batch of two or more submissions,
``rl4llm merge``, ``rl4llm demo``) reads the ``DIR/<submission>/report.json`` of the folder's last run
(the names its run manifest ``DIR/_batch.json`` lists, :mod:`graders.engine.outputs.outfolder`; a folder
without one, from an older kit or nbgrader's ``report_dir``, is read whole, with a note) and writes:

- ``DIR/class_report.html``: one self-contained page (inline CSS, figures as ``data:`` PNGs, no
  script, no link but anchors within the page), in English or Russian;
- ``DIR/class_summary.csv``: one row per exercise, hardest first;
- ``DIR/class_misconceptions.csv``: one row per (exercise, catalogued misconception) the class holds,
  with who holds it;
- ``DIR/class_unexplained.csv``: one row per failed exercise no catalogued mistake explains;
- ``DIR/class_students.csv``: one row per (submission, exercise) not passed: points lost, mistakes, hint;
- ``DIR/class_scores.png``, ``DIR/class_exercises.png``, ``DIR/class_heatmap.png``: the figures.

What it computes, per exercise ``e`` over the submissions ``s`` that handed it in (code to judge; a missing
file, a stub or an unreadable file is not a wrong answer, and is counted apart):

- mean fraction of points: mean_s points(s, e) / max_points(e);
- pass rate: the fraction of submissions whose status is ``passed``;
- discrimination: Pearson's r between points(s, e) and the rest of the total, total(s) - points(s, e)
  (the item-rest correlation of classical test theory; empty when either is constant);
- misconceptions: which submissions the reports name each catalogued mistake for, with its hint
  (from the kit's catalogue, in the report's language); only claimed names count;
- unexplained failures: a ``failed`` exercise whose report claims no catalogued mistake (its
  ``candidates``, several entries that fit, listed beside it), per exercise with who;
- input validation missing: a ``failed`` exercise whose every failing check expected an exception and got
  a value (its report entry's ``"failing": ["not raised"]``), listed apart from the unexplained failures;
- per student: each exercise not passed, the reason (an error's cause, the validation left out, the stub),
  the points lost, the named mistakes and the hint to discuss; an error's cause once however many
  exercises it stops;
- errors and timeouts (statuses ``error`` and ``timeout``) listed apart from wrong answers, grouped by
  cause (the entry's ``"cause"``: a syntax error once per submission, with its file and line). An
  exercise still the untouched stub (``"not_implemented": true``) shows as ``not_implemented``, neither a
  wrong answer nor an environment problem.

"Handed in" means with code to judge: neither the stub nor a file that cannot be read or loaded (an
error whose cause is one of ``NO_CODE_CAUSES``); the exercise table counts those apart (``no_code``).

Reports of different exercise sets (runs of Module 8 and Module 9 in a folder without a manifest)
are read together: each exercise's numbers are over the submissions graded on it, and the heat map
shows the others as "not graded".

Nothing in it comes from a check's feedback text, so it never shows an input, hidden or not: it is
shareable with teaching assistants whatever ``--hide-hidden-inputs`` was.

The parts: :mod:`~graders.classreport.tables` (reading the reports, every table),
:mod:`~graders.classreport.plots` (the figures), :mod:`~graders.classreport.page` (the HTML),
:mod:`~graders.classreport.texts` (every text, English and Russian).
"""

from __future__ import annotations

from pathlib import Path

from graders.classreport.plots import STATUS_COLOURS, figures
from graders.classreport.tables import (ENVIRONMENT_STATUSES, ClassData, ReportError, catalogue_hint,
                                        environment_table, exercise_table, misconception_table, read_reports,
                                        student_table, unexplained_table, validation_table)
from graders.classreport.texts import TEXT
from graders.language import default_language

from graders.engine.outputs.outfolder import (CLASS_FIGURES as FIGURES, CLASS_FILES as OUTPUT_FILES,  # noqa: E402
                                      MISCONCEPTIONS_FILE, REPORT_FILE, STUDENTS_FILE, SUMMARY_FILE, UNEXPLAINED_FILE)

__all__ = ["ENVIRONMENT_STATUSES", "FIGURES", "MISCONCEPTIONS_FILE", "OUTPUT_FILES", "REPORT_FILE", "STATUS_COLOURS",
           "STUDENTS_FILE", "SUMMARY_FILE", "TEXT", "UNEXPLAINED_FILE", "ClassData", "ReportError",
           "build_class_report", "catalogue_hint", "environment_table", "exercise_table", "figures",
           "misconception_table", "read_reports", "student_table", "unexplained_table", "validation_table"]


def _csv_safe(frame):
    """``frame`` with every text cell and header neutralised for spreadsheets (:func:`graders.engine.outputs.reports.csv_cell`);
    numbers stay numbers."""
    import pandas as pd

    from graders.engine.outputs.reports import csv_cell

    frame = frame.copy()
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):  # text (object or pandas' string dtype)
            frame[column] = frame[column].map(csv_cell)
    return frame.rename(columns=csv_cell)


def build_class_report(folder: Path | str, language: str | None = None) -> dict:
    """Write the class report files into ``folder`` (which holds the batch's reports); return their paths by key
    (``report``, ``summary``, ``misconceptions``, ``unexplained``, ``students`` and the figures' keys) and, under
    ``notes``, what the one who runs it should know about the folder (a list of texts)."""
    from graders.classreport.page import render_html

    language = language or default_language()
    folder = Path(folder)
    data = read_reports(folder)
    table = exercise_table(data)
    misconceptions = misconception_table(data, language)
    unexplained = unexplained_table(data)
    students = student_table(data, language)
    environment = environment_table(data, language)
    validation = validation_table(data)
    images = figures(data, table, language)
    written: dict = {}
    for key, name in FIGURES.items():
        (folder / name).write_bytes(images[key])
        written[key] = folder / name
    _csv_safe(table.reset_index()).to_csv(folder / SUMMARY_FILE, index=False, float_format="%.4f")
    for key, name, frame in (("misconceptions", MISCONCEPTIONS_FILE, misconceptions),
                             ("unexplained", UNEXPLAINED_FILE, unexplained), ("students", STUDENTS_FILE, students)):
        _csv_safe(frame).to_csv(folder / name, index=False)
        written[key] = folder / name
    (folder / REPORT_FILE).write_text(render_html(data, table, misconceptions, unexplained, students, environment,
                                                  images, language, validation), encoding="utf-8", errors="backslashreplace")
    written.update(summary=folder / SUMMARY_FILE, report=folder / REPORT_FILE, notes=list(data.notes))
    return written
