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
    "exported": Text("wrote {path}: {count} grade(s) for {system}, each under its {system} id{left}{ungraded}; "
                     "import it: {how}",
                     "записан {path}: оценок для {system}: {count}, каждая под своим id в {system}{left}{ungraded}; "
                     "импорт: {how}"),
    "left_out": Text(" ({count} left out, no id of the download: {names})",
                     " (пропущено без id из выгрузки: {count}: {names})"),
    "ungraded": Text(" ({count} student(s) of the download not graded: {names})",
                     " (студентов выгрузки без оценки: {count}: {names})"),
    "how_moodle": Text("the assignment's View all submissions > Grading action > Upload grading worksheet",
                       "задание > Просмотр всех ответов > Действие оценивания > Загрузить таблицу оценок"),
    "how_canvas": Text("Grades > Import > this file", "Оценки > Импорт > этот файл"),
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
    export.add_argument("--assignment", default="rl4llm", help="Canvas: the gradebook column's name")
    export.add_argument("--to", default=None, help="the CSV to write (default: FOLDER/<lms>_grades.csv)")
    export.add_argument("--lang", choices=("en", "ru"), default=None)
    export.set_defaults(func=export_command)


def stage_download(args: argparse.Namespace, paths: list[Path], language: str):
    """The class to grade: ``paths`` as given, or the students of an LMS download (written into a temporary
    folder, each carrying their LMS id: :func:`graders.engine.outputs.lms.stage`); returns (paths, the LMS or
    None, the download's students as LMS id -> name, the temporary folder or None)."""
    from graders.engine.outputs import lms

    if args.lms is None and not (len(paths) == 1 and lms.looks_like_download(paths[0])):
        return paths, None, {}, None
    if len(paths) != 1:
        raise lms.LmsError("one_download", count=len(paths)).said_in(language)
    temporary = tempfile.TemporaryDirectory(prefix="rl4llm-lms-")
    try:
        staged = lms.stage(paths[0], Path(temporary.name), args.lms)
    except lms.LmsError as error:
        temporary.cleanup()
        raise error.said_in(language) from None
    say(SAID["staged"].in_(language, path=paths[0], system=staged.system.capitalize(), count=len(staged.paths)),
        file=sys.stderr)
    for note in staged.notes:
        say(SAID["note"].in_(language, note=lms.note_in(note, language)), file=sys.stderr)
    return staged.paths, staged.system, staged.students, temporary


def export_command(args: argparse.Namespace) -> int:
    from graders.engine.outputs import lms
    from graders.language import default_language

    language = args.lang or default_language()
    try:
        exported = lms.export(Path(args.folder), args.lms, args.assignment)
    except lms.LmsError as error:
        say(f"rl4llm export: {error.in_(language)}", file=sys.stderr)
        return 2
    target = Path(args.to) if args.to else Path(args.folder) / f"{args.lms}_grades.csv"
    target.write_text(exported.text, encoding="utf-8")
    rows = exported.text.count("\n") - (2 if args.lms == "canvas" else 1)
    left, ungraded = ((SAID[key].in_(language, count=len(names), names=", ".join(names[:5]))
                       if names else "") for key, names in (("left_out", exported.left_out),
                                                            ("ungraded", exported.ungraded)))
    say(SAID["exported"].in_(language, path=target, count=rows, system=args.lms.capitalize(), left=left,
                             ungraded=ungraded, how=SAID[f"how_{args.lms}"].in_(language)))
    return 0
