"""The test cell of an exercise: a hidden part that refuses to score in a kernel, then visible checks.

``nbgrader autograde`` does not execute the notebooks: the kit's engine
scores each test cell from the notebook's definitions
(:mod:`graders.engine.nbgrader.scoring`), so the hidden part (stripped from
the release) only names the exercise and raises. The visible checks are for
the learner while working: up to ``MAX_VISIBLE`` public cases of the spec
(``graders/checks``), each one ``check_close(call, expected, rtol=..., atol=...)``
or ``with check_raises(...)`` line, with the expected value computed here from
the reference and compared in the notebook by the autograder's own comparator
(:mod:`graders.build.notebooks.helper`).
"""

from __future__ import annotations

import ast
import inspect
import warnings
from dataclasses import dataclass

import numpy as np

from graders.build.notebooks.render import render_expected, render_input
from graders.build.notebooks.texts import TEXT, points_text
from graders.text import table_in
from graders.checks import Harness, spec_for
from graders.engine.values.codec import normalise

MAX_VISIBLE = 4  # visible checks per exercise
MAX_CHECK_CHARS = 1000  # a longer rendered check is left to the hidden tests
LINE = 120  # a longer check is written over several lines
HIDDEN_REFUSAL = ("{exercise_id} is scored by the kit's engine, not in a kernel: run nbgrader autograde from "
                  "assignments/ so that nbgrader_config.py is loaded")


@dataclass
class VisibleCheck:
    """One visible check: the case's label and one statement."""

    label: str
    code: str  # one statement
    call: str = ""  # the call it checks (evaluated against the reference by the build's hint tables)


def _call_text(name: str, function, case, harness: bool) -> str | None:
    kwargs = dict(case.kwargs)
    if harness:  # harness options (check=..., gradient_weights=...) are not the function's arguments
        parameters = inspect.signature(function).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            kwargs = {key: value for key, value in kwargs.items() if key in parameters}
    parts = [render_input(arg) for arg in case.args]
    parts += [None if render_input(v) is None else f"{k}={render_input(v)}" for k, v in kwargs.items()]
    if any(part is None for part in parts):
        return None
    return f"{name}({', '.join(parts)})"


def visible_checks(exercise_id: str, reference_function, language: str = "en") -> list[VisibleCheck]:
    """Up to MAX_VISIBLE public cases of the exercise as one-line checks (expected from the reference), each
    labelled in ``language``."""
    import torch  # the rendered calls may build tensors; only the build imports it

    spec = spec_for(exercise_id)
    name = exercise_id.split(".", 1)[1]
    harness = isinstance(spec.call, Harness)
    namespace = {"np": np, "torch": torch, name: reference_function}
    checks: list[VisibleCheck] = []
    seen: set[str] = set()
    for case in spec.cases():
        if case.hidden or len(checks) == MAX_VISIBLE:
            continue
        call = _call_text(name, reference_function, case, harness)
        if call is None or call in seen:
            continue
        seen.add(call)
        label = " ".join(case.label_in(language).split()) or TEXT["test_a_case"].in_(language)
        if case.raises is not None:
            try:
                eval(call, dict(namespace))  # noqa: S307 - kit code rendered above
            except case.raises:
                checks.append(VisibleCheck(label, f"with check_raises({case.raises.__name__}):\n    {call}", call))
            except Exception:  # noqa: BLE001 - not a usable visible check
                pass
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                value = normalise(eval(call, dict(namespace)))  # noqa: S307
        except Exception:  # noqa: BLE001 - e.g. a harness-only case: no direct call
            continue
        expected = render_expected(value)
        if expected is None:
            continue
        rtol = case.rtol if case.rtol is not None else spec.rtol
        atol = case.atol if case.atol is not None else spec.atol
        code = f"check_close({call}, {expected}, rtol={rtol!r}, atol={atol!r})"
        if len(code) > MAX_CHECK_CHARS:
            continue
        if len(code) > LINE:
            code = f"check_close(\n    {call},\n    {expected},\n    rtol={rtol!r}, atol={atol!r})"
        checks.append(VisibleCheck(label, code, call))
    return checks


def hidden_exercise(source: str) -> str | None:
    """The exercise id named by a test cell's hidden part (the ``raise`` written by :func:`graded_cell`)."""
    hidden = source.partition("### BEGIN HIDDEN TESTS")[2].partition("### END HIDDEN TESTS")[0]
    for node in ast.walk(ast.parse(hidden)):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args \
                and isinstance(node.exc.args[0], ast.Constant) and isinstance(node.exc.args[0].value, str):
            return node.exc.args[0].value.split(" ", 1)[0]
    return None


def graded_cell(exercise_id: str, name: str, points: float, checks: list[VisibleCheck],
                trusted: dict[str, list[VisibleCheck]], language: str = "en") -> str:
    """The hidden part first (a refusal naming the exercise: the engine, not a kernel, scores this cell), then
    the visible checks in one ``with visible_checks("<exercise id>") as checks:`` block.

    An exercise graded with trusted copies of other exercises (``trusted``: each one's own visible checks)
    first runs those on their own public cases, each in ``with checks.use(name):``: where one fails, a
    failure of the exercise only prints a note (the autograder would not count it against this cell);
    otherwise, and always when the exercise itself is not implemented, the cell fails.
    """
    text = table_in(TEXT, language)
    lines = [text["test_header"].format(name=name, points=points_text(points, language)),
             text["test_not_run"],
             "### BEGIN HIDDEN TESTS",
             f"# Exercise {exercise_id}: its verdict is written here by graders.engine.nbgrader.scoring.",
             f"raise RuntimeError({HIDDEN_REFUSAL.format(exercise_id=exercise_id)!r})",
             "### END HIDDEN TESTS"]
    if not checks:
        lines.append(text["test_none"])
        return "\n".join(lines)
    lines.append(text["test_visible"])
    lines.append(f"with visible_checks({exercise_id!r}) as checks:")
    for dependency, rows in trusted.items():
        if rows:
            lines.append("    " + text["test_dependency"].format(dependency=dependency, name=name))
        for row in rows:
            lines.append(f"    with checks.use({dependency!r}):  # {row.label}")
            lines += ["        " + line for line in row.code.splitlines()]
    for check in checks:
        lines.append(f"    # {check.label}")
        lines += ["    " + line for line in check.code.splitlines()]
    return "\n".join(lines)
