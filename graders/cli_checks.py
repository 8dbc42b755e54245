"""What ``rl4llm`` checks before it works, and how it says that the machine, not the kit, stopped it.

An environment error is one line on stderr and an exit status that is not 0, never a traceback, and nothing the
user gave is lost: a folder that cannot be written is found before any grading (:func:`writable_folder`), a
count that makes no sense is refused by argparse (:func:`positive_int`), a ``--module`` that no submission
of the class holds is said before grading (:func:`module_mismatch`), and an ``OSError`` anywhere in a command
(a full disk, a read-only folder, a missing parent folder) is said in one line (:func:`os_error_line`).

``--excel`` (:func:`excel_copies`): every CSV of a report folder also as ``DIR/excel/<name>.csv``, UTF-8 with a
byte-order mark and CRLF line ends, which Excel on Windows opens with Cyrillic names intact; the CSVs the kit's
own tools read (``grades.csv`` for ``rl4llm export`` and ``merge``) stay as they are.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from graders.engine.outputs.outfolder import os_error_line, reason  # noqa: F401  (read here)
from graders.text import Text

EXCEL_HELP = ("also write every CSV as OUT/excel/<name>.csv for Excel: UTF-8 with a byte-order mark, so Cyrillic "
              "names read right (grades.csv itself stays as the kit's tools read it)")
EXCEL_FOLDER = "excel"  # graders.engine.outputs.outfolder sets it aside with the rest of a run

SAID = {
    "count": Text("{value!r} is not a positive whole number (1, 2, ...)",
                  "{value!r} — не целое положительное число (1, 2, ...)"),
    "not_folder": Text("{option} {path} is a file, not a folder: name a new or existing folder",
                       "{option} {path} — файл, а не папка: укажите новую или существующую папку"),
    "not_writable": Text("{option} {path} cannot be written ({reason}); choose a folder you can write to",
                         "в {option} {path} нельзя записать ({reason}); укажите папку, доступную для записи"),
    "module_mismatch": Text("warning: --module {number} was given, but no submission holds Module {number}'s files "
                            "(the class handed in Module {found}): every submission will score 0; grade with "
                            "--module {first} or without --module",
                            "предупреждение: указан --module {number}, но ни в одной работе нет файлов модуля "
                            "{number} (группа сдала модуль {found}): все работы получат 0 баллов; запустите проверку "
                            "с --module {first} или без --module"),
    "excel": Text("for Excel (UTF-8 with a byte-order mark): {folder}/", "для Excel (UTF-8 с меткой BOM): {folder}/"),
}


MOST_JOBS = 8
JOBS_HELP = (f"submissions graded in parallel (default: the cores this process may use, at most {MOST_JOBS}, and one "
             "per 6 GiB of memory; --jobs 1 grades one at a time)")


def default_jobs(memory_mb: int) -> int:
    """``rl4llm grade``'s ``--jobs`` when none is given: the cores this process may use, at most
    :data:`MOST_JOBS`, and at most one submission per ``2 × memory_mb`` of the machine's memory (a submission's
    workers: its learner code's lane and its training files' lane, each granted ``memory_mb``). Grades never
    depend on it (each submission's budgets are CPU seconds of its own processes), only the wall time does."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 0
    by_memory = memory // ((2 * memory_mb) << 20) if memory > 0 else cores
    return max(1, min(cores, MOST_JOBS, by_memory))


def positive_int(text: str) -> int:
    """``--jobs N`` for argparse: a whole number of at least 1 (``0`` and ``-3`` exit 2 with the reason)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        from graders.language import default_language

        raise argparse.ArgumentTypeError(SAID["count"].in_(default_language(), value=text))
    return value


def module_arg(text: str):
    """``--module`` for argparse: 8, 9, module_08 or module_09; anything else exits 2 naming the modules."""
    from graders.learner_cli import module_arg as learner_module_arg

    return learner_module_arg(text)


def shard_arg(text: str):
    """``--shard I/N`` for argparse: a bad value exits 2 with the reason."""
    from graders.engine.routes.shards import ShardError, parse_shard

    try:
        return parse_shard(text)
    except ShardError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def writable_folder(path: str | Path, option: str, language: str) -> Path:
    """``path`` as a folder the command can write into, made if new: checked by writing (and removing) a file
    there before any work is done. A ``ValueError`` says in one line why not (a file, read-only, no permission)."""
    folder = Path(path)
    if os.path.lexists(folder) and not folder.is_dir():
        raise ValueError(SAID["not_folder"].in_(language, option=option, path=folder))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".rl4llm-write-test-"):
            pass
    except OSError as error:
        raise ValueError(SAID["not_writable"].in_(language, option=option, path=folder,
                                                  reason=reason(error, language))) from None
    return folder


def module_mismatch(paths: list[Path], number: str, language: str) -> str | None:
    """The warning for a ``--module`` that no submission of the class holds (its files say another), else None."""
    from graders.engine.intake.class_modules import file_names, modules_in

    found: set[str] = set()
    for path in paths:
        found |= modules_in(file_names(path))
    if not found or number in found:
        return None
    shown = sorted(found)
    return SAID["module_mismatch"].in_(language, number=number, found=" + ".join(shown), first=shown[0])


def excel_copies(folder: Path) -> Path | None:
    """Every ``*.csv`` of report folder ``folder`` as ``folder/excel/<name>.csv`` for Excel: UTF-8 with a byte-order
    mark, CRLF line ends, cells as they are (the kit's CSV cells never start a formula). None when it has no CSV."""
    folder = Path(folder)
    files = sorted(path for path in folder.glob("*.csv") if path.is_file() and not path.is_symlink())
    if not files:
        return None
    target = folder / EXCEL_FOLDER
    target.mkdir(exist_ok=True)
    for path in files:
        text = path.read_text(encoding="utf-8")
        rows = text.replace("\r\n", "\n").split("\n")
        (target / path.name).write_bytes(b"\xef\xbb\xbf" + "\r\n".join(rows).encode("utf-8"))
    return target
