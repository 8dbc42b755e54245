"""The output folder of a batch holds one run: an earlier run's files are set aside, never mixed in or deleted.

``rl4llm grade ... --out DIR`` and ``rl4llm merge DIR ...`` write into ``DIR``:

- **An earlier run.** Before the first report is written, whatever an earlier run of the kit left in
  ``DIR`` -- every ``DIR/<name>/`` folder its manifest names or that holds a ``report.json`` beside a
  ``results.json`` or ``junit.xml``,
  ``grades.csv``, the class report's files, the run manifest, a shard manifest -- is moved, as it is,
  into ``DIR/_previous/<UTC time>/`` (:func:`set_aside`), and a note says so. Nothing is deleted;
  anything else in ``DIR`` (a file of the user's own) stays where it is and is never read as a report.
  A folder that is (or holds) a submission being graded is never moved.
- **The run manifest.** When the run is done, ``DIR/_batch.json`` lists its submissions' folder names,
  sorted (the same submissions in another order: the same bytes), and its exercise ids (:func:`write_run_manifest`): the same bytes from an
  unsharded grade and from a merge of its shards. ``rl4llm report DIR`` reads exactly those
  submissions (:func:`read_run_manifest`); a ``report.json`` in a folder the manifest does not name
  (one put there later, by hand or by anyone) is not part of the report. A submission folder can
  never be called ``_batch.json`` or ``_previous`` (names never start with ``_``).
"""

from __future__ import annotations

import errno
import json
import re
import os
import time
from pathlib import Path

from graders.engine.values.texts import detail
from graders.text import Text

RUN_MANIFEST = "_batch.json"
PREVIOUS = "_previous"
NAME = re.compile(r"[A-Za-z0-9-][A-Za-z0-9._-]*")  # a submission folder's name: what submission_name and unique_names make
FORMAT = "rl4llm-batch/1"
SUBMISSION_FILES = ("report.json", "results.json", "junit.xml")  # a folder holding one is a run's output
MAX_MANIFEST_BYTES = 16 * 2**20


# What an OSError that stopped a command means (a full disk, a read-only folder...), in one line: os_error_line
REASONS = {
    errno.ENOSPC: Text("the disk is full", "диск заполнен"),
    errno.EDQUOT: Text("the disk quota is used up", "квота диска исчерпана"),
    errno.EROFS: Text("the file system is read-only", "файловая система доступна только для чтения"),
    errno.EACCES: Text("permission denied", "нет прав доступа"),
    errno.EPERM: Text("operation not permitted", "операция не разрешена"),
    errno.ENOENT: Text("no such file or folder", "нет такого файла или папки"),
    errno.ENOTDIR: Text("a part of the path is a file, not a folder", "часть пути — файл, а не папка"),
    errno.EISDIR: Text("it is a folder, not a file", "это папка, а не файл"),
    errno.EEXIST: Text("it exists already", "уже существует"),
    errno.ENAMETOOLONG: Text("the name is too long", "слишком длинное имя"),
}
OS_ERROR = Text("{reason}{path}; nothing was deleted{done}", "{reason}{path}; ничего не удалено{done}")
DONE = {
    "graded_before": Text("; {count} of {total} submission(s) were graded before it, their reports in {folder}/",
                          "; до этого проверено работ: {count} из {total}, их отчёты в {folder}/"),
    "reports_kept": Text("; the reports of every submission ({total}) are in {folder}/ (not grades.csv)",
                         "; отчёты всех работ ({total}) — в {folder}/ (без grades.csv)"),
}


def reason(error: OSError, language: str) -> str:
    """What an ``OSError`` means, in ``language`` (the system's own words where the table has none)."""
    known = REASONS.get(error.errno)
    return known.in_(language) if known is not None else (error.strerror or type(error).__name__)


def os_error_line(error: OSError, language: str, done: str | None = None, **fields) -> str:
    """One line for an ``OSError`` that stopped a command: what happened, where, that nothing was deleted, and
    (``done``: a key of :data:`DONE`, with its ``fields``) what was written before it."""
    where = error.filename if error.filename is not None else ""
    return OS_ERROR.in_(language, reason=reason(error, language), path=f": {where}" if where else "",
                        done=DONE[done].in_(language, **fields) if done else "")


class OutFolderError(Exception):
    """The output folder cannot be prepared (the reason says what to do)."""


# The class report's files (graders.classreport writes them; named here, with the rest of a run's output).
REPORT_FILE = "class_report.html"
SUMMARY_FILE = "class_summary.csv"
MISCONCEPTIONS_FILE = "class_misconceptions.csv"
UNEXPLAINED_FILE = "class_unexplained.csv"
STUDENTS_FILE = "class_students.csv"
CLASS_FIGURES = {"scores": "class_scores.png", "exercises": "class_exercises.png", "heatmap": "class_heatmap.png"}
CLASS_FILES = (REPORT_FILE, SUMMARY_FILE, MISCONCEPTIONS_FILE, UNEXPLAINED_FILE, STUDENTS_FILE, *CLASS_FIGURES.values())


# files of the output folder that a submission's folder must not shadow (compared case-insensitively)
RESERVED_NAMES = {"grades.csv", *CLASS_FILES}
NAME_LIMIT = 200  # characters of a report folder's name, a number included (file systems allow 255 bytes)
EXCEL = "excel"  # `--excel`'s copies of the CSVs (graders.cli_checks.excel_copies): a run's, set aside with it


def unique_names(names: list[str]) -> list[str]:
    """Submission folder names: reserved output names renamed (``grades.csv-submission``), repeats numbered.

    The first of a repeated name keeps it; the others get ``-2``, ``-3``, ... -- never a name another
    submission of the batch has of its own (``[a, a, a-2]`` gives ``[a, a-3, a-2]``), so every folder
    is one submission's. At most :data:`NAME_LIMIT` characters each. Deterministic: the same list,
    the same names (every shard of a batch computes them alike).
    """
    # every name a submission has of its own: no renamed or numbered name ever lands on one
    taken = {name[:NAME_LIMIT] for name in names if name.lower() not in RESERVED_NAMES}
    given: set[str] = set()
    counts: dict[str, int] = {}
    out = []
    for name in names:
        reserved = name.lower() in RESERVED_NAMES
        name = (f"{name}-submission" if reserved else name)[:NAME_LIMIT]
        if name in given or (reserved and name in taken):
            count = counts.get(name, 1)
            while True:
                count += 1
                suffix = f"-{count}"
                candidate = name[:NAME_LIMIT - len(suffix)] + suffix
                if candidate not in taken:
                    break
            counts[name] = count
            name = candidate
        given.add(name)
        taken.add(name)
        out.append(name)
    return out


def _run_files() -> tuple[str, ...]:
    return ("grades.csv", RUN_MANIFEST, "_shard.json", "_lms.json", "moodle_grades.csv", "canvas_grades.csv",
            *CLASS_FILES)


def earlier_run(out_dir: Path, keep=()) -> list[str]:
    """The entries of ``out_dir`` an earlier run wrote (see the module docstring), sorted; ``keep`` (paths
    being graded) and what holds one of them are left out."""
    out_dir = Path(out_dir)
    try:
        entries = sorted(os.listdir(out_dir))
    except FileNotFoundError:
        return []
    kept = [Path(path).resolve() for path in keep]
    files = set(_run_files())
    try:
        listed = set((read_run_manifest(out_dir) or {}).get("names", ()))
    except OutFolderError:
        listed = set()  # a damaged manifest: it is set aside with the rest, its names not trusted
    found = []
    for entry in entries:
        path = out_dir / entry
        if entry == PREVIOUS:
            continue
        if path.is_symlink():
            continue  # a link is not what the kit writes: left where it is, and never read as a report
        if entry in files and path.is_file():
            found.append(entry)
        elif entry == EXCEL and path.is_dir():
            found.append(entry)
        elif path.is_dir() and not entry.startswith((".", "_")) and (entry in listed or _holds_reports(path)):
            resolved = path.resolve()
            if not any(resolved == k or resolved in k.parents for k in kept):
                found.append(entry)
    return found


def _holds_reports(folder: Path) -> bool:
    """``report.json`` and one of the others the kit writes beside it (a user's own folder with a stray
    ``junit.xml`` is not a run's)."""
    def has(name: str) -> bool:
        return (folder / name).is_file() and not (folder / name).is_symlink()

    return has("report.json") and any(has(name) for name in SUBMISSION_FILES[1:])


def set_aside(out_dir: Path, keep=(), log=None) -> Path | None:
    """Move an earlier run's entries of ``out_dir`` into ``out_dir/_previous/<UTC time>/``; return that folder
    (``None`` when there was nothing to move). ``log`` gets a note naming what was moved and where."""
    out_dir = Path(out_dir)
    stale = earlier_run(out_dir, keep)
    if not stale:
        return None
    try:
        stopped = (read_run_manifest(out_dir) or {}).get("interrupted")
    except OutFolderError:
        stopped = None
    previous = out_dir / PREVIOUS
    if previous.is_symlink() or (previous.exists() and not previous.is_dir()):
        raise OutFolderError(f"{out_dir} holds an earlier run, and {previous} (where it would be set aside) is not "
                             "a folder; grade into a new folder, or move the earlier run away yourself")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target, count = previous / stamp, 1
    while True:
        try:
            target.mkdir(parents=True)
            break
        except FileExistsError:
            count += 1
            target = previous / f"{stamp}-{count}"
    for entry in stale:
        os.rename(out_dir / entry, target / entry)  # the same file system: a rename, nothing copied or lost
    if log is not None:
        folders = sum((target / entry).is_dir() for entry in stale)
        fields = {"out_dir": str(out_dir), "target": str(target), "folders": folders, "files": len(stale) - folders}
        if stopped:
            log(detail("set_aside_interrupted", graded=stopped[0], total=stopped[1], **fields))
        else:
            log(detail("set_aside", **fields))
    return target


def displays(reports: list[dict]) -> dict[str, str]:
    """Folder name -> the submission's name as given, for the reports whose name had to be spelt otherwise."""
    return {report["submission"]: report["name"] for report in reports
            if isinstance(report.get("name"), str) and isinstance(report.get("submission"), str)}


def manifest_text(names: list[str], exercise_ids: list[str], interrupted: int | None = None,
                  display: dict[str, str] | None = None) -> str:
    """The run manifest's text: deterministic (names sorted, no time, no path), so a merge writes the unsharded
    grade's bytes. ``interrupted``: the batch's size, for a run stopped (Ctrl-C) after ``len(names)`` of them;
    ``display``: folder name -> the name as given (``Иван Петров``), where they differ."""
    manifest = {"format": FORMAT, "names": sorted(names), "exercise_ids": list(exercise_ids)}
    if display:
        manifest["display"] = {name: display[name] for name in sorted(display) if name in names}
    if interrupted is not None:
        manifest["interrupted"] = {"graded": len(names), "of": int(interrupted)}
    return json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_run_manifest(out_dir: Path, names: list[str], exercise_ids: list[str],
                       interrupted: int | None = None, display: dict[str, str] | None = None) -> Path:
    path = Path(out_dir) / RUN_MANIFEST
    temporary = path.with_name(f".{RUN_MANIFEST}.{os.getpid()}.writing")
    temporary.write_text(manifest_text(names, exercise_ids, interrupted, display), encoding="utf-8")
    os.replace(temporary, path)  # a link standing at the name is replaced, never written through
    return path


def read_run_manifest(folder: Path) -> dict | None:
    """``folder``'s run manifest (``names``, ``exercise_ids``), ``None`` if it has none; a manifest that is not
    one the kit writes raises :class:`OutFolderError` saying so."""
    path = Path(folder) / RUN_MANIFEST
    if not os.path.lexists(path):
        return None
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ValueError("not a regular file of a manifest's size")
        manifest = json.loads(path.read_text(encoding="utf-8"))
        names, ids = manifest["names"], manifest["exercise_ids"]
        if manifest.get("format") != FORMAT or not isinstance(names, list) or not isinstance(ids, list):
            raise ValueError(f"not of format {FORMAT}")
        if not all(isinstance(n, str) and NAME.fullmatch(n) and n not in (".", "..") for n in names) \
                or len(set(names)) != len(names) or not all(isinstance(i, str) for i in ids):
            raise ValueError("its names are not the folder names of one batch")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        raise OutFolderError(f"{path} is not a run manifest the kit writes ({error}); regrade into a new folder") \
            from error
    stopped = manifest.get("interrupted")
    graded = stopped.get("graded") if isinstance(stopped, dict) else None
    of = stopped.get("of") if isinstance(stopped, dict) else None
    interrupted = (graded, of) if isinstance(graded, int) and isinstance(of, int) and 0 <= graded <= of else None
    shown = manifest.get("display")
    display = {k: v for k, v in shown.items() if k in names and isinstance(v, str)} if isinstance(shown, dict) else {}
    return {"names": names, "exercise_ids": ids, "interrupted": interrupted, "display": display}
