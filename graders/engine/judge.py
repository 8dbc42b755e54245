"""The one place that decides an exercise's status and points, and names its misconceptions.

Status: ``passed`` when every check passes; ``failed`` when a check returns a
wrong answer (or changes its input); ``error`` when a check raises
unexpectedly or nothing came back for it; an early :class:`Reason` (no file,
load error, timeout, crash, sandbox refusal, no usable checks) decides its
own status with 0 points. Points: ``max_points`` x the weight of the passed
checks / the weight of every usable check (a check the reference itself
cannot answer is the kit's problem, skipped and reported).

Misconceptions: each catalogue entry is run on the first
``MISCONCEPTION_CASES`` wrong answers; the entries that reproduce the most of
them are named (ties kept), each on the first check it explains.
"""

from __future__ import annotations

from graders.course import LANGUAGES
from graders.engine import codec
from graders.engine.misconceptions import Misconception
from graders.engine.protocol import CaseOutcome, CaseResult, Judgement, Reason, Status
from graders.engine.runner import ExerciseRun
from graders.engine.submission import Submission
from graders.engine.texts import detail, detail_in_every_language

MISCONCEPTION_CASES = 8  # wrong answers per exercise compared with the catalogue (each entry runs on them)


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
        return _early(Reason.NOT_GRADABLE, notes, str(exercise.problem))
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
    if payload.get("missing"):
        return _early(Reason.FUNCTION_MISSING, notes, str(payload["missing"]))
    violations = payload.get("violations") or []
    if violations:
        return _early(Reason.REFUSED, notes, violations[0])
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
    total = passed = 0.0
    judgement = Judgement(Status.PASSED, notes=notes)
    matched: list[tuple[CaseOutcome, list[Misconception]]] = []  # wrong answers and the entries matching them
    for index, case in enumerate(cases):
        want = expected[index]
        if case.raises is not None and not (want.raised and case.raises.__name__ in want.raised):
            judgement.kit_problems.append(detail_in_every_language(
                "kit_no_raise", _label_fields(case, index), exception=case.raises.__name__))
            continue
        if case.raises is None and want.raised:
            judgement.kit_problems.append(detail_in_every_language(
                "kit_reference_raised", _label_fields(case, index), message=want.message))
            continue
        total += case.weight
        got = results[index] if index < len(results) and isinstance(results[index], dict) else {}
        outcome = _judge_case(index, case, want, got, arrays, compare)
        if outcome is None:
            passed += case.weight
            continue
        if outcome.result is CaseResult.WRONG and len(matched) < MISCONCEPTION_CASES:
            matched.append((outcome, _matching_misconceptions(exercise, index, case, want, outcome.got,
                                                              compare, ctx)))
        judgement.problems.append(outcome)
    if total == 0:
        return Judgement(Reason.NO_CHECKS.status, 0.0, notes, Reason.NO_CHECKS,
                         "; ".join(judgement.kit_problems or [detail("kit_no_usable_checks")]),
                         kit_problems=judgement.kit_problems)
    judgement.points = exercise.max_points * passed / total
    judgement.checks = len(cases) - len(judgement.kit_problems)
    if judgement.problems:
        is_error = any(p.result.is_error for p in judgement.problems)
        judgement.status = Status.ERROR if is_error else Status.FAILED
        judgement.not_implemented = passed == 0 and all(p.not_implemented for p in judgement.problems)
    judgement.misconceptions = _name_misconceptions(matched)
    return judgement


def _judge_case(index: int, case, want, got: dict, arrays: dict, compare) -> CaseOutcome | None:
    """``None`` when the check passed; otherwise what went wrong."""
    kind = got.get("outcome")
    if kind == "ok":
        try:
            value = codec.decode(got.get("value"), arrays)
        except (ValueError, KeyError, TypeError):
            return CaseOutcome(index, case, CaseResult.UNREADABLE)
        if case.raises is not None:
            return CaseOutcome(index, case, CaseResult.NOT_RAISED, got=value)
        reason = compare(want.value, value, case)
        if reason is None:
            return None
        return CaseOutcome(index, case, CaseResult.WRONG, expected=want.value, got=value, reason=reason)
    if kind == "raised":
        error = got.get("exception") or {}
        if case.raises is not None and case.raises.__name__ in (error.get("mro") or []):
            return None
        result = CaseResult.WRONG_EXCEPTION if case.raises is not None else CaseResult.RAISED
        return CaseOutcome(index, case, result, error=error)
    if kind == "modified_input":
        return CaseOutcome(index, case, CaseResult.MODIFIED_INPUT, changed=tuple(got.get("changed", [])))
    return CaseOutcome(index, case, CaseResult.NO_RESULT)


def _name_misconceptions(matched: list[tuple[CaseOutcome, list[Misconception]]]) -> dict[str, tuple[dict, dict]]:
    """The catalogue entries that explain the most wrong answers (ties kept); each goes on its first one.

    An entry can coincide with another mistake on some inputs; the one that
    reproduces the learner's answers most often is the one named.
    """
    counts: dict[str, int] = {}
    for _, entries in matched:
        for entry in entries:
            counts[entry.name] = counts.get(entry.name, 0) + 1
    if not counts:
        return {}
    best = max(counts.values())
    found: dict[str, tuple[dict, dict]] = {}
    for outcome, entries in matched:
        for entry in entries:
            if counts[entry.name] == best and entry.name not in found:
                hints = dict(entry.hints) or {"en": entry.hint}  # feedback picks the language
                found[entry.name] = (hints, _labels(outcome))
                outcome.named.append((entry.name, hints))
    return found


def _label_fields(case, index: int) -> dict[str, dict]:
    """``{language: {"label": ...}}``: the check's label in each language (its index without one)."""
    return {language: {"label": case.label_in(language) or index} for language in LANGUAGES}


def _labels(outcome: CaseOutcome) -> dict[str, str]:
    """The failing check's label in every language (feedback picks one; ``#<n>`` when it has none)."""
    if not outcome.case.label:
        return {"en": f"#{outcome.index + 1}"}
    return {language: outcome.case.label_in(language) for language in LANGUAGES}


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
