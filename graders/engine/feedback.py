"""Judging one exercise of one submission: status, points, feedback, misconceptions.

Status: ``passed`` when every case passes; ``failed`` when a case returns a
wrong answer (or changes its input); ``error`` when a case raises
unexpectedly, the file cannot be loaded, the worker crashes or the sandbox
refuses something; ``timeout``; ``missing`` (no file, no function). Points:
``max_points`` x the weighted fraction of cases passed; a timeout, crash,
sandbox violation, missing function or unloadable file scores 0.

Feedback is one deterministic string: a count of passed checks, then the
first few failing checks with their input (``hidden input`` when withheld),
expected vs got, and any catalogued misconception matching the answer.
"""

from __future__ import annotations

import inspect
import re

from graders.engine import codec
from graders.engine.compare import describe
from graders.engine.misconceptions import Misconception
from graders.engine.runner import ExerciseRun
from graders.engine.submission import Submission

MAX_DETAILED = 3  # distinct failing results described in full per exercise
MISCONCEPTION_CASES = 8  # wrong answers per exercise compared with the catalogue (each entry runs on them)
INPUT_LIMIT = 240


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_TEMP_PATH = re.compile(r"/[^\s'\"]*?rl4llm-grade-[A-Za-z0-9_]+(?:/sub_\d+)?")


def deterministic(text: str) -> str:
    """Feedback without memory addresses or the grader's temporary paths (same answer, same bytes)."""
    return _TEMP_PATH.sub("<submission>", _ADDRESS.sub("0x...", text))


def _entry(exercise, status: str, feedback: list[str], points: float = 0.0,
           misconceptions: list[str] | None = None) -> dict:
    return {"id": exercise.id, "points": round(points, 4), "max_points": round(exercise.max_points, 4),
            "status": status, "feedback": deterministic("\n".join(feedback).strip()),
            "misconceptions": sorted(set(misconceptions or []))}


def assess(exercise, submission: Submission, sources: dict, file_problems: dict,
           runs: dict[int, ExerciseRun], ctx) -> dict:
    notes = list(submission.notes.get(exercise.stem, []))
    if submission.problem:
        return _entry(exercise, "error", [f"the submission could not be graded: {submission.problem}"])
    if exercise.stem in file_problems:
        return _entry(exercise, "error", notes + [file_problems[exercise.stem]])
    if exercise.stem not in sources:
        return _entry(exercise, "missing", [f"missing: no {exercise.stem}.py in the submission"] + notes)
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


def _argument_names(exercise, ctx) -> list[str]:
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


def _assess_cases(exercise, payload: dict, arrays: dict, ctx, notes: list[str]) -> dict:
    spec = exercise.spec
    cases = spec.cases()
    expected = ctx.book.expected(exercise)
    compare = spec.comparison()
    names = _argument_names(exercise, ctx)
    results = payload["cases"]
    total = passed = 0.0
    problems: list[tuple[str, str, object, int]] = []  # (kind, message, case, index)
    kit_problems: list[str] = []
    matched: list[tuple[int, list[Misconception]]] = []  # (position in problems, entries matching that answer)
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
            if len(matched) < MISCONCEPTION_CASES:
                matched.append((len(problems), _matching_misconceptions(exercise, index, case, want, value,
                                                                         compare, ctx)))
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
    found = _name_misconceptions(problems, matched)
    shown = _problem_lines(problems, names, ctx.options.hide_hidden_inputs)
    lines += shown
    for name, (hint, label) in found.items():
        if not any(f"misconception '{name}'" in line for line in shown):
            lines.append(f"- misconception '{name}' (on check '{label}'): {hint}")
    for problem in kit_problems:
        lines.append(f"(kit problem, check skipped: {problem})")
    return _entry(exercise, status, lines, points, list(found))


def _name_misconceptions(problems: list, matched: list) -> dict[str, tuple[str, str]]:
    """The catalogue entries that explain the most wrong answers (ties kept); hints go on their first one.

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
    found: dict[str, tuple[str, str]] = {}
    for position, entries in matched:
        for entry in entries:
            if counts[entry.name] == best and entry.name not in found:
                kind, message, case, index = problems[position]
                found[entry.name] = (entry.hint, case.label or f"#{index + 1}")
                problems[position] = (kind, message + f"\n    misconception '{entry.name}': {entry.hint}", case, index)
    return found


def _problem_lines(problems, names, hide: bool) -> list[str]:
    """Failing checks, the first few in full; repeats of one message are counted, not repeated."""
    if not problems:
        return []
    if all("NotImplementedError" in message for _, message, _, _ in problems):
        detail = problems[0][1].split("NotImplementedError: ", 1)[-1]
        # the kit's stubs already say "<id> is not implemented yet -- <formula>"
        return [detail if "not implemented yet" in detail else f"not implemented yet: {detail}"]
    groups: dict[str, list] = {}
    for problem in problems:
        kind, message, case, _ = problem
        shown = _verdict_only(kind, message) if hide and case.hidden else message
        groups.setdefault(shown.split("\n")[0], []).append(problem)
    lines = []
    for shown, same in enumerate(groups.values()):
        if shown == MAX_DETAILED:
            rest = sum(len(g) for g in list(groups.values())[MAX_DETAILED:])
            lines.append(f"- ... and {rest} more failing check(s)")
            break
        _kind, message, case, _index = same[0]
        if hide and case.hidden:
            message = _verdict_only(_kind, message)
        visibility = "hidden" if case.hidden else "public"
        label = f"'{case.label}'" if case.label else "a check"
        lines.append(f"- {label} ({visibility}): input {describe_input(case, names, hide and case.hidden)}")
        lines.append(f"    {message}")
        if len(same) > 1:
            lines.append(f"    (the same result on {len(same) - 1} more check(s))")
    return lines


def _verdict_only(kind: str, message: str) -> str:
    """A hidden check's result without anything the learner's code produced on it (hide mode).

    Kept: the verdict, and the grader's own judgements (changed inputs, the
    misconception it names); dropped: values, exception texts, printed output.
    """
    first, *rest = message.split("\n")
    if first.startswith("modified its input(s)"):
        verdict = first
    elif kind == "error":
        verdict = "raised an exception (details withheld: hidden check)"
    else:
        verdict = "wrong answer (details withheld: hidden check)"
    return "\n".join([verdict, *(line for line in rest if line.lstrip().startswith("misconception '"))])


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
