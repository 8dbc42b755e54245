"""The ``_shard.json`` manifest of ``rl4llm grade --shard I/N``: which submissions a shard holds, what it records.

:class:`ShardSpec` (``I/N``, round robin), the batch's names, the kit's digest, and the manifest
written before and after grading (:func:`new_manifest`, :func:`write_manifest`). The overview of
sharding and merging is :mod:`graders.engine.routes.shards`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import graders
from graders.engine.routes.batch import GraderError, kit_fingerprint, unique_names
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.engine.outputs.outfolder import NAME  # noqa: F401  (a submission folder's name, read by shard_files)
from graders.engine.intake.submission import submission_name

MANIFEST = "_shard.json"
FORMAT = 1  # the manifest's layout; a merge refuses any other
MAX_SHARDS = 10_000  # N of --shard I/N (a SLURM array of 10,000 tasks); a manifest's count is bounded by it too
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
        if self.count > MAX_SHARDS:
            raise ShardError(f"{self.index}/{self.count}: N must be at most {MAX_SHARDS}")
        if not 1 <= self.index <= self.count:
            raise ShardError(f"{self.index}/{self.count}: I must be between 1 and N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def indices(self, total: int) -> list[int]:
        """The 0-based positions (of ``total`` submissions) this shard grades: round robin."""
        return list(range(self.index - 1, total, self.count))


def parse_shard(text: str) -> ShardSpec:
    """``"2/8"`` -> ``ShardSpec(2, 8)``; anything else raises :class:`ShardError` saying what is expected."""
    match = re.fullmatch(r"\s*(-?\d{1,9})\s*/\s*(-?\d{1,9})\s*", str(text))  # bounded before int()
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
