"""Hidden checks of module_9_reference (see graders/checks/__init__.py for the API).

Demo specs for three exercises; the checks of the remaining exercises are
added here by the module's check authors.
"""

from __future__ import annotations

import numpy as np

from graders.checks import Case, exercise, hypothesis_cases, st

M = "module_9_reference"


@exercise(f"{M}.verify_numeric_answer", points=3)
def _verify_numeric_answer():
    # the five public cases of the seed notebook (double backslash before boxed)
    for text, reference, label in [
        (r"Final: \\boxed{3/7}", "0.428571", "fraction in a box vs a decimal reference"),
        ("The reference number 42 is mentioned, but the answer is 41", "42", "the LAST number counts"),
        (r"First \\boxed{2}, then corrected: \\boxed{3}", "3", "the LAST box counts"),
        ("No numerical answer", "5", "no number at all"),
        ("1/0", "0", "zero denominator"),
    ]:
        yield Case(args=(text, reference), label=label, hidden=False)
    yield Case(args=(r"so \boxed{3} is wrong; the answer is \boxed{5}", "5"), label="single backslash boxes")
    yield Case(args=(r"\boxed{\frac{1}{2}} or \boxed{{7}}", "7"), label="nested braces in the last box")
    yield Case(args=("the total is 1,234,567 apples", 1234567), label="thousands separators")
    yield Case(args=("0.1 + 0.2 = 0.30000000000000004", "0.3"), label="float within tolerance")
    yield Case(args=("the answer is 0.3001", "0.3"), label="outside tolerance")
    yield Case(args=("x = 1.5e3", 1500), label="scientific notation")
    yield Case(args=(r"\boxed{$-3/4$}", "-0.75"), label="dollar signs inside the box")
    yield Case(args=(r"\boxed{nan}", "1"), label="NaN is never correct")
    yield Case(args=("7 " * 50_000 + "8", "8"), label="a long response (linear time)")
    answers = st.integers(min_value=-10_000, max_value=10_000)
    yield from hypothesis_cases(st.tuples(answers, answers), count=12, seed=9_301,
                                to_case=lambda ab: Case(args=(f"we get \\\\boxed{{{ab[0]}}}", str(ab[1]))))


@exercise(f"{M}.informative_group_probability", points=2)
def _informative_group_probability():
    for p in (0.01, 0.10, 0.50, 0.90, 0.99):
        yield Case(args=(p, 8), label=f"seed table p={p}, G=8", hidden=False)
    yield Case(args=(0.5, 1), label="a group of one is never informative")
    yield Case(args=(0.0, 4), label="p = 0")
    yield Case(args=(1e-9, 16), label="tiny p", rtol=1e-6, atol=1e-15)
    yield Case(args=(1.5, 4), raises=ValueError, label="p outside [0, 1] is refused")
    probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)
    yield from hypothesis_cases(st.tuples(probabilities, st.integers(min_value=1, max_value=64)), count=20,
                                seed=9_302, to_case=lambda pg: Case(args=pg))


@exercise(f"{M}.group_relative_advantages", points=3, rtol=1e-6, atol=1e-9)
def _group_relative_advantages():
    seed_rewards = np.array([1.0, 1.0, 0.0, 0.0])
    yield Case(args=(seed_rewards,), kwargs={"scale": True}, label="seed table, standardised", hidden=False)
    yield Case(args=(seed_rewards,), kwargs={"scale": False}, label="seed table, centred", hidden=False)
    yield Case(args=(np.array([1.0, 0.0, 0.0, 0.0]),), label="one success in G=4")
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5]]),), label="two groups, one all-equal")
    yield Case(args=([0.2, 0.9, 0.4],), kwargs={"ddof": 1}, label="ddof=1 on request (a list input)")
    yield Case(args=(np.array([3.0, 1.0]),), kwargs={"eps": 0.0}, label="eps = 0")
    yield Case(args=(np.zeros((2, 0)),), raises=ValueError, label="an empty group is refused")
    groups = st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=8)
    yield from hypothesis_cases(st.lists(groups, min_size=1, max_size=3), count=20,
                                seed=9_303, to_case=_ragged_to_case)


def _ragged_to_case(groups):
    width = min(len(g) for g in groups)
    return Case(args=(np.array([g[:width] for g in groups]),))
