"""The public refusal rows: ``starter/module_0X/_refused.json``.

A function that accepts an input the grader refuses loses the points of that
``raises=`` case; so every public ``raises=`` case of the checks
(``graders/checks/<file>.py``, ``Case(..., raises=ValueError, hidden=False)``)
becomes a row the public tests make too: ``test_<function>_refuses_what_the_grader_refuses``
reads the rows of its function from this file (``_refused("<function>")`` in the
public test file) and expects the same exception.

Only public cases ship: a hidden case's input is never published. The file is
JSON: exercise id -> [{"label", "args", "kwargs", "raises"}], the inputs in the
learner conftest's exact tagged form (``conftest.tagged(value, None)``: arrays
with dtype and shape, ``{"float": "nan"}`` for a non-finite float), which the
public test file turns back into values.

A hidden refusal whose input a public test should publish says
``hidden=False`` in its checks: there is no table of exceptions (the old
``REFUSED`` and ``PUBLISHED`` tables are gone).
"""

from __future__ import annotations

import json
from pathlib import Path

from graders import course
from graders.paths import STARTER_DIR

REFUSED_NAME = "_refused.json"

def shipped_cases(exercise_id: str, spec) -> list:
    """The raises= cases of an exercise that ship: its public ones, in check order."""
    return [case for case in spec.cases() if case.raises is not None and not case.hidden]


def refused_tables(exercises: list[str] | None = None) -> dict[str, dict]:
    """module folder -> {exercise id: [{"label", "args", "kwargs", "raises"}, ...]} (every folder, maybe empty)."""
    from graders.build.hints import starter_conftest
    from graders.checks import spec_for
    from graders.engine.judging.references import fresh_inputs

    conftest = starter_conftest()
    tables: dict[str, dict] = {m.folder: {} for m in course.MODULES}
    for exercise_id in course.exercises() if exercises is None else exercises:
        spec = spec_for(exercise_id)
        if spec is None:
            continue
        rows = []
        for case in shipped_cases(exercise_id, spec):
            args, kwargs = fresh_inputs(case)
            rows.append({"label": str(case.label), "args": conftest.tagged(tuple(args), None),
                         "kwargs": conftest.tagged(dict(kwargs), None), "raises": case.raises.__name__})
        if rows:
            tables[course.module_of(spec.stem).folder][exercise_id] = rows
    return tables


def build_outputs(starter_dir: Path = STARTER_DIR) -> dict[Path, str]:
    """Every starter/module_0X/_refused.json and its expected content (byte-deterministic)."""
    return {starter_dir / folder / REFUSED_NAME:
            json.dumps(table, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
            for folder, table in refused_tables().items()}
