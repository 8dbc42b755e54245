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
  report present, then copies each submission's report folder into ``OUT``
  and writes ``OUT/grades.csv``. ``OUT`` must be a new or ordinary folder, not
  a shard folder: the shards are left exactly as they were, and nothing is
  ever deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import graders
from graders.engine import reports
from graders.engine.batch import BatchResult, GraderError, grade_paths, kit_fingerprint, unique_names
from graders.engine.grading import GradeOptions
from graders.engine.kit import DEFAULT_KIT, Kit
from graders.engine.submission import submission_name

MANIFEST = "_shard.json"
NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")  # what submission_name and unique_names can produce
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


def _plain_names(names, total: int) -> bool:
    """``total`` distinct folder names as :func:`batch_names` makes them: no ``/``, never ``.`` or ``..``
    (a merge copies ``SHARD/<name>`` to ``OUT/<name>``: an edited manifest must not reach outside either)."""
    return (isinstance(names, list) and len(names) == total and len(set(names)) == total
            and all(isinstance(n, str) and NAME.fullmatch(n) for n in names))


def read_shard(folder: Path) -> Shard:
    """Read and check one shard folder's manifest; a folder that is not a finished shard raises ShardError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ShardError(f"{folder}: no such folder")
    path = folder / MANIFEST
    if not path.is_file():
        raise ShardError(f"{folder} has no {MANIFEST}: it is not the output of `rl4llm grade --shard I/N`")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ShardError(f"{path} cannot be read: {error}") from error
    expected = {"format", "index", "count", "total", "names", "indices", "options", "kit", "complete",
                "exercise_ids", "internal_errors"}
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not expected <= set(manifest):
        raise ShardError(f"{path} is not a shard manifest of format {FORMAT} (written by another kit version?)")
    shard = Shard(folder, manifest)
    if not manifest["complete"]:
        raise ShardError(f"{shard.label} did not finish grading; grade that shard again")
    try:
        spec = ShardSpec(manifest["index"], manifest["count"])
        fits = manifest["indices"] == spec.indices(manifest["total"]) and _plain_names(manifest["names"], manifest["total"])
    except (ShardError, TypeError):
        fits = False
    if not fits:
        raise ShardError(f"{path} contradicts itself (its I/N, indices or names do not fit together); "
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


def _read_report(shard: Shard, name: str) -> dict:
    path = shard.folder / name / "report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardError(f"{shard.label} has no report for submission {name!r} ({path} is missing)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ShardError(f"{shard.label}: {path} cannot be read: {error}") from error
    if not isinstance(report, dict) or report.get("submission") != name:
        raise ShardError(f"{shard.label}: {path} is not the report of submission {name!r}")
    return report


def _check_out(out: Path, shards: list[Shard], names: list[str]) -> None:
    """``out`` must not be a shard folder or lie inside one, and nothing merged may land on a shard."""
    out = out.resolve()
    taken = {"grades.csv", *names}
    for shard in shards:
        folder = shard.folder.resolve()
        if out == folder or folder in out.parents:
            raise ShardError(f"{out} lies inside {shard.label}; merge into a folder outside the shards")
        if out in folder.parents and folder.relative_to(out).parts[0] in taken:
            raise ShardError(f"merging into {out} would write over {shard.label}; choose another OUT")


def _copy_reports(shard: Shard, name: str, out: Path) -> None:
    target = out / name
    if target.exists() and not target.is_dir():
        raise ShardError(f"{target} exists and is not a folder; the report folder of {name!r} cannot go there")
    shutil.copytree(shard.folder / name, target, dirs_exist_ok=True)


def merge_shards(out: Path, folders: list[Path]) -> MergeResult:
    """Check that ``folders`` are every shard of one batch; write ``out/grades.csv`` and the report folders.

    ``out/grades.csv`` is the same bytes an unsharded ``rl4llm grade`` writes; it is written last, after
    every report folder has been copied.
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
    owner = {index: shard for shard in shards for index in shard.manifest["indices"]}
    ordered = [_read_report(owner[index], name) for index, name in enumerate(names)]
    out = Path(out)
    _check_out(out, shards, names)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for index, name in enumerate(names):
            _copy_reports(owner[index], name, out)
        (out / "grades.csv").write_text(reports.grades_csv(ordered, first["exercise_ids"]), encoding="utf-8")
    except OSError as error:
        raise ShardError(f"the merged reports could not be written to {out}: {error}") from error
    internal = [f"{shard.label}: {text}" for shard in sorted(shards, key=lambda s: s.manifest["index"])
                for text in shard.manifest["internal_errors"]]
    return MergeResult(ordered, list(first["exercise_ids"]), out, list(names), internal)
