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

:func:`stage` reads the download (or an unzipped one's entries) through the one capped reader, keeps a file
handed in twice in its newest form by the LMS's numbering (a note names the others), counts a student with online
text only as one with no file, and writes each student's files into ``<id>/submission/`` (one uploaded zip:
``<id>/submission.zip``; a zip beside other files: its learner files in ``submission/<zip>/``) beside
``<id>/.lms.json`` (the id, the name as the LMS gives it). No display name becomes a file name: folder names are
capped in bytes, a learner's file name over :data:`FILE_BYTES` bytes is cut and keeps a digest. A student whose
files cannot be written is graded with that reason. ``_lms.json`` in the output folder: the LMS, its students.

**Out.** :mod:`graders.engine.outputs.lms_grades`: the file each LMS's own importer takes.
"""

from __future__ import annotations

import contextlib
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
ONLINE_TEXT = (".html",)  # what a student who typed their answer online has in the download: read, never graded
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
    "resubmitted": Text("{name} ({system} id {id}) handed in {file} {count} times: graded {graded} (the newest by "
                        "{system}'s numbering), set aside {aside}",
                        "{name} (id {id} в {system}) сдал(а) {file} {count} раз(а): проверен {graded} (новейший по "
                        "нумерации {system}), отложены {aside}"),
    "online_text": Text("{name} ({system} id {id}) handed in online text only, no file: graded as handing in nothing",
                        "{name} (id {id} в {system}) сдал(а) только текст онлайн, без файлов: проверен(а) как не "
                        "сдавший(ая) ничего"),
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


class LmsError(ValueError):
    """A download or graded folder the LMS route cannot use: why, in one line (English; :meth:`in_` another)."""

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


def _newness(system: str, relative: str) -> tuple[int, int]:
    """How new a file is by the LMS's numbering: Canvas's resubmission count (``-1``, ``-2``), then its file id;
    Moodle keeps one file of a name per submission: (0, 0)."""
    if system != "canvas":
        return 0, 0
    parts = relative.rsplit("/", 1)[-1].split("_")
    ids = [int(parts[at + 1]) for at in range(len(parts) - 2) if _is_id(parts[at]) and _is_id(parts[at + 1])]
    stem = relative.rpartition(".")[0]
    count = stem.rpartition("-")[2]
    return (int(count) if count.isascii() and count.isdigit() and len(count) <= 4 else 0), (ids[0] if ids else 0)


def names_a_download(paths: list[Path]) -> bool:
    """Whether several paths given to ``rl4llm grade`` are an unzipped download's entries (``submissions/*``)."""
    names = [Path(path).name for path in paths]
    return len(paths) > 1 and (any(MOODLE_MARK in name for name in names) or detect(names) == "canvas")


def _read_entries(paths: list[Path]) -> dict[str, bytes]:
    """An unzipped download's entries' files, under their names (a folder's: ``<folder>/...``), read capped."""
    files: dict[str, bytes] = {}
    for path in map(Path, paths):
        if path.is_dir() and not path.is_symlink():
            files.update({f"{path.name}/{relative}": data for relative, data in
                          intake.read_submission(path, DOWNLOAD_CAPS, KEEP + ONLINE_TEXT).items()})
        elif path.name.lower().endswith(KEEP + ONLINE_TEXT):
            files[path.name] = intake.read_file(path, DOWNLOAD_CAPS.file_bytes)
    return files


def read_download(path: Path | list[Path], system: str | None = None) -> Download:
    """The LMS and its students (by id) of a bulk download (a zip or a folder, or the entries of one unzipped);
    ``system`` None: detected. A file handed in twice is graded in its newest form (a note names both); a
    student with online text only is one of the class with no file."""
    try:
        files = (_read_entries(path) if isinstance(path, list) else
                 intake.read_submission(Path(path), DOWNLOAD_CAPS, KEEP + ONLINE_TEXT))
    except (intake.UnsafeSubmission, OSError) as error:
        raise LmsError("unreadable", path=path if not isinstance(path, list) else Path(path[0]).parent,
                       error=getattr(error, "strerror", None) or error) from None
    system = system or detect(list(files))
    if system not in PARSERS:
        raise LmsError("not_download", path=path)
    students: dict[str, Student] = {}
    notes: list[Note] = []
    chosen: dict[tuple[str, str], list[tuple[tuple[int, int], str, bytes]]] = {}  # (id, file) -> its versions
    for relative, data in sorted(files.items()):
        member = PARSERS[system](relative)
        if member is None or member is NOBODY:
            if not relative.lower().endswith(ONLINE_TEXT):
                notes.append(("unnamed" if member is None else "nobody",
                              {"member": _shown(relative), "system": system}))
            continue
        student = students.setdefault(member.lms_id, Student(member.name, member.lms_id))
        said = ("two_names", {"system": system, "id": student.lms_id, "first": _shown(student.name),
                              "second": _shown(member.name)})
        if member.name != student.name and said not in notes:
            notes.append(said)
        if relative.lower().endswith(ONLINE_TEXT):
            continue
        chosen.setdefault((member.lms_id, member.file), []).append((_newness(system, relative), relative, data))
    for (number, file), versions in chosen.items():
        graded = max(versions, key=lambda version: version[0])  # the newest; of equals, the first
        students[number].files[file] = graded[2]
        if len(versions) > 1:  # the instructor's note; the student's .lms.json carries it to their feedback (stage)
            fields = {"file": _shown(file), "count": len(versions), "graded": _shown(graded[1]),
                      "aside": ", ".join(_shown(v[1]) for v in versions if v is not graded)}
            notes.append(("resubmitted", {"name": _shown(students[number].name), "system": system, "id": number, **fields}))
    for student in students.values():
        if not student.files:
            notes.append(("online_text", {"name": _shown(student.name), "system": system, "id": student.lms_id}))
    if not students:
        raise LmsError("no_student", path=path, system=system)
    return Download(system, list(students.values()), notes)


@dataclass
class Staged:
    system: str
    paths: list[Path]  # the submissions to grade, one per student: <id>/submission or <id>/submission.zip
    students: dict[str, str]  # LMS id -> the name as the LMS gives it
    notes: list[Note]


def stage(path: Path | list[Path], folder: Path, system: str | None = None) -> Staged:
    """Each student of the download in ``folder`` as ``<id>/submission`` (or ``.zip``) beside ``<id>/.lms.json``;
    one whose files cannot be written is staged empty with the reason as their problem (``staged_problem``)."""
    download = read_download(path, system)
    paths, notes = [], list(download.notes)
    for student in download.students:
        home = Path(folder) / student.lms_id
        record = {"id": student.lms_id, "name": student.name, "system": download.system}
        record["resubmitted"] = [f for key, f in download.notes if key == "resubmitted" and f["id"] == student.lms_id]
        try:
            home.mkdir()
            try:
                target = _write_files(home, student.files)
            except (OSError, ValueError) as error:  # a name the file system refuses, a full disk: theirs alone
                target = _emptied(home)
                reason = getattr(error, "strerror", None) or str(error)
                record["problem"] = reason  # the system's words; the report says it in texts.py's (staged_problem)
                notes.append(("unwritten", {"name": _shown(student.name), "system": download.system,
                                            "id": student.lms_id, "error": reason}))
            (home / STAGED_FILE).write_text(json.dumps(record), encoding="ascii")  # any name, escaped
        except OSError as error:  # not even the student's own folder: the staging folder itself is unusable
            raise LmsError("staging", path=path, folder=folder, error=error.strerror or error) from None
        paths.append(target)
    return Staged(download.system, paths, {s.lms_id: s.name for s in download.students}, notes)


def _write_files(home: Path, files: dict[str, bytes]) -> Path:
    """A student's files under ``home``: one uploaded zip as ``submission.zip``, else in ``submission/`` under their
    own (capped) names, a zip among them opened through the capped reader into ``submission/<zip name>/``."""
    zips = [name for name in files if name.lower().endswith(".zip")]
    if zips and len(files) == 1:  # one uploaded zip: the zip is the submission
        target = home / STAGED_NAMES[1]
        target.write_bytes(files[zips[0]])
        return target
    target = home / STAGED_NAMES[0]
    target.mkdir()
    for name, data in files.items():
        if not name.lower().endswith(".zip"):
            _write_new(target / capped(name, FILE_BYTES), data)
    for name in zips:  # a zip beside other files: its learner files, read as a submission's zip is
        packed = home / f".{len(name)}.zip"
        packed.write_bytes(files[name])
        try:
            inner = intake.read_zip(packed, intake.SUBMISSION_CAPS)
        except intake.UnsafeSubmission:  # refused as a submission's zip would be: its files are not graded
            inner = {}
        finally:
            packed.unlink()
        folder = target / capped(name, FILE_BYTES)
        for relative, data in inner.items():
            folder.mkdir(exist_ok=True)
            _write_new(folder / capped(relative.rsplit("/", 1)[-1], FILE_BYTES), data)
    return target


def _write_new(path: Path, data: bytes) -> None:
    with contextlib.suppress(FileExistsError), open(path, "xb") as out:  # a name met again: the first kept
        out.write(data)


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
