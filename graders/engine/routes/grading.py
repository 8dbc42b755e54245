"""Grading one submission: prepare the job, run the worker, compute references, assess.

The job (``job.json``, and ``ex_<i>.json`` + ``ex_<i>.arrays`` per exercise) holds every gradable exercise and its
cases and is written once per batch. Per submission: the learner files are
checked (encoding, syntax) and copied into a fresh folder, a worker runs
them (:mod:`graders.engine.worker.runner`) while this process computes the reference
values (:mod:`graders.engine.judging.references`), and each exercise is judged
(:mod:`graders.engine.judging.judge`, rendered by :mod:`graders.engine.outputs.feedback`) into a
:class:`graders.engine.values.protocol.SubmissionReport`.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path


from graders import course, settings
from graders.engine.judging import answers, calls, parts
from graders.engine.judging.calls import judge_inputs
from graders.engine.values import bundles, codec
from graders.engine.outputs.feedback import assess
from graders.engine.worker.fork_client import ForkServer
from graders.engine.judging.kit import Kit
from graders.engine.values.protocol import ExerciseReport, SubmissionReport
from graders.engine.judging.refcache import ReferenceStore, cases_digest, kept_cases, read_given_state
from graders.engine.judging.references import ReferenceBook, uses_torch
from graders.engine.sandbox.layers import merge_reported
from graders.engine.worker.runner import run_worker
from graders.engine.intake.submission import learner_source
from graders.engine.values.protocol import Submission
from graders.engine.values.texts import detail
from graders.engine.worker.config import WorkerConfig
from graders.engine.values.protocol import ExerciseRun
from graders.language import default_language


# the worker parent lays every case's array inputs out in memory it reads back after the call (the
# "modified its inputs" verdict for arrays comes from there); False only for the kit's own control test
SHARED_INPUTS = True
# a harness's trusted cases (the toy experiments) run in the worker's trusted process, the learner's function
# served to it (graders.engine.worker.served); False (the kit's own control test only): in the learner's child
TRUSTED_APART = True
# hide mode: a hidden check's inputs only in children of their own, what they send withheld (graders.engine.judging.
# parts); False (the kit's own control test only): hidden checks beside public ones, hidden per case as before
HIDDEN_APART = True


@dataclass
class GradeOptions:
    modules: tuple[str, ...] = course.NUMBERS
    hide_hidden_inputs: bool = False
    timeout: float | None = None  # overrides every exercise's own timeout
    memory_mb: int = 3072  # address space granted to learner code on top of the worker's own
    load_timeout: float = 60.0
    detect_misconceptions: bool = True
    worker_python: str | None = None  # the workers' interpreter (default: this one)
    worker_pythonpath: tuple[str, ...] = ()  # extra import folders for the workers
    require_sandbox: bool = False  # refuse to grade unless every kernel layer is in force
    scratch_mb: int = 128  # the worker's writable tmpfs, in total
    lang: str = field(default_factory=default_language)  # the feedback's language (RL4LLM_LANG, else the locale)


# ---------------------------------------------------------------------------
# The job: exercises and their cases, shared by every submission of a batch
# ---------------------------------------------------------------------------
@dataclass
class Exercise:
    id: str
    stem: str
    function: str
    spec: object | None  # graders.checks.ExerciseSpec
    index: int | None = None  # position in the job (None: not run); in hide mode, its public part's
    hidden_index: int | None = None  # in hide mode, its hidden part's position (None: not split)
    parts: tuple | None = None  # in hide mode, (public, hidden) positions of its cases (graders.engine.judging.parts)
    problem: str | None = None  # why it cannot be graded (a kit problem)
    digest: str | None = None  # of its cases and call mode as the worker gets them (refcache.cases_digest)

    @property
    def max_points(self) -> float:
        return float(self.spec.points) if self.spec is not None else 1.0


@dataclass
class Job:
    exercises: list[Exercise]
    job_dir: Path
    entries: list[dict]  # what the worker sees, indexed by Exercise.index
    given_sources: dict[str, str] = field(default_factory=dict)  # the starter's given modules, by name
    load_timeout: float = 60.0
    given_state: list[str] = field(default_factory=list)  # given modules whose kept state is in the job

    @property
    def torch(self) -> list[int]:
        """The exercises run on the fork server with torch."""
        return [index for index, entry in enumerate(self.entries) if entry["torch"]]


def prepare_job(kit: Kit, options: GradeOptions, job_dir: Path, store: ReferenceStore | None = None) -> Job:
    """Write the cases of every gradable exercise of the selected modules (``write_settings`` adds the rest).

    ``ex_<i>.json`` (+ ``ex_<i>.arrays``) holds exercise ``i``'s cases and call
    mode, read only by the child that runs exercise ``i``. Each exercise gets
    the digest of exactly that (:func:`graders.engine.judging.refcache.cases_digest`),
    part of its reference outcomes' key on disk. With a ``store``, the cases
    themselves come from there when the checks have not changed
    (:func:`graders.engine.judging.refcache.kept_cases`).
    """
    from graders.checks import spec_for

    exercises: list[Exercise] = []
    entries: list[dict] = []
    job_dir.mkdir(parents=True, exist_ok=True)
    for exercise_id in kit.exercises(options.modules):
        stem, function = exercise_id.split(".", 1)
        spec = spec_for(exercise_id)
        exercise = Exercise(exercise_id, stem, function, spec)
        exercises.append(exercise)
        if spec is None:
            exercise.problem = detail("kit_no_checks")
            continue
        kept_cases(store, spec)
        cases = spec.cases()
        if not cases:
            exercise.problem = detail("kit_no_cases")
            continue
        encoded, arrays = _encoded(cases)
        answers.attach(kit, spec, cases, encoded, store, arrays)  # a dependent's sealed answer tables
        torch_used = uses_torch(exercise)
        exercise.index = len(entries)
        entry = {"id": exercise_id, "stem": stem, "function": function, "call": spec.call.describe(),
                 "cases": encoded, "timeout": float(options.timeout or spec.timeout), "torch": torch_used}
        entries.append(entry)
        exercise.digest = cases_digest(entry, arrays)
        if not (options.hide_hidden_inputs and HIDDEN_APART):
            _write_entry(job_dir, exercise.index, entry, arrays)
            continue
        # hide mode: the public checks and the hidden ones in entries (and children) of their own, each entry's
        # bundle holding its own cases' inputs only (graders.engine.judging.parts)
        exercise.parts = parts.split(cases)
        for part, places in zip((parts.PUBLIC, parts.HIDDEN), exercise.parts):
            if not places:
                continue
            part_encoded, part_arrays = _encoded([cases[place] for place in places])
            for place, item in zip(places, part_encoded):
                if "answers" in encoded[place]:
                    item["answers"] = encoded[place]["answers"]
            index = exercise.index if part == parts.PUBLIC or not exercise.parts[0] else len(entries)
            if index == len(entries):
                entries.append(None)
            if part == parts.HIDDEN:
                exercise.hidden_index = index
            entries[index] = {**entry, "cases": part_encoded, "part": part}
            _write_entry(job_dir, index, entries[index], part_arrays)
    # the given code travels inside the job (the starter's given modules, which learner files import and
    # harnesses run): workers never open the kit's starter/ folder, nor take a given module from a submission
    given_sources = {name: kit.starter_path(name).read_text(encoding="utf-8")
                     for name in kit.given_modules(options.modules)}
    # and what an earlier batch's reference runs of that code kept (grpo_toy's warm-ups): a harness's copy
    # starts with it, bit-identical to computing it again (refcache.save_given_state)
    given_state = []
    for name in given_sources:
        found = read_given_state(store, kit, name)
        if found is not None:
            bundles.write_bundle(job_dir / f"given_{name}", *found)
            given_state.append(name)
            # and the grader's own copy, when it loads one: the toy checks' measurement warms up from it too
            kit.keep_given_state(name, *found)
    return Job(exercises, job_dir, entries, given_sources, options.load_timeout, given_state)


def _encoded(cases) -> tuple[list[dict], dict]:
    """The cases as the worker gets them (``{"args", "kwargs"}`` each, encoded), and their arrays."""
    encoder = codec.Encoder("i")
    return ([{"args": encoder.encode(tuple(case.args)), "kwargs": encoder.encode(dict(case.kwargs))}
             for case in cases], encoder.arrays)


def _write_entry(job_dir: Path, index: int, entry: dict, arrays: dict) -> None:
    """``ex_<index>``: what the learner's child reads (through its parent); a harness's trusted part (its toy
    experiment, with another exercise's formula) goes to a file of its own that only the trusted process reads."""
    call = entry["call"]
    if "trusted" in call:
        entry["trusted_apart"] = TRUSTED_APART  # the grader takes its trusted cases from that process only
        if TRUSTED_APART:
            (job_dir / f"trusted_{index}.json").write_text(json.dumps(call["trusted"]), encoding="utf-8")
            call = calls.learner_call(call)
    bundles.write_bundle(job_dir / f"ex_{index}", {**entry, "call": call}, arrays)


def write_settings(job: Job, sandbox_settings: dict) -> None:
    """Write ``job.json``: what every worker child needs (the sandbox settings, the given code, which file
    each exercise belongs to) and no case; then make the job readable to the workers' user."""
    entries = job.entries
    # CPU seconds for one worker: every exercise's wall-clock budget and the loads, twice over
    sandbox_settings.setdefault("cpu_seconds", int(2 * (sum(e["timeout"] for e in entries)
                                                        + 4 * job.load_timeout)) + 30)
    payload = {"stems": {str(i): entry["stem"] for i, entry in enumerate(entries)},
               # a harness may hold trusted copies of other exercises' formulas: its child runs only the
               # exercises of that same harness
               "harness": {str(i): hashlib.sha256(entry["call"]["source"].encode()).hexdigest()[:16]
                           for i, entry in enumerate(entries) if entry["call"]["kind"] == "harness"}
               # and an exercise whose dependencies are answered for it runs alone (no other exercise can
               # keep its lookups for later)
               | {str(i): f"answered:{entry['id']}" for i, entry in enumerate(entries)
                  if entry["call"]["kind"] == "answered"},
               # hide mode: which part of its exercise each entry is; no child runs entries of two parts
               "parts": {str(i): entry["part"] for i, entry in enumerate(entries) if entry.get("part")},
               "shared_inputs": SHARED_INPUTS,
               "given_sources": job.given_sources, "given_state": job.given_state, "sandbox": sandbox_settings,
               # CPU-time budgets the worker's parent holds each child to (seconds of CPU, not of the clock)
               # (RL4LLM_NO_CPU_BUDGET=1: none, only the wall-clock backstop; for the kit's own control test)
               **({} if settings.get("RL4LLM_NO_CPU_BUDGET") else
                  {"timeouts": {str(i): entry["timeout"] for i, entry in enumerate(entries)},
                   "load_timeout": job.load_timeout})}
    bundles.write_bundle(job.job_dir / "job", payload, {})
    for path in (job.job_dir, *job.job_dir.iterdir()):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


# ---------------------------------------------------------------------------
# One submission
# ---------------------------------------------------------------------------
@dataclass
class Context:
    """Everything shared by the submissions of one batch."""

    kit: Kit
    options: GradeOptions
    job: Job
    book: ReferenceBook
    worker: WorkerConfig
    servers: dict[bool, ForkServer]  # the fork servers without (False) and with (True) torch
    temp_root: Path
    user: int | None = None
    probed: dict = field(default_factory=dict)  # the layers the batch's probe found
    identity: str = ""  # who the probe ran as
    not_dumpable: bool = False
    _counter: list = field(default_factory=lambda: [0])
    _counter_lock: threading.Lock = field(default_factory=threading.Lock)

    def new_dir(self) -> Path:
        with self._counter_lock:
            self._counter[0] += 1
            number = self._counter[0]
        path = self.temp_root / f"sub_{number}"
        for sub in ("", "files", "scratch"):
            (path / sub).mkdir(parents=True, exist_ok=True)
            if self.user is not None and sub == "scratch":
                os.chown(path / sub, self.user, self.user)
            os.chmod(path / sub, 0o755 if sub in ("", "files") else 0o700)
        return path


def worker_lanes(to_run: list[Exercise], torch_used: set[int]) -> list[tuple[bool, list[int]]]:
    """The workers of one submission, run side by side: ``(with torch, exercise indices)``.

    The exercises without torch share a worker from the server without torch, which starts at once;
    each learner file with torch exercises (a training file: its toy runs are most of a grade's work)
    gets a worker of its own from the server with torch, so a submission's training files use both cores.
    """
    def indices(chosen: list[Exercise]) -> list[int]:  # hide mode: each hidden part after every public one
        return [e.index for e in chosen] + [e.hidden_index for e in chosen if e.hidden_index not in (None, e.index)]

    lanes = [(False, indices([e for e in to_run if e.index not in torch_used]))]
    for stem in dict.fromkeys(e.stem for e in to_run if e.index in torch_used):
        lanes.append((True, indices([e for e in to_run if e.index in torch_used and e.stem == stem])))
    return [(with_torch, indices) for with_torch, indices in lanes if indices]


def grade_submission(submission: Submission, ctx: Context) -> SubmissionReport:
    """The report of one submission. Never raises for a learner's fault."""
    exercises = ctx.job.exercises
    sources: dict[str, str] = {}
    file_problems: dict[str, str] = {}
    for stem in dict.fromkeys(e.stem for e in exercises):
        if submission.problem:
            break
        text, problem = learner_source(submission, stem)
        if problem:
            file_problems[stem] = problem
        elif text is not None:
            sources[stem] = text

    to_run = [e for e in exercises if e.index is not None and e.stem in sources and not submission.problem]
    runs: dict[int, ExerciseRun] = {}
    layers: dict[str, bool] = {}
    sub_dir = None
    threads: list[threading.Thread] = []
    failure: list[BaseException] = []
    finished: queue.SimpleQueue = queue.SimpleQueue()  # each lane's exercise indices, once its worker is done
    if to_run:
        sub_dir = ctx.new_dir()
        for stem, text in sources.items():
            target = sub_dir / "files" / f"{stem}.py"
            target.write_text(text, encoding="utf-8")
            os.chmod(target, 0o644)
        for with_torch, indices in worker_lanes(to_run, set(ctx.job.torch)):

            def work(server=ctx.servers[with_torch], indices=indices) -> None:
                found: dict = {}  # the sandbox layers this worker reported
                try:
                    runs.update(run_worker(ctx.worker, server, ctx.job.job_dir, sub_dir, ctx.job.entries,
                                           indices, found))
                    with ctx._counter_lock:
                        if found:  # every lane's processes: a layer is in force where all of them had it
                            merge_reported(layers, found)
                except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread
                    failure.append(error)
                finally:
                    finished.put(indices)

            threads.append(threading.Thread(target=work, name=f"worker-{submission.name}", daemon=True))
            threads[-1].start()
    # reference values are computed while the worker runs (once the grader has loaded everything)
    if getattr(ctx.worker, "ready", None) is not None:
        ctx.worker.ready.wait()
    for exercise in to_run:
        ctx.book.expected(exercise)
    # each lane's exercises are judged as soon as its worker is done, while the others still run
    judged: dict[int, ExerciseReport] = {}  # by position in ``exercises``
    position = {e.index: i for i, e in enumerate(exercises) if e.index is not None}
    for _ in threads:
        indices = finished.get()
        if failure:
            continue  # the whole submission fails below, once every worker is done
        for index in indices:
            if index not in position:  # a hidden part: judged with its exercise, below
                continue
            exercise = exercises[position[index]]
            if exercise.parts is not None:  # hide mode: the two parts' runs as one (the hidden one withheld)
                found = parts.merged(runs.get(exercise.index) if exercise.parts[0] else None,
                                     runs.pop(exercise.hidden_index, None), exercise.parts)
                runs.pop(exercise.index, None)
                if found is not None:
                    runs[exercise.index] = found
            judge_inputs(exercise, runs.get(index))
            judged[position[index]] = assess(exercise, submission, sources, file_problems, runs, ctx)
    for thread in threads:
        thread.join()
    if sub_dir is not None:
        shutil.rmtree(sub_dir, ignore_errors=True)
    if failure:
        raise failure[0]
    reports = tuple(judged[i] if i in judged else assess(exercise, submission, sources, file_problems, runs, ctx)
                    for i, exercise in enumerate(exercises))
    reports = answers.gate(reports, exercises, runs, getattr(ctx.options, "lang", "en"))
    return SubmissionReport(submission.name, reports, sandbox_record(layers, ctx))


def sandbox_record(layers: dict, ctx) -> dict:
    """The report's ``sandbox`` entry: every layer and whether the submission's worker had it."""
    from graders.engine.sandbox.layers import LAYERS

    if not layers:  # no learner code ran (nothing to grade): the batch's probe speaks for the machine
        layers = dict(getattr(ctx, "probed", {}) or {})
    record: dict = {name: layers.get(name) is True for name in LAYERS if name != "grader_not_dumpable"}
    record["grader_not_dumpable"] = bool(getattr(ctx, "not_dumpable", False))
    record["unprivileged_user"] = bool((getattr(ctx, "probed", {}) or {}).get("unprivileged_user"))
    record["identity"] = str(layers.get("identity") or getattr(ctx, "identity", "") or "")
    return record
