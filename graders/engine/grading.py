"""Grading one submission: prepare the job, run the worker, compare, score, explain.

Per exercise the report holds ``points`` (earned), ``max_points``,
``status`` (``passed|failed|error|timeout|missing``), ``feedback`` (one
string, deterministic: no paths, timings or addresses) and
``misconceptions`` (sorted names). Scoring: ``points`` x the weighted
fraction of cases passed; a timeout, a crash, a sandbox violation, a missing
function or an unloadable file scores 0.
"""

from __future__ import annotations

import inspect
import os
import shutil
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graders.engine import calls, codec
from graders.engine.compare import describe
from graders.engine.kit import Kit
from graders.engine.misconceptions import Misconception, load_misconceptions
from graders.engine.runner import ExerciseRun, WorkerConfig, run_worker
from graders.engine.submission import Submission, learner_source

MAX_DETAILED = 3  # failing cases described in full per exercise
INPUT_LIMIT = 240


@dataclass
class GradeOptions:
    modules: tuple[str, ...] = ("8", "9")
    hide_hidden_inputs: bool = False
    timeout: float | None = None  # overrides every exercise's own timeout
    memory_mb: int = 3072  # address space granted to learner code on top of the worker's own
    load_timeout: float = 60.0
    detect_misconceptions: bool = True
    worker_python: str | None = None  # the workers' interpreter (default: this one)
    worker_pythonpath: tuple[str, ...] = ()  # extra import folders for the workers


# ---------------------------------------------------------------------------
# The job: exercises and their cases, shared by every submission of a batch
# ---------------------------------------------------------------------------
@dataclass
class Exercise:
    id: str
    stem: str
    function: str
    spec: object | None  # graders.checks.ExerciseSpec
    index: int | None = None  # position in the job (None: not run)
    problem: str | None = None  # why it cannot be graded (a kit problem)

    @property
    def max_points(self) -> float:
        return float(self.spec.points) if self.spec is not None else 1.0


@dataclass
class Job:
    exercises: list[Exercise]
    job_dir: Path
    entries: list[dict]  # what the worker sees, indexed by Exercise.index
    needs_torch: bool


def prepare_job(kit: Kit, options: GradeOptions, job_dir: Path, sandbox_settings: dict) -> Job:
    """Write ``job.json`` and ``inputs.npz`` for every gradable exercise of the selected modules."""
    from graders.checks import spec_for

    exercises: list[Exercise] = []
    entries: list[dict] = []
    encoder = codec.Encoder("i")
    needs_torch = False
    for exercise_id in kit.exercises(options.modules):
        stem, function = exercise_id.split(".", 1)
        spec = spec_for(exercise_id)
        exercise = Exercise(exercise_id, stem, function, spec)
        exercises.append(exercise)
        if spec is None:
            exercise.problem = "the kit has no checks for this exercise yet (graders/checks/); it cannot be graded"
            continue
        cases = spec.cases()
        if not cases:
            exercise.problem = "the kit's checks for this exercise have no cases"
            continue
        call = spec.call.describe()
        encoded = [{"args": encoder.encode(tuple(case.args)), "kwargs": encoder.encode(dict(case.kwargs))}
                   for case in cases]
        needs_torch |= _uses_torch(exercise)
        exercise.index = len(entries)
        entries.append({"id": exercise_id, "stem": stem, "function": function, "call": call,
                        "cases": encoded, "timeout": float(options.timeout or spec.timeout)})
    job_dir.mkdir(parents=True, exist_ok=True)
    starter_files = {f.stem: str(kit.starter_path(f.stem)) for f in kit.files(options.modules)
                     if kit.starter_path(f.stem).exists()}
    payload = {"exercises": entries, "needs_torch": needs_torch, "starter_files": starter_files,
               "sandbox": sandbox_settings}
    codec.write_bundle(job_dir / "job", payload, {})
    if encoder.arrays:
        with open(job_dir / "inputs.npz", "wb") as handle:
            np.savez(handle, **encoder.arrays)
    for path in (job_dir, *job_dir.iterdir()):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return Job(exercises, job_dir, entries, needs_torch)


def _leaves(case):
    def walk(value):
        if isinstance(value, (list, tuple)):
            for item in value:
                yield from walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from walk(item)
        else:
            yield value
    yield from walk(tuple(case.args))
    yield from walk(dict(case.kwargs))


# ---------------------------------------------------------------------------
# Reference values (and misconception outputs), computed in the grading process
# ---------------------------------------------------------------------------
@dataclass
class Outcome:
    """A normalised result of one call: a value, or the exception it raised."""

    value: object = None
    raised: list[str] | None = None  # MRO class names
    message: str = ""


class ReferenceBook:
    """Reference outcomes per exercise and case, computed once per process (thread-safe)."""

    _lock = threading.RLock()  # one lock for every reference computation: torch's RNG is global

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self._expected: dict[str, list[Outcome]] = {}
        self._misconceptions: dict[str, list[Misconception]] = {}
        self._wrong: dict[tuple[str, str, int], Outcome] = {}

    def _call(self, exercise: Exercise, function, module, case) -> Outcome:
        args, kwargs = fresh_inputs(case)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # the kit's own edge cases (inf, nan) are deliberate
                raw = calls.call_case(exercise.spec.call.describe(), function, module,
                                      self.kit.starter_module, args, kwargs)
            return Outcome(value=codec.normalise(raw))
        except Exception as error:  # noqa: BLE001 - recorded and compared
            return Outcome(raised=[c.__name__ for c in type(error).__mro__], message=f"{type(error).__name__}: {error}")

    def expected(self, exercise: Exercise) -> list[Outcome]:
        with self._lock:
            if exercise.id not in self._expected:
                with _single_thread_torch(_uses_torch(exercise)):
                    module = self.kit.reference_module(exercise.stem)
                    function = getattr(module, exercise.function)
                    self._expected[exercise.id] = [self._call(exercise, function, module, case)
                                                   for case in exercise.spec.cases()]
            return self._expected[exercise.id]

    def misconceptions(self, exercise: Exercise) -> list[Misconception]:
        with self._lock:
            if exercise.id not in self._misconceptions:
                self._misconceptions[exercise.id] = load_misconceptions(exercise.id, self.kit)
            return self._misconceptions[exercise.id]

    def wrong_outcome(self, exercise: Exercise, entry: Misconception, case_index: int) -> Outcome:
        key = (exercise.id, entry.name, case_index)
        with self._lock:
            if key not in self._wrong:
                with _single_thread_torch(_uses_torch(exercise)):
                    case = exercise.spec.cases()[case_index]
                    self._wrong[key] = self._call(exercise, entry.function, entry.module, case)
            return self._wrong[key]


def fresh_inputs(case) -> tuple[tuple, dict]:
    """A fresh copy of a case's inputs, built exactly as the worker builds them (JSON + arrays)."""
    encoder = codec.Encoder()
    data = encoder.encode((tuple(case.args), dict(case.kwargs)))
    arrays = {key: value.copy() for key, value in encoder.arrays.items()}
    args, kwargs = codec.decode(data, arrays, make_tensor=codec.make_torch_tensor)
    return tuple(args), kwargs


def _uses_torch(exercise: Exercise) -> bool:
    return (exercise.stem.endswith("_training") or exercise.spec.call.describe()["kind"] != "returns"
            or any(isinstance(v, codec.TensorSpec) for case in exercise.spec.cases() for v in _leaves(case)))


class _single_thread_torch:  # noqa: N801 - a context manager used like a function
    """Reference computations use one torch thread, like the workers (same numerics)."""

    def __init__(self, needed: bool) -> None:
        self.needed = needed

    def __enter__(self):
        import sys

        if self.needed:
            import torch  # noqa: F401 - so that the thread count is set before the first use
        self.torch = sys.modules.get("torch")
        if self.torch is not None:
            self.saved = self.torch.get_num_threads()
            self.torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        if self.torch is not None:
            self.torch.set_num_threads(self.saved)
        return False


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
    temp_root: Path
    user: int | None = None
    _counter: list = field(default_factory=lambda: [0])
    _counter_lock: threading.Lock = field(default_factory=threading.Lock)

    def new_dir(self) -> Path:
        with self._counter_lock:
            self._counter[0] += 1
            number = self._counter[0]
        path = self.temp_root / f"sub_{number}"
        for sub in ("", "files", "work", "out"):
            (path / sub).mkdir(parents=True, exist_ok=True)
            if self.user is not None:
                os.chown(path / sub, self.user, self.user)
            os.chmod(path / sub, 0o755 if sub in ("", "files") else 0o700)
        return path


def grade_submission(submission: Submission, ctx: Context) -> dict:
    """The ``report.json`` dict of one submission. Never raises for a learner's fault."""
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
    sub_dir = None
    thread = None
    failure: list[BaseException] = []
    if to_run:
        sub_dir = ctx.new_dir()
        for stem, text in sources.items():
            target = sub_dir / "files" / f"{stem}.py"
            target.write_text(text, encoding="utf-8")
            os.chmod(target, 0o644)

        def work() -> None:
            try:
                runs.update(run_worker(ctx.worker, ctx.job.job_dir, sub_dir, ctx.job.entries,
                                       [e.index for e in to_run]))
            except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread
                failure.append(error)

        thread = threading.Thread(target=work, name=f"worker-{submission.name}", daemon=True)
        thread.start()
    # reference values are computed while the worker runs
    for exercise in to_run:
        ctx.book.expected(exercise)
    if thread is not None:
        thread.join()
    if sub_dir is not None:
        shutil.rmtree(sub_dir, ignore_errors=True)
    if failure:
        raise failure[0]

    entries = []
    for exercise in exercises:
        entries.append(assess(exercise, submission, sources, file_problems, runs, ctx))
    score = round(sum(e["points"] for e in entries), 4)
    max_score = round(sum(e["max_points"] for e in entries), 4)
    return {"submission": submission.name, "score": score, "max_score": max_score, "exercises": entries}


def _entry(exercise: Exercise, status: str, feedback: list[str], points: float = 0.0,
           misconceptions: list[str] | None = None) -> dict:
    return {"id": exercise.id, "points": round(points, 4), "max_points": round(exercise.max_points, 4),
            "status": status, "feedback": "\n".join(feedback).strip(),
            "misconceptions": sorted(set(misconceptions or []))}


def assess(exercise: Exercise, submission: Submission, sources: dict, file_problems: dict,
           runs: dict[int, ExerciseRun], ctx: Context) -> dict:
    notes = list(submission.notes.get(exercise.stem, []))
    if submission.problem:
        return _entry(exercise, "error", [f"the submission could not be graded: {submission.problem}"])
    if exercise.stem in file_problems:
        return _entry(exercise, "error", notes + [file_problems[exercise.stem]])
    if exercise.stem not in sources:
        return _entry(exercise, "missing", [f"missing: no {exercise.stem}.py in the submission"])
    if exercise.problem or exercise.index is None:
        return _entry(exercise, "error", notes + [f"not graded: {exercise.problem}"])
    run = runs.get(exercise.index)
    if run is None:
        return _entry(exercise, "error", notes + ["not graded: the worker returned nothing for this exercise"])
    hide = ctx.options.hide_hidden_inputs
    timeout = ctx.job.entries[exercise.index]["timeout"]
    if run.status == "load_error":
        error = run.payload["error"]
        text = f"{exercise.stem}.py could not be loaded: {_exception_text(error)}"
        if error.get("sandbox"):
            text = (f"{exercise.stem}.py tried {error['message'].removeprefix('the grader does not allow ')} "
                    "while loading; the grader refuses this, so its exercises score 0")
        return _entry(exercise, "error", notes + [text] + _output_lines(error.get("output", ""), hide))
    if run.status == "load_timeout":
        return _entry(exercise, "timeout", notes + [f"loading {exercise.stem}.py did not finish within "
                                                   f"{ctx.options.load_timeout:g} s; 0 points"])
    if run.status == "load_crashed":
        return _entry(exercise, "error", notes + [f"loading {exercise.stem}.py ended the grading process: "
                                                 f"{run.message}"] + _output_lines(run.output, hide))
    if run.status == "timeout":
        return _entry(exercise, "timeout", notes + [f"timeout: did not finish within {timeout:g} s "
                                                   "(all checks together); 0 points"])
    if run.status == "crashed":
        return _entry(exercise, "error", notes + [f"crashed: {run.message} while running this exercise; "
                                                 "0 points"] + _output_lines(run.output, hide))
    payload = run.payload
    if payload.get("missing"):
        return _entry(exercise, "missing", notes + [f"missing: {payload['missing']}"])
    violations = payload.get("violations") or []
    if violations:
        what = violations[0].removeprefix("the grader does not allow ")
        return _entry(exercise, "error", notes + [f"this exercise tried {what}; the grader refuses access to "
                                                 "the reference solutions and hidden checks, so it scores 0"])
    return _assess_cases(exercise, payload, run.arrays, ctx, notes)


def _exception_text(error: dict) -> str:
    where = f" ({error['where']})" if error.get("where") else ""
    return f"{error['type']}: {error['message']}{where}"


def _output_lines(output: str, hide: bool) -> list[str]:
    if not output or hide:
        return []
    output = output if len(output) <= 800 else output[:800] + "..."
    return ["last output:", output]


def _argument_names(exercise: Exercise, ctx: Context) -> list[str]:
    try:
        function = getattr(ctx.kit.reference_module(exercise.stem), exercise.function)
        return [p.name for p in inspect.signature(function).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (AttributeError, TypeError, ValueError, FileNotFoundError):
        return []


def describe_input(case, names: list[str], hidden: bool) -> str:
    if hidden:
        return "hidden input"
    parts = []
    for i, value in enumerate(case.args):
        label = names[i] if i < len(names) else f"arg{i}"
        parts.append(f"{label}={describe(value, 80)}")
    parts += [f"{key}={describe(value, 80)}" for key, value in case.kwargs.items()]
    text = ", ".join(parts)
    return text if len(text) <= INPUT_LIMIT else text[: INPUT_LIMIT - 3] + "..."


def _assess_cases(exercise: Exercise, payload: dict, arrays: dict, ctx: Context, notes: list[str]) -> dict:
    spec = exercise.spec
    cases = spec.cases()
    expected = ctx.book.expected(exercise)
    compare = spec.comparison()
    names = _argument_names(exercise, ctx)
    results = payload["cases"]
    total = passed = 0.0
    problems: list[tuple[str, str, object, int]] = []  # (kind, message, case, index)
    kit_problems: list[str] = []
    found: dict[str, str] = {}  # misconception name -> hint
    found_order: list[str] = []
    for index, case in enumerate(cases):
        want = expected[index]
        if case.raises is not None and not (want.raised and case.raises.__name__ in want.raised):
            kit_problems.append(f"check {case.label or index} expects {case.raises.__name__}, "
                                "but the reference does not raise it")
            continue
        if case.raises is None and want.raised:
            kit_problems.append(f"the reference raised on check {case.label or index}: {want.message}")
            continue
        total += case.weight
        got = results[index] if index < len(results) and isinstance(results[index], dict) else {}
        kind = got.get("outcome")
        if kind == "ok":
            try:
                value = codec.decode(got.get("value"), arrays)
            except (ValueError, KeyError, TypeError):
                problems.append(("failed", "returned a value the grader could not read", case, index))
                continue
            if case.raises is not None:
                problems.append(("failed", f"expected {case.raises.__name__} to be raised, got "
                                           f"{describe(value)}", case, index))
                continue
            reason = compare(want.value, value, case)
            if reason is None:
                passed += case.weight
                continue
            message = f"expected {describe(want.value)}, got {describe(value)}"
            if not reason.startswith(message):
                message += f"\n    ({reason})"
            names_here = _matching_misconceptions(exercise, index, case, want, value, compare, ctx)
            for entry in names_here:
                if entry.name not in found:
                    found[entry.name] = entry.hint
                    found_order.append(entry.name)
                    message += f"\n    misconception '{entry.name}': {entry.hint}"
            problems.append(("failed", message, case, index))
        elif kind == "raised":
            error = got.get("exception") or {}
            if case.raises is not None and case.raises.__name__ in (error.get("mro") or []):
                passed += case.weight
                continue
            if case.raises is not None:
                problems.append(("failed", f"expected {case.raises.__name__}, but it raised "
                                           f"{_exception_text(error)}", case, index))
            else:
                problems.append(("error", f"raised {_exception_text(error)}", case, index))
        elif kind == "modified_input":
            changed = [names[int(n[3:])] if n.startswith("arg") and n[3:].isdigit() and int(n[3:]) < len(names)
                       else n for n in got.get("changed", [])]
            problems.append(("failed", f"modified its input(s) in place: {', '.join(changed)}; "
                                       "inputs must never change", case, index))
        else:
            problems.append(("error", "no result came back for this check", case, index))
    if total == 0:
        return _entry(exercise, "error", notes + ["not graded: " + "; ".join(kit_problems or ["no usable checks"])])
    points = exercise.max_points * passed / total
    status = "passed" if not problems else ("error" if any(k == "error" for k, *_ in problems) else "failed")
    count = len(cases) - len(kit_problems)
    lines = list(notes)
    lines.append(f"{count - len(problems)}/{count} checks passed.")
    lines += _problem_lines(problems, names, ctx.options.hide_hidden_inputs)
    for problem in kit_problems:
        lines.append(f"(kit problem, check skipped: {problem})")
    return _entry(exercise, status, lines, points, found_order)


def _problem_lines(problems, names, hide: bool) -> list[str]:
    """Failing checks, the first few in full; repeats of one message are counted, not repeated."""
    if not problems:
        return []
    if all("NotImplementedError" in message for _, message, _, _ in problems):
        first = problems[0][1]
        return [f"not implemented yet: {first.split('NotImplementedError: ', 1)[-1]}"]
    groups: dict[str, list] = {}
    for problem in problems:
        groups.setdefault(problem[1].split("\n")[0], []).append(problem)
    lines = []
    for shown, same in enumerate(groups.values()):
        if shown == MAX_DETAILED:
            rest = sum(len(g) for g in list(groups.values())[MAX_DETAILED:])
            lines.append(f"- ... and {rest} more failing check(s)")
            break
        _kind, message, case, _index = same[0]
        visibility = "hidden" if case.hidden else "public"
        label = f"'{case.label}'" if case.label else "a check"
        lines.append(f"- {label} ({visibility}): input {describe_input(case, names, hide and case.hidden)}")
        lines.append(f"    {message}")
        if len(same) > 1:
            lines.append(f"    (the same result on {len(same) - 1} more check(s))")
    return lines


def _matching_misconceptions(exercise, index, case, want, value, compare, ctx) -> list[Misconception]:
    if not ctx.options.detect_misconceptions or not getattr(exercise.spec, "detect_misconceptions", True):
        return []
    matched = []
    try:
        entries = ctx.book.misconceptions(exercise)
    except (OSError, ValueError, SyntaxError):
        return []
    for entry in entries:
        wrong = ctx.book.wrong_outcome(exercise, entry, index)
        if wrong.raised is not None:
            continue
        if compare(wrong.value, value, case) is None and compare(want.value, wrong.value, case) is not None:
            matched.append(entry)
    return matched
