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
  and ``OUT/grades.csv``, then the run manifest ``OUT/_batch.json``
  (:mod:`~graders.engine.outputs.outfolder`: the same bytes as an unsharded grade's).
  ``OUT`` must be a new or ordinary folder, not a shard folder: the shards are
  left exactly as they were, an earlier run in ``OUT`` is set aside in
  ``OUT/_previous/<time>/`` once every check has passed, and nothing is ever
  deleted. A shard folder itself gets no run manifest and nothing is set
  aside in it: it holds only what ``grade --shard`` writes.
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
    :meth:`~graders.engine.values.protocol.SubmissionReport.to_dict` makes them).
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

The parts, one job each: :mod:`~graders.engine.routes.shard_manifest` (which submissions a shard holds, its
manifest), :mod:`~graders.engine.routes.shard_files` (reading a shard folder, never through a link),
:mod:`~graders.engine.routes.shard_checks` (the integrity checks); this module grades a shard and merges
(writing ``OUT``), and keeps the names the CLI and the tests import from it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from graders.engine.outputs import outfolder, reports
from graders.engine.routes.batch import BatchResult, grade_paths
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.engine.routes.shard_checks import CheckedReport, verify_shards
from graders.engine.routes.shard_checks import kit_registry, report_problems
from graders.engine.routes.shard_files import (REPORT_FILES, Shard, _Unfit, check_complete_set, _kind, _open_folder,
                                        read_shard)
from graders.engine.routes.shard_files import MergeRefused
from graders.engine.routes.shard_manifest import (MANIFEST, ShardError, ShardSpec, batch_names, kit_digest, new_manifest,
                                           parse_shard, write_manifest)

# what the CLI and the tests import from here (the parts' names included)
__all__ = ["MANIFEST", "MergeRefused", "MergeResult", "ShardError", "ShardSpec", "batch_names", "grade_shard",
           "kit_digest", "kit_registry", "merge_shards", "new_manifest", "parse_shard", "report_problems",
           "verify_shards", "write_manifest"]


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
                         log=log, names=[names[i] for i in held], run_folder=False)
    manifest.update(complete=True, exercise_ids=result.exercise_ids, internal_errors=result.internal_errors)
    write_manifest(out_dir, manifest)
    return result


# ---------------------------------------------------------------------------
# Merging
# ---------------------------------------------------------------------------


@dataclass
class MergeResult:
    """What ``rl4llm merge`` wrote, for the scoreboard and the exit code."""

    reports: list[dict]  # every submission's report.json, in the batch's order
    exercise_ids: list[str]
    out_dir: Path
    names: list[str]
    internal_errors: list[str]  # what the shards recorded while grading
    set_aside: Path | None = None  # where an earlier run found in ``out_dir`` was moved (nothing deleted)


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


def _lms_record(shards: list[Shard]) -> bytes | None:
    """The shards' ``_lms.json`` (which LMS, and the download's students: ``rl4llm export`` reads it), the same
    bytes in every shard of one download; ``None`` when no shard has one. Refused when only some shards have
    it, or when they differ (shards of two downloads)."""
    from graders.engine.intake.reader import UnsafeSubmission, read_file
    from graders.engine.outputs.lms import LMS_FILE

    found = []
    for shard in shards:
        path = Path(shard.folder) / LMS_FILE
        try:
            found.append(read_file(path, 16 << 20) if path.exists() else None)
        except (UnsafeSubmission, OSError) as error:
            raise ShardError(f"{shard.label}: its {LMS_FILE} cannot be read ({error})") from None
    if all(record is None for record in found):
        return None
    if len(set(found)) != 1:
        raise ShardError(f"the shards' {LMS_FILE} files differ (or some shards lack one): they were not graded "
                         "from one LMS download")
    return found[0]


def _write_out(out: Path, names: list[str], checked: dict[str, CheckedReport], grades: str, run: str,
               lms: bytes | None = None) -> None:
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
        if lms is not None:  # the LMS download's record, for `rl4llm export` of the merged folder
            from graders.engine.outputs.lms import LMS_FILE

            _write_file(top, LMS_FILE, lms)
        _write_file(top, "grades.csv", grades.encode("utf-8"))  # after every report folder
        _write_file(top, outfolder.RUN_MANIFEST, run.encode("utf-8"))  # last: it marks a finished run
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
    lms = _lms_record(shards)
    ordered = [checked[name].report for name in names]
    try:  # every check passed: an earlier run in OUT is moved aside (never deleted), then OUT is written
        aside = outfolder.set_aside(out, [shard.folder for shard in shards])
        _write_out(out, names, checked, reports.grades_csv(ordered, first["exercise_ids"]),
                   outfolder.manifest_text(names, first["exercise_ids"], display=outfolder.displays(ordered)), lms)
    except (OSError, _Unfit, outfolder.OutFolderError) as error:
        raise ShardError(f"the merged reports could not be written to {out}: {error}") from error
    internal = [f"{shard.label}: {text}" for shard in sorted(shards, key=lambda s: s.manifest["index"])
                for text in shard.manifest["internal_errors"]]
    return MergeResult(ordered, list(first["exercise_ids"]), out, list(names), internal, aside)
