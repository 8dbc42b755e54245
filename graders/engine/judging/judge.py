"""The one place that decides an exercise's status and points, and names its misconceptions.

Status: ``passed`` when every check passes; ``failed`` when a check returns a
wrong answer (or changes its input); ``error`` when a check raises
unexpectedly or nothing came back for it; an early :class:`Reason` (no file,
load error, timeout, crash, sandbox refusal, no usable checks) decides its
own status with 0 points. Points: ``max_points`` x the share
:func:`earned_share` gives of the usable checks' weight: the value checks
passed, and the "is refused" checks in proportion to the share of the value
checks passed (a function that raises on everything earns nothing). A check
the reference itself cannot answer is the kit's problem, skipped and reported.
Types: a value of another type than the reference's (a float32 array, a list
for an array, a tensor that should be detached) fails its check
(:func:`graders.engine.values.compare.type_problem`), before values are compared.

Misconceptions: a catalogue entry is named only when it explains everything:
it reproduces every wrong answer and agrees with the learner's answer on every
other check where both returned a value (:func:`_diagnose`, by the rule of
:mod:`graders.engine.judging.naming`, which the learner's pytest runs too). Several such
entries are listed as candidates, none named. A wrong answer that floating
point explains (~1e-16 where exactly 0 is expected) is said to be that
(``CaseOutcome.trap``), never evidence for a mistake.
"""

from __future__ import annotations

import numpy as np

from graders.engine.judging.naming import Raised, explaining
from graders.engine.values import codec
from graders.engine.values.compare import float_trap, type_problem
from graders.engine.values.protocol import CaseOutcome, CaseResult, ExerciseRun, Judgement, Reason, Status, Submission
from graders.engine.values.texts import detail, refusal
from graders.text import Text


def judge(exercise, submission: Submission, sources: dict, file_problems: dict,
          runs: dict[int, ExerciseRun], ctx) -> Judgement:
    """Status, points and the facts behind them for one exercise of one submission."""
    notes = list(submission.notes.get(exercise.stem, []))
    if submission.problem:
        return _early(Reason.SUBMISSION_UNGRADABLE, [], submission.problem)
    if exercise.stem in file_problems:
        return _early(Reason.FILE_UNREADABLE, notes, file_problems[exercise.stem])
    if exercise.stem not in sources:
        return _early(Reason.FILE_MISSING, notes)
    if exercise.problem or exercise.index is None:
        return _early(Reason.NOT_GRADABLE, notes, exercise.problem or "")
    run = runs.get(exercise.index)
    if run is None:
        return _early(Reason.NO_RESULT, notes)
    if run.status == "load_error":
        error = run.payload["error"]
        reason = Reason.LOAD_REFUSED if error.get("sandbox") else Reason.LOAD_FAILED
        judgement = _early(reason, notes, output=error.get("output", ""))
        judgement.error = error
        return judgement
    simple = {"load_timeout": Reason.LOAD_TIMEOUT, "load_crashed": Reason.LOAD_CRASHED,
              "timeout": Reason.TIMEOUT, "crashed": Reason.CRASHED}
    if run.status in simple:
        return _early(simple[run.status], notes, run.message, run.output)
    payload = run.payload
    if payload.get("missing") is True:  # the door's reading of a worker's result: a boolean, worded here
        return _early(Reason.FUNCTION_MISSING, notes, detail(
            "no_function", stem=exercise.stem, function=exercise.function))
    if payload.get("missing"):  # the in-process route's own words (graders.engine.routes.inline: no worker)
        return _early(Reason.FUNCTION_MISSING, notes, payload["missing"])
    violations = payload.get("violations") or []
    if violations:
        return _early(Reason.REFUSED, notes, refusal(violations[0]))
    return judge_cases(exercise, payload, run.arrays, ctx, notes)


def _early(reason: Reason, notes: list[str], detail: str = "", output: str = "") -> Judgement:
    return Judgement(reason.status, 0.0, notes, reason, detail, output=output)


def judge_cases(exercise, payload: dict, arrays: dict, ctx, notes: list[str]) -> Judgement:
    """Judge every check of an exercise the worker ran, against the reference's outcomes."""
    spec = exercise.spec
    cases = spec.cases()
    expected = ctx.book.expected(exercise)
    compare = spec.comparison()
    results = payload["cases"]
    judgement = Judgement(Status.PASSED, notes=notes)
    valid, refusals = _Tally(), _Tally()  # weights of the checks that expect a value / an exception
    answers: dict[int, object] = {}  # case index -> the learner's value, where a value-check got one
    evidence: list[CaseOutcome] = []  # wrong values the float trap does not explain
    for index, case in enumerate(cases):
        want = expected[index]
        if case.raises is not None and not (want.raised and case.raises.__name__ in want.raised):
            judgement.kit_problems.append(detail(
                "kit_no_raise", label=case.label or index, exception=case.raises.__name__))
            continue
        if case.raises is None and want.raised:
            judgement.kit_problems.append(detail(
                "kit_reference_raised", label=case.label or index, message=want.message))
            continue
        got = results[index] if index < len(results) and isinstance(results[index], dict) else {}
        outcome, value = _judge_case(index, case, want, got, arrays, compare,
                                     lambda value, case, want=want: _scored(spec, value, case, ctx, want))
        tally = refusals if case.raises is not None else valid
        tally.total += case.weight
        if value is not _NOTHING:
            answers[index] = value
        if outcome is None:
            tally.passed += case.weight
            continue
        wrong_value = outcome.result is CaseResult.WRONG or (
            outcome.result is CaseResult.WRONG_TYPE and compare(want.value, outcome.got, case) is not None)
        if outcome.result is CaseResult.WRONG_TYPE and not wrong_value:  # the right value, of a wrong type
            tally.passed += case.weight * RIGHT_VALUE_WRONG_TYPE
        if wrong_value:  # a wrong value (of the right type or not): evidence, unless floating point explains it
            outcome.trap = _float_trap(case, want.value, outcome.got, spec) if getattr(spec, "float_trap", False) else None
            if outcome.trap is None:
                evidence.append(outcome)
        judgement.problems.append(outcome)
    if valid.total + refusals.total == 0:
        return Judgement(Reason.NO_CHECKS.status, 0.0, notes, Reason.NO_CHECKS,
                         "; ".join(judgement.kit_problems or [detail("kit_no_usable_checks")]),
                         kit_problems=judgement.kit_problems)
    judgement.points = exercise.max_points * earned_share(valid, refusals)
    judgement.checks = len(cases) - len(judgement.kit_problems)
    if judgement.problems:
        is_error = any(p.result.is_error for p in judgement.problems)
        judgement.status = Status.ERROR if is_error else Status.FAILED
        judgement.not_implemented = valid.passed + refusals.passed == 0 and all(
            p.not_implemented for p in judgement.problems)
    judgement.misconceptions, judgement.candidates = _diagnose(exercise, cases, expected, answers, evidence,
                                                               compare, ctx)
    return judgement


RIGHT_VALUE_WRONG_TYPE = 0.5  # the share of a check's weight a right value of a wrong type earns (docs/design.md)


class _Tally:
    """The weight of some checks, and of those passed."""

    def __init__(self) -> None:
        self.total = self.passed = 0.0


def earned_share(valid: _Tally, refusals: _Tally) -> float:
    """The share of an exercise's points earned: its value checks as passed, and its "is refused" checks
    (an exception expected) in proportion to the share of its value checks it passes.

    Refusing bad input is worth something only in a function that works: one that raises on every input
    passes every "is refused" check and earns nothing for them, a correct one earns them all, and one that
    gets half its values right earns half of each refusal it makes.
    """
    works = valid.passed / valid.total if valid.total else 1.0
    return (valid.passed + refusals.passed * works) / (valid.total + refusals.total)


_NOTHING = object()  # no value came back (an exception, a changed input, nothing readable)


def _scored(spec, value, case, ctx, want):
    """The learner's decoded value as the grader compares it (:func:`graders.engine.judging.references.scored`, with the
    kit's trusted code: a toy check's trained parameters measured); ``None`` where the value cannot be.

    A value equal bit for bit to the one the reference's outcome ``want`` was measured from
    (``want.measured_from``, :func:`graders.engine.values.codec.digest`) measures as ``want.value``: the
    measurement is a function of the value alone, so it is not run again (a warm batch of correct toy runs
    never imports torch in the grader)."""
    from graders.engine.judging.references import scored

    if want.measured_from is not None and getattr(spec.call, "score", None) is not None \
            and _has_digest(value, want.measured_from):
        return want.value
    try:
        return scored(spec, value, case, ctx.book.kit)
    except Exception:  # noqa: BLE001 - learner data that the kit's code cannot measure: nothing to compare
        return None


def _has_digest(value, found: str) -> bool:
    """:func:`graders.engine.values.codec.has_digest`; False where the value has no digest (then it is measured)."""
    try:
        return codec.has_digest(value, found)
    except (TypeError, ValueError, RecursionError):
        return False


def _judge_case(index: int, case, want, got: dict, arrays: dict, compare,
                score=lambda value, case: value) -> tuple[CaseOutcome | None, object]:
    """``(None, value)`` when the check passed; otherwise what went wrong, and the learner's value if any
    (``score``: what of a decoded value is compared)."""
    kind = got.get("outcome")
    if kind == "ok":
        try:
            value = score(codec.decode(got.get("value"), arrays), case)
        except (ValueError, KeyError, TypeError):
            return CaseOutcome(index, case, CaseResult.UNREADABLE), _NOTHING
        if case.raises is not None:
            return CaseOutcome(index, case, CaseResult.NOT_RAISED, got=value), _NOTHING
        reason = compare(want.value, value, case)
        wrong_type = type_problem(want.type, got.get("type")) if want.type is not None else None
        if wrong_type is not None:
            return CaseOutcome(index, case, CaseResult.WRONG_TYPE, expected=want.value, got=value,
                               reason=wrong_type), value
        if reason is None:
            return None, value
        return CaseOutcome(index, case, CaseResult.WRONG, expected=want.value, got=value, reason=reason), value
    if kind == "raised":
        error = got.get("exception") or {}
        if case.raises is not None and case.raises.__name__ in (error.get("mro") or []):
            return None, _NOTHING
        result = CaseResult.WRONG_EXCEPTION if case.raises is not None else CaseResult.RAISED
        return CaseOutcome(index, case, result, error=error), _NOTHING
    if kind == "modified_input":
        return CaseOutcome(index, case, CaseResult.MODIFIED_INPUT, changed=tuple(got.get("changed", []))), _NOTHING
    return CaseOutcome(index, case, CaseResult.NO_RESULT), _NOTHING


def _float_trap(case, expected, got, spec) -> float | None:
    """The learner's value where the reference returns exactly 0, when floating point explains it
    (:func:`graders.engine.values.compare.float_trap`), on this check's inputs and tolerances."""
    inputs = [codec.normalise(value.data if isinstance(value, codec.TensorSpec) else value)
              for value in (*case.args, *case.kwargs.values())]
    rtol = case.rtol if case.rtol is not None else spec.rtol
    atol = case.atol if case.atol is not None else spec.atol
    return float_trap(expected, got, [v for v in inputs if isinstance(v, np.ndarray)], rtol=rtol, atol=atol)


def _diagnose(exercise, cases, expected, answers: dict, evidence: list[CaseOutcome], compare,
              ctx) -> tuple[dict[str, tuple[dict, dict]], tuple[str, ...]]:
    """``(claimed, candidates)``: the catalogue entries that explain the learner's answers.

    An entry fits when it returns the learner's value on every wrong answer (``evidence``: those the float
    trap does not explain) and agrees with the learner on every other check where both returned a value
    (the ones the learner gets right included), within the exercise's comparison. One fitting entry is
    claimed, on the first wrong answer; several are candidates, listed and none claimed; none, nothing.
    Entries are tried on the wrong answers first, so most stop after a check or two. The rule is
    :func:`graders.engine.judging.naming.explaining`, the one the learner's pytest runs on the public inputs.
    """
    if not evidence or not ctx.options.detect_misconceptions or not getattr(exercise.spec, "detect_misconceptions",
                                                                             True):
        return {}, ()
    try:
        entries = ctx.book.misconceptions(exercise)
    except (OSError, ValueError, SyntaxError):
        return {}, ()
    by_name = {entry.name: entry for entry in entries}

    def outcome(name, index):
        wrong = ctx.book.wrong_outcome(exercise, by_name[name], index)
        return Raised if wrong.raised is not None else wrong.value

    named, candidates = explaining(by_name, outcome, answers, [o.index for o in evidence],
                                   lambda value, answer, index: compare(value, answer, cases[index]) is None)
    if named is None:
        return {}, candidates
    return {named: _claim(evidence[0], by_name[named])}, ()


def _claim(outcome: CaseOutcome, entry) -> tuple[Text, str]:
    """Name ``entry`` on ``outcome``: ``(its hint, the label of that check)``, each a Text (feedback picks the
    language)."""
    outcome.named.append((entry.name, entry.hint))
    return entry.hint, _label(outcome)


def _label(outcome: CaseOutcome) -> str:
    """The failing check's label, a Text (feedback picks the language); ``#<n>`` when it has none."""
    return outcome.case.label or f"#{outcome.index + 1}"
