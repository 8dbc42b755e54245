"""Grading one exercise in-process, in the caller's own process: a tool, NOT a way to score.

:func:`assert_exercise` runs every case of the exercise's spec
(``graders/checks``) on a function and on the reference solution, and raises
``AssertionError`` with the engine's feedback -- failed checks, expected vs
got, and the catalogued misconceptions that match -- unless every check passes;
:func:`grade_exercise` returns the ``report.json`` entry. Useful to an
instructor (or the kit's tests) checking a function in a trusted process.

It must never decide a student's score: whatever runs in the same process (a
notebook kernel: the student's own cells) can replace these functions or their
results. nbgrader's scores come from :mod:`graders.engine.nbgrader.scoring`,
which grades a notebook's definitions with the isolated engine
(:func:`graders.engine.routes.batch.grade_paths`) and never executes the notebook;
the course notebooks' hidden test parts no longer call this module.

It is the engine's own path with the worker replaced by direct calls: the
learner's outcomes are produced exactly as the worker produces them
(:func:`graders.engine.judging.calls.call_case` on fresh inputs, normalised and encoded
with :mod:`graders.engine.values.codec`, inputs checked for in-place changes, printed
output captured), and they are judged by :func:`graders.engine.outputs.feedback.assess`
against a :class:`graders.engine.judging.references.ReferenceBook` -- the same
comparison, statuses, points, feedback text and misconception detection as
``rl4llm grade``. There is no process isolation here. A per-exercise
CPU-time limit (the spec's ``timeout``, with a wall-clock backstop for a function that stalls) applies
in the main thread where thread CPU clocks exist (:class:`_Deadline`): the same entry on a busy machine.

Harness call modes get ``learner`` = the namespace the function lives in (its
``__globals__``: in a notebook, the kernel's user namespace, so a harness that
swaps in a trusted copy of another exercise reaches the function's real
globals) and ``starter(name)`` = the public starter's given module ``name``
(``grpo_toy``) as the kit loads it in this process
(:meth:`graders.engine.judging.kit.Kit.starter_module`): never the copy the learner's
own file imported, which its code may have changed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path
from types import SimpleNamespace

from graders import settings

HIDE_ENV = "RL4LLM_HIDE_HIDDEN_INPUTS"


class _Namespace:
    """Attribute access onto a dict (``vars(obj)`` IS that dict): a harness's view of the learner module."""

    def __init__(self, namespace: dict) -> None:
        self.__dict__ = namespace


class _ExerciseTimeout(BaseException):
    """Raised by the interval timer; a BaseException so that ``except Exception`` cannot swallow it."""


class _Deadline:
    """The exercise's CPU-time budget and a wall-clock backstop, independent of how busy the machine is.

    The budget counts the CPU seconds of this process *except* those of the threads that were already
    running when the exercise began (a notebook kernel's, an earlier grade's): under load those threads
    take longer to finish, and their seconds must not land on this exercise (``ITIMER_PROF`` counted
    them: the result changed with the load). A watchdog thread reads the clocks every
    :data:`POLL` seconds and interrupts the calling thread (``SIGPROF``) past the budget. The backstop
    (:func:`graders.engine.worker.runner.wall_backstop`) ends only a function that *stalls*: past it, the
    exercise is ended when it spent less than :data:`STALL_CPU` of CPU in the last :data:`STALL_WINDOW`
    seconds (it sleeps or waits), or in any case past :data:`WALL_CAP` backstops. Main thread only
    (no-op elsewhere or without ``pthread_getcpuclockid``)."""

    POLL, STALL_WINDOW, STALL_CPU, WALL_CAP = 0.02, 15.0, 0.05, 10

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = (seconds > 0 and hasattr(time, "pthread_getcpuclockid") and hasattr(signal, "pthread_kill")
                       and threading.current_thread() is threading.main_thread())

    def _fire(self, signum, frame):  # noqa: ARG002 - signal handler signature
        if self.fired:
            raise _ExerciseTimeout()

    def _others(self) -> float:
        """CPU seconds of the threads that ran before the exercise (the last reading of one that ended)."""
        for ident in list(self.last):
            try:
                self.last[ident] = time.clock_gettime(time.pthread_getcpuclockid(ident))
            except (OSError, OverflowError):
                pass
        return sum(self.last.values())

    def used(self) -> float:
        """The exercise's CPU seconds so far."""
        return (time.process_time() - self.start_cpu) - (self._others() - self.start_others)

    def _watch(self) -> None:
        from graders.engine.worker.config import wall_backstop

        backstop = wall_backstop(self.seconds)
        begun = time.monotonic()
        window: list[tuple[float, float]] = []
        while not self.done.wait(self.POLL):
            used, now = self.used(), time.monotonic()
            window = [(t, u) for t, u in window if now - t <= self.STALL_WINDOW] + [(now, used)]
            stalled = now - window[0][0] >= self.STALL_WINDOW * 0.9 and used - window[0][1] < self.STALL_CPU
            if used >= self.seconds or (now - begun >= backstop and stalled) or now - begun >= self.WALL_CAP * backstop:
                self.fired = True
                signal.pthread_kill(self.caller, signal.SIGPROF)
                return

    def __enter__(self):
        if self.active:
            self.fired = False
            self.caller = threading.get_ident()
            self.last = {t.ident: 0.0 for t in threading.enumerate() if t.ident not in (None, self.caller)}
            self.start_others, self.start_cpu = self._others(), time.process_time()
            self.previous = signal.signal(signal.SIGPROF, self._fire)
            self.done = threading.Event()
            self.watchdog = threading.Thread(target=self._watch, name="inline-deadline", daemon=True)
            self.watchdog.start()
        return self

    def __exit__(self, *exc):
        if self.active:
            self.done.set()
            self.watchdog.join()
            signal.signal(signal.SIGPROF, self.previous)
        return False


def _book(kit):
    from graders.engine.judging.references import ReferenceBook

    return ReferenceBook.of(kit)


def _where(error: BaseException, function) -> str:
    """``line N, in name`` of the innermost traceback frame in the learner function's own file (cell)."""
    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if filename and frame.filename == filename:
            return f"line {frame.lineno}, in {frame.name}"
    return ""


def _run_case(call: dict, function, learner, starter, case, encoder, dependencies: dict | None = None) -> dict:
    """One case on the learner's function, as the worker runs it (see ``Worker.run_case``); ``dependencies``
    (call mode ``answered``): the reference's functions its dependencies are answered by here."""
    from contextlib import nullcontext

    from graders.engine.judging import calls
    from graders.engine.values import codec, learner_text
    from graders.engine.judging.answers import trusted
    from graders.engine.judging.references import fresh_inputs
    from graders.engine.worker.child import CappedWriter, describe_exception

    args, kwargs = fresh_inputs(case)
    before_args, before_kwargs = calls.snapshot(args), calls.snapshot(kwargs)
    capture = CappedWriter()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    try:
        with warnings.catch_warnings(record=True) as caught:  # shown as printed output, as in the worker
            warnings.simplefilter("always")
            try:
                with trusted(learner, dependencies) if dependencies else nullcontext():
                    raw = calls.call_case(call, function, learner, starter, args, kwargs)
                outcome = {"outcome": "ok", "value": encoder.encode(codec.normalise(raw)), "type": codec.type_of(raw)}
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the learner's error is this case's result
                outcome = {"outcome": "raised", "exception": describe_exception(error, Path(os.devnull))}
                outcome["exception"]["where"] = _where(error, function)
        for warning in caught:
            capture.write(warnings.formatwarning(warning.message, warning.category, warning.filename,
                                                 warning.lineno, warning.line))
    finally:
        sys.stdout, sys.stderr = saved
    if outcome["outcome"] == "ok":
        changed = calls.modified_inputs(before_args, before_kwargs, args, kwargs)
        if changed:
            outcome = {"outcome": "modified_input", "changed": changed}
    outcome["output"] = capture.text()
    return learner_text.clean(outcome)  # its messages, names and output made safe for every report, once, here


def _hide_default() -> bool:
    return settings.get(HIDE_ENV)


def grade_exercise(exercise_id: str, function, namespace=None, *, hide_hidden_inputs: bool | None = None,
                   detect_misconceptions: bool = True, timeout: float | None = None, kit=None) -> dict:
    """The ``report.json`` entry of one exercise, graded in this process.

    ``function`` is the learner's implementation; ``namespace`` (a dict or a
    module) is what a harness sees as the learner module -- by default the
    function's own globals. ``hide_hidden_inputs`` defaults to the environment
    variable ``RL4LLM_HIDE_HIDDEN_INPUTS`` (``1``: hidden inputs are withheld
    from the feedback). Raises ``KeyError`` for an exercise the kit has no
    checks for (a kit problem, not the learner's).
    """
    from graders.checks import spec_for
    from graders.engine.values import codec
    from graders.engine.outputs.feedback import assess
    from graders.engine.routes.grading import Exercise, GradeOptions
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.engine.values.learner_text import clean_text
    from graders.engine.judging.references import single_thread_torch, uses_torch
    from graders.engine.values.protocol import ExerciseRun
    from graders.engine.values.protocol import Submission
    from graders.engine.values.texts import detail, feedback_text, stub_particular, translated

    from graders.engine.sandbox.layers import private_hypothesis_storage

    private_hypothesis_storage()  # no .hypothesis/ (the reference's literals) in the caller's folder
    kit = kit or DEFAULT_KIT
    spec = spec_for(exercise_id)
    if spec is None:
        raise KeyError(f"the kit has no checks for {exercise_id!r}")
    stem, name = exercise_id.split(".", 1)
    exercise = Exercise(exercise_id, stem, name, spec, index=0)
    if namespace is None:
        namespace = getattr(function, "__globals__", {})
    learner = _Namespace(namespace) if isinstance(namespace, dict) else namespace
    hide = _hide_default() if hide_hidden_inputs is None else bool(hide_hidden_inputs)
    options = GradeOptions(hide_hidden_inputs=hide, detect_misconceptions=detect_misconceptions)
    limit = float(timeout or spec.timeout)
    ctx = SimpleNamespace(kit=kit, options=options, book=_book(kit),
                          job=SimpleNamespace(entries=[{"timeout": limit}]))
    submission = Submission(name="notebook", origin=Path("."))
    call = spec.call.describe()
    dependencies = ({name: getattr(kit.reference_module(stem), name) for name in call["names"]}
                    if call["kind"] == "answered" else None)  # answered by the reference, as in the worker

    encoder = codec.Encoder()
    outcomes: list[dict] = []
    status = "done"
    if not callable(function):
        payload = {"cases": [], "missing": detail("not_a_function", function=name,
                                                  type=clean_text(type(function).__name__)),
                   "violations": []}
        run = ExerciseRun("done", payload, {})
    else:
        try:
            with single_thread_torch(uses_torch(exercise)), _Deadline(limit):
                for case in spec.cases():
                    outcomes.append(_run_case(call, function, learner, kit.starter_module, case, encoder,
                                              dependencies))
                    if outcomes[-1].get("exception", {}).get("type") == "MemoryError":
                        break
        except _ExerciseTimeout:
            status = "timeout"
        run = ExerciseRun(status, {"cases": outcomes, "missing": None, "violations": []}, encoder.arrays)

    if status == "done" and outcomes and all(_not_implemented(o) for o in outcomes):
        # an untouched stub: say so without computing every reference value
        message = outcomes[0]["exception"]["message"] or f"{exercise_id} is not implemented yet"
        count, language = len(spec.cases()), options.lang
        feedback = "\n".join([feedback_text(language, "checks_passed", passed=0, checks=count),
                              feedback_text(language, "not_implemented", detail=translated(stub_particular(message), language))])
        return {"id": exercise_id, "points": 0.0, "max_points": round(spec.points, 4), "status": "error",
                "feedback": feedback, "misconceptions": [], "not_implemented": True}
    return assess(exercise, submission, {stem: ""}, {}, {0: run}, ctx).to_dict()


def _not_implemented(outcome: dict) -> bool:
    return outcome.get("outcome") == "raised" and "NotImplementedError" in outcome["exception"].get("mro", [])


def assert_exercise(exercise_id: str, function, namespace=None, **options) -> None:
    """Raise ``AssertionError`` with the engine's feedback unless ``function`` passes every check.

    On success one line goes to stdout (``<id>: N/N checks passed.``). Returns
    ``None``, so a notebook cell ending with this call shows no value (nbgrader
    would read a numeric value as partial credit). ``options``: see
    :func:`grade_exercise`.
    """
    __tracebackhide__ = True  # noqa: F841 - IPython hides this frame from the traceback
    entry = grade_exercise(exercise_id, function, namespace, **options)
    if entry["status"] != "passed":
        names = ", ".join(entry["misconceptions"])
        headline = (f"{exercise_id}: {entry['status']} ({entry['points']:g} of {entry['max_points']:g} points by "
                    "the kit's checks; this cell scores only when every check passes)")
        if names:
            headline += f"\nlikely misconception(s): {names}"
        raise AssertionError(f"{headline}\n{entry['feedback']}")
    print(f"{exercise_id}: {entry['feedback'].splitlines()[0] if entry['feedback'] else 'passed'}")
