"""Module 9's catalogue entries are told apart by the hidden cases: no two entries of an exercise agree everywhere.

The judge names an entry only when it agrees with the learner's outputs on EVERY case of the
exercise where both returned a value (passing cases included); entries that agree on every
case are listed as candidates and none is claimed. So a learner who made exactly the mistake
of one entry is named only if no other entry of the exercise coincides with it on all cases.
This test evaluates every entry (and the reference) of every Module 9 exercise on every case
of its spec, through the exercise's call mode (the trusted-dependency harness included), and
checks for each ordered pair (A, B) that some case where both return a value tells them apart
with the case's comparison (``compare(A's output, B's output, case)`` is a mismatch: the
check the judge makes when B is the learner and A the entry). Each entry differs from the
reference somewhere too.

The toy-experiment cases of ``grpo_loss`` (two training runs per entry) are evaluated only for
a pair the cheap cases cannot tell apart.
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

STEMS = ("module_9_reference", "module_9_training")
EXERCISES = [e for e in DEFAULT_KIT.exercises() if e.split(".", 1)[0] in STEMS]
REFERENCE = "<reference>"


def _expensive(case) -> bool:
    return case.kwargs.get("check") == "toy experiment"


@cache
def _entries(exercise: str) -> dict:
    stem = exercise.split(".", 1)[0]
    module = DEFAULT_KIT.reference_module(stem)
    found = {REFERENCE: (getattr(module, exercise.split(".", 1)[1]), module)}
    for entry in load_misconceptions(exercise):
        found[entry.name] = (entry.function, entry.module)
    return found


_OUTCOMES: dict = {}


def _outcome(exercise: str, name: str, index: int):
    """(returned, normalised value) of one entry on one case; (False, None) when it raised."""
    key = (exercise, name, index)
    if key not in _OUTCOMES:
        spec = spec_for(exercise)
        function, module = _entries(exercise)[name]
        args, kwargs = fresh_inputs(spec.cases()[index])
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                raw = calls.call_case(spec.call.describe(), function, module, DEFAULT_KIT.starter_module, args, kwargs)
            _OUTCOMES[key] = (True, codec.normalise(raw))
        except Exception:  # noqa: BLE001 - an entry that raises has no value on this case
            _OUTCOMES[key] = (False, None)
    return _OUTCOMES[key]


def _told_apart(exercise: str, first: str, second: str, indices) -> int | None:
    """The index of a case on which ``first`` (as the entry) does not explain ``second`` (as the learner)."""
    spec = spec_for(exercise)
    compare, cases = spec.comparison(), spec.cases()
    for index in indices:
        (ran_a, a), (ran_b, b) = _outcome(exercise, first, index), _outcome(exercise, second, index)
        if ran_a and ran_b and compare(a, b, cases[index]) is not None:
            return index
    return None


@pytest.mark.parametrize("exercise", EXERCISES)
def test_no_two_entries_agree_on_every_case(exercise):
    cases = spec_for(exercise).cases()
    cheap = [i for i, case in enumerate(cases) if not _expensive(case) and case.raises is None]
    dear = [i for i, case in enumerate(cases) if _expensive(case)]
    names = list(_entries(exercise))
    assert len(names) > 1, f"{exercise}: no catalogue entries"
    alike = []
    for first, second in itertools.permutations(names, 2):
        if _told_apart(exercise, first, second, cheap) is None and _told_apart(exercise, first, second, dear) is None:
            alike.append((first, second))
    assert not alike, (f"{exercise}: entry pairs (entry, learner) that agree on every case where both return a "
                       f"value, so the judge cannot name either: {alike}; add a hidden case that tells them apart")
