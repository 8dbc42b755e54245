"""One exercise's mutants judged in this process: equivalent, killed by the hidden checks, or survived.

For each mutant (:mod:`graders.mutation.operators`) of the exercise's reference
function:

1. **The mutant function**: the mutated ``def`` exec'd in a *copy* of the
   reference module's namespace (as :func:`graders.engine.judging.misconceptions.load_misconceptions`
   builds a catalogue entry), so that only this one function is wrong and a
   harness that reaches the learner module's other functions finds the
   reference's.
2. **Equivalence**: the mutant and the reference are called on every case of
   the spec and on the draws of :mod:`graders.mutation.draws`, each call on
   fresh inputs, under the spec's call mode; each outcome is a value
   (normalised by :func:`graders.engine.values.codec.normalise`, with its
   :func:`graders.engine.values.codec.type_of`), an exception type, or an input
   changed in place. Values are compared with the engine's comparator
   (:func:`graders.engine.values.compare.mismatch` at the case's tolerances, and
   :func:`graders.engine.values.compare.type_problem`). A mutant equal on every
   input is **equivalent** and left out; otherwise the first differing input
   (a draw before a case of the checks) is its **witness**.
3. **Kill**: every non-equivalent mutant is graded by the engine's in-process
   route (:func:`graders.engine.routes.inline.grade_exercise`): **killed** when it
   loses points, else a **survivor**. The names the grader gave are kept.

A mutant that runs past its time (:data:`EQUIVALENCE_SECONDS` of CPU for the
equivalence calls) differs from the reference by definition (witness
``timeout``) and is graded under the spec's own limit.
"""

from __future__ import annotations

import contextlib
import io
import signal
import threading
import time
import types
import warnings
from dataclasses import dataclass

import numpy as np

from graders.mutation.draws import extra_cases
from graders.mutation.operators import Mutant, function_node, mutants

EQUIVALENCE_SECONDS = 30.0


class _Timeout(BaseException):
    """Raised by the CPU-time timer; a BaseException so that mutant code's ``except Exception`` cannot swallow it."""


@contextlib.contextmanager
def cpu_limit(seconds: float):
    """Raise :class:`_Timeout` after ``seconds`` of this process's CPU time (main thread only; else no limit)."""
    active = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if not active:
        yield
        return

    def fire(signum, frame):  # noqa: ARG001 - signal handler signature
        raise _Timeout()

    previous = signal.signal(signal.SIGPROF, fire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@dataclass
class Target:
    """What every mutant of one exercise is measured against (built once per process)."""

    exercise: str
    spec: object
    module: types.ModuleType  # the reference module
    source: str  # its file's text
    node: object  # the exercise's ``def``
    call: dict
    inputs: list  # [(Case, from_checks: bool)]
    expected: list  # the reference's outcome on each input
    mutants: list[Mutant]


_TARGETS: dict[str, Target] = {}


def target(exercise: str, kit=None) -> Target:
    """The reference, its inputs and outcomes, and its mutants, for ``exercise`` (cached in this process)."""
    if exercise not in _TARGETS:
        from graders.checks import spec_for
        from graders.engine.judging.kit import DEFAULT_KIT

        kit = kit or DEFAULT_KIT
        spec = spec_for(exercise)
        stem, name = exercise.split(".", 1)
        module = kit.reference_module(stem)
        source = kit.solution_path(stem).read_text(encoding="utf-8")
        node = function_node(source, name)
        cases = spec.cases()
        inputs = [(case, True) for case in cases]
        inputs += [(case, False) for case in extra_cases(cases, spec.call)]
        call = spec.call.describe()
        function = getattr(module, name)
        expected = [outcome(call, function, module, case, kit) for case, _ in inputs]
        _TARGETS[exercise] = Target(exercise, spec, module, source, node, call, inputs, expected,
                                    mutants(node, exercise))
    return _TARGETS[exercise]


def mutant_function(target: Target, mutant: Mutant):
    """The mutant as a function, and the namespace it lives in: a copy of the reference module's."""
    import __future__

    namespace = {k: v for k, v in vars(target.module).items() if k not in ("__name__", "__spec__")}
    namespace["__name__"] = target.module.__name__
    code = compile(mutant.source, f"<mutant {mutant.id}>", "exec", flags=__future__.annotations.compiler_flag,
                   dont_inherit=True)
    exec(code, namespace)  # noqa: S102 - kit-generated code (a mutant of the kit's own reference)
    return namespace[target.node.name], namespace


class _View:
    """Attribute access onto a namespace dict (a harness's ``learner``)."""

    def __init__(self, namespace: dict) -> None:
        self.__dict__ = namespace


def outcome(call: dict, function, module, case, kit=None) -> tuple:
    """One call on fresh inputs: ``("ok", value, type)``, ``("raised", type name)`` or ``("modified", where)``."""
    from graders.engine.judging import calls
    from graders.engine.values import codec
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.engine.judging.references import fresh_inputs

    kit = kit or DEFAULT_KIT
    learner = _View(module) if isinstance(module, dict) else module
    args, kwargs = fresh_inputs(case)
    before_args, before_kwargs = calls.snapshot(args), calls.snapshot(kwargs)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            raw = calls.call_case(call, function, learner, kit.starter_module, args, kwargs)
            result = ("ok", codec.normalise(raw), codec.type_of(raw))
        except (Exception, SystemExit) as error:  # noqa: BLE001 - an exception is this input's outcome
            return ("raised", type(error).__name__)
    changed = calls.modified_inputs(before_args, before_kwargs, args, kwargs)
    return ("modified", changed) if changed else result


def difference(spec, case, expected: tuple, got: tuple) -> str | None:
    """``None`` when two outcomes agree (the engine's comparator at the case's tolerances), else why not."""
    from graders.engine.values.compare import mismatch, type_problem

    if expected[0] != got[0]:
        return f"reference {_said(expected)}, mutant {_said(got)}"
    if expected[0] != "ok":
        return None if expected[1] == got[1] else f"reference {_said(expected)}, mutant {_said(got)}"
    problem = type_problem(expected[2], got[2])
    if problem is not None:
        return str(problem)
    rtol = spec.rtol if case.rtol is None else case.rtol
    atol = spec.atol if case.atol is None else case.atol
    return mismatch(expected[1], got[1], rtol=rtol, atol=atol)


def _said(outcome_: tuple) -> str:
    if outcome_[0] == "ok":
        from graders.engine.values.compare import describe

        return f"returned {describe(outcome_[1], 120)}"
    if outcome_[0] == "raised":
        return f"raised {outcome_[1]}"
    return f"changed input(s) {outcome_[1]} in place"


def describe_input(case) -> str:
    """A short text of a case's inputs (arrays summarised)."""
    with np.printoptions(threshold=12, precision=4, edgeitems=3):
        def show(value):
            data = getattr(value, "data", None)
            if hasattr(value, "requires_grad") and data is not None:
                return f"Tensor({np.asarray(data)!r}, {value.dtype})"
            return repr(value)

        parts = [show(a) for a in case.args] + [f"{k}={show(v)}" for k, v in case.kwargs.items()]
    text = ", ".join(parts).replace("\n", " ")
    return text if len(text) <= 400 else text[:397] + "..."


def witness(target: Target, function, namespace) -> dict | None:
    """The first input where the mutant differs from the reference (the draws first), or ``None``."""
    order = [i for i, (_, checks) in enumerate(target.inputs) if not checks]
    order += [i for i, (_, checks) in enumerate(target.inputs) if checks]
    found = None
    for index in order:
        case, from_checks = target.inputs[index]
        why = difference(target.spec, case, target.expected[index],
                         outcome(target.call, function, namespace, case))
        if why is not None:
            found = {"input": describe_input(case), "label": str(case.label), "from_checks": from_checks,
                     "difference": why}
            if not from_checks:
                return found
    return found


def judge(exercise: str, mutant: Mutant) -> dict:
    """The verdict on one mutant: ``equivalent``, ``killed`` or ``survived`` (with its witness and the grade)."""
    from graders.engine.routes.inline import grade_exercise

    started = time.perf_counter()
    goal = target(exercise)
    row = {"id": mutant.id, "operator": mutant.operator, "line": mutant.line, "col": mutant.col,
           "diff": mutant.diff}
    try:
        function, namespace = mutant_function(goal, mutant)
    except Exception as error:  # noqa: BLE001 - a mutant that does not even define (never expected)
        row.update(status="invalid", error=f"{type(error).__name__}: {error}")
        return row
    try:
        with cpu_limit(EQUIVALENCE_SECONDS):
            found = witness(goal, function, namespace)
    except _Timeout:
        found = {"input": "", "label": "", "from_checks": False, "difference": "timeout"}
    if found is None:
        row.update(status="equivalent", seconds=round(time.perf_counter() - started, 3))
        return row
    entry = grade_exercise(exercise, function, namespace, hide_hidden_inputs=False)
    killed = entry["points"] < entry["max_points"] - 1e-9
    row.update(status="killed" if killed else "survived", witness=found, points=entry["points"],
               max_points=entry["max_points"], grade_status=entry["status"],
               grader_names=list(entry.get("misconceptions", [])), seconds=round(time.perf_counter() - started, 3))
    return row


def judge_chunk(exercise: str, ids: list[str]) -> list[dict]:
    """The verdicts on some mutants of one exercise (a worker's task)."""
    goal = target(exercise)
    wanted = set(ids)
    return [judge(exercise, m) for m in goal.mutants if m.id in wanted]


def mutant_file(exercise: str, mutant_id: str, kit=None) -> str:
    """A complete learner file: the reference file with the mutated function appended (it replaces the
    reference's definition when the file runs), as :func:`graders.engine.judging.misconceptions.mutant_source`."""
    from graders.engine.judging.kit import DEFAULT_KIT

    kit = kit or DEFAULT_KIT
    stem, name = exercise.split(".", 1)
    source = kit.solution_path(stem).read_text(encoding="utf-8")
    mutant = next(m for m in mutants(function_node(source, name), exercise) if m.id == mutant_id)
    return f"{source.rstrip()}\n\n\n# mutant {mutant.id}: {mutant.diff}\n{mutant.source}\n"


def reset() -> None:
    """Forget the cached targets (tests that change the reference)."""
    _TARGETS.clear()


__all__ = ["Target", "target", "mutant_function", "outcome", "difference", "witness", "judge", "judge_chunk",
           "mutant_file", "reset"]
