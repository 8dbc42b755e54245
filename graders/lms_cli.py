"""``rl4llm grade --lms moodle|canvas`` (a class from an LMS's bulk download) and ``rl4llm export`` (a grade
file the LMS imports): the command-line side of :mod:`graders.engine.outputs.lms`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from graders.cleaner import say
from graders.text import Text

SAID = {
    "staged": Text("note: {path} is a {system} bulk download: {count} student(s), graded under their names and "
                   "kept apart by their {system} ids",
                   "примечание: {path} — выгрузка {system}: студентов: {count}, проверяются под своими именами, "
                   "различаются по id в {system}"),
    "note": Text("note: {note}", "примечание: {note}"),
    "exported": Text("wrote {path}: {count} grade(s) for {system}, each under its {system} id{left}{ungraded}",
                     "записан {path}: оценок для {system}: {count}, каждая под своим id в {system}{left}{ungraded}"),
    "left_out": Text(" ({count} left out, no id of the download: {names})",
                     " (пропущено без id из выгрузки: {count}: {names})"),
    "ungraded": Text(" ({count} student(s) of the download not graded: {names})",
                     " (студентов выгрузки без оценки: {count}: {names})"),
    "scaled": Text("grades scaled from the kit's {kit} points to {out_of}",
                   "оценки пересчитаны из {kit} баллов набора в {out_of}"),
    "moodle_complete": Text("a complete grading worksheet with Moodle's {tongue} headers (a Moodle in another "
                            "language needs --lang {other}); Moodle takes each grade as points out of the "
                            "assignment's Maximum grade and skips one above it: set the assignment's Maximum grade "
                            "to {out_of} (Edit settings > Grade), or export with --out-of <its maximum>",
                            "полная ведомость оценок с заголовками Moodle на {tongue} (для Moodle на другом "
                            "языке нужен --lang {other}); Moodle считает каждую оценку баллами из «Максимальной "
                            "оценки» задания и пропускает оценку выше неё: задайте заданию максимальную оценку "
                            "{out_of} (Редактировать настройки > Оценка) или экспортируйте с --out-of <её максимум>"),
    "english": Text("English", "английском"),
    "russian": Text("Russian", "русском"),
    "moodle_filled": Text("the worksheet {worksheet} (in {tongue}), every column of it kept, the grades out of "
                          "its Maximum Grade {out_of}",
                          "ведомость {worksheet} (на {tongue}), все её столбцы сохранены, оценки из её "
                          "максимальной оценки {out_of}"),
    "how_moodle": Text("import it: the assignment's View all submissions > Grading action > Upload grading "
                       "worksheet (the menu item appears once the assignment's Feedback types include "
                       "\"Offline grading worksheet\"), then confirm the preview",
                       "импорт: задание > Просмотр всех ответов > Действие оценивания > Загрузить ведомость с "
                       "оценками (пункт появляется, когда в типах отзыва задания включена «Ведомость с "
                       "оценками»), затем подтвердите предпросмотр"),
    "canvas_column": Text("the column {assignment}: Canvas fills the assignment of id {id}",
                          "столбец {assignment}: Canvas заполнит задание с id {id}"),
    "canvas_title": Text("the column {assignment} has no id in brackets: Canvas fills the assignment of exactly "
                         "that title, and adds a new column if none has it (\"Title (id)\" names one for sure)",
                         "у столбца {assignment} нет id в скобках: Canvas заполнит задание ровно с таким "
                         "названием, а если такого нет, добавит новый столбец (\"Название (id)\" указывает "
                         "задание наверняка)"),
    "how_canvas": Text("import it: Grades > Import > this file; the assignment's points must be {out_of} (or export "
                       "with --out-of its points)",
                       "импорт: Оценки > Импорт > этот файл; у задания должно быть {out_of} баллов (или "
                       "экспортируйте с --out-of его баллами)"),
    "feedback": Text("the column \"{column}\": the reasons for {count} student(s)' zeros (the kit's own: a missing "
                     "or empty file, a syntax error's line, an encoding; never what a learner's code printed); Moodle "
                     "imports it only when the assignment's Feedback types include \"Feedback comments\" (Edit "
                     "settings > Feedback types), and then it replaces the comment each listed student has{keep}",
                     "столбец «{column}»: причины нулей у студентов ({count}) — только сказанное комплектом заданий "
                     "(нет файла или он пуст, строка синтаксической ошибки, кодировка; никогда не вывод кода "
                     "студента); Moodle импортирует его, только если в типах отзыва задания включён «Отзыв в виде "
                     "комментария» (Редактировать настройки > Типы отзывов), и тогда он заменяет комментарий каждого "
                     "студента из файла{keep}"),
    "feedback_keep": Text(" (an empty cell clears one: to keep comments already written, export into the worksheet "
                          "downloaded from Moodle with --worksheet)",
                          " (пустая ячейка стирает его: чтобы сохранить уже написанные комментарии, экспортируйте в "
                          "скачанную из Moodle ведомость через --worksheet)"),
    "feedback_kept": Text(" (the reasons are added after the comment the worksheet holds)",
                          " (причины добавлены после комментария, который уже есть в ведомости)"),
    "not_written": Text("{path} could not be written ({error}); nothing was exported",
                        "не удалось записать {path} ({error}); ничего не экспортировано"),
}


def add_lms_arguments(grade: argparse.ArgumentParser) -> None:
    grade.add_argument("--lms", choices=("moodle", "canvas"), default=None,
                       help="read SUBMISSION as this LMS's bulk download (a zip or its folder): a submission per "
                            "student, named as the LMS names them (detected without the flag)")


def add_export_command(sub) -> None:
    export = sub.add_parser("export", help="write the grade file an LMS imports (Moodle, Canvas) from a graded "
                                           "LMS download")
    export.add_argument("folder", help="the --out folder of `rl4llm grade DOWNLOAD --lms ...`")
    export.add_argument("--lms", choices=("moodle", "canvas"), required=True)
    export.add_argument("--assignment", default=None,
                        help="Canvas (required): the gradebook column to fill, as Canvas's export names it: "
                             "\"Module 9 (4321)\", the assignment's name and its id")
    export.add_argument("--worksheet", default=None, metavar="FILE",
                        help="Moodle: the grading worksheet downloaded from the assignment, filled in (every "
                             "column kept, grades scaled to its Maximum Grade); without it a complete worksheet "
                             "in --lang's language is written")
    export.add_argument("--out-of", type=float, default=None, metavar="POINTS",
                        help="the LMS assignment's maximum: grades scaled to it (default: the kit's points, or "
                             "the worksheet's Maximum Grade)")
    export.add_argument("--feedback", action="store_true",
                        help="Moodle: add the \"Feedback comments\" column, each zero's reason as the kit found it "
                             "(a missing or empty file, a syntax error's line, an encoding); the assignment's "
                             "Feedback comments must be enabled. Canvas's import reads no comments")
    export.add_argument("--to", default=None, help="the CSV to write (default: FOLDER/<lms>_grades.csv)")
    export.add_argument("--lang", choices=("en", "ru"), default=None,
                        help="the course's language: the Moodle worksheet's headers, and these messages")
    export.set_defaults(func=export_command)


def stage_download(args: argparse.Namespace, paths: list[Path], language: str):
    """The class to grade: ``paths`` as given, or the students of an LMS download (written into a temporary
    folder, each carrying their LMS id: :func:`graders.engine.outputs.lms.stage`); returns (paths, the LMS or
    None, the download's students as LMS id -> name, the temporary folder or None)."""
    from graders.engine.outputs import lms

    entries = lms.names_a_download(paths)  # an unzipped download's entries (`submissions/*`): one download
    if args.lms is None and not entries and not (len(paths) == 1 and lms.looks_like_download(paths[0])):
        return paths, None, {}, None
    if len(paths) != 1 and not entries:
        raise lms.LmsError("one_download", count=len(paths)).said_in(language)
    temporary = tempfile.TemporaryDirectory(prefix="rl4llm-lms-")
    shown = paths[0] if len(paths) == 1 else Path(paths[0]).parent
    try:
        staged = lms.stage(paths[0] if len(paths) == 1 else list(paths), Path(temporary.name), args.lms)
    except lms.LmsError as error:
        temporary.cleanup()
        raise error.said_in(language) from None
    say(SAID["staged"].in_(language, path=shown, system=staged.system.capitalize(), count=len(staged.paths)),
        file=sys.stderr)
    for note in staged.notes:
        say(SAID["note"].in_(language, note=lms.note_in(note, language)), file=sys.stderr)
    return staged.paths, staged.system, staged.students, temporary


def export_command(args: argparse.Namespace) -> int:
    from graders.engine.outputs import lms, lms_grades
    from graders.language import default_language

    language = args.lang or default_language()
    try:
        exported = lms_grades.export(Path(args.folder), args.lms, assignment=args.assignment, language=language,
                                     worksheet=args.worksheet, out_of=args.out_of,
                                     feedback=getattr(args, "feedback", False))
    except lms.LmsError as error:
        say(f"rl4llm export: {error.in_(language)}", file=sys.stderr)
        return 2
    target = Path(args.to) if args.to else Path(args.folder) / f"{args.lms}_grades.csv"
    try:
        target.write_text(exported.text, encoding="utf-8")
    except OSError as error:
        say("rl4llm export: " + SAID["not_written"].in_(language, path=target, error=error.strerror or error),
            file=sys.stderr)
        return 2
    left, ungraded = ((SAID[key].in_(language, count=len(names), names=", ".join(names[:5]))
                       if names else "") for key, names in (("left_out", exported.left_out),
                                                            ("ungraded", exported.ungraded)))
    system = args.lms.capitalize()
    lines = [SAID["exported"].in_(language, path=target, count=exported.count, system=system, left=left,
                                  ungraded=ungraded)]
    lines += [lms.note_in(note, language) if note[0] in lms.TEXTS else lms_grades.TEXTS[note[0]].in_(
        language, **note[1]) for note in exported.notes]
    out_of, kit = lms_grades.points(exported.out_of), lms_grades.points(exported.kit_maximum)
    if out_of != kit:
        lines.append(SAID["scaled"].in_(language, kit=kit, out_of=out_of))
    if args.lms == "moodle":
        tongue = SAID["english" if exported.language == "en" else "russian"].in_(language)
        key = "moodle_filled" if args.worksheet else "moodle_complete"
        lines.append(SAID[key].in_(language, tongue=tongue, out_of=out_of,
                                   worksheet=args.worksheet, other="ru" if exported.language == "en" else "en"))
        if getattr(args, "feedback", False):
            from graders.engine.outputs.lms_grades import moodle_words

            keep = SAID["feedback_kept" if args.worksheet else "feedback_keep"].in_(language)
            lines.append(SAID["feedback"].in_(language, column=moodle_words(exported.language).comments,
                                              count=exported.feedback, keep=keep))
        lines.append(SAID["how_moodle"].in_(language))
    else:
        title, number = canvas_title_and_id(args.assignment.strip())
        lines.append(SAID["canvas_column"].in_(language, assignment=args.assignment.strip(), id=number) if number
                     else SAID["canvas_title"].in_(language, assignment=args.assignment.strip()))
        lines.append(SAID["how_canvas"].in_(language, out_of=out_of))
    say("\n".join(lines))
    return 0


def canvas_title_and_id(header: str) -> tuple[str, str | None]:
    """Canvas's Assignment.title_and_id: ``"Title (123)"`` -> (title, "123"), anything else -> (header, None)."""
    title, bracket, rest = header.rpartition(" (")
    if bracket and rest.endswith(")") and rest[:-1].isascii() and rest[:-1].isdigit():
        return title, rest[:-1]
    return header, None
