"""Moodle and Canvas: their bulk downloads read as a class, and a grade file each imports.

**In.** An assignment's "Download all submissions" is one zip (or the folder it unpacks to) whose names
say whose each file is:

- Moodle: ``Full Name_<participant id>_assignsubmission_file_<file name>`` (flat), or a folder
  ``Full Name_<participant id>_assignsubmission_file_`` holding the files ("Download submissions in
  folders");
- Canvas: ``<sortable name>_<user id>_<submission id>_<file name>``, with ``late_`` (or ``LATE_``) after the
  name for a late one; a resubmitted file may carry ``-1``, ``-2`` before its extension.

:func:`stage` reads the download through the one capped reader (:mod:`graders.engine.intake.reader`), groups the
files by student and writes each student's files, under their own names again, into a folder named after
the student (``Иван Петров/module_9_reference.py``); a student who uploaded one zip gets that zip. The
folders are then graded as any class is, so the names are kept (:func:`graders.engine.intake.submission.display_name`),
and ``_lms.json`` in the output folder records each folder's LMS id for the export. Names are parsed with
literal string operations only (no regular expression runs over a learner's file name).

**Out.** :func:`export` writes from a graded folder (``grades.csv`` and ``_lms.json``):

- Moodle: the assignment's grading worksheet (``Identifier`` = ``Participant <id>``, ``Full name``,
  ``Grade``, ``Maximum Grade``), which "Upload grading worksheet" imports;
- Canvas: a gradebook CSV (``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then the
  assignment's column, with a ``Points Possible`` row), which the gradebook's "Import" reads.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from graders.engine.intake import reader as intake

LMS_FILE = "_lms.json"
SYSTEMS = ("moodle", "canvas")
# a whole class's download: each file capped as a submission's, the download as a few hundred submissions
DOWNLOAD_CAPS = intake.SUBMISSION_CAPS.but(files=50_000, total_bytes=2 << 30, depth=8)
KEEP = (".py", ".ipynb", ".zip")
MOODLE_MARK = "_assignsubmission_"


class LmsError(ValueError):
    """A download or a graded folder the LMS route cannot use (the message says why, in one line)."""


@dataclass
class Student:
    name: str  # as the LMS wrote it (Moodle: the full name; Canvas: the sortable name, lower case)
    lms_id: str  # Moodle's participant id, Canvas's user id
    files: dict[str, bytes] = field(default_factory=dict)  # the file's own name -> bytes


def _moodle(relative: str) -> tuple[str, str, str] | None:
    """(full name, participant id, file name) of a Moodle download's member, else None."""
    at = relative.find(MOODLE_MARK)
    if at <= 0:
        return None
    name, _, number = relative[:at].rpartition("_")
    rest = relative[at + len(MOODLE_MARK):]
    plugin, _, file = rest.partition("_") if "/" not in rest.split("_", 1)[0] else rest.partition("/")
    file = file.rsplit("/", 1)[-1]
    if not (name and number.isdigit() and plugin.startswith(("file", "onlinetext")) and file):
        return None
    return name.rsplit("/", 1)[-1], number, file


def _canvas(relative: str) -> tuple[str, str, str] | None:
    """(sortable name, user id, file name) of a Canvas download's member, else None."""
    base = relative.rsplit("/", 1)[-1]
    parts = base.split("_")
    at = 2 if len(parts) > 1 and parts[1].lower() == "late" else 1
    if len(parts) < at + 3 or not (parts[at].isdigit() and parts[at + 1].isdigit()) or not parts[0]:
        return None
    file = "_".join(parts[at + 2:])
    stem, dot, suffix = file.rpartition(".")
    head, dash, count = stem.rpartition("-")
    if dot and dash and count.isdigit() and head:  # module_9_reference-1.py: Canvas's resubmission count
        file = f"{head}.{suffix}"
    return parts[0], parts[at], file


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


def read_download(path: Path, system: str | None = None) -> tuple[str, list[Student]]:
    """(the LMS, its students) of a bulk download (a zip or a folder); ``system`` None: detected."""
    try:
        files = intake.read_submission(Path(path), DOWNLOAD_CAPS, KEEP)
    except intake.UnsafeSubmission as error:
        raise LmsError(f"{path}: {error}") from None
    system = system or detect(list(files))
    if system not in PARSERS:
        raise LmsError(f"{path} is not a Moodle or Canvas bulk download (its file names follow neither's "
                       "naming); pass the submissions themselves, or --lms moodle|canvas")
    students: dict[tuple[str, str], Student] = {}
    for relative, data in sorted(files.items()):
        parsed = PARSERS[system](relative)
        if parsed is None:
            continue
        name, number, file = parsed
        student = students.setdefault((name, number), Student(name, number))
        student.files.setdefault(file, data)
    if not students:
        raise LmsError(f"{path}: no file of it follows {system}'s naming")
    return system, list(students.values())


def stage(path: Path, folder: Path, system: str | None = None) -> tuple[str, list[Path], dict[str, str]]:
    """Write each student of the download into ``folder``: (the LMS, the paths to grade, path name -> LMS id)."""
    system, students = read_download(path, system)
    counts: dict[str, int] = {}
    for student in students:
        counts[student.name] = counts.get(student.name, 0) + 1
    paths, ids = [], {}
    for student in students:
        label = student.name if counts[student.name] == 1 else f"{student.name} ({student.lms_id})"
        label = label.replace("/", "_").strip(". ") or student.lms_id
        if any((folder / name).exists() for name in (label, f"{label}.zip")):  # "Ann (2)" beside Ann of id 2
            label = f"{label} [{student.lms_id}]"
        zips = [name for name in student.files if name.lower().endswith(".zip")]
        if zips and len(student.files) == 1:  # one uploaded zip: the zip is the submission
            target = folder / f"{label}.zip"
            target.write_bytes(student.files[zips[0]])
        else:
            target = folder / label
            target.mkdir()
            for name, data in student.files.items():
                if not name.lower().endswith(".zip"):
                    (target / name.replace("/", "_")).write_bytes(data)
        paths.append(target)
        ids[target.name] = student.lms_id
    return system, paths, ids


def write_ids(out_dir: Path, system: str, folders: dict[str, str]) -> None:
    """``_lms.json``: which LMS, and each output folder's LMS id (``folders``: output folder name -> id)."""
    text = json.dumps({"system": system, "ids": dict(sorted(folders.items()))}, indent=1, ensure_ascii=False)
    (Path(out_dir) / LMS_FILE).write_text(text + "\n", encoding="utf-8")


def export(out_dir: Path, system: str, assignment: str = "rl4llm") -> tuple[str, list[str]]:
    """(the grade file's CSV text, the submissions left out: no LMS id) of a graded folder, for ``system``."""
    out_dir = Path(out_dir)
    try:
        lms = json.loads(intake.read_file(out_dir / LMS_FILE, 16 << 20).decode("utf-8"))
        rows = list(csv.DictReader(io.StringIO(intake.read_file(out_dir / "grades.csv", 64 << 20)
                                               .decode("utf-8"))))
    except (intake.UnsafeSubmission, OSError, ValueError) as error:
        raise LmsError(f"{out_dir}: no graded LMS download here ({error}); grade one with "
                       f"`rl4llm grade DOWNLOAD.zip --lms {system} --out {out_dir}`") from None
    ids = lms.get("ids", {}) if isinstance(lms, dict) else {}
    buffer, left_out = io.StringIO(), []
    writer = csv.writer(buffer, lineterminator="\n")
    if system == "moodle":
        writer.writerow(["Identifier", "Full name", "Grade", "Maximum Grade"])
    else:
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment])
        writer.writerow(["Points Possible", "", "", "", "", rows[0]["max_total"] if rows else ""])
    for row in rows:
        folder, name = row.get("submission", ""), row.get("name") or row.get("submission", "")
        name = name[1:] if name.startswith("'") else name  # grades.csv's guard against formulas
        number = ids.get(folder) or ids.get(name)
        if not number:
            left_out.append(name)
            continue
        if system == "moodle":
            writer.writerow([f"Participant {number}", _cell(name), row["total"], row["max_total"]])
        else:
            writer.writerow([_cell(name), number, "", "", "", row["total"]])
    return buffer.getvalue(), left_out


def _cell(text: str) -> str:
    """A name as a CSV cell an LMS (or a spreadsheet) reads as text, never as a formula."""
    from graders.engine.outputs.reports import csv_cell

    return csv_cell(text)
