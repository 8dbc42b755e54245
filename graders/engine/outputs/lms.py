"""Moodle and Canvas: their bulk downloads read as a class, and a grade file each imports.

**Identity is the LMS's own id** (Moodle's participant id, Canvas's user id), never a name: read from each
file's name in the download, carried by the staged submission (:func:`graders.engine.intake.submission.staged`)
into the student's ``report.json`` and ``grades.csv`` (``lms_id``), and the export writes each grade against the
id of its row. Two students of one name, or one renamed to the folder name the kit gives a classmate, are two
ids, two folders (``anna_petrova-1201``, ``anna_petrova-1201-1305``: Latin spelling, ``-``, id), two grades.

**In.** An assignment's "Download all submissions" is one zip (or the folder it unpacks to) whose names
say whose each file is:

- Moodle: ``Full Name_<participant id>_assignsubmission_file_<file name>`` (flat), or a folder
  ``Full Name_<participant id>_assignsubmission_file_`` holding the files ("Download submissions in
  folders"); Moodle writes a name's own ``_`` as a space;
- Canvas: ``<sortable name>_<user id>_<submission id>_<file name>``, with ``late_`` (or ``LATE_``) after the
  name for a late one; a resubmitted file may carry ``-1``, ``-2`` before its extension.

A name is read with literal string operations only (no regular expression runs over a learner's file name),
and only when it reads one way: a Moodle name with ``_assignsubmission_`` twice, or a Canvas name with two
places that could hold the two ids (a display or file name the learner chose can hold such text), is
*nobody's*: graded as no one's, named in a note. No text a learner writes puts a file under another's id.

:func:`stage` reads the download through the one capped reader (:mod:`graders.engine.intake.reader`), groups the
files by id and writes them, under their own names again, into ``<id>/submission/`` (one uploaded zip:
``<id>/submission.zip``) beside ``<id>/.lms.json`` (the id, the name as the LMS gives it). No display name
becomes a file name (130 Cyrillic letters are 260 bytes, a file name holds 255): folder names are capped in
bytes (:func:`graders.engine.intake.submission.folder_name`), a learner's file name over :data:`FILE_BYTES`
bytes is cut and keeps a digest. A student whose files cannot be written (an ``OSError``) is graded with that
reason as their problem, the class as usual. ``_lms.json`` in the output folder: the LMS, its students.

**Out.** :mod:`graders.engine.outputs.lms_grades` writes from a graded folder (``grades.csv`` with its ``lms_id``
column, and ``_lms.json``) the file each LMS's own importer takes, one row per id: Moodle's grading worksheet in
the course's language (or the one Moodle wrote, filled in), Canvas's gradebook CSV. The rules of both importers
are stated there and tested in ``tests/test_lms_importers.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from graders.engine.intake import reader as intake
from graders.engine.intake.submission import ID_CHARS, STAGED_FILE, STAGED_NAMES, capped
from graders.text import Text

LMS_FILE = "_lms.json"
SYSTEMS = ("moodle", "canvas")
# a whole class's download: each file capped as a submission's, the download as a few hundred submissions
DOWNLOAD_CAPS = intake.SUBMISSION_CAPS.but(files=50_000, total_bytes=2 << 30, depth=8)
KEEP = (".py", ".ipynb", ".zip")
MOODLE_MARK = "_assignsubmission_"
MOODLE_PLUGINS = ("file", "onlinetext")
FILE_BYTES = 200  # a learner's file name as staged, in UTF-8 bytes (a file name may hold 255)

TEXTS = {
    "not_download": Text("{path} is not a Moodle or Canvas bulk download (its file names follow neither's "
                         "naming); pass the submissions themselves, or --lms moodle|canvas",
                         "{path} — не выгрузка Moodle или Canvas (имена файлов не следуют ни одной из их схем); "
                         "передайте сами работы или --lms moodle|canvas"),
    "one_download": Text("--lms reads one bulk download (a zip or its folder), not {count} paths",
                         "--lms читает одну выгрузку (zip или её папку), а не {count} путей"),
    "unreadable": Text("{path}: {error}", "{path}: {error}"),
    "no_student": Text("{path}: no file of it follows {system}'s naming",
                       "{path}: ни один файл не назван по схеме {system}"),
    "staging": Text("{path}: the download could not be unpacked into {folder} ({error})",
                    "{path}: выгрузку не удалось распаковать в {folder} ({error})"),
    "nobody": Text("{member} was graded as nobody's: its name can be read as more than one student's, so it "
                   "is not put under any id; grade it by hand",
                   "файл {member} не засчитан никому: его имя читается как имя нескольких студентов, поэтому он "
                   "не отнесён ни к одному id; проверьте его вручную"),
    "unnamed": Text("{member} does not follow {system}'s naming (no student id in it); it was not graded",
                    "файл {member} не следует схеме имён {system} (в нём нет id студента); не проверен"),
    "two_names": Text("{system} id {id} comes with two names, {first} and {second}: one student, graded as {first}",
                      "у id {id} в {system} два имени, {first} и {second}: это один студент, он проверен как {first}"),
    "unwritten": Text("{name} ({system} id {id}): the files could not be written ({error}); their report says so",
                      "{name} (id {id} в {system}): файлы не удалось записать ({error}); это сказано в их отчёте"),
    "no_grades": Text("{folder}: no graded LMS download here ({error}); grade one with "
                      "`rl4llm grade DOWNLOAD.zip --lms {system} --out {folder}`",
                      "{folder}: здесь нет проверенной выгрузки LMS ({error}); проверьте её командой "
                      "`rl4llm grade DOWNLOAD.zip --lms {system} --out {folder}`"),
    "no_ids": Text("{folder}: grades.csv has no lms_id column (graded by an older kit, or not from an LMS "
                   "download); grade the download again with this kit",
                   "{folder}: в grades.csv нет столбца lms_id (проверено старой версией или не из выгрузки LMS); "
                   "проверьте выгрузку заново этой версией"),
    "other_system": Text("{folder} was graded from a {graded} download; its ids are {graded}'s: export it with "
                         "--lms {graded}",
                         "{folder} проверена из выгрузки {graded}; её id — это id {graded}: экспортируйте с "
                         "--lms {graded}"),
    "same_id": Text("{folder}: two rows of grades.csv carry {system} id {id} ({first} and {second}); nothing "
                    "was exported: grade the download again into an empty folder",
                    "{folder}: у двух строк grades.csv один id {id} в {system} ({first} и {second}); ничего не "
                    "экспортировано: проверьте выгрузку заново в пустую папку"),
}
# a student whose files could not be written: their report's problem, in texts.py's "submission_unreadable" words
# (read in the report's language), the reason the system's; the instructor's note says more, in theirs
UNWRITTEN_PROBLEM = "the submission could not be read ({error})"


class LmsError(ValueError):
    """A download or a graded folder the LMS route cannot use (the message says why, in one line, in English;
    :meth:`in_` in another language)."""

    TABLE = TEXTS  # where its key is (a subclass has its own)

    def __init__(self, key: str, **fields):
        self.key, self.fields = key, fields
        super().__init__(self.TABLE[key].in_("en", **fields))

    def in_(self, language: str) -> str:
        return self.TABLE[self.key].in_(language, **self.fields)

    def said_in(self, language: str) -> LmsError:
        """This error, its message in ``language`` (what a caller that prints ``str(error)`` shows)."""
        error = type(self)(self.key, **self.fields)
        error.args = (self.in_(language),)
        return error


Note = tuple[str, dict]  # a note for the instructor: a key of TEXTS and its fields (rendered in their language)


def note_in(note: Note, language: str) -> str:
    return TEXTS[note[0]].in_(language, **note[1])


@dataclass
class Student:
    name: str  # as the LMS wrote it (Moodle: the full name; Canvas: the sortable name, lower case)
    lms_id: str  # Moodle's participant id, Canvas's user id: the student's identity
    files: dict[str, bytes] = field(default_factory=dict)  # the file's own name -> bytes


class Member(NamedTuple):
    """Whose a download's member is (the name, the LMS id) and which file; :data:`NOBODY`: no one's."""

    name: str
    lms_id: str
    file: str


NOBODY = Member("", "", "")


def _is_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= ID_CHARS


def _moodle(relative: str) -> Member | None:
    """Whose a Moodle download's member is: ``[folders/]<name>_<id>_assignsubmission_<plugin>_<file>`` or
    ``<name>_<id>_assignsubmission_<plugin>_/<path>/<file>``; :data:`NOBODY` when ``_assignsubmission_``
    occurs twice (overlapping or not), else None when it is not so named."""
    first = relative.find(MOODLE_MARK)
    if first < 0:
        return None
    if relative.find(MOODLE_MARK, first + 1) >= 0:
        return NOBODY
    head, tail = relative[:first], relative[first + len(MOODLE_MARK):]
    name, _, number = head.rsplit("/", 1)[-1].rpartition("_")
    cut = min((at for at in (tail.find("_"), tail.find("/")) if at >= 0), default=-1)
    if cut < 0:
        return None
    plugin, file = tail[:cut], tail[cut + 1:].rsplit("/", 1)[-1]
    if not (name and _is_id(number) and plugin in MOODLE_PLUGINS and file not in ("", ".", "..")):
        return None
    return Member(name, number, file)


def _canvas(relative: str) -> Member | None:
    """Whose a Canvas download's member is: ``<name>_[late_]<user id>_<submission id>_<file>``;
    :data:`NOBODY` when two places of the name could hold the two ids, else None when it is not so named."""
    parts = relative.rsplit("/", 1)[-1].split("_")
    spots = [at for at in range(len(parts) - 2) if _is_id(parts[at]) and _is_id(parts[at + 1])]
    if len(spots) != 1:
        return NOBODY if spots else None
    at = spots[0]
    names = parts[:at - 1] if at > 1 and parts[at - 1].lower() == "late" else parts[:at]
    name, file = "_".join(names), "_".join(parts[at + 2:])
    if not name or file in ("", ".", ".."):
        return None
    stem, dot, suffix = file.rpartition(".")
    head, dash, count = stem.rpartition("-")
    if dot and dash and count.isdigit() and head:  # module_9_reference-1.py: Canvas's resubmission count
        file = f"{head}.{suffix}"
    return Member(name, parts[at], file)


PARSERS = {"moodle": _moodle, "canvas": _canvas}


def detect(names: list[str]) -> str | None:
    """The LMS whose naming every kept file of a download follows, else None."""
    kept = [name for name in names if name.lower().endswith(KEEP)]
    for system in SYSTEMS:
        if kept and all(PARSERS[system](name) for name in kept):
            return system
    return None


def looks_like_download(path: Path) -> bool:
    """Whether ``path`` (one zip or folder given to ``rl4llm grade``) looks like an LMS bulk download: a
    Moodle-named entry, or kept files all named as Canvas names them (names only, at most a few thousand)."""
    from graders.engine.intake.class_modules import file_names

    path = Path(path)
    names = file_names(path)
    if path.suffix.lower() == ".zip" and path.is_file() and not path.is_symlink():
        try:  # its end records checked before zipfile reads it: a refused zip is no download (graded, refused)
            with intake.open_zip(path, DOWNLOAD_CAPS) as archive:
                names += [info.filename for info in archive.infolist()[:2000]]  # a member's folders too
        except (OSError, ValueError, RuntimeError):  # intake.UnsafeSubmission is a ValueError
            pass
    if path.is_dir() and not path.is_symlink():
        try:
            names += [entry.name for entry in list(os.scandir(path))[:2000]]
        except OSError:
            pass
    return any(MOODLE_MARK in name for name in names) or detect(names) == "canvas"


@dataclass
class Download:
    system: str
    students: list[Student]  # one per LMS id, in the order of their first file's name
    notes: list[Note]  # files graded as nobody's, an id with two names


def _shown(text: str, limit: int = 120) -> str:
    """A learner's name in a note: cut to ``limit`` characters (the printer makes control characters visible)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def read_download(path: Path, system: str | None = None) -> Download:
    """The LMS and its students (by id) of a bulk download (a zip or a folder); ``system`` None: detected."""
    try:
        files = intake.read_submission(Path(path), DOWNLOAD_CAPS, KEEP)
    except intake.UnsafeSubmission as error:
        raise LmsError("unreadable", path=path, error=error) from None
    system = system or detect(list(files))
    if system not in PARSERS:
        raise LmsError("not_download", path=path)
    students: dict[str, Student] = {}
    notes: list[Note] = []
    for relative, data in sorted(files.items()):
        member = PARSERS[system](relative)
        if member is None or member is NOBODY:
            notes.append(("unnamed" if member is None else "nobody", {"member": _shown(relative), "system": system}))
            continue
        student = students.setdefault(member.lms_id, Student(member.name, member.lms_id))
        said = ("two_names", {"system": system, "id": student.lms_id, "first": _shown(student.name),
                              "second": _shown(member.name)})
        if member.name != student.name and said not in notes:
            notes.append(said)
        student.files.setdefault(member.file, data)
    if not students:
        raise LmsError("no_student", path=path, system=system)
    return Download(system, list(students.values()), notes)


@dataclass
class Staged:
    system: str
    paths: list[Path]  # the submissions to grade, one per student: <id>/submission or <id>/submission.zip
    students: dict[str, str]  # LMS id -> the name as the LMS gives it
    notes: list[Note]


def stage(path: Path, folder: Path, system: str | None = None) -> Staged:
    """Write each student of the download into ``folder`` as ``<id>/submission`` (or ``<id>/submission.zip``)
    beside ``<id>/.lms.json``. A student whose files cannot be written is staged empty, with the reason as
    their problem (:func:`graders.engine.intake.submission.staged_problem`); only a folder that cannot hold
    the staging at all stops the class."""
    download = read_download(path, system)
    paths, notes = [], list(download.notes)
    for student in download.students:
        home = Path(folder) / student.lms_id
        record = {"id": student.lms_id, "name": student.name, "system": download.system}
        try:
            home.mkdir()
            try:
                target = _write_files(home, student.files)
            except (OSError, ValueError) as error:  # a name the file system refuses, a full disk: theirs alone
                target = _emptied(home)
                reason = getattr(error, "strerror", None) or str(error)
                record["problem"] = UNWRITTEN_PROBLEM.format(error=reason)
                notes.append(("unwritten", {"name": _shown(student.name), "system": download.system,
                                            "id": student.lms_id, "error": reason}))
            (home / STAGED_FILE).write_text(json.dumps(record), encoding="ascii")  # any name, escaped
        except OSError as error:  # not even the student's own folder: the staging folder itself is unusable
            raise LmsError("staging", path=path, folder=folder, error=error.strerror or error) from None
        paths.append(target)
    return Staged(download.system, paths, {s.lms_id: s.name for s in download.students}, notes)


def _write_files(home: Path, files: dict[str, bytes]) -> Path:
    """A student's files under ``home``: their one uploaded zip as ``submission.zip``, else the other files in
    ``submission/`` under their own names (capped at :data:`FILE_BYTES` bytes; a name met again is skipped)."""
    zips = [name for name in files if name.lower().endswith(".zip")]
    if zips and len(files) == 1:  # one uploaded zip: the zip is the submission
        target = home / STAGED_NAMES[1]
        target.write_bytes(files[zips[0]])
        return target
    target = home / STAGED_NAMES[0]
    target.mkdir()
    for name, data in files.items():
        if name.lower().endswith(".zip"):
            continue
        try:
            with open(target / capped(name, FILE_BYTES), "xb") as out:
                out.write(data)
        except FileExistsError:
            continue
    return target


def _emptied(home: Path) -> Path:
    """``home/submission`` as an empty folder (what could be written of a student's files removed)."""
    shutil.rmtree(home / STAGED_NAMES[0], ignore_errors=True)
    (home / STAGED_NAMES[1]).unlink(missing_ok=True)
    (home / STAGED_NAMES[0]).mkdir()
    return home / STAGED_NAMES[0]


def write_ids(out_dir: Path, system: str, students: dict[str, str]) -> None:
    """``_lms.json``: which LMS, and the download's students (``students``: LMS id -> name as the LMS gives it)."""
    data = {"system": system, "students": dict(sorted(students.items()))}
    text = json.dumps(data, indent=1, ensure_ascii=False)
    if any("\ud800" <= char <= "\udfff" for char in text):  # a name read from a disk as undecodable bytes
        text = json.dumps(data, indent=1)
    (Path(out_dir) / LMS_FILE).write_text(text + "\n", encoding="utf-8")
