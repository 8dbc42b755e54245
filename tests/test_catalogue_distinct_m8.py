"""Module 8's catalogue entries can be told apart: no two entries of an exercise agree on every hidden case.

The grader names a misconception only when the entry's outputs agree with the learner's on EVERY case
of the exercise where both returned a value; entries that agree with each other on every case would
be listed as candidates and never named. So, for each Module 8 exercise, every pair of entries must
differ (beyond the case's tolerance) on at least one case where both return a value, and every entry
must differ from the reference somewhere (else it cannot lose points).

Cases are evaluated in this process, as the grader evaluates the reference and the catalogue
(:func:`graders.engine.judging.references.fresh_inputs`, :func:`graders.engine.judging.calls.call_case`,
:func:`graders.engine.values.codec.normalise`, the exercise's own comparison). The toy-experiment cases of
the training harnesses are left out (a training run per entry); leaving cases out can only make two
entries look MORE alike, so the rule checked here is, if anything, stricter than the grader's.
"""

from __future__ import annotations

import itertools
import warnings
from functools import cache

import numpy as np
import pytest

from graders.checks import spec_for
from graders.engine.judging import calls
from graders.engine.values import codec
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import load_misconceptions
from graders.engine.judging.references import fresh_inputs

EXERCISES = [e for e in DEFAULT_KIT.exercises() if e.split(".", 1)[0] in ("module_8_reference", "module_8_training")]
SKIPPED_CHECKS = ("toy experiment",)  # harness options too expensive to run per entry


def _outcome(spec, function, module, case):
    """The normalised value of one case, or None when the call raised."""
    args, kwargs = fresh_inputs(case)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            raw = calls.call_case(spec.call.describe(), function, module, DEFAULT_KIT.starter_module, args, kwargs)
    except Exception:  # noqa: BLE001 - a call that raised has no value to compare
        return None
    return codec.normalise(raw)


@cache
def _table(exercise: str):
    """(case list, {name: [outcome per case]}) with the reference under the name ``None``."""
    spec = spec_for(exercise)
    cases = [case for case in spec.cases() if case.kwargs.get("check") not in SKIPPED_CHECKS and case.raises is None]
    stem, function = exercise.split(".", 1)
    module = DEFAULT_KIT.reference_module(stem)
    table = {None: [_outcome(spec, getattr(module, function), module, case) for case in cases]}
    for entry in load_misconceptions(exercise):
        table[entry.name] = [_outcome(spec, entry.function, entry.module, case) for case in cases]
    return cases, table


def _agree_everywhere(exercise: str, first, second) -> bool:
    """Whether two outcome rows agree (both ways, within each case's tolerance) wherever both returned a value."""
    spec = spec_for(exercise)
    compare = spec.comparison()
    cases, table = _table(exercise)
    for case, a, b in zip(cases, table[first], table[second]):
        if a is None or b is None:
            continue
        if compare(a, b, case) is not None or compare(b, a, case) is not None:
            return False
    return True


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_entry_differs_from_the_reference(exercise):
    _, table = _table(exercise)
    same = [name for name in table if name is not None and _agree_everywhere(exercise, None, name)]
    assert not same, f"{exercise}: entries that agree with the reference on every case: {same}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_no_two_entries_agree_on_every_case(exercise):
    _, table = _table(exercise)
    names = sorted(name for name in table if name is not None)
    assert len(names) >= 2
    twins = [(a, b) for a, b in itertools.combinations(names, 2) if _agree_everywhere(exercise, a, b)]
    assert not twins, (f"{exercise}: entries that agree on every case (the grader could name neither; "
                       f"add a case that tells them apart): {twins}")
