"""Feedback: the text of an exercise's report, rendered from the judge's decision.

:mod:`graders.engine.judging.judge` decides status, points and misconceptions;
this module only writes them down. Feedback is one deterministic string: a
count of passed checks, then the first few failing checks with their input
(``hidden input`` when withheld), expected vs got, and any catalogued
misconception matching the answer; or one line saying why the checks were
not judged (no file, load error, timeout, crash, sandbox refusal).

The words come from :mod:`graders.engine.values.texts`, in the language of the
grading options (``GradeOptions.lang``: ``rl4llm grade --lang``, else
``RL4LLM_LANG``, else the locale, else English); ids, names and statuses are
the same in every language. A check's label is its case's ``label``, a
:class:`graders.text.Text` read in the report's language (``Case.label_in``).
"""

from __future__ import annotations

from graders.engine.values.compare import describe
from graders.engine.judging.judge import judge
from graders.course import LANGUAGES
from graders.engine.values.protocol import CaseOutcome, CaseResult, ExerciseReport, Judgement, Reason, Status
from graders.engine.values.protocol import WALL_CAP_MESSAGE, ExerciseRun
from graders.engine.values.scrub import without_addresses, without_temp_paths
from graders.engine.values.protocol import Submission
from graders.engine.values.kit_messages import DTYPE_CLASH, KIT_EXCEPTIONS, dtype_clash, kit_text
from graders.engine.values.texts import FEEDBACK, feedback_text, refusal, stub_particular, translated
from graders.fences import positional_parameters
from graders.text import Particular, in_

MAX_DETAILED = 3  # distinct failing results described in full per exercise
INPUT_LIMIT = 240


def deterministic(text: str) -> str:
    """Feedback without memory addresses or the grader's temporary paths (same answer, same bytes), in time
    linear in its length (:mod:`graders.engine.values.scrub`: no backtracking expression sees learner text)."""
    return without_temp_paths(without_addresses(text))


def assess(exercise, submission: Submission, sources: dict, file_problems: dict,
           runs: dict[int, ExerciseRun], ctx) -> ExerciseReport:
    """Judge one exercise of one submission and render its feedback."""
    judgement = judge(exercise, submission, sources, file_problems, runs, ctx)
    return ExerciseReport(exercise.id, judgement.status, judgement.points, exercise.max_points,
                          render(judgement, exercise, ctx), tuple(judgement.misconceptions), judgement.not_implemented,
                          tuple(judgement.candidates), cause(judgement, exercise, ctx),
                          tuple(p.result.value for p in judgement.problems),
                          {name: {language: hint_in(hint, language) for language in LANGUAGES}
                           for name, (hint, _label) in judgement.misconceptions.items()} or None)


def language_of(ctx) -> str:
    """The feedback's language: the grading options' (English for options that predate the setting)."""
    return getattr(ctx.options, "lang", "en")


def hint_in(hint: str, language: str) -> str:
    """A misconception's hint (a :class:`~graders.text.Text` of the catalogue's docstring) in ``language``.

    The same for the label of the check a misconception was named on; a plain string (``#<n>``) as it is.
    """
    return in_(hint, language)


def render(judgement: Judgement, exercise, ctx) -> str:
    """The feedback text of a judgement."""
    if judgement.reason is not None:
        lines = _reason_lines(judgement, exercise, ctx)
    else:
        lines = _case_lines(judgement, exercise, ctx)
    return deterministic("\n".join(lines).strip())


def _reason_lines(judgement: Judgement, exercise, ctx) -> list[str]:
    reason = judgement.reason
    hide = ctx.options.hide_hidden_inputs
    language = language_of(ctx)
    notes = [translated(note, language) for note in judgement.notes]
    line = _reason_line(judgement, exercise, ctx, language)
    if reason is Reason.SUBMISSION_UNGRADABLE:
        return [line]
    if reason is Reason.FILE_MISSING:
        return [line] + notes
    if reason in (Reason.LOAD_FAILED, Reason.LOAD_REFUSED, Reason.LOAD_CRASHED, Reason.CRASHED):
        return notes + [line] + _output_lines(judgement.output, hide, language)
    if reason in (Reason.LOAD_TIMEOUT, Reason.TIMEOUT) and judgement.detail == WALL_CAP_MESSAGE:
        return notes + [line, WALL_CAP_MESSAGE.in_(language)]
    return notes + [line]


def _reason_line(judgement: Judgement, exercise, ctx, language: str) -> str:
    """The one line that says why the checks were not judged, in ``language`` (no note, no output)."""
    reason = judgement.reason
    stem = exercise.stem

    def say(key: str, **fields) -> str:
        return feedback_text(language, key, **fields)

    detail = translated(judgement.detail, language)
    if reason is Reason.SUBMISSION_UNGRADABLE:
        return say("submission_ungradable", detail=detail)
    if reason is Reason.FILE_UNREADABLE:
        return detail
    if reason is Reason.FILE_MISSING:
        return say("file_missing", stem=stem)
    if reason is Reason.NOT_GRADABLE:
        return say("not_graded", detail=detail)
    if reason is Reason.NO_RESULT:
        return say("no_result")
    if reason is Reason.LOAD_FAILED:
        return say("load_failed", stem=stem, error=_exception_text(judgement.error, language))
    if reason is Reason.LOAD_REFUSED:
        return say("load_refused", stem=stem, what=refusal(judgement.error.get("refusal")).in_(language))
    if reason is Reason.LOAD_TIMEOUT:
        return say("load_timeout", stem=stem, seconds=ctx.options.load_timeout)
    if reason is Reason.LOAD_CRASHED:
        return say("load_crashed", stem=stem, detail=detail)
    if reason is Reason.TIMEOUT:
        return say("timeout", seconds=ctx.job.entries[exercise.index]["timeout"])
    if reason is Reason.CRASHED:
        return say("crashed", detail=detail)
    if reason is Reason.FUNCTION_MISSING:
        return say("function_missing", detail=detail)
    if reason is Reason.REFUSED:
        return say("refused", what=refusal(judgement.detail).in_(language))
    if reason is Reason.NO_CHECKS:
        problems = judgement.kit_problems or [judgement.detail]
        return say("not_graded", detail="; ".join(translated(p, language) for p in problems))
    raise ValueError(f"no feedback for {reason}")


def cause(judgement: Judgement, exercise, ctx) -> dict | None:
    """Why an exercise ended in an error or a timeout, for the class report: ``{"kind", "text": {language:
    line}}`` -- the reason's line (no output of the learner's code), or for a check that raised the exception's
    type and where (never its message, which may show a hidden input); ``None`` for any other exercise and for
    the untouched stub."""
    if judgement.status not in (Status.ERROR, Status.TIMEOUT) or judgement.not_implemented:
        return None
    if judgement.reason is not None:
        return {"kind": judgement.reason.value,
                "text": {language: _reason_line(judgement, exercise, ctx, language) for language in LANGUAGES}}
    first = next((p for p in judgement.problems if p.result.is_error), None)
    if first is None:
        return None
    if first.result is CaseResult.RAISED and (first.error or {}).get("withheld"):  # a hidden part's (hide mode)
        return {"kind": first.result.value,
                "text": {language: feedback_text(language, "withheld_cause") for language in LANGUAGES}}
    if first.result is CaseResult.RAISED:
        error = first.error or {}
        where = f" ({error['where']})" if error.get("where") else ""
        return {"kind": first.result.value, "text": {language: feedback_text(
            language, "raised", error=f"{error.get('type', '?')}{where}") for language in LANGUAGES}}
    return {"kind": first.result.value,
            "text": {language: feedback_text(language, "no_case_result") for language in LANGUAGES}}


def _exception_text(error: dict, language: str = "en") -> str:
    """``Type: message (where)``: the message the kit wrote in ``language`` from what it says as data
    (``"kit"``, :func:`graders.engine.values.kit_messages.kit_text`), any other as it is (never read back)."""
    where = f" ({error['where']})" if error.get("where") else ""
    kit = error.get("kit")
    message = kit_text(kit, language) if isinstance(kit, dict) and kit.get("key") in KIT_EXCEPTIONS else error["message"]
    return f"{error['type']}: {message}{where}"


def _output_lines(output: str, hide: bool, language: str = "en") -> list[str]:
    if not output or hide:
        return []
    output = output if len(output) <= 800 else output[:800] + "..."
    return [feedback_text(language, "last_output"), output]


def _argument_names(exercise, ctx) -> list[str]:
    """The reference's positional parameter names, read from its source once per kit (nothing is run)."""
    names = ctx.kit._cache.setdefault("positional_parameters", {})
    if exercise.id not in names:
        try:
            names[exercise.id] = positional_parameters(ctx.kit.solution_path(exercise.stem), exercise.function)
        except (AttributeError, OSError, SyntaxError, ValueError):
            names[exercise.id] = []
    return names[exercise.id]


def describe_input(case, names: list[str], hidden: bool, language: str = "en") -> str:
    if hidden:
        return feedback_text(language, "hidden_input")
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
    language = language_of(ctx)
    lines = [translated(note, language) for note in judgement.notes]
    lines.append(feedback_text(language, "checks_passed", passed=judgement.checks - len(problems),
                               checks=judgement.checks))
    shown = _problem_lines(problems, names, ctx.options.hide_hidden_inputs, language)
    lines += shown
    for name, (hints, labels) in judgement.misconceptions.items():
        if not any(feedback_text(language, "misconception", name=name) in line for line in shown):
            lines.append(feedback_text(language, "misconception_summary", name=name, label=hint_in(labels, language),
                                       hint=hint_in(hints, language)))
    if judgement.candidates:
        lines.append(feedback_text(language, "candidates", names=", ".join(judgement.candidates)))
    for problem in judgement.kit_problems:
        lines.append(feedback_text(language, "kit_problem", problem=translated(problem, language)))
    return lines


def message(outcome: CaseOutcome, names: list[str], language: str = "en") -> str:
    """What happened on one failing check, with the misconceptions named on it."""
    result, case = outcome.result, outcome.case

    def say(key: str, **fields) -> str:
        return feedback_text(language, key, **fields)

    if result is CaseResult.WRONG:
        expected, got = describe(outcome.expected), describe(outcome.got)
        text = say("wrong", expected=expected, got=got)
        # the comparator's line adds something unless it only repeats the first line (as English words it)
        if not outcome.reason.startswith(feedback_text("en", "wrong", expected=expected, got=got)):
            text += f"\n    ({translated(outcome.reason, language)})"
        if outcome.trap is not None:
            text += "\n    " + say("float_trap")
    elif result is CaseResult.WRONG_TYPE:
        text = translated(outcome.reason, language)
    elif result is CaseResult.UNREADABLE:
        text = say("unreadable")
    elif result is CaseResult.NOT_RAISED:
        text = say("not_raised", exception=case.raises.__name__, got=describe(outcome.got))
    elif result is CaseResult.WRONG_EXCEPTION:
        text = say("wrong_exception", exception=case.raises.__name__, error=_exception_text(outcome.error, language))
    elif result is CaseResult.RAISED:
        clash = dtype_clash(outcome.error)  # torch's "Float did not match Double": one line naming the dtypes
        error = outcome.error if clash is None else \
            {**outcome.error, "message": DTYPE_CLASH.in_(language, first=clash[0], second=clash[1])}
        text = say("raised", error=_exception_text(error, language))
    elif result is CaseResult.MODIFIED_INPUT:
        text = _modified(outcome, names, language)
    else:
        text = say("no_case_result")
    return text + "".join("\n    " + say("misconception_on_check", name=name, hint=hint_in(hints, language))
                          for name, hints in outcome.named)


def _modified(outcome: CaseOutcome, names: list[str], language: str) -> str:
    """The inputs a check's call changed, by the kit's names of them (the reference's parameters)."""
    changed = [names[n] if isinstance(n, int) and 0 <= n < len(names) else
               (f"arg{n}" if isinstance(n, int) else str(n)) for n in outcome.changed]
    return feedback_text(language, "modified_input", names=", ".join(changed))


def _stub_line(problem: CaseOutcome, names: list[str], language: str) -> str:
    """One line for a function that still raises ``NotImplementedError``: the function and that it is not
    implemented yet, without the line of the file that raised (a notebook's learner has no such file)."""
    where = str((problem.error or {}).get("where") or "")
    detail = str((problem.error or {}).get("message") or "").strip()
    said = stub_particular(detail)  # the kit's stubs say "<id> is not implemented yet -- <formula>"
    if said is not detail:
        return said.in_(language)
    if any(feedback_text(other, "not_implemented_marker") in detail for other in LANGUAGES):
        return detail  # a stub the kit wrote in another form (another language): as it says it
    function = where.rpartition(", in ")[2] if ", in " in where else ""
    if function.isidentifier():  # nbgrader's stub: a bare ``raise NotImplementedError()`` in that function
        return feedback_text(language, "stub_raises", function=function,
                             detail=f" ({detail})" if detail else "")
    return feedback_text(language, "not_implemented", detail=detail or "NotImplementedError")


def _problem_lines(problems: list[CaseOutcome], names: list[str], hide: bool, language: str = "en") -> list[str]:
    """Failing checks, the first few in full; repeats of one message are counted, not repeated."""
    if not problems:
        return []

    def say(key: str, **fields) -> str:
        return feedback_text(language, key, **fields)

    if all(p.not_implemented for p in problems):
        return [_stub_line(problems[0], names, language)]
    groups: dict[str, list[tuple[CaseOutcome, str]]] = {}
    for problem in problems:
        text = message(problem, names, language)
        if hide and problem.case.hidden:
            text = _verdict_only(problem, names, language)
        groups.setdefault(text.split("\n")[0], []).append((problem, text))
    lines = []
    for shown, same in enumerate(groups.values()):
        if shown == MAX_DETAILED:
            rest = sum(len(g) for g in list(groups.values())[MAX_DETAILED:])
            lines.append(say("more_failing", count=rest))
            break
        problem, text = same[0]
        case = problem.case
        visibility = say("hidden") if case.hidden else say("public")
        label = f"'{shown_label(case, language, hide)}'" if case.label else say("a_check")
        lines.append(say("check", label=label, visibility=visibility,
                         input=describe_input(case, names, hide and case.hidden, language)))
        lines.append(f"    {text}")
        if len(same) > 1:
            lines.append("    " + say("same_result", count=len(same) - 1))
    return lines


def shown_label(case, language: str, hide: bool) -> str:
    """A check's label as a learner reads it: in hide mode a hidden check's label has every number and every
    bracketed list masked (``the seed group [...]``), so no hidden label spells its input."""
    label = case.label_in(language)
    return mask_values(label) if hide and case.hidden else label


def mask_values(label: str) -> str:
    """``label`` (the kit's text, never a learner's) with each bracketed group holding a digit and each number
    replaced by ``...``."""
    out, depth, held, group = [], 0, False, []
    for char in label:
        if char in "[(":
            depth += 1
            group.append(char)
            continue
        if depth:
            group.append(char)
            held = held or char.isdigit()
            if char in "])":
                depth -= 1
                if not depth:
                    out.append(group[0] + "..." + group[-1] if held else "".join(group))
                    group, held = [], False
            continue
        out.append(char)
    out.append("".join(group))
    text = "".join(out)
    masked, number, word = [], False, False
    for position, char in enumerate(text):
        if word:  # a name's digits are the name's (float32, module_9): kept
            word = char.isalnum() or char == "_"
            masked.append(char)
            continue
        digit = char.isdigit() or (char in ".eE" and number and position + 1 < len(text)
                                   and text[position + 1].isdigit())
        if digit and not number:
            masked.append("...")
        elif not digit:
            masked.append(char)
            word = char.isalpha() or char == "_"
        number = digit
    return "".join(masked)


def _verdict_only(problem: CaseOutcome, names: list[str], language: str = "en") -> str:
    """A hidden check's result without anything the learner's code produced on it (hide mode), built from the
    outcome's data, never by reading its text.

    Kept: the verdict; the comparator's or the type check's line with every data field withheld
    (:meth:`graders.text.Particular.withheld_in`: where in the answer, the tolerances, the reference's type -- the
    kit's words); the grader's own judgements (changed inputs, the misconceptions it names, the float trap).
    Dropped: values, exception texts, type and dtype names (a learner's class may be named after an input),
    printed output, and any reason that is not data (a check's own message may quote values).
    """
    def say(key: str, **fields) -> str:
        return feedback_text(language, key, **fields)

    if problem.result is CaseResult.MODIFIED_INPUT:  # the kit's own names of the inputs
        lines = [_modified(problem, names, language)]
    elif problem.result is CaseResult.WRONG_TYPE:
        lines = [say("withheld_type")]
    elif problem.result.is_error:
        lines = [say("withheld_error")]
    else:
        lines = [say("withheld_wrong")]
    if problem.result in (CaseResult.WRONG, CaseResult.WRONG_TYPE) and isinstance(problem.reason, Particular):
        lines.append(f"    ({problem.reason.withheld_in(language, FEEDBACK['withheld_value'])})")
    if problem.result is CaseResult.WRONG and problem.trap is not None:
        lines.append("    " + say("float_trap"))
    lines += ["    " + say("misconception_on_check", name=name, hint=hint_in(hints, language))
              for name, hints in problem.named]
    return "\n".join(lines)
