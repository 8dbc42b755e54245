"""Grading a batch: submissions in parallel, reports per submission, ``grades.csv``, a scoreboard.

The reference values are computed once per batch in this process (while the
first workers run); the job file with every case is written once and shared.
One bad submission never stops the batch: its faults are its own exercises'
statuses. Only a grader that cannot work at all (the worker cannot start, the
reference solutions are missing) raises :class:`GraderError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
import threading
import traceback
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import graders
from graders import settings as kit_settings  # `settings` below is the sandbox's
from graders.engine.outputs import outfolder, reports
# the output folder's names, made there (read here, and by graders.engine.routes.shard_manifest)
from graders.engine.outputs.outfolder import NAME_LIMIT, RESERVED_NAMES, os_error_line, unique_names  # noqa: F401
from graders.engine.sandbox import layers as sandbox
from graders.engine.sandbox import wall
from graders.engine.worker.fork_client import ForkServer
from graders.engine.routes.ahead import ReadAhead
from graders.engine.routes.grading import Context, GradeOptions, grade_submission, prepare_job, write_settings
from graders.engine.judging.references import ReferenceBook
from graders.engine.judging.kit import CHECKS_DIR, DEFAULT_KIT, Kit
from graders.engine.values.learner_text import clean, say
from graders.engine.values.protocol import ExerciseReport, Status, SubmissionReport
from graders.engine.intake.submission import (discover, display_name, is_cell_note, lms_id, staged_problem,
                                              submission_name)
from graders.engine.values.texts import cli_text, translated
from graders.engine.worker.config import WorkerConfig, WorkerStartError

FORBIDDEN_MODULES = ("solutions", "graders.checks", "graders.misconceptions")


class GraderError(RuntimeError):
    """The grader itself could not work."""


class OutputError(GraderError):
    """The machine would not take the reports (a full disk, a read-only folder): said in one line."""


FULL = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES}  # no report of the batch can be written


def _write_csv(out_dir: Path, text: str) -> None:
    """``grades.csv``, whole or not at all (written beside it, then renamed over it)."""
    partial = out_dir / ".grades.csv.writing"
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, out_dir / "grades.csv")
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()


class BatchInterrupted(GraderError):
    """Ctrl-C during a batch: the workers were stopped; what finished is written, the run marked interrupted."""


@dataclass
class BatchResult:
    reports: list[dict]  # each submission's report.json (SubmissionReport.to_dict())
    exercise_ids: list[str]
    out_dir: Path
    names: list[str]
    internal_errors: list[str]
    privilege_note: str


def grade_paths(paths: list[Path], out_dir: Path, options: GradeOptions | None = None, *, jobs: int = 1,
                kit: Kit = DEFAULT_KIT, progress: bool = True, log=None,
                names: list[str] | None = None, run_folder: bool = True) -> BatchResult:
    """Grade every submission in ``paths``; write reports under ``out_dir``; return them.

    ``names`` (one per path) replaces the folder names computed from the paths: a shard of a batch
    keeps the names the whole batch would give (:mod:`graders.engine.routes.shards`). With ``run_folder``
    (not for a shard, whose folder :mod:`graders.engine.routes.shards` keeps), an earlier run in ``out_dir`` is
    set aside first and the run manifest written last (:mod:`graders.engine.outputs.outfolder`).
    """
    kit.keep_bytecode()  # before the tripwire's fingerprint: every process of the batch reads it, none writes it
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # the grader writes nothing into the kit
    try:
        return _grade_paths(paths, out_dir, options, jobs=jobs, kit=kit, progress=progress, log=log, names=names,
                            run_folder=run_folder)
    finally:
        sys.dont_write_bytecode = saved


def _grade_paths(paths: list[Path], out_dir: Path, options: GradeOptions | None, *, jobs: int, kit: Kit,
                 progress: bool, log, names: list[str] | None = None, run_folder: bool = True) -> BatchResult:
    if names is not None and len(names) != len(paths):
        raise GraderError(f"{len(names)} names given for {len(paths)} submissions; give one name per submission")
    options = options or GradeOptions()
    log = log or (lambda message: say(message, file=sys.stderr, flush=True))  # cleaned: names, tracebacks
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    missing = [f.stem for f in kit.files(options.modules) if not kit.solution_path(f.stem).exists()]
    if len(missing) == len(kit.files(options.modules)):
        raise GraderError(f"no reference solutions found under {kit.solutions_dir}")
    paths = [Path(p) for p in paths]
    for path in paths:
        if not path.exists():
            raise GraderError(f"no such submission: {path}")
    if run_folder:
        try:  # before anything is written: this folder's reports are this run's alone
            outfolder.set_aside(out_dir, paths, lambda message: log(translated(message, options.lang)))
        except (outfolder.OutFolderError, OSError) as error:
            raise GraderError(f"the earlier run in {out_dir} could not be set aside: {error}") from error
    sandbox.private_hypothesis_storage()  # no .hypothesis/ (the reference's literals) in the current folder
    # the servers' interpreter and path, as `rl4llm doctor` and the wall's probe take them (one place)
    python, pythonpath = wall.grading_interpreter(options.worker_python, tuple(options.worker_pythonpath))
    not_dumpable = sandbox.make_grader_not_dumpable()
    with ThreadPoolExecutor(max_workers=2) as side, tempfile.TemporaryDirectory(prefix="rl4llm-grade-") as temp, \
            contextlib.ExitStack() as servers_stop:
        probing = side.submit(sandbox.probe_layers, python, pythonpath)  # a subprocess: overlaps the job
        functions = kit.functions_by_stem(options.modules)  # submissions read meanwhile, in order (ahead.py)
        reading = ReadAhead(len(paths), lambda index: discover(paths[index], functions), ahead=max(1, jobs) + 1)
        servers_stop.callback(reading.stop)
        temp_root = Path(temp)
        os.chmod(temp_root, 0o711)
        user, note = sandbox.unprivileged_user(python, pythonpath, str(temp_root))
        if user is None and hasattr(os, "geteuid") and os.geteuid() == 0:
            log(cli_text(options.lang, "note", note=translated(note, options.lang)))
        # what the workers report of themselves (who they run as is known here: `user`)
        required = tuple(name for name in sandbox.LAYERS if name not in ("unprivileged_user", "grader_not_dumpable")
                         ) if options.require_sandbox else ()
        ready = threading.Event()
        config = WorkerConfig(python=python, kit_parent=pythonpath, user=user, load_timeout=options.load_timeout,
                              namespaces=sandbox.namespaces_wanted(), require=required, ready=ready,
                              cgroup=sandbox.worker_cgroup_limits(options.memory_mb, options.scratch_mb))
        # the fork servers import NumPy (and torch) while this process writes the job and loads the references;
        # the one with torch at once only when a submission looks like it has a training file (else on demand)
        servers = {with_torch: ForkServer(config, torch=with_torch, cwd=temp_root,
                                          log_path=temp_root / f"server-{'torch' if with_torch else 'numpy'}.log")
                   for with_torch in (False, True)}
        for server in servers.values():
            servers_stop.callback(server.close)
        wanted = [False, *([True] if may_need_torch(paths, kit.files(options.modules)) else [])]
        # started beside the job's preparation: each start waits for the outer wall's probe (a bwrap run)
        starting = side.submit(lambda: [servers[with_torch].start() for with_torch in wanted])
        book = ReferenceBook.of(kit)
        settings = {
            "kit_root": str(kit.root),
            # the answers: refused by the kernel, and any attempt is recorded by the audit hook (0 points)
            "forbidden_paths": sorted({str(kit.solutions_dir), str(kit.misconceptions_dir), str(CHECKS_DIR),
                                       *(str(kit.root / name) for name in ("tests", ".git", "assignments")),
                                       str(out_dir.resolve()), str(temp_root), *(str(p.resolve()) for p in paths),
                                       *([str(book.store.folder)] if book.store is not None else [])}),
            # also closed to workers (deny by default), but not secret: the engine's own code, the starter
            "closed_paths": sorted({str(Path(graders.__file__).resolve().parent), str(kit.starter_dir)}),
            "forbidden_modules": list(FORBIDDEN_MODULES),
            "memory_bytes": int(options.memory_mb) << 20,
            "file_bytes": 64 << 20,
            "scratch_bytes": int(options.scratch_mb) << 20,
            "processes": 64,
            "open_files": 256,
            "landlock": not kit_settings.get("RL4LLM_NO_LANDLOCK"),
            "seccomp": not kit_settings.get("RL4LLM_NO_SECCOMP"),
            "closed_root": not kit_settings.get("RL4LLM_NO_CLOSED_ROOT"),
        }
        job = prepare_job(kit, options, temp_root / "job", book.store)
        starting.result()  # started (or why not: raised here, as a start in this thread would)
        if not job.torch:
            servers[True].close(kill=True)  # nothing to run there: stop its imports
        probe = probing.result()
        # Where Landlock keeps learner code away from every file of the kit, learner code may start at once
        # and the grader loads what it needs when it needs it (most of it is in the reference store); every
        # child then refuses to run learner code without Landlock. Elsewhere the grader first loads
        # everything it could execute (ReferenceBook.preload), and only then do workers start.
        early = bool(settings["landlock"] and probe.layers.get("landlock_files"))
        settings["landlock_required"] = early
        write_settings(job, settings)
        probe.layers["grader_not_dumpable"] = not_dumpable
        probe.layers["unprivileged_user"] = user is not None or not (hasattr(os, "geteuid") and os.geteuid() == 0)
        if probe.missing:
            message = f"sandbox layers missing on this machine: {', '.join(probe.missing)}"
            if options.require_sandbox:
                raise GraderError(f"{message}; --require-sandbox refuses to grade (see `rl4llm doctor`)")
            log(cli_text(options.lang, "warning", message=cli_text(options.lang, "layers_missing",
                                                                   layers=", ".join(probe.missing))))
        fingerprint = kit_fingerprint(kit)
        ctx = Context(kit, options, job, book, config, servers, temp_root, user=user, probed=probe.layers,
                      not_dumpable=not_dumpable, identity=probe.identity)
        names = list(names) if names is not None else unique_names([submission_name(p) for p in paths])
        displays = [display_name(p) for p in paths]  # the names as given, in every output beside the folder's
        lms_ids = [lms_id(p) for p in paths]  # a student of an LMS download: the LMS's own id, the export's key
        results: dict[int, dict] = {}
        internal: list[str] = []

        def grade(index: int) -> dict:
            submission = reading.take(index)
            submission.name = names[index]
            submission.problem = submission.problem or staged_problem(paths[index])  # files not staged: theirs
            for note in dict.fromkeys(n for notes in submission.notes.values() for n in notes if is_cell_note(n)):
                log(cli_text(options.lang, "warning", message=f"{names[index]}: {translated(note, options.lang)}"))  # a cell it could not read
            # what the runner did not see as learner text (a crashed worker's last output) is cleaned here too
            report = reports.missing_causes(grade_submission(submission, ctx).to_dict(), submission)
            if displays[index] != names[index]:
                report["name"] = displays[index]  # Иван Петров beside its folder ivan_petrov-2b8929ba
            return clean(report)

        bar = _progress(len(paths), progress, options.lang)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(grade, i): i for i in range(len(paths))}
            # the first workers start up meanwhile, but run no learner code until `ready`
            try:
                if not early:
                    book.preload(job.exercises)  # everything the grader executes, loaded before any learner code
            except BaseException:
                config.abort = True
                raise
            finally:
                ready.set()
            interrupted = False
            try:
                for future in as_completed(futures):
                    index = futures[future]
                    try:
                        report = future.result()
                    except WorkerStartError as error:
                        wall.forget_kept_probes()  # a kept probe that no longer holds: the next batch probes
                        for other in futures:
                            other.cancel()
                        raise GraderError(str(error)) from error
                    except Exception as error:  # noqa: BLE001 - one bad submission never stops the batch
                        internal.append(f"{names[index]}: {type(error).__name__}: {error}")
                        log(f"internal error while grading {names[index]}:\n{traceback.format_exc()}")
                        report = _internal_error_report(names[index], job, error)
                    identity = {} if lms_ids[index] is None else {"lms_id": lms_ids[index]}  # an error's too
                    report.update(identity)
                    results[index] = report
                    try:  # each report is written on its own: one failed write never stops the others
                        reports.write_submission_reports(out_dir, names[index], report)
                    except OSError as error:
                        if error.errno not in FULL:  # a name the file system refuses: this submission's alone
                            raise
                        config.abort = True  # the machine's: no other report would be written either
                        for other in futures:
                            other.cancel()
                        raise OutputError(os_error_line(error, options.lang, "graded_before", count=len(results) - 1,
                                                        total=len(paths), folder=out_dir)) from None
                    except Exception as error:  # noqa: BLE001 - whatever it is, it is this submission's alone
                        internal.append(f"{names[index]}: the reports could not be written "
                                        f"({type(error).__name__}: {error})")
                        log(f"error: the reports of {names[index]} could not be written:\n{traceback.format_exc()}")
                        results[index] = {**_unwritten(out_dir, names[index], job, error, log), **identity}
                    if bar is not None:
                        bar.update(1)
            except KeyboardInterrupt:  # stop every worker (each ends within half a second), keep what finished
                interrupted, config.abort = True, True
                for other in futures:
                    other.cancel()
                reading.stop()
            finally:
                if bar is not None:
                    bar.close()
    now = kit_fingerprint(kit)
    changed = sorted(path for path in set(now) | set(fingerprint) if now.get(path) != fingerprint.get(path))
    if changed:  # a tripwire behind the sandbox: this batch's scores cannot be trusted
        internal.append(f"kit files changed while grading: {', '.join(changed[:5])}; regrade from a clean checkout")
        log(f"error: {internal[-1]}")
    else:
        book.save()  # what this batch computed, for the next one (never from a batch whose kit changed)
    exercise_ids = [e.id for e in job.exercises]
    if interrupted:
        _write_interrupted(out_dir, [names[i] for i in sorted(results)], [results[i] for i in sorted(results)],
                           exercise_ids, len(paths), run_folder)
    ordered = [results[i] for i in range(len(paths))]
    try:
        _write_csv(out_dir, reports.grades_csv(ordered, exercise_ids))
        if run_folder:
            outfolder.write_run_manifest(out_dir, names, exercise_ids,  # last: it marks a finished run
                                         display=outfolder.displays(ordered))
    except OSError as error:  # every report is written; only the class's files are not
        raise OutputError(os_error_line(error, options.lang, "reports_kept", total=len(paths), folder=out_dir)) \
            from None
    return BatchResult(ordered, exercise_ids, out_dir, names, internal, note)


def _write_interrupted(out_dir: Path, names: list[str], done: list[dict], exercise_ids: list[str], total: int,
                       run_folder: bool) -> None:
    """What an interrupted batch leaves: the finished submissions' reports (written already), their
    ``grades.csv`` and a run manifest marked interrupted; then :class:`BatchInterrupted` says so."""
    _write_csv(out_dir, reports.grades_csv(done, exercise_ids))
    if run_folder:
        outfolder.write_run_manifest(out_dir, names, exercise_ids, interrupted=total, display=outfolder.displays(done))
    stopped = BatchInterrupted(f"{len(done)} of {total} submission(s) graded in {out_dir}/")
    stopped.graded, stopped.total, stopped.folder = len(done), total, out_dir
    raise stopped


def may_need_torch(paths: list[Path], files) -> bool:
    """A quick look, before anything is read: does a submission hold a file named like a training file?

    Only decides whether the fork server with torch starts at once (its imports then overlap the
    grader's own start); a submission that needs it anyway starts it on demand.
    """
    from graders.engine.intake import reader as intake

    names = {f"{f.stem}{suffix}" for f in files if f.stem.endswith("_training") for suffix in (".py", ".ipynb")}
    for path in paths:
        try:
            if path.is_dir():
                if any(name in names for _, _, found in os.walk(path) for name in found):
                    return True
            elif path.suffix.lower() == ".zip":
                with intake.open_zip(path) as archive:  # its end records first, as the reader opens it
                    if any(member.rsplit("/", 1)[-1] in names for member in archive.namelist()):
                        return True
            elif path.name in names:
                return True
        except intake.UnsafeSubmission:
            continue  # the reader refuses it too: that submission's own error, and it needs no torch
        except (OSError, zipfile.BadZipFile):
            return True
    return False


def kit_fingerprint(kit: Kit) -> dict[str, str]:
    """sha256 of every file the grader executes or reads as truth (engine, checks, catalogue,
    reference solutions, starter), ``__pycache__`` included: compared before and after a batch."""
    import hashlib

    found: dict[str, str] = {}
    for folder in (Path(graders.__file__).resolve().parent, kit.solutions_dir, kit.starter_dir,
                   kit.misconceptions_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_file() and ".hypothesis" not in path.parts and ".pytest_cache" not in path.parts:
                try:
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError:
                    found[str(path)] = "unreadable"
    return found


def _internal_error_report(name: str, job, error: BaseException, what: str = "") -> dict:
    text = f"internal grader error ({type(error).__name__}{what}); please report it"
    return SubmissionReport(name, tuple(ExerciseReport(e.id, Status.ERROR, 0.0, e.max_points, text)
                                        for e in job.exercises)).to_dict()


def _unwritten(out_dir: Path, name: str, job, error: BaseException, log) -> dict:
    """The report of a submission whose reports could not be written: an internal error of its own.

    Its ``grades.csv`` row (0 points), its folder (as far as the disk allows: a merge finds a report)
    and the batch's internal errors say so; the other submissions and ``grades.csv`` are unaffected.
    """
    report = _internal_error_report(name, job, error, " while writing this submission's reports")
    try:
        reports.write_submission_reports(out_dir, name, report)
    except Exception as again:  # noqa: BLE001 - logged; grades.csv still gets the row
        log(f"error: not even the internal-error report of {name} could be written: {again}")
    return report


def _progress(total: int, enabled: bool, language: str = "en"):
    if not enabled or total < 2:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a core dependency
        return None
    return tqdm(total=total, desc=cli_text(language, "progress"), unit=cli_text(language, "unit"), file=sys.stderr,
                leave=True)


def grade_sources(submissions: dict[str, dict[str, str]], options: GradeOptions | None = None, *,
                  jobs: int = 2, kit: Kit = DEFAULT_KIT) -> dict[str, dict]:
    """Grade in-memory submissions ``{name: {file name: source text}}`` in one batch.

    For the kit's own tests (e.g. every catalogue mutant at once, built with
    :func:`graders.engine.judging.misconceptions.mutant_source`). Returns ``{name: report}``.
    """
    with tempfile.TemporaryDirectory(prefix="rl4llm-sources-") as temp:
        paths = []
        for name, files in submissions.items():
            folder = Path(temp) / "in" / name
            folder.mkdir(parents=True)
            for file_name, text in files.items():
                (folder / file_name).write_text(text, encoding="utf-8")
            paths.append(folder)
        result = grade_paths(paths, Path(temp) / "out", options, jobs=jobs, kit=kit, progress=False,
                             log=lambda _message: None)
    return dict(zip(result.names, result.reports))
