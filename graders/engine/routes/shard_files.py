"""Reading a shard folder for ``rl4llm merge``: regular files only, never through a link, size-capped.

A shard folder is input from someone else's machine (:mod:`graders.engine.routes.shards`): every file is
opened with ``O_NOFOLLOW`` under a folder opened the same way, read up to a limit, and parsed as strict
JSON; :func:`read_shard` checks a manifest, :func:`check_complete_set` that the shards are one batch's.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from graders.engine.routes.batch import RESERVED_NAMES
from graders.engine.intake.reader import UnsafeSubmission, kind, open_folder, read_file_in
from graders.engine.routes.shard_manifest import (FORMAT, MANIFEST, MAX_SHARDS, NAME, REPORT_OPTIONS, SAME_BATCH, ShardError,
                                          ShardSpec)

MAX_MANIFEST_BYTES = 16 * 2**20  # a manifest holds every name of the batch: some 100 bytes a submission
MAX_FILE_BYTES = 4 * 2**20  # every other file a merge reads; a real report.json is some kB
MAX_SUBMISSIONS = 1_000_000  # a batch's submissions (its names fit MAX_MANIFEST_BYTES well before)
REPORT_FILES = ("report.json", "results.json", "junit.xml")  # a submission's folder: these and nothing else
# what a shard holds beside its submissions' folders (``_lms.json``: graded from an LMS download; graders.engine.
# outputs.lms.LMS_FILE, which the merge carries over when every shard holds the same one)
SHARD_FILES = (MANIFEST, "grades.csv", "_lms.json")
DIGEST = re.compile(r"[0-9a-f]{64}")  # a kit digest as kit_digest writes it
VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,64}")
REPORT_KEYS, REPORT_OPTIONAL = {"submission", "score", "max_score", "exercises"}, {"sandbox", "name", "lms_id"}
ENTRY_KEYS = {"id", "points", "max_points", "status", "feedback", "misconceptions"}
ENTRY_OPTIONAL = {"not_implemented", "candidates", "cause", "failing", "hints"}


@dataclass
class Shard:
    """A finished shard's folder and its manifest, as read back by :func:`read_shard`."""

    folder: Path
    manifest: dict

    @property
    def label(self) -> str:
        return f"shard {self.manifest['index']}/{self.manifest['count']} ({self.folder})"


class MergeRefused(ShardError):
    """Shards that fail the integrity checks (:func:`verify_shards`); nothing was written.

    ``problems`` has one line per refused file: which shard, which file, why.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        super().__init__(f"refused to merge ({count}; nothing was written). Grade the shards named here again "
                         "with this kit, then merge:\n  " + "\n  ".join(self.problems))


def _shown(value, limit: int = 80) -> str:
    """``value`` for a message: a plain name as it is, anything else quoted and escaped (no control characters)."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,80}", value):
        return value
    text = ascii(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _read_file(dir_fd: int, name: str, limit: int) -> bytes:
    """The bytes of ``name`` in the folder ``dir_fd`` by the one reader (:func:`graders.engine.intake.reader.read_file_in`):
    a regular file with one name, at most ``limit`` bytes, no link followed."""
    return read_file_in(dir_fd, name, limit, one_name=True)


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


_Unfit = UnsafeSubmission  # why a merge does not read a file or folder; the text follows the file's name
_kind, _open_folder = kind, open_folder


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
    bounded = _unbounded_number(manifest)
    if bounded is not None:
        raise ShardError(f"{path} contradicts itself ({bounded}); was it edited by hand?")
    try:  # every number is bounded now: the lists built from them are no longer than the manifest's own
        spec = ShardSpec(manifest["index"], manifest["count"])
        fits = (isinstance(manifest["indices"], list) and len(manifest["indices"]) <= manifest["total"]
                and _plain_names(manifest["names"], manifest["total"])
                and manifest["indices"] == spec.indices(manifest["total"]))
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


def _unbounded_number(manifest: dict) -> str | None:
    """The first of the manifest's numbers (``count``, ``index``, ``total``) that is not a whole number within its
    bounds, in words; ``None`` when all are. Checked before any number is used to build anything."""
    count = manifest["count"]
    bounds = (("count", 1, MAX_SHARDS), ("index", 1, count if type(count) is int else MAX_SHARDS),
              ("total", 0, min(MAX_SUBMISSIONS, len(manifest["names"]) if isinstance(manifest["names"], list) else 0)))
    for field, low, high in bounds:
        value = manifest[field]
        if type(value) is not int or not low <= value <= high:
            return f"its {field} ({_shown(value, 40)}) is not a whole number from {low} to {high}"
    return None


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
