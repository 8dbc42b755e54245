"""A toy experiment's outcome compared metric by metric, each within its own band (both training checks files).

A harness's trusted part returns what a toy run trained; its ``score`` turns that into a dict of metrics
(:mod:`graders.checks.toy_scores`), and :func:`compare_with_bands` decides each metric against the reference
run's within the band the checks file declares for it (``OUTCOME_BANDS``).
"""

from __future__ import annotations

import math

from graders.text import Text


def compare_with_bands(bands: dict, default):
    """Dicts whose keys all belong to ``bands`` (outcome metrics, flags) checked key by key; else ``default``.

    ``bands`` maps a key to (rtol, atol, what it is, what a miss means), the two
    texts each a :class:`~graders.text.Text`; a value matches when
    ``|got - expected| <= atol + rtol * |expected|``. The reasons are said in both languages.
    """
    def compare(expected, got, case):
        if not (isinstance(expected, dict) and expected and set(expected) <= set(bands)):
            return default(expected, got, case)
        if not isinstance(got, dict):
            kind = type(got).__name__
            return Text(f"the check returned {kind}, not a dict of metrics",
                        f"проверка вернула {kind}, а не словарь метрик")
        for key in [k for k in bands if k in expected]:  # in the bands' order: the most telling first
            want, (rtol, atol, what, advice) = expected[key], bands[key]
            have = got.get(key)
            if not isinstance(have, float) or not math.isfinite(have):
                return Text(f"{what} ({key}) is {have!r}, not a finite number",
                            f"{what.in_('ru')} ({key}) = {have!r}, а не конечное число")
            tol = atol + rtol * abs(want)
            if abs(have - want) > tol:
                return Text(f"{what} ({key}) is {have:.6g}, the reference gives {want:.6g} (+- {tol:.2g}): {advice}",
                            f"{what.in_('ru')} ({key}) = {have:.6g}, эталон даёт {want:.6g} (± {tol:.2g}): {advice.in_('ru')}")
        return None
    return compare
