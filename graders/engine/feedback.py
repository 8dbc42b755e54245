"""Feedback: the text of an exercise's report, rendered from the judge's decision.

:mod:`graders.engine.judge` decides status, points and misconceptions;
this module only writes them down. Feedback is one deterministic string: a
count of passed checks, then the first few failing checks with their input
(``hidden input`` when withheld), expected vs got, and any catalogued
misconception matching the answer; or one line saying why the checks were
not judged (no file, load error, timeout, crash, sandbox refusal).
"""

from __future__ import annotations

import re

from graders.engine.compare import describe
from graders.engine.judge import judge
from graders.engine.protocol import CaseOutcome, CaseResult, ExerciseReport, Judgement, Reason
from graders.engine.runner import ExerciseRun
from graders.engine.submission import Submission
from graders.fences import positional_parameters

MAX_DETAILED = 3  # distinct failing results described in full per exercise
INPUT_LIMIT = 240


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_TEMP_PATH = re.compile(r"/[^\s'\"]*?rl4llm-grade-[A-Za-z0-9_]+(?:/sub_\d+)?")


def deterministic(text: str) -> str:
    """Feedback without memory addresses or the grader's temporary paths (same answer, same bytes)."""
    return _TEMP_PATH.sub("<submission>", _ADDRESS.sub("0x...", text))


def assess(exercise, submission: Submission, sources: dict, file_problems: dict,
           runs: dict[int, ExerciseRun], ctx) -> ExerciseReport:
    """Judge one exercise of one submission and render its feedback."""
    judgement = judge(exercise, submission, sources, file_problems, runs, ctx)
    return ExerciseReport(exercise.id, judgement.status, judgement.points, exercise.max_points,
                          render(judgement, exercise, ctx), tuple(judgement.misconceptions))


def render(judgement: Judgement, exercise, ctx) -> str:
    """The feedback text of a judgement."""
    if judgement.reason is not None:
        lines = _reason_lines(judgement, exercise, ctx)
    else:
        lines = _case_lines(judgement, exercise, ctx)
    return deterministic("\n".join(lines).strip())


def _reason_lines(judgement: Judgement, exercise, ctx) -> list[str]:
    reason, notes, detail = judgement.reason, judgement.notes, judgement.detail
    hide = ctx.options.hide_hidden_inputs
    stem = exercise.stem
    if reason is Reason.SUBMISSION_UNGRADABLE:
        return [f"the submission could not be graded: {detail}"]
    if reason is Reason.FILE_UNREADABLE:
        return notes + [detail]
    if reason is Reason.FILE_MISSING:
        return [f"missing: no {stem}.py in the submission"] + notes
    if reason is Reason.NOT_GRADABLE:
        return notes + [f"not graded: {detail}"]
    if reason is Reason.NO_RESULT:
        return notes + ["not graded: the worker returned nothing for this exercise"]
    if reason is Reason.LOAD_FAILED:
        return notes + [f"{stem}.py could not be loaded: {_exception_text(judgement.error)}"] + \
            _output_lines(judgement.output, hide)
    if reason is Reason.LOAD_REFUSED:
        what = judgement.error["message"].removeprefix("the grader does not allow ")
        return notes + [f"{stem}.py tried {what} while loading; the grader refuses this, so its exercises score 0"] + \
            _output_lines(judgement.output, hide)
    if reason is Reason.LOAD_TIMEOUT:
        return notes + [f"loading {stem}.py did not finish within {ctx.options.load_timeout:g} s; 0 points"]
    if reason is Reason.LOAD_CRASHED:
        return notes + [f"loading {stem}.py ended the grading process: {detail}"] + \
            _output_lines(judgement.output, hide)
    if reason is Reason.TIMEOUT:
        timeout = ctx.job.entries[exercise.index]["timeout"]
        return notes + [f"timeout: did not finish within {timeout:g} s (all checks together); 0 points"]
    if reason is Reason.CRASHED:
        return notes + [f"crashed: {detail} while running this exercise; 0 points"] + \
            _output_lines(judgement.output, hide)
    if reason is Reason.FUNCTION_MISSING:
        return notes + [f"missing: {detail}"]
    if reason is Reason.REFUSED:
        what = detail.removeprefix("the grader does not allow ")
        return notes + [f"this exercise tried {what}; the grader refuses access to "
                        "the reference solutions and hidden checks, so it scores 0"]
    if reason is Reason.NO_CHECKS:
        return notes + [f"not graded: {detail}"]
    raise ValueError(f"no feedback for {reason}")


def _exception_text(error: dict) -> str:
    where = f" ({error['where']})" if error.get("where") else ""
    return f"{error['type']}: {error['message']}{where}"


def _output_lines(output: str, hide: bool) -> list[str]:
    if not output or hide:
        return []
    output = output if len(output) <= 800 else output[:800] + "..."
    return ["last output:", output]


def _argument_names(exercise, ctx) -> list[str]:
    """The reference's positional parameter names, read from its source once per kit (nothing is run)."""
    names = ctx.kit._cache.setdefault("positional_parameters", {})
    if exercise.id not in names:
        try:
            names[exercise.id] = positional_parameters(ctx.kit.solution_path(exercise.stem), exercise.function)
        except (AttributeError, OSError, SyntaxError, ValueError):
            names[exercise.id] = []
    return names[exercise.id]


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


def _case_lines(judgement: Judgement, exercise, ctx) -> list[str]:
    names = _argument_names(exercise, ctx)
    problems = judgement.problems
    lines = list(judgement.notes)
    lines.append(f"{judgement.checks - len(problems)}/{judgement.checks} checks passed.")
    shown = _problem_lines(problems, names, ctx.options.hide_hidden_inputs)
    lines += shown
    for name, (hint, label) in judgement.misconceptions.items():
        if not any(f"misconception '{name}'" in line for line in shown):
            lines.append(f"- misconception '{name}' (on check '{label}'): {hint}")
    for problem in judgement.kit_problems:
        lines.append(f"(kit problem, check skipped: {problem})")
    return lines


def message(outcome: CaseOutcome, names: list[str]) -> str:
    """What happened on one failing check, with the misconceptions named on it."""
    result, case = outcome.result, outcome.case
    if result is CaseResult.WRONG:
        text = f"expected {describe(outcome.expected)}, got {describe(outcome.got)}"
        if not outcome.reason.startswith(text):
            text += f"\n    ({outcome.reason})"
    elif result is CaseResult.UNREADABLE:
        text = "returned a value the grader could not read"
    elif result is CaseResult.NOT_RAISED:
        text = f"expected {case.raises.__name__} to be raised, got {describe(outcome.got)}"
    elif result is CaseResult.WRONG_EXCEPTION:
        text = f"expected {case.raises.__name__}, but it raised {_exception_text(outcome.error)}"
    elif result is CaseResult.RAISED:
        text = f"raised {_exception_text(outcome.error)}"
    elif result is CaseResult.MODIFIED_INPUT:
        changed = [names[n] if isinstance(n, int) and 0 <= n < len(names) else
                   (f"arg{n}" if isinstance(n, int) else str(n)) for n in outcome.changed]
        text = f"modified its input(s) in place: {', '.join(changed)}; inputs must never change"
    else:
        text = "no result came back for this check"
    return text + "".join(f"\n    misconception '{name}': {hint}" for name, hint in outcome.named)


def _problem_lines(problems: list[CaseOutcome], names: list[str], hide: bool) -> list[str]:
    """Failing checks, the first few in full; repeats of one message are counted, not repeated."""
    if not problems:
        return []
    if all(p.not_implemented for p in problems):
        detail = message(problems[0], names).split("NotImplementedError: ", 1)[-1]
        # the kit's stubs already say "<id> is not implemented yet -- <formula>"
        return [detail if "not implemented yet" in detail else f"not implemented yet: {detail}"]
    groups: dict[str, list[tuple[CaseOutcome, str]]] = {}
    for problem in problems:
        text = message(problem, names)
        if hide and problem.case.hidden:
            text = _verdict_only(problem, text)
        groups.setdefault(text.split("\n")[0], []).append((problem, text))
    lines = []
    for shown, same in enumerate(groups.values()):
        if shown == MAX_DETAILED:
            rest = sum(len(g) for g in list(groups.values())[MAX_DETAILED:])
            lines.append(f"- ... and {rest} more failing check(s)")
            break
        problem, text = same[0]
        case = problem.case
        visibility = "hidden" if case.hidden else "public"
        label = f"'{case.label}'" if case.label else "a check"
        lines.append(f"- {label} ({visibility}): input {describe_input(case, names, hide and case.hidden)}")
        lines.append(f"    {text}")
        if len(same) > 1:
            lines.append(f"    (the same result on {len(same) - 1} more check(s))")
    return lines


def _verdict_only(problem: CaseOutcome, text: str) -> str:
    """A hidden check's result without anything the learner's code produced on it (hide mode).

    Kept: the verdict, and the grader's own judgements (changed inputs, the
    misconception it names); dropped: values, exception texts, printed output.
    """
    first, *rest = text.split("\n")
    if problem.result is CaseResult.MODIFIED_INPUT:
        verdict = first
    elif problem.result.is_error:
        verdict = "raised an exception (details withheld: hidden check)"
    else:
        verdict = "wrong answer (details withheld: hidden check)"
    return "\n".join([verdict, *(line for line in rest if line.lstrip().startswith("misconception '"))])
