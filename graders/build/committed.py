"""Committed numbers that do not depend on the CPU: how a computed float is written, and when two files agree.

A generated file that holds computed floats (the toy outcomes in ``_toy_reference.json``,
the wrong values in ``_hints.json``) must read the same on every x86-64 machine with the
pinned versions. Two kinds of floating-point noise reach such a value across CPUs:

- **the last bits of a nonzero value**: vectorised reductions (numpy's SIMD dispatch,
  torch's kernels per instruction set) add in another order, so ``0.6718523253`` may come out
  one unit lower in its last written digit when it sits near a rounding boundary;
- **an exact zero that is not exact**: a quantity that is 0 in exact arithmetic (the DPO
  margin of a policy that IS the reference) comes out ``0.0`` on one CPU and ``5.55e-17``
  (an ulp of the operands) on another. Rounding to significant digits keeps such noise.

Two rules, used by the build when it writes and by ``rl4llm build --check`` when it compares,
so the two cannot disagree:

1. :func:`committed_float` writes a value ``|x| < ZERO_SNAP`` as ``0.0`` and every other value
   rounded to ``DIGITS`` significant digits;
2. :func:`same_output` calls a fresh JSON output and the committed one the same when they have
   the same structure and strings and every pair of numbers agrees within
   ``ZERO_SNAP + REL_TOL * |committed|``. The build keeps a committed file that agrees (its
   bytes stay as they are), and ``--check`` reports it current.

The tolerances are far below what any check resolves: ``ZERO_SNAP = 1e-9`` is 1 % of the
tightest nonzero absolute band of the toy checks (1e-7) and of the hint tables' matching
tolerance (atol 1e-9 is met by a learner value within 1e-9 of either side); ``REL_TOL = 1e-8``
is 1 % of the tightest relative band (1e-4 would be 10^4 times looser) and 100 steps of the
10th significant digit, so a flipped last digit never makes a file stale. A test
(``tests/test_committed_numbers.py``) checks both margins against the bands in the checks,
and perturbs the toy outcomes by a few ulps to show the build and the public toy tests agree.

On ARM (aarch64) the same pinned versions round differently in more places (other BLAS
kernels, fused multiply-add): the nonzero values still agree within ``REL_TOL``; a sampled
GRPO run may draw another token where a uniform draw lands within float noise of a
probability boundary, which the public GRPO toy test detects by its fingerprint and skips.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

DIGITS = 10  # significant digits a committed float keeps
ZERO_SNAP = 1e-9  # |x| below this is written as 0.0 and two numbers this close always agree
REL_TOL = 1e-8  # two committed numbers agree within ZERO_SNAP + REL_TOL * |committed|


def committed_float(value) -> float:
    """The committed form of a computed float: 0.0 within ``ZERO_SNAP`` of zero, else ``DIGITS`` significant
    digits. Non-finite values are kept as they are."""
    value = float(value)
    if not math.isfinite(value):
        return value
    if abs(value) < ZERO_SNAP:
        return 0.0
    return float(f"{value:.{DIGITS}g}")


def committed_numbers(value):
    """``value`` (dicts, lists, numbers, strings, None) with every float in its committed form."""
    if isinstance(value, dict):
        return {key: committed_numbers(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [committed_numbers(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    return committed_float(value)


def numbers_agree(fresh: float, committed: float) -> bool:
    """Whether two committed numbers say the same: ``|fresh - committed| <= ZERO_SNAP + REL_TOL * |committed|``
    (equal infinities and two NaNs agree)."""
    if math.isnan(fresh) or math.isnan(committed):
        return math.isnan(fresh) and math.isnan(committed)
    if math.isinf(fresh) or math.isinf(committed):
        return fresh == committed
    return abs(fresh - committed) <= ZERO_SNAP + REL_TOL * abs(committed)


def same_data(fresh, committed) -> bool:
    """Same structure, keys, strings, booleans and None; numbers within :func:`numbers_agree`."""
    if isinstance(fresh, bool) or isinstance(committed, bool):
        return type(fresh) is type(committed) and fresh == committed
    if isinstance(fresh, (int, float)) and isinstance(committed, (int, float)):
        return numbers_agree(float(fresh), float(committed))
    if isinstance(fresh, dict) and isinstance(committed, dict):
        return fresh.keys() == committed.keys() and all(same_data(fresh[k], committed[k]) for k in fresh)
    if isinstance(fresh, list) and isinstance(committed, list):
        return len(fresh) == len(committed) and all(same_data(a, b) for a, b in zip(fresh, committed))
    return type(fresh) is type(committed) and fresh == committed


def same_output(path: Path, fresh: str, committed: str) -> bool:
    """Whether a committed generated file is current: the same text, or for JSON the same data by
    :func:`same_data` (so floating-point noise from another CPU leaves it current)."""
    if fresh == committed:
        return True
    if path.suffix != ".json":
        return False
    try:
        return same_data(json.loads(fresh), json.loads(committed))
    except ValueError:  # a committed file that is not JSON is stale
        return False
