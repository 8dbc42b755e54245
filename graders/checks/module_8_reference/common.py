"""What module_8_reference's checks share: its seed constants, the strict comparison (an infinity matches only the same infinity) and the exercise decorator that uses it, and input strategies.
"""

from __future__ import annotations

import numpy as np

from graders.checks import DEFAULT_ATOL, DEFAULT_RTOL, close, st
from graders.checks import exercise as _register
from graders.text import Text

M = "module_8_reference"

PI_REF = np.array([0.55, 0.30, 0.15])
REWARDS = np.array([0.0, 1.0, -0.5])
SEED_BETAS = np.array([4.0, 2.0, 1.0, 0.5, 0.25])
EXTREME = np.array([-1e4, 1e4])


def _infinity_mismatch(expected, got, where: str = "") -> str | None:
    """A reason when ``expected`` holds an infinity that ``got`` does not (at the same place), else None.

    The default comparison's allclose rule |got - exp| <= atol + rtol |exp| accepts ANY finite value
    against an infinite one (inf <= inf); an overflowing misconception (inf) would then be named for
    every wrong finite answer. Only the positions of infinities are checked here.
    """
    if isinstance(expected, dict) and isinstance(got, dict):
        for key, want in expected.items():
            reason = _infinity_mismatch(want, got.get(key), f"{where}[{key!r}]")
            if reason:
                return reason
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for index, (want, have) in enumerate(zip(expected, got)):
            reason = _infinity_mismatch(want, have, f"{where}[{index}]")
            if reason:
                return reason
        return None
    if isinstance(expected, (float, np.ndarray)) and isinstance(got, (float, np.ndarray)):
        want, have = np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
        if want.shape == have.shape and np.any(np.isinf(want) & (have != want)):
            at = Text(f"at {where}", f"в {where}") if where else Text("at the result", "в результате")
            return Text(f"{at}: expected an infinity where the answer is finite (or the other sign)",
                        f"{at.in_('ru')}: ожидалась бесконечность, а ответ конечен (или другого знака)")
    return None


def _strict_close(rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL):
    """The default comparison, except that an infinity matches only the same infinity."""
    base = close(rtol, atol)

    def compare(expected, got, case):
        return base(expected, got, case) or _infinity_mismatch(expected, got)
    return compare


def exercise(exercise_id: str, **options):
    """``graders.checks.exercise`` with the infinity-aware comparison as the default."""
    if "compare" not in options:
        options["compare"] = _strict_close(options.get("rtol", DEFAULT_RTOL), options.get("atol", DEFAULT_ATOL))
    return _register(exercise_id, **options)


def _floats(low: float, high: float):
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def _distributions(min_size: int = 2, max_size: int = 6):
    """Probability vectors: positive weights, normalised (sum 1 within round-off)."""
    weights = st.lists(_floats(0.01, 1.0), min_size=min_size, max_size=max_size)
    return weights.map(lambda w: np.array(w) / np.sum(w))


def _policy_problem(count_betas: bool):
    """(reference, rewards, beta or betas) with matching sizes."""
    def build(draw_reference):
        size = draw_reference.size
        rewards = st.lists(_floats(-5.0, 5.0), min_size=size, max_size=size).map(np.array)
        beta = (st.lists(_floats(0.05, 10.0), min_size=1, max_size=4).map(np.array) if count_betas
                else _floats(0.05, 10.0))
        return st.tuples(st.just(draw_reference), rewards, beta)
    return _distributions().flatmap(build)
