"""Sharding a batch: ``rl4llm grade ... --shard I/N`` on many machines, then ``rl4llm merge``.

Every shard is given the *whole* list of submissions, in the same order, and
grades its own part of it:

- **Assignment.** Round robin: submission ``k`` (0-based, in the order given)
  belongs to shard ``(k % N) + 1``. Neighbours in a sorted listing (often a
  cohort, or one learner's resubmissions) land on different shards, so the
  shards take about the same time. A shard with nothing to grade (N larger
  than the batch) still writes its manifest.
- **Names.** A shard names its submissions exactly as an unsharded
  ``rl4llm grade`` of all of them would (repeats numbered across the whole
  batch), so the merged reports and ``grades.csv`` are the same bytes.
- **Manifest.** Besides the usual ``<name>/report.json``, ``results.json``,
  ``junit.xml`` and a shard-local ``grades.csv``, each shard folder holds
  ``_shard.json``: I, N, the batch size, every name of the batch in order, the
  indices this shard holds, the exercise ids, the options that shape a report
  and a digest of the kit. A submission folder can never be called
  ``_shard.json`` (names never start with ``_``). It is written first with
  ``"complete": false`` and rewritten when the shard is done, so an
  interrupted shard is never mistaken for a finished one.
- **Merge.** ``rl4llm merge OUT SHARD_DIR...`` checks that the folders are the
  N shards of one batch, each exactly once and each complete, with every
  report present, then writes each submission's report folder into ``OUT``
  and ``OUT/grades.csv``. ``OUT`` must be a new or ordinary folder, not a
  shard folder: the shards are left exactly as they were, and nothing is ever
  deleted.
- **Integrity.** A shard folder is input from someone else's machine, and
  whoever could write to it (a learner who reached it, a careless or
  tampering TA) is treated as an adversary. Before anything is written the
  merge checks, for every shard (:func:`verify_shards`):

  - the kit: the manifest's kit digest and version are this kit's
    (:func:`kit_digest`), so the shards were graded by the engine, checks and
    references that do the merge, not by an edited copy;
  - the exercises: the manifest's and every report's exercise ids are this
    kit's for the graded modules, in course order, each with this kit's
    ``max_points``; points are finite, between 0 and ``max_points``;
    misconception names are in this kit's catalogue for that exercise; the
    totals are the sums of the exercises' points (recomputed, as
    :meth:`~graders.engine.protocol.SubmissionReport.to_dict` makes them).
    This also keeps learner- or TA-made text (``=HYPERLINK(...)``) out of
    ``grades.csv`` and the class CSVs, whose cells come from these ids, names
    and numbers and from the kit's own hints;
  - the files: a shard holds ``_shard.json``, ``grades.csv`` and one folder
    per submission it graded, each with ``report.json``, ``results.json`` and
    ``junit.xml``, and nothing else; each is a regular file with one name
    (no symbolic link is followed, no hard link, pipe or device read: every
    file is opened with ``O_NOFOLLOW`` under a folder opened the same way;
    only the shard folder named on the command line may itself be a link)
    and at most :data:`MAX_FILE_BYTES` long (:data:`MAX_MANIFEST_BYTES` for
    the manifest); ``results.json``, ``junit.xml`` and the shard's
    ``grades.csv`` are exactly what the grader writes from its
    ``report.json``, and ``report.json`` is exactly as the grader writes it.

  What ``OUT`` receives are those checked bytes, each written to a new file
  renamed into place (never through a link that stands in ``OUT``). One
  refused file refuses the whole merge (:class:`MergeRefused` lists every
  problem: which shard, which file, why), because a ``grades.csv`` without
  some submissions, or with a report left out, reads like a complete one
  and would be uploaded as the class's grades; the fix is to grade the named
  shard again (its submissions are still there), then merge.
  What no merge can tell is a forgery made with the kit itself: a report
  rewritten with other points but coherent in every file. That needs a
  regrade (of a sample) or a key the people who can write to the shards do
  not hold.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import stat
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import graders
from graders.engine import reports
from graders.engine.batch import (RESERVED_NAMES, BatchResult, GraderError, grade_paths, kit_fingerprint,
                                  unique_names)
from graders.engine.grading import GradeOptions
from graders.engine.kit import DEFAULT_KIT, Kit
from graders.engine.protocol import STATUSES
from graders.engine.sandbox import LAYERS
from graders.engine.submission import submission_name

MANIFEST = "_shard.json"
NAME = re.compile(r"[A-Za-z0-9-][A-Za-z0-9._-]*")  # what submission_name and unique_names can produce
FORMAT = 1  # the manifest's layout; a merge refuses any other
# options that can change a report; the rest (interpreter, --require-sandbox) may differ between machines
REPORT_OPTIONS = ("modules", "hide_hidden_inputs", "timeout", "memory_mb", "load_timeout",
                  "detect_misconceptions", "scratch_mb", "lang")
# what every shard of one batch must agree on, with the words an error uses for it
SAME_BATCH = {"count": "the number of shards N", "names": "the submissions (or their order)",
              "exercise_ids": "the exercises graded (--module)", "options": "the grading options",
              "kit": "the kit (engine, checks or reference solutions changed between shards)"}


class ShardError(ValueError):
    """Shard input that cannot be used (a bad ``--shard``, an incomplete or mixed set); the message says why."""


# ---------------------------------------------------------------------------
# Which submissions a shard holds
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` of ``count`` (1-based, as in ``--shard 2/8`` and SLURM array task ids)."""

    index: int  # I: 1 <= I <= N
    count: int  # N: the number of shards, >= 1

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ShardError(f"{self.index}/{self.count}: N must be at least 1")
        if not 1 <= self.index <= self.count:
            raise ShardError(f"{self.index}/{self.count}: I must be between 1 and N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def indices(self, total: int) -> list[int]:
        """The 0-based positions (of ``total`` submissions) this shard grades: round robin."""
        return list(range(self.index - 1, total, self.count))


def parse_shard(text: str) -> ShardSpec:
    """``"2/8"`` -> ``ShardSpec(2, 8)``; anything else raises :class:`ShardError` saying what is expected."""
    match = re.fullmatch(r"\s*(-?\d+)\s*/\s*(-?\d+)\s*", str(text))
    if match is None:
        raise ShardError(f"{text!r}: expected I/N, e.g. 2/8 (shard I of N, counted from 1)")
    return ShardSpec(int(match.group(1)), int(match.group(2)))


def batch_names(paths: list[Path]) -> list[str]:
    """The report folder names an unsharded ``rl4llm grade`` of all ``paths`` would use, in order."""
    return unique_names([submission_name(Path(p)) for p in paths])


def kit_digest(kit: Kit = DEFAULT_KIT) -> str:
    """sha256 over the kit's graded files (paths relative to the kit, contents), bytecode caches left out.

    Equal digests mean the shards ran the same engine, checks and references; paths are relative so
    that machines with the kit at different places agree, and caches vary with the Python version.
    """
    files = {path: sha for path, sha in kit_fingerprint(kit).items()
             if "__pycache__" not in Path(path).parts and not path.endswith(".pyc")}
    base = os.path.commonpath(list(files)) if files else ""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{os.path.relpath(path, base)}\0{files[path]}\n".encode())
    return digest.hexdigest()


# ---------------------------------------------------------------------------
# Grading one shard
# ---------------------------------------------------------------------------
def _report_options(options: GradeOptions) -> dict:
    chosen = {key: value for key, value in asdict(options).items() if key in REPORT_OPTIONS}
    return json.loads(json.dumps(chosen))  # tuples as lists: the form a manifest is read back in


def new_manifest(spec: ShardSpec, names: list[str], options: GradeOptions, kit: Kit = DEFAULT_KIT) -> dict:
    """The manifest of shard ``spec`` of a batch named ``names``, before grading (``"complete": false``)."""
    return {"format": FORMAT, "index": spec.index, "count": spec.count, "total": len(names),
            "names": list(names), "indices": spec.indices(len(names)), "options": _report_options(options),
            "kit": {"version": graders.__version__, "digest": kit_digest(kit)},
            "complete": False, "exercise_ids": None, "internal_errors": []}


def write_manifest(out_dir: Path, manifest: dict) -> None:
    """Write ``_shard.json`` whole or not at all (a temporary file, then a rename)."""
    target = Path(out_dir) / MANIFEST
    temporary = target.with_name(MANIFEST + ".tmp")
    try:
        temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, target)
    except OSError as error:
        raise GraderError(f"the shard manifest {target} could not be written: {error}") from error


def grade_shard(paths: list[Path], out_dir: Path, spec: ShardSpec, options: GradeOptions | None = None, *,
                jobs: int = 1, kit: Kit = DEFAULT_KIT, progress: bool = True, log=None) -> BatchResult:
    """Grade shard ``spec`` of the batch ``paths`` (all of them, in order) into ``out_dir``, with its manifest."""
    options = options or GradeOptions()
    paths = [Path(p) for p in paths]
    names = batch_names(paths)
    manifest = new_manifest(spec, names, options, kit)
    held = manifest["indices"]
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    write_manifest(out_dir, manifest)  # an interrupted shard stays marked incomplete
    result = grade_paths([paths[i] for i in held], out_dir, options, jobs=jobs, kit=kit, progress=progress,
                         log=log, names=[names[i] for i in held])
    manifest.update(complete=True, exercise_ids=result.exercise_ids, internal_errors=result.internal_errors)
    write_manifest(out_dir, manifest)
    return result


# ---------------------------------------------------------------------------
# Merging
# ---------------------------------------------------------------------------
MAX_MANIFEST_BYTES = 16 * 2**20  # a manifest holds every name of the batch: some 100 bytes a submission
MAX_FILE_BYTES = 4 * 2**20  # every other file a merge reads; a real report.json is some kB
REPORT_FILES = ("report.json", "results.json", "junit.xml")  # a submission's folder: these and nothing else
SHARD_FILES = (MANIFEST, "grades.csv")  # what a shard holds beside its submissions' folders
DIGEST = re.compile(r"[0-9a-f]{64}")  # a kit digest as kit_digest writes it
VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,64}")
REPORT_KEYS, REPORT_OPTIONAL = {"submission", "score", "max_score", "exercises"}, {"sandbox"}
ENTRY_KEYS = {"id", "points", "max_points", "status", "feedback", "misconceptions"}
ENTRY_OPTIONAL = {"not_implemented"}


@dataclass
class Shard:
    """A finished shard's folder and its manifest, as read back by :func:`read_shard`."""

    folder: Path
    manifest: dict

    @property
    def label(self) -> str:
        return f"shard {self.manifest['index']}/{self.manifest['count']} ({self.folder})"


@dataclass
class MergeResult:
    """What ``rl4llm merge`` wrote, for the scoreboard and the exit code."""

    reports: list[dict]  # every submission's report.json, in the batch's order
    exercise_ids: list[str]
    out_dir: Path
    names: list[str]
    internal_errors: list[str]  # what the shards recorded while grading


class MergeRefused(ShardError):
    """Shards that fail the integrity checks (:func:`verify_shards`); nothing was written.

    ``problems`` has one line per refused file: which shard, which file, why.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        super().__init__(f"refused to merge ({count}; nothing was written). Grade the shards named here again "
                         "with this kit, then merge:\n  " + "\n  ".join(self.problems))


@dataclass(frozen=True)
class CheckedReport:
    """One submission's report as the merge checked it, and its files' bytes: what ``OUT`` receives."""

    report: dict
    files: dict[str, bytes]  # REPORT_FILES -> their bytes, exactly as the shard holds them


@dataclass(frozen=True)
class Registry:
    """What this kit says the report of a batch of ``modules`` holds (:func:`kit_registry`)."""

    modules: tuple[str, ...]
    exercise_ids: tuple[str, ...]  # in course order, as prepare_job lists them
    max_points: dict[str, float]  # as a report rounds them
    misconceptions: dict[str, frozenset[str]]  # the catalogue's names for each exercise


def kit_registry(modules, kit: Kit = DEFAULT_KIT) -> Registry:
    """The exercises of ``modules`` as this kit grades them: ids, ``max_points`` and misconception names.

    The same sources as grading: :meth:`Kit.exercises` and :class:`~graders.engine.grading.Exercise` for
    ids and points, the catalogue files for names. An unknown module raises ``ValueError`` saying so.
    """
    from graders.checks import spec_for
    from graders.engine.grading import Exercise
    from graders.engine.misconceptions import CatalogueError, catalogue_file, read_entries

    ids = kit.exercises(modules)
    max_points = {i: round(Exercise(i, *i.split(".", 1), spec_for(i)).max_points, 4) for i in ids}
    names: dict[str, frozenset[str]] = {}
    for i in ids:
        path = catalogue_file(i, kit)
        try:
            names[i] = frozenset(entry.name for entry in read_entries(path)) if path.is_file() else frozenset()
        except CatalogueError as error:
            raise ShardError(f"this kit's misconception catalogue cannot be read: {error}") from error
    return Registry(tuple(modules), tuple(ids), max_points, names)


# -- reading a shard: regular files only, never through a link ---------------
class _Unfit(Exception):
    """Why a merge does not read a file or folder of a shard; the text follows the file's name."""


def _kind(mode: int) -> str:
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
                        (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "a device"


def _not_a(mode: int, wanted: str) -> _Unfit:
    link = " (a merge follows no link)" if stat.S_ISLNK(mode) else ""
    return _Unfit(f"is {_kind(mode)}, not {wanted}{link}")


def _shown(value, limit: int = 80) -> str:
    """``value`` for a message: a plain name as it is, anything else quoted and escaped (no control characters)."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,80}", value):
        return value
    text = ascii(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _lstat(name, dir_fd: int | None) -> os.stat_result:
    """``name``'s own status (a link's, not its target's); a missing name raises FileNotFoundError."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _Unfit(f"cannot be looked at: {error.strerror}") from None


def _open_folder(name, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``name`` (in ``dir_fd``), which must be a folder itself, not a link to one."""
    before = _lstat(name, dir_fd)
    if not stat.S_ISDIR(before.st_mode):
        raise _not_a(before.st_mode, "a folder")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        raise _Unfit(f"cannot be opened: {error.strerror}") from None
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise _Unfit("changed while the merge read it")
    return fd


def _read_file(dir_fd: int, name: str, limit: int) -> bytes:
    """The bytes of ``name`` in the folder ``dir_fd``: a regular file with one name, at most ``limit`` bytes,
    opened with ``O_NOFOLLOW`` (and ``O_NONBLOCK``, so that a named pipe put in its place cannot stall a merge)."""
    before = _lstat(name, dir_fd)
    if not stat.S_ISREG(before.st_mode):
        raise _not_a(before.st_mode, "a file")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        raise _Unfit(f"cannot be read: {error.strerror}") from None
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(now.st_mode):
            raise _Unfit("changed while the merge read it")
        if now.st_nlink != 1:  # the same file under another name, maybe outside the shard
            raise _Unfit(f"is a hard link ({now.st_nlink} names for one file); a shard's files have one name")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise _Unfit(f"is longer than the {limit} bytes a merge reads")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _strict_json(data: bytes):
    """JSON as the kit writes it: UTF-8, no NaN or infinity, no key twice (another reader may take the other)."""
    def pairs(items):
        keys = [key for key, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError(f"the key {_shown(next(k for k in keys if keys.count(k) > 1))} appears twice")
        return dict(items)

    def constant(word):
        raise ValueError(f"{word} is not a finite number")

    return json.loads(data.decode("utf-8"), object_pairs_hook=pairs, parse_constant=constant)


def _plain_names(names, total: int) -> bool:
    """``total`` distinct folder names as :func:`batch_names` makes them: no ``/``, never ``.``, ``..``, a name
    starting with ``_`` (``_shard.json``) or ``grades.csv`` (a merge reads ``SHARD/<name>`` and writes
    ``OUT/<name>``: an edited manifest must reach neither outside nor the files beside the submissions)."""
    return (isinstance(names, list) and len(names) == total and len(set(names)) == total
            and all(isinstance(n, str) and len(n) <= 255 and NAME.fullmatch(n) and n.lower() not in RESERVED_NAMES
                    for n in names))


def _manifest_shape(manifest: dict) -> str | None:
    """What in a finished manifest is not as :func:`grade_shard` writes it; ``None`` when nothing is."""
    kit = manifest["kit"]
    if not (isinstance(kit, dict) and set(kit) == {"version", "digest"}
            and all(isinstance(kit[key], str) and pattern.fullmatch(kit[key])
                    for key, pattern in (("version", VERSION), ("digest", DIGEST)))):
        return "its kit is not a version and a sha256 digest"
    options = manifest["options"]
    if not (isinstance(options, dict) and set(options) == set(REPORT_OPTIONS) and isinstance(options["modules"], list)
            and all(isinstance(m, str) for m in options["modules"])):
        return "its options are not the grading options"
    for key in ("exercise_ids", "internal_errors"):
        if not (isinstance(manifest[key], list) and all(isinstance(item, str) for item in manifest[key])):
            return f"its {key} are not a list of texts"
    return None


def _read_in(folder: Path, name: str, limit: int) -> bytes:
    """:func:`_read_file` of ``name`` in ``folder``, the folder named on the command line."""
    top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the folder given: followed if a link
    try:
        return _read_file(top, name, limit)
    finally:
        os.close(top)


def read_shard(folder: Path) -> Shard:
    """Read and check one shard folder's manifest; a folder that is not a finished shard raises ShardError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ShardError(f"{folder}: no such folder")
    path = folder / MANIFEST
    try:
        manifest = _strict_json(_read_in(folder, MANIFEST, MAX_MANIFEST_BYTES))
    except FileNotFoundError:
        raise ShardError(f"{folder} has no {MANIFEST}: it is not the output of `rl4llm grade --shard I/N`") from None
    except _Unfit as why:
        raise ShardError(f"{path} {why}") from None
    except (OSError, ValueError, RecursionError) as error:
        raise ShardError(f"{path} cannot be read: {error}") from error
    expected = {"format", "index", "count", "total", "names", "indices", "options", "kit", "complete",
                "exercise_ids", "internal_errors"}
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not expected <= set(manifest):
        raise ShardError(f"{path} is not a shard manifest of format {FORMAT} (written by another kit version?)")
    shard = Shard(folder, manifest)
    if manifest["complete"] is not True:
        raise ShardError(f"{shard.label} did not finish grading; grade that shard again")
    try:
        numbers = all(type(manifest[key]) is int for key in ("index", "count", "total"))
        spec = ShardSpec(manifest["index"], manifest["count"])
        fits = numbers and manifest["indices"] == spec.indices(manifest["total"]) \
            and _plain_names(manifest["names"], manifest["total"])
    except (ShardError, TypeError):
        fits = False
    if not fits:
        raise ShardError(f"{path} contradicts itself (its I/N, indices or names do not fit together); "
                         "was it edited by hand?")
    shape = _manifest_shape(manifest)
    if shape is not None:
        raise ShardError(f"{path} is not a manifest as `rl4llm grade --shard` writes it ({shape}); "
                         "was it edited by hand?")
    return shard


def check_complete_set(shards: list[Shard]) -> None:
    """The shards are the N shards of one batch: the same batch everywhere, each shard exactly once."""
    first = shards[0]
    for shard in shards[1:]:
        for key, words in SAME_BATCH.items():
            if shard.manifest[key] != first.manifest[key]:
                raise ShardError(f"{first.folder} and {shard.folder} are shards of different batches: "
                                 f"they differ in {words}")
    count = first.manifest["count"]
    seen: dict[int, Shard] = {}
    for shard in shards:
        index = shard.manifest["index"]
        if index in seen:
            raise ShardError(f"shard {index}/{count} is given twice: {seen[index].folder} and {shard.folder}")
        seen[index] = shard
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in seen]
    if missing:
        raise ShardError(f"shard {missing[0]} is missing" if len(missing) == 1 else
                         f"shards {', '.join(missing)} are missing")


# -- what a report may hold ----------------------------------------------------
def _number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _entry_problems(entry: dict, registry: Registry) -> list[str]:
    """Why one exercise entry (whose id is the kit's) is not as the grader writes it."""
    where = f"exercise {entry['id']}"
    keys = set(entry)
    if not ENTRY_KEYS <= keys or keys - ENTRY_KEYS - ENTRY_OPTIONAL:
        return [f"{where}: its fields are {_shown(sorted(keys))}, not {sorted(ENTRY_KEYS)}"]
    problems = []
    top, points = entry["max_points"], entry["points"]
    if top != registry.max_points[entry["id"]] or not _number(top):
        problems.append(f"{where}: max_points {_shown(top)}, but this kit gives {registry.max_points[entry['id']]!r}")
    if not _number(points):
        problems.append(f"{where}: points {_shown(points)} are not a finite number")
    elif points < 0:
        problems.append(f"{where}: points {points!r} are negative")
    elif _number(top) and points > top:
        problems.append(f"{where}: points {points!r} are more than max_points {top!r}")
    status = entry["status"]
    if status not in STATUSES:
        problems.append(f"{where}: status {_shown(status)} is not one of {', '.join(STATUSES)}")
    elif _number(points) and _number(top) and (
            (status == "passed" and abs(points - top) > 1e-9) or (status in ("missing", "timeout") and points != 0)):
        problems.append(f"{where}: status {status} with {points!r} of {top!r} points (the grader gives "
                        "passed all points, missing and timeout none)")
    if not isinstance(entry["feedback"], str):
        problems.append(f"{where}: its feedback is not a text")
    named = entry["misconceptions"]
    if not isinstance(named, list) or not all(isinstance(name, str) for name in named):
        problems.append(f"{where}: misconceptions {_shown(named)} are not a list of names")
    else:
        catalogue = registry.misconceptions[entry["id"]]
        problems += [f"{where}: misconception {_shown(name)} is not in this kit's catalogue for that exercise"
                     for name in named if name not in catalogue]
        if named != sorted(set(named)):
            problems.append(f"{where}: misconceptions are not sorted and distinct, as the grader writes them")
    if "not_implemented" in entry and (entry["not_implemented"] is not True or status != "error" or points != 0):
        problems.append(f"{where}: not_implemented {_shown(entry['not_implemented'])} with status "
                        f"{_shown(status)} and points {_shown(points)} (the grader writes true, error, 0)")
    return problems


def report_problems(report, name: str, registry: Registry) -> list[str]:
    """Why ``report`` (a ``report.json`` read back) is not one this kit's grader writes for the submission
    ``name`` of a batch of ``registry``'s modules: one line per problem, none when it is one.

    Everything a report holds is checked against the kit (ids, max_points, misconception names, statuses)
    or against the rest of the report (the totals, recomputed as :class:`SubmissionReport` makes them).
    """
    if not isinstance(report, dict):
        return ["is not a report (a JSON object)"]
    keys = set(report)
    if not REPORT_KEYS <= keys or keys - REPORT_KEYS - REPORT_OPTIONAL:
        return [f"its fields are {_shown(sorted(keys))}, not {sorted(REPORT_KEYS)}"]
    if report["submission"] != name:
        return [f"is not the report of submission {name!r} (it names {_shown(report['submission'])})"]
    entries = report["exercises"]
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        return ["its exercises are not a list of entries"]
    ids = [entry.get("id") for entry in entries]
    known = [isinstance(i, str) and i in registry.max_points for i in ids]
    problems = [f"unknown exercise id {_shown(i)}: this kit's module(s) {', '.join(registry.modules)} have no "
                "such exercise" for i, fits in zip(ids, known) if not fits]
    absent = [i for i in registry.exercise_ids if i not in ids]
    if absent:
        problems.append(f"lacks exercise(s) {', '.join(absent[:3])}{' ...' if len(absent) > 3 else ''}")
    if not problems and ids != list(registry.exercise_ids):
        problems.append("lists its exercises out of course order, or one twice")
    for entry, fits in zip(entries, known):
        if fits:
            problems += _entry_problems(entry, registry)
    numbers = [(e.get("points"), e.get("max_points")) for e in entries]
    if all(_number(p) and _number(m) for p, m in numbers):  # else the lines above say which is not a number
        for key, field, total in (("score", "points", round(sum(p for p, _ in numbers), 4)),
                                  ("max_score", "max_points", round(sum(m for _, m in numbers), 4))):
            if report[key] != total or not _number(report[key]):
                problems.append(f"{key} {_shown(report[key])} is not the sum of its exercises' {field} ({total!r})")
    sandbox = report.get("sandbox")  # absent only from an internal error's report (batch._internal_error_report)
    if "sandbox" in report and not (isinstance(sandbox, dict) and set(sandbox) == {*LAYERS, "identity"}
                                    and all(type(sandbox[layer]) is bool for layer in LAYERS)
                                    and isinstance(sandbox["identity"], str)):
        problems.append("its sandbox record is not the grader's (yes or no for each sandbox layer, and an identity)")
    return problems


def _rendered(scratch: Path, name: str, report: dict) -> dict[str, bytes]:
    """The bytes :func:`reports.write_submission_reports` writes for ``report`` (written under ``scratch``)."""
    folder = reports.write_submission_reports(scratch, name, report)
    return {file: (folder / file).read_bytes() for file in REPORT_FILES}


# -- checking every shard ----------------------------------------------------
class _Problems(list):
    """The lines of a :class:`MergeRefused`: which shard, which file, why."""

    def add(self, shard: Shard, relative: str, why) -> None:
        self.append(f"{shard.label}: {relative}: {why}")


def _unexpected(shard: Shard, dir_fd: int, prefix: str, allowed, holds: str, problems: _Problems) -> None:
    """A problem for every entry of the folder ``dir_fd`` that is not in ``allowed``."""
    for entry in sorted(os.listdir(dir_fd)):
        if entry not in allowed:
            kind = _kind(os.stat(entry, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            problems.add(shard, prefix + _shown(entry), f"unexpected {kind[2:]}: {holds}")


def _read_or_say(shard: Shard, dir_fd: int, relative: str, problems: _Problems, missing: str = "") -> bytes | None:
    """The file ``relative`` (its last part in the folder ``dir_fd``), or ``None`` with a problem saying why."""
    try:
        return _read_file(dir_fd, relative.rsplit("/", 1)[-1], MAX_FILE_BYTES)
    except FileNotFoundError:
        problems.add(shard, relative, "is missing" + missing)
    except _Unfit as why:
        problems.add(shard, relative, why)
    return None


def _read_submission(shard: Shard, top: int, name: str, problems: _Problems) -> dict[str, bytes] | None:
    """The report files of submission ``name`` in the shard (folder ``top``), or ``None`` (problems say why)."""
    nothing = f": the shard has no report for submission {name!r}"
    try:
        folder = _open_folder(name, top)
    except FileNotFoundError:
        problems.add(shard, f"{name}/", "is missing" + nothing)
        return None
    except _Unfit as why:
        problems.add(shard, f"{name}/", why)
        return None
    try:
        _unexpected(shard, folder, f"{name}/", REPORT_FILES,
                    f"a submission's folder holds only {', '.join(REPORT_FILES)}", problems)
        files = {file: _read_or_say(shard, folder, f"{name}/{file}", problems,
                                    nothing if file == "report.json" else "") for file in REPORT_FILES}
    finally:
        os.close(folder)
    return files if all(data is not None for data in files.values()) else None


def _check_submission(shard: Shard, name: str, files: dict[str, bytes], registry: Registry, scratch: Path,
                      problems: _Problems) -> dict | None:
    """The checked report of ``name`` (its files as read), or ``None`` (problems say why)."""
    where = f"{name}/report.json"
    try:
        report = _strict_json(files["report.json"])
    except (ValueError, RecursionError) as error:
        problems.add(shard, where, f"cannot be read: {error}")
        return None
    found = report_problems(report, name, registry)
    for why in found:
        problems.add(shard, where, why)
    if found:
        return None
    rendered = _rendered(scratch, name, report)
    differ = [file for file in REPORT_FILES if files[file] != rendered[file]]
    for file in differ:
        why = (f"is not what {where} gives: one of the two was edited after grading" if file != "report.json"
               else "is not byte for byte as the grader writes it: edited after grading")
        problems.add(shard, f"{name}/{file}", why)
    return None if differ else report


def _check_shard(shard: Shard, registry: Registry | None, scratch: Path,
                 problems: _Problems) -> dict[str, CheckedReport]:
    """Read one shard's files (the layout grade_shard leaves, nothing else); with a ``registry``, check its reports."""
    names = shard.manifest["names"]
    held = [names[index] for index in shard.manifest["indices"]]
    checked: dict[str, CheckedReport] = {}
    try:
        top = os.open(shard.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _unexpected(shard, top, "", (*SHARD_FILES, *held), f"a shard holds only {MANIFEST}, grades.csv and a "
                        "folder for each submission it graded", problems)
            grades = _read_or_say(shard, top, "grades.csv", problems)
            for name in held:
                files = _read_submission(shard, top, name, problems)
                report = None if files is None or registry is None else \
                    _check_submission(shard, name, files, registry, scratch, problems)
                if report is not None:
                    checked[name] = CheckedReport(report, files)
        finally:
            os.close(top)
    except OSError as error:
        problems.add(shard, ".", f"cannot be read: {error}")
        return checked
    if grades is not None and len(checked) == len(held):
        expected = reports.grades_csv([checked[name].report for name in held], shard.manifest["exercise_ids"])
        if grades != expected.encode("utf-8"):
            problems.add(shard, "grades.csv", "is not what the shard's reports give: edited after grading")
    return checked


def verify_shards(shards: list[Shard], kit: Kit = DEFAULT_KIT) -> dict[str, CheckedReport]:
    """Check every shard of a complete set against this kit (see the module docstring); every submission's checked
    report by name, or :class:`MergeRefused` listing every problem.

    With a kit other than the one that graded (the digest differs) the reports are not checked one by one:
    another kit's exercises and points would say little; the files are still looked at.
    """
    problems = _Problems()
    shards = sorted(shards, key=lambda shard: shard.manifest["index"])
    first = shards[0].manifest  # every shard agrees on the kit, modules and exercises (check_complete_set)
    mine = {"version": graders.__version__, "digest": kit_digest(kit)}
    registry = None
    if first["kit"] != mine:
        for shard in shards:
            graded = shard.manifest["kit"]
            problems.add(shard, MANIFEST, f"records kit {graded['version']} with kit digest {graded['digest']}, but "
                         f"this kit is {mine['version']} with kit digest {mine['digest']}: the shard was graded by "
                         "another kit (engine, checks or references changed), or the record was edited")
    else:
        try:
            registry = kit_registry(first["options"]["modules"], kit)
        except ShardError:  # the kit's own catalogue: no shard's fault
            raise
        except ValueError as error:  # a module this kit does not have
            for shard in shards:
                problems.add(shard, MANIFEST, f"its modules cannot be graded by this kit: {error}")
    if registry is not None and first["exercise_ids"] != list(registry.exercise_ids):
        unknown = [i for i in first["exercise_ids"] if i not in registry.max_points]
        words = (f"unknown exercise id {_shown(unknown[0])}" if unknown else "they are listed otherwise")
        for shard in shards:
            problems.add(shard, MANIFEST, f"its exercise_ids are not this kit's for module(s) "
                         f"{', '.join(registry.modules)} ({words})")
    checked: dict[str, CheckedReport] = {}
    with tempfile.TemporaryDirectory(prefix="rl4llm-merge-") as scratch:
        for shard in shards:
            checked.update(_check_shard(shard, registry, Path(scratch), problems))
    if problems:
        raise MergeRefused(problems)
    return checked


# -- writing OUT -------------------------------------------------------------
def _check_out(out: Path, shards: list[Shard], names: list[str]) -> None:
    """``out`` must not be a shard folder or lie inside one, nothing merged may land on a shard, and what stands
    where the merge writes must be what it writes there: a folder, a file, never a link."""
    resolved = out.resolve()
    taken = {"grades.csv", *names}
    for shard in shards:
        folder = shard.folder.resolve()
        if resolved == folder or folder in resolved.parents:
            raise ShardError(f"{resolved} lies inside {shard.label}; merge into a folder outside the shards")
        if resolved in folder.parents and folder.relative_to(resolved).parts[0] in taken:
            raise ShardError(f"merging into {resolved} would write over {shard.label}; choose another OUT")
    targets = [(out / "grades.csv", stat.S_ISREG, "a file")]
    for name in names:
        targets.append((out / name, stat.S_ISDIR, "a folder"))
        targets += [(out / name / file, stat.S_ISREG, "a file") for file in REPORT_FILES]
    for target, fits, wanted in targets:
        try:
            mode = os.lstat(target).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            raise ShardError(f"{target} cannot be looked at: {error}") from error
        if not fits(mode) or stat.S_ISLNK(mode):
            raise ShardError(f"{target} exists and is {_kind(mode)}, not {wanted}: the merge writes {wanted} there "
                             "(never through a link); remove it or choose another OUT")


def _write_file(dir_fd: int, name: str, data: bytes) -> None:
    """``data`` as the file ``name`` of the folder ``dir_fd``: a new file renamed over the name, so that whatever
    stands there (a link put in since it was checked) is replaced, never written through."""
    temporary = f".{name}.{os.getpid()}.merging"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _write_out(out: Path, names: list[str], checked: dict[str, CheckedReport], grades: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    top = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in names:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=top)
            folder = _open_folder(name, top)
            try:
                for file, data in checked[name].files.items():
                    _write_file(folder, file, data)
            finally:
                os.close(folder)
        _write_file(top, "grades.csv", grades.encode("utf-8"))  # last: after every report folder
    finally:
        os.close(top)


def merge_shards(out: Path, folders: list[Path], kit: Kit = DEFAULT_KIT) -> MergeResult:
    """Check that ``folders`` are every shard of one batch, graded by ``kit`` and untouched since; write
    ``out/grades.csv`` and the report folders.

    Every check comes before the first byte is written: a refused merge (:class:`ShardError`, or
    :class:`MergeRefused` for the integrity checks, :func:`verify_shards`) leaves ``out`` as it was.
    ``out/grades.csv`` is the same bytes an unsharded ``rl4llm grade`` writes; it is written last, after
    every report folder.
    """
    if not folders:
        raise ShardError("no shard folders given: rl4llm merge OUT SHARD_DIR [SHARD_DIR ...]")
    if (Path(out) / MANIFEST).exists():  # most likely `rl4llm merge shards/*`: the first shard taken for OUT
        raise ShardError(f"OUT ({out}) is itself a shard folder; the first argument is the new folder the "
                         "merge writes: rl4llm merge OUT SHARD_DIR [SHARD_DIR ...]")
    shards = [read_shard(Path(folder)) for folder in folders]
    check_complete_set(shards)
    first = shards[0].manifest
    names = first["names"]
    out = Path(out)
    _check_out(out, shards, names)
    checked = verify_shards(shards, kit)
    ordered = [checked[name].report for name in names]
    try:
        _write_out(out, names, checked, reports.grades_csv(ordered, first["exercise_ids"]))
    except (OSError, _Unfit) as error:
        raise ShardError(f"the merged reports could not be written to {out}: {error}") from error
    internal = [f"{shard.label}: {text}" for shard in sorted(shards, key=lambda s: s.manifest["index"])
                for text in shard.manifest["internal_errors"]]
    return MergeResult(ordered, list(first["exercise_ids"]), out, list(names), internal)
