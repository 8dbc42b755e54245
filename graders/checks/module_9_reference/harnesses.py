"""The harnesses of module_9_reference's dependent exercises: a mistake is graded once, on its own exercise.
"""

from __future__ import annotations

from graders.checks import Harness, reference_definitions

M = "module_9_reference"


# ---------------------------------------------------------------------------
# The harness of dependent exercises
# ---------------------------------------------------------------------------
def with_trusted_dependencies(fn, learner, starter, *args, **kwargs):
    """Call ``fn`` while the learner module's group_relative_advantages and
    informative_group_probability are replaced by trusted copies of the formulas
    their docstrings state (restored afterwards)."""
    import math
    import numbers

    import numpy as np

    def real(value, name, low=0.0, high=math.inf):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"{name} must lie in [{low}, {high}], got {value!r}")
        return float(value)

    def integer(value, name, minimum):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        return int(value)

    def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
        try:
            r = np.array(rewards, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError("rewards must be numeric") from error
        if r.ndim not in (1, 2) or r.shape[-1] == 0 or not np.all(np.isfinite(r)):
            raise ValueError(f"rewards must be finite, (G,) or (num_groups, G) with G >= 1, got {r.shape}")
        eps, ddof = real(eps, "eps"), integer(ddof, "ddof", 0)
        if scale and ddof >= r.shape[-1]:
            raise ValueError(f"ddof must be smaller than the group size {r.shape[-1]}")
        all_equal = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
        centred = np.where(all_equal, 0.0, r - r.mean(axis=-1, keepdims=True))
        if not scale:
            return centred
        std = r.std(axis=-1, ddof=ddof, keepdims=True)
        return np.divide(centred, std + eps, out=np.zeros_like(centred), where=~all_equal)

    def informative_group_probability(p, group_size):
        p, group_size = real(p, "p", 0.0, 1.0), integer(group_size, "group_size", 1)
        if group_size == 1:
            return 0.0
        small = min(p, 1.0 - p)
        return max(0.0, -math.expm1(group_size * math.log1p(-small)) - small ** group_size)

    trusted = {"group_relative_advantages": group_relative_advantages,
               "informative_group_probability": informative_group_probability}
    saved = {name: vars(learner)[name] for name in trusted if name in vars(learner)}
    for name, function in trusted.items():
        setattr(learner, name, function)
    try:
        return fn(*args, **kwargs)
    finally:
        for name in trusted:
            if name in saved:
                setattr(learner, name, saved[name])
            elif hasattr(learner, name):
                delattr(learner, name)


TRUSTED = Harness(with_trusted_dependencies, torch=False)


def with_trusted_verifier(fn, learner, starter, *args, **kwargs):
    """Call ``fn`` while the learner module's verify_detailed is the reference's, run from this harness's
    prelude (restored afterwards): verify_numeric_answer, which may be verify_detailed(...).accuracy, is
    graded on its own, and a mistake in verify_detailed costs points on verify_detailed only."""
    saved = vars(learner).get("verify_detailed")
    learner.verify_detailed = verify_detailed  # noqa: F821 - defined by the prelude
    try:
        return fn(*args, **kwargs)
    finally:
        if saved is not None:
            learner.verify_detailed = saved
        else:
            del learner.verify_detailed


TRUSTED_VERIFIER = Harness(with_trusted_verifier, torch=False, prelude=reference_definitions(
    "module_09/module_9_reference.py", ("_real", "_last_box", "_number_regex", "_parse_number", "verify_detailed"),
    """
import math
import numbers
import re
from fractions import Fraction


class VerifierResult:  # the trusted copy's result (a plain class: a harness's source has no module to hold a dataclass)
    def __init__(self, reward, accuracy, status, extracted):
        self.reward, self.accuracy, self.status, self.extracted = reward, accuracy, status, extracted
"""))
