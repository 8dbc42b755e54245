"""Public tests for module_9_reference.py: run `pytest starter/module_09` from the kit's root.

Every test is named test_<function>_<what>. Rows are small enough to check on
paper; the conventions (population std, last box wins, ...) are on README.md.
A test of a function you have not written yet fails with one line:
"NOT IMPLEMENTED: module_9_reference.<function> ...".
"""

from __future__ import annotations

import builtins
import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import module_9_reference as m9
from _kit_say import say
from _kit_values import untagged  # the tagged form of _refused.json, read as the conftest reads it

FAST = settings(max_examples=50, deadline=None, database=None)
REL = 1e-9  # float64 tolerance for exact formulas
REL_EPS = 1e-5  # formulas that add eps = 1e-6 to a std of order 0.5


# --- the verifier: the seed notebook's five cases, then the conventions -------
SEED_VERIFIER_CASES = [  # raw strings with a DOUBLE backslash, as in the notebook
    (r"Final: \\boxed{3/7}", "0.428571", 1, "correct"),
    ("The reference number 42 is mentioned, but the answer is 41", "42", 0, "wrong"),
    (r"First \\boxed{2}, then corrected: \\boxed{3}", "3", 1, "correct"),
    ("No numerical answer", "5", 0, "no_answer"),
    ("1/0", "0", 0, "zero_division"),
]


@pytest.mark.parametrize("text, reference, expected, _status", SEED_VERIFIER_CASES)
def test_verify_numeric_answer_seed_cases(text, reference, expected, _status):
    observed = m9.verify_numeric_answer(text, reference)
    assert observed == expected and type(observed) is int, say(f"{text!r} vs {reference!r}",
                                                               f"текст {text!r}, эталон {reference!r}")


@pytest.mark.parametrize("text, reference, _expected, status", SEED_VERIFIER_CASES)
def test_verify_detailed_seed_statuses(text, reference, _expected, status):
    result = m9.verify_detailed(text, reference)
    assert result.status == status
    assert result.accuracy == (status == "correct") and result.reward == float(result.accuracy)


VERIFIER_CONVENTIONS = [  # text, reference, status, extracted: the raw text read, as written (spaces kept)
    (r"\boxed{5} no wait \boxed{6}", 6, "correct", "6"),              # the last box wins
    (r"\boxed{5} so the answer is 6", 5, "correct", "5"),             # a box beats a later bare number
    ("I first thought 42, then 40 + 1 = 41", 42, "wrong", "41"),      # the last number wins
    pytest.param("Total: 1,234,567 apples", 1234567, "correct", "1,234,567",  # thousands separators
                 marks=pytest.mark.edge("number_formats")),
    ("the pair 1,2", 2, "correct", "2"),                              # "1,2" is two numbers
    pytest.param(r"$\boxed{ -2/4 }$", "-0.5", "correct", " -2/4 ",  # signs, fractions; the box's text as is
                 marks=pytest.mark.edge("number_formats")),
    pytest.param("about 1.5e3 metres", 1500, "correct", "1.5e3",  # scientific notation
                 marks=pytest.mark.edge("number_formats")),
    (r"\boxed{\boxed{7}}", 7, "correct", "7"),                        # braces nest
    (r"\boxed{7", 7, "parse_error", None),                            # an unclosed last box: nothing read
    (r"\boxed{seven}", 7, "parse_error", "seven"),                    # a box that holds no number
    (r"\boxed{3/0}", 0, "zero_division", "3/0"),
    (r"\boxed{nan}", 0, "non_finite", "nan"),
    pytest.param("1e999999", 0, "non_finite", "1e999999",  # overflow, decided without computing it
                 marks=pytest.mark.edge("extremes")),
    pytest.param("", 0, "no_answer", None, marks=pytest.mark.edge("zeros_and_empties")),
    (r"\\boxed{12}, check: 12 - 2 = 10", 12, "correct", "12"),  # a box with TWO backslashes beats later numbers
    ("so x = 5 - 8 = -3", -3, "correct", "-3"),                    # a sign after a space belongs to the number
    (r"\boxed{$12$}", 12, "correct", "$12$"),                       # $ is stripped from a box's content
]


@pytest.mark.parametrize("text, reference, status, extracted", VERIFIER_CONVENTIONS)
def test_verify_detailed_conventions(text, reference, status, extracted):
    result = m9.verify_detailed(text, reference)
    assert (result.status, result.extracted) == (status, extracted)
    assert result.accuracy == (status == "correct") and result.reward == float(result.accuracy)


@pytest.mark.parametrize("text, reference, status, _extracted", VERIFIER_CONVENTIONS)
def test_verify_numeric_answer_conventions(text, reference, status, _extracted):
    assert m9.verify_numeric_answer(text, reference) == (status == "correct")


@pytest.mark.edge("boundaries")
def test_verify_numeric_answer_tolerance_is_max_of_abs_and_rel():
    assert m9.verify_numeric_answer("1000.0005", 1000) == 1  # |diff| 5e-4 <= rel 1e-6 * 1000 = 1e-3
    assert m9.verify_numeric_answer("0.000002", 0) == 0  # |diff| 2e-6 > abs_tol 1e-6
    assert m9.verify_numeric_answer("0.000002", 0, abs_tol=1e-5) == 1


def _formats(*row, also=()):
    """A row of the answer-format table, marked number_formats and ``also`` (pytest -m edge runs them alone)."""
    return pytest.param(*row, marks=[pytest.mark.edge("number_formats"), *also])


EXACT = {"rel_tol": 0.0, "abs_tol": 0.0}
BOUNDARY = (pytest.mark.edge("boundaries"),)
VERIFIER_NUMBER_FORMATS = [  # text, reference, tolerances, status, extracted: one row (or two) per answer format
    _formats(r"\boxed{+7}", 7, {}, "correct", "+7"),                           # a plus sign
    _formats("so x = +2.5", "2.5", {}, "correct", "+2.5"),
    _formats(r"\boxed{.75}", "3/4", {}, "correct", ".75"),                     # no digit before the point
    _formats("so p = -.5", -0.5, {}, "correct", "-.5"),
    _formats(r"\boxed{2.5e-3}", "0.0025", {}, "correct", "2.5e-3"),            # a negative exponent
    _formats("the rate is 4E-2", 0.04, {}, "correct", "4E-2"),
    _formats("about 3E+2 metres", 300, {}, "correct", "3E+2"),                 # capital E, explicit plus
    _formats(r"\boxed{1.5/3}", "1/2", {}, "correct", "1.5/3"),                 # a fraction of decimals
    _formats("the ratio is 0.5/0.25", 2, {}, "correct", "0.5/0.25"),
    _formats(r"\boxed{+3/4}", 0.75, {}, "correct", "+3/4"),                    # a signed fraction
    _formats("balance: -1,234.5", -1234.5, {}, "correct", "-1,234.5"),         # separators, sign and decimals
    _formats("the code is 1,2345", 2345, {}, "correct", "2345"),               # four digits after a comma:
    _formats(r"\boxed{1,2345}", 12345, {}, "parse_error", "1,2345"),           # no thousands separator
    _formats(r"\boxed{- 3}", -3, {}, "correct", "- 3"),                        # whitespace in a box is removed
    _formats("\\boxed{ 3 /\t4 }", 0.75, {}, "correct", " 3 /\t4 "),
    _formats("boxed{3} is not a box, 4 is", 4, {}, "correct", "4"),            # no backslash: no box
    _formats(r"\boxed{\frac{1}{2}}", "1/2", {}, "parse_error", r"\frac{1}{2}"),  # LaTeX in a box: no number
    _formats(r"\boxed{1\,234}", 1234, {}, "parse_error", r"1\,234"),           # LaTeX spacing is no separator
    _formats(r"about 1\,234 people", 234, {}, "correct", "234"),
    _formats(r"\boxed{25\%}", 25, {}, "parse_error", r"25\%"),                 # a percent sign in a box
    _formats("a 25% rise", 25, {}, "correct", "25"),                           # ... and after the last number
    _formats(r"\boxed{5 cm}", 5, {}, "parse_error", "5 cm"),                   # units in a box
    _formats("it is 5 cm long", 5, {}, "correct", "5"),
    _formats("the value n-4", 4, {}, "correct", "4"),                          # a minus after a letter
    _formats("the ratio 2/0.0", 0, {}, "zero_division", "2/0.0"),
    _formats(r"\boxed{-\infty}", 0, {}, "non_finite", r"-\infty"),
    _formats("the constant is 1234567.8", 1234567.8, {}, "correct", "1234567.8"),  # a float of 8 digits
    _formats("we get 0.1", 0.1, EXACT, "correct", "0.1"),                      # a float reference by its digits
    _formats("total 9007199254740993", 9007199254740993, EXACT, "correct", "9007199254740993"),  # 2^53 + 1
    _formats("total 9007199254740992", 9007199254740993, EXACT, "wrong", "9007199254740992"),
    _formats(r"\boxed{-12}", np.int64(-12), EXACT, "correct", "-12",  # a NumPy integer reference
             also=(pytest.mark.edge("python_types"),)),
    _formats("so the answer is 42", np.int64(42), {}, "correct", "42", also=(pytest.mark.edge("python_types"),)),
    _formats("we get 0.25", np.float64(0.25), {}, "correct", "0.25", also=(pytest.mark.edge("python_types"),)),
    _formats("x = 111", 100, {"rel_tol": 0.1, "abs_tol": 0.0}, "wrong", "111", also=BOUNDARY),
    _formats("x = 90.5", 100, {"rel_tol": 0.1, "abs_tol": 0.0}, "correct", "90.5", also=BOUNDARY),
    _formats("x = -90.5", -100, {"rel_tol": 0.1, "abs_tol": 0.0}, "correct", "-90.5", also=BOUNDARY),  # |ref|
    _formats("x = 112", 100, {"rel_tol": 0.1, "abs_tol": 5.0}, "wrong", "112", also=BOUNDARY),
    _formats("x = 12.5", 12, {"rel_tol": 0.0, "abs_tol": 0.5}, "correct", "12.5", also=BOUNDARY),
    _formats("x = 12.5", 12, {"rel_tol": 0.0, "abs_tol": 0.25}, "wrong", "12.5", also=BOUNDARY),
]


@pytest.mark.parametrize("text, reference, tolerances, status, extracted", VERIFIER_NUMBER_FORMATS)
def test_verify_detailed_number_formats(text, reference, tolerances, status, extracted):
    # the tolerance is rel_tol * |ref| (the reference's, not the answer's), and max(abs_tol, ...), not a sum
    result = m9.verify_detailed(text, reference, **tolerances)
    given = str(tolerances) if tolerances else say("default tolerances", "допуски по умолчанию")
    assert (result.status, result.extracted) == (status, extracted), say(
        f"{text!r} vs {reference!r} ({given}): expected status {status!r} and "
        f"extracted {extracted!r}, got {result.status!r} and {result.extracted!r}",
        f"{text!r} против {reference!r} ({given}): ожидались статус {status!r} и "
        f"extracted {extracted!r}, получены {result.status!r} и {result.extracted!r}")
    assert result.accuracy == (status == "correct") and result.reward == float(result.accuracy)


@pytest.mark.parametrize("text, reference, tolerances, status, _extracted", VERIFIER_NUMBER_FORMATS)
def test_verify_numeric_answer_number_formats(text, reference, tolerances, status, _extracted):
    assert m9.verify_numeric_answer(text, reference, **tolerances) == (status == "correct")


@pytest.mark.parametrize("reference", [True, None])  # a bool is no int here; None is no number
def test_verify_detailed_refuses_a_reference_that_is_no_number(reference):
    with pytest.raises(ValueError, match="reference"):
        m9.verify_detailed("1", reference)


@FAST
@given(st.text(max_size=200))
@example(r"\\boxed{3}")
def test_verify_numeric_answer_never_raises_on_text(text):
    assert m9.verify_numeric_answer(text, "3") in (0, 1)


# --- informative groups ---------------------------------------------------
@pytest.mark.parametrize("p, group_size, expected", [
    (0.5, 2, 0.5),               # 1 - 1/4 - 1/4
    (0.5, 8, 1 - 2 / 256),
    (0.1, 2, 2 * 0.1 * 0.9),     # exactly one right, one wrong
    pytest.param(0.0, 4, 0.0, marks=pytest.mark.edge("boundaries")),
    pytest.param(1.0, 4, 0.0, marks=pytest.mark.edge("boundaries")),
    pytest.param(0.3, 1, 0.0, marks=pytest.mark.edge("boundaries")),  # a group of one is never informative
    pytest.param(1e-9, 16, 1.599999988e-08, marks=pytest.mark.edge("extremes")),  # 1 - (1 - p)^16: use expm1/log1p
])
def test_informative_group_probability_rows(p, group_size, expected):
    assert m9.informative_group_probability(p, group_size) == pytest.approx(expected, rel=REL, abs=1e-15)


@FAST
@given(st.floats(0.0, 1.0), st.integers(1, 32))
@example(0.1, 8)
def test_informative_group_probability_symmetric_in_p(p, group_size):
    assert m9.informative_group_probability(p, group_size) == pytest.approx(
        m9.informative_group_probability(1.0 - p, group_size), rel=1e-9, abs=1e-12)


# one row a test, so that every row runs even when an earlier one fails
@pytest.mark.parametrize("wanted, p, group_size, expected", [
    (100, 0.5, 2, 200.0),
    (100, 0.5, 8, 100 / (1 - 2 / 256)),
    (1, 0.5, 2, 2.0),  # B = 1: one informative group at P_info = 1/2 takes two draws on average
    pytest.param(5, 0.0, 8, math.inf, marks=pytest.mark.edge("boundaries")),  # p = 0: P_info = 0, inf draws
])
def test_expected_draws_for_informative_groups_rows(wanted, p, group_size, expected):
    observed = m9.expected_draws_for_informative_groups(wanted, p, group_size)
    assert observed == pytest.approx(expected, rel=REL), say(
        f"B = {wanted}, p = {p}, G = {group_size}: expected {expected!r} draws, got {observed!r}",
        f"B = {wanted}, p = {p}, G = {group_size}: ожидалось {expected!r} попыток, получено {observed!r}")


@pytest.mark.edge("zeros_and_empties")
@pytest.mark.parametrize("p", [0.5, 1.0])
def test_expected_draws_for_informative_groups_none_wanted_needs_no_draws(p):
    observed = m9.expected_draws_for_informative_groups(0, p, 8)  # B = 0: 0.0 whatever P_info is, even 0
    assert observed == 0.0, say(f"B = 0, p = {p}: expected 0.0 draws, got {observed!r}",
                                f"B = 0, p = {p}: ожидалось 0.0 попыток, получено {observed!r}")


# --- advantages -------------------------------------------------------------
SEED_REWARDS = np.array([1.0, 1.0, 0.0, 0.0])
SEED_RATIOS = np.array([1.35, 0.85, 1.10, 0.70])
SHRINK = 0.5 / (0.5 + 1e-6)  # std of [1, 1, 0, 0] is 0.5; eps = 1e-6 shrinks the standardized values


def test_group_relative_advantages_seed_table():
    np.testing.assert_allclose(m9.group_relative_advantages(SEED_REWARDS, scale=False),
                               [0.5, 0.5, -0.5, -0.5], rtol=REL)
    np.testing.assert_allclose(m9.group_relative_advantages(SEED_REWARDS, scale=True),
                               np.array([1.0, 1.0, -1.0, -1.0]) * SHRINK, rtol=REL)


@pytest.mark.parametrize("group_size", [2, 3, 4, 8, 16])
def test_group_relative_advantages_one_success_gets_sqrt_g_minus_1(group_size):
    rewards = np.zeros(group_size)
    rewards[0] = 1.0
    advantages = m9.group_relative_advantages(rewards)  # population std: ddof = 0
    assert advantages[0] == pytest.approx(math.sqrt(group_size - 1), rel=REL_EPS)


@pytest.mark.parametrize("group_size", [2, 4, 8])
def test_group_relative_advantages_ddof1_is_trl_convention(group_size):
    rewards = np.zeros(group_size)
    rewards[0] = 1.0
    advantages = m9.group_relative_advantages(rewards, ddof=1)  # sample std, as TRL computes it
    assert advantages[0] == pytest.approx((group_size - 1) / math.sqrt(group_size), rel=REL_EPS)


def test_group_relative_advantages_eps_is_added_to_the_std():
    advantages = m9.group_relative_advantages(np.array([1.0, 0.0, 0.0]), eps=0.5)
    std = math.sqrt(2) / 3  # centred [2/3, -1/3, -1/3]; (r - mean) / (std + eps), eps outside the square root
    np.testing.assert_allclose(advantages, np.array([2.0, -1.0, -1.0]) / 3 / (std + 0.5), rtol=REL)


def test_group_relative_advantages_each_group_has_its_own_std():
    advantages = m9.group_relative_advantages(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]]))
    root3 = math.sqrt(3)  # group 1: centred [3/4, -1/4, -1/4, -1/4], std sqrt(3)/4; group 2: std 1/2
    np.testing.assert_allclose(advantages, [[root3, -1 / root3, -1 / root3, -1 / root3], [1.0, 1.0, -1.0, -1.0]],
                               rtol=REL_EPS)


@pytest.mark.edge("ties_and_near_ties")
@pytest.mark.edge("boundaries")  # eps = 0
@pytest.mark.parametrize("eps", [1e-6, 0.0])
@pytest.mark.parametrize("value", [0.7, 2.0])  # a std of 2e-16 (the mean of three 0.7s rounds), and of exactly 0
def test_group_relative_advantages_all_equal_group_gives_zeros(eps, value):
    advantages = m9.group_relative_advantages(np.array([[value] * 3, [1.0, 0.0, 0.0]]), eps=eps)
    assert np.all(advantages[0] == 0.0) and np.all(np.isfinite(advantages))


rewards_2d = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=8),
                        elements=st.floats(-10, 10, allow_subnormal=False))


@FAST
@given(rewards_2d)
@example(np.array([[1.0, 0.0, 0.0, 0.0]]))  # explicit examples run first: a hand case fails fast
@example(np.array([[10.0] * 7 + [10.0 - 1e-9]]))  # a near tie: std is about 3e-10, so std + eps is about eps
def test_group_relative_advantages_sum_to_zero_per_group(rewards):
    # In float64 the centred rewards sum to zero only up to rounding, a few ulps of the largest |r| (bounded here
    # by 1e-13 (1 + max |r|)); scaling divides that by std + eps, which is about eps = 1e-6 for a near tie.
    rounding = 1e-13 * (1.0 + np.abs(rewards).max(axis=-1))
    for scale, atol in ((False, rounding), (True, rounding / (rewards.std(axis=-1) + 1e-6))):
        sums = m9.group_relative_advantages(rewards, scale=scale).sum(axis=-1)
        np.testing.assert_array_less(np.abs(sums), atol)  # each group's |sum| under its own bound


@FAST
@given(rewards_2d, st.floats(-100, 100))
@example(np.array([[1.0, 0.0, 0.0, 0.0]]), 5.0)
def test_group_relative_advantages_invariant_to_constant_reward(rewards, constant):
    np.testing.assert_allclose(m9.group_relative_advantages(rewards + constant),
                               m9.group_relative_advantages(rewards), rtol=1e-6, atol=1e-6)


def test_group_relative_advantages_leaves_input_unchanged():
    rewards = SEED_REWARDS.copy()
    m9.group_relative_advantages(rewards)
    np.testing.assert_array_equal(rewards, SEED_REWARDS)


@pytest.mark.edge("boundaries")  # G = 2: the baseline is the other answer
def test_leave_one_out_baseline_rows():
    np.testing.assert_allclose(m9.leave_one_out_baseline([1.0, 2.0, 3.0, 4.0]), [3.0, 8 / 3, 7 / 3, 2.0], rtol=REL)
    # three groups of two (a (3, 2) array: the group is the LAST axis)
    np.testing.assert_allclose(m9.leave_one_out_baseline(np.array([[1.0, 1.0], [0.0, 1.0], [5.0, -5.0]])),
                               [[1.0, 1.0], [1.0, 0.0], [-5.0, 5.0]], rtol=REL)
    # two groups: each answer's baseline is the other answer of ITS group
    np.testing.assert_allclose(m9.leave_one_out_baseline(np.array([[1.0, 2.0], [3.0, 5.0]])), [[2.0, 1.0], [5.0, 3.0]],
                               rtol=REL)
    with pytest.raises(ValueError, match="rewards"):
        m9.leave_one_out_baseline([1.0])  # G = 1 has no other answers


# --- clipping ---------------------------------------------------------------
def test_clipped_surrogate_terms_seed_table():
    advantages = np.array([1.0, 1.0, -1.0, -1.0]) * SHRINK
    terms = m9.clipped_surrogate_terms(SEED_RATIOS, advantages, eps_low=0.2, eps_high=0.2)
    # rho=1.35, A>0: capped at 1.2 | 0.85, A>0: 0.85 | 1.10, A<0: -1.10 | 0.70, A<0: min(-0.7, -0.8) = -0.8
    np.testing.assert_allclose(terms, np.array([1.2, 0.85, -1.1, -0.8]) * SHRINK, rtol=REL)


def test_clipped_surrogate_terms_unit_advantages():
    terms = m9.clipped_surrogate_terms(SEED_RATIOS, np.array([1.0, 1.0, -1.0, -1.0]), 0.2, 0.2)
    np.testing.assert_allclose(terms, [1.2, 0.85, -1.1, -0.8], rtol=REL)


def test_clip_activity_seed_table():
    advantages = np.array([1.0, 1.0, -1.0, -1.0])
    active = m9.clip_activity(SEED_RATIOS, advantages, eps_low=0.2, eps_high=0.2)
    assert active.dtype == bool and active.tolist() == [True, False, False, True]


# ratios, advantages, eps_low, eps_high -> the clipped terms, and where the clip is active
CLIP_ROWS = [
    # a ratio outside the range is clipped only on the side its advantage pushes towards
    (np.array([0.5, 1.5, 0.5, 1.5]), np.array([1.0, 1.0, -1.0, -1.0]), 0.2, 0.2,
     [0.5, 1.2, -0.8, -1.5], [False, True, True, False]),
    # |A| = 2: the clip bounds the RATIO, so a clipped term is 1.2 * 2 or 0.8 * (-2), not a product clipped to 1.2
    (np.array([0.5, 1.4, 0.5, 1.4]), np.array([2.0, 2.0, -2.0, -2.0]), 0.2, 0.2,
     [1.0, 2.4, -1.6, -2.8], [False, True, True, False]),
    # on a boundary (1 -+ 0.25 are exact in binary) both branches are equal: not active (> and <, not >= and <=)
    pytest.param(np.array([0.75, 1.25, 1.25, 0.75]), np.array([-1.0, 1.0, -1.0, 1.0]), 0.25, 0.25,
                 [-0.75, 1.25, -1.25, 0.75], [False, False, False, False], marks=pytest.mark.edge("boundaries")),
    # clip-higher: 1.25 lies inside [1 - 0.2, 1 + 0.28]
    (np.array([1.25, 0.75]), np.array([1.0, -1.0]), 0.2, 0.28, [1.25, -0.8], [False, True]),
    # positive advantages only (A = 2): the clip bounds the ratio, never the advantage: 0.5 * 2, 1 * 2, 1.2 * 2
    (np.array([0.5, 1.0, 1.5]), np.array([2.0, 2.0, 2.0]), 0.2, 0.2, [1.0, 2.0, 2.4], [False, False, True]),
    # a zero advantage: the term is 0 and the clip is never active, whatever the ratio
    pytest.param(np.array([0.3, 1.0, 2.5]), np.zeros(3), 0.2, 0.2, [0.0, 0.0, 0.0], [False, False, False],
                 marks=pytest.mark.edge("zeros_and_empties")),
]


@pytest.mark.parametrize("ratios, advantages, eps_low, eps_high, terms, _active", CLIP_ROWS)
def test_clipped_surrogate_terms_rows(ratios, advantages, eps_low, eps_high, terms, _active):
    np.testing.assert_allclose(m9.clipped_surrogate_terms(ratios, advantages, eps_low, eps_high), terms, rtol=REL)


@pytest.mark.parametrize("ratios, advantages, eps_low, eps_high, _terms, active", CLIP_ROWS)
def test_clip_activity_rows(ratios, advantages, eps_low, eps_high, _terms, active):
    observed = m9.clip_activity(ratios, advantages, eps_low, eps_high)
    assert np.asarray(observed).tolist() == active, say(
        f"ratios {ratios.tolist()}, advantages {advantages.tolist()}, eps_low {eps_low}, eps_high {eps_high}: "
        f"expected {active}, got {np.asarray(observed).tolist()}",
        f"отношения {ratios.tolist()}, преимущества {advantages.tolist()}, eps_low {eps_low}, eps_high {eps_high}: "
        f"ожидалось {active}, получено {np.asarray(observed).tolist()}")


@FAST
@given(hnp.arrays(np.float64, st.integers(1, 10), elements=st.floats(1e-3, 10.0)),
       st.floats(1e-3, 10.0))
@example(SEED_RATIOS, 1.0)
def test_clipped_surrogate_terms_huge_eps_high_is_unclipped_for_positive_advantage(ratios, advantage):
    terms = m9.clipped_surrogate_terms(ratios, advantage, eps_low=0.2, eps_high=1e9)
    np.testing.assert_allclose(terms, ratios * advantage, rtol=1e-12)


def test_gspo_sequence_ratios_geometric_mean_over_active_tokens():
    new = np.array([[-1.0, -2.0, -9.0], [-0.5, -0.5, -0.5]])
    old = np.array([[-1.5, -2.5, -1.0], [-0.5, -0.5, -0.5]])
    mask = np.array([[1, 1, 0], [1, 1, 1]])  # the third token of response 1 is padding
    np.testing.assert_allclose(m9.gspo_sequence_ratios(new, old, mask), [math.exp(0.5), 1.0], rtol=REL)


def test_gspo_sequence_ratios_geometric_not_arithmetic_mean():
    # token log-ratios +1 and -2: the GEOMETRIC mean exp((1 - 2) / 2), not the mean of e and e^-2
    np.testing.assert_allclose(m9.gspo_sequence_ratios(np.array([[-1.0, -3.0]]), np.array([[-2.0, -1.0]]),
                                                       np.array([[1, 1]])), [math.exp(-0.5)], rtol=REL)


# --- loss reductions: the seed's table for rewards [1, 0, 1], lengths [2, 5, 8] ----
SEED_GROUP, SEED_LENGTHS = np.array([1.0, 0.0, 1.0]), [2, 5, 8]
A = math.sqrt(2) / 2  # standardized advantages are [A, -2A, A]: centred [1/3, -2/3, 1/3], std sqrt(2)/3


# reduction -> (c_i = sum_t w_it for each response, sum of |w_it| over the group)
SEED_REDUCTIONS = {
    "original_grpo": ([A / 3, -2 * A / 3, A / 3], 4 * A / 3),       # A_i / G per response
    "dr_grpo": ([2 / 72, -10 / 72, 8 / 72], 20 / 72),               # (r_i - 2/3) |o_i| / (3 * 8)
    "dapo": ([2 * A / 15, -10 * A / 15, 8 * A / 15], 20 * A / 15),  # A_i |o_i| / 15
}


def _assert_seed_weights(weights, reduction):
    contributions, absolute_sum = SEED_REDUCTIONS[reduction]
    assert [len(w) for w in weights] == SEED_LENGTHS
    assert all(np.all(w == w[0]) for w in weights), say("every token of one response has the same weight",
                                                        "все токены одного ответа получают одинаковый вес")
    np.testing.assert_allclose([np.sum(w) for w in weights], contributions, rtol=REL_EPS)  # c_i = sum_t w_it
    assert sum(np.abs(w).sum() for w in weights) == pytest.approx(absolute_sum, rel=REL_EPS)


def test_original_grpo_token_weights_seed_table():
    _assert_seed_weights(m9.original_grpo_token_weights(SEED_GROUP, SEED_LENGTHS), "original_grpo")


def test_dr_grpo_token_weights_seed_table():
    _assert_seed_weights(m9.dr_grpo_token_weights(SEED_GROUP, SEED_LENGTHS, fixed_length=8), "dr_grpo")


def test_dapo_token_weights_seed_table():
    _assert_seed_weights(m9.dapo_token_weights(SEED_GROUP, SEED_LENGTHS), "dapo")


# eps = 0.5: A_i = (r_i - mean) / (std + 0.5) (eps added to the std, not inside its square root)
A_EPS = np.array([1.0, -2.0, 1.0]) / 3 / (math.sqrt(2) / 3 + 0.5)


def test_original_grpo_token_weights_large_eps():
    weights = m9.original_grpo_token_weights(SEED_GROUP, SEED_LENGTHS, eps=0.5)
    np.testing.assert_allclose([np.sum(w) for w in weights], A_EPS / 3, rtol=REL)  # A_i / G per response


def test_dapo_token_weights_large_eps():
    weights = m9.dapo_token_weights(SEED_GROUP, SEED_LENGTHS, eps=0.5)
    np.testing.assert_allclose([np.sum(w) for w in weights], A_EPS * np.array(SEED_LENGTHS) / 15, rtol=REL)


def test_dr_grpo_token_weights_ignores_eps():
    # Dr. GRPO centres without dividing by a std, so eps changes nothing: A = r - mean = [2/3, -1/3, -1/3],
    # each token of response i weighs A_i / (G * L) = A_i / 27
    weights = m9.dr_grpo_token_weights(np.array([1.0, 0.0, 0.0]), [4, 2, 9], 9, eps=0.5)
    for got, advantage, length in zip(weights, [2 / 3, -1 / 3, -1 / 3], [4, 2, 9]):
        np.testing.assert_allclose(got, np.full(length, advantage / 27), rtol=REL)


def test_dr_grpo_token_weights_budget_above_the_longest_response():
    weights = m9.dr_grpo_token_weights(SEED_GROUP, SEED_LENGTHS, fixed_length=12)  # L = 12, not max(lengths) = 8
    np.testing.assert_allclose([np.sum(w) for w in weights], np.array([2.0, -10.0, 8.0]) / (3 * 12 * 3), rtol=REL)


def _seed_weights_by_hand(reduction):
    """The seed's token weights written out: response i has |o_i| equal weights that sum to c_i."""
    contributions, _ = SEED_REDUCTIONS[reduction]
    return [np.full(length, c / length) for c, length in zip(contributions, SEED_LENGTHS)]


@pytest.mark.parametrize("reduction", SEED_REDUCTIONS)
def test_response_contributions_seed_table(reduction):
    contributions, _ = SEED_REDUCTIONS[reduction]
    np.testing.assert_allclose(m9.response_contributions(_seed_weights_by_hand(reduction)), contributions,
                               rtol=REL_EPS)


@pytest.mark.parametrize("reduction", SEED_REDUCTIONS)
def test_flatten_token_weights_seed_table(reduction):
    _, absolute_sum = SEED_REDUCTIONS[reduction]
    flat = m9.flatten_token_weights(_seed_weights_by_hand(reduction))
    assert flat.shape == (sum(SEED_LENGTHS),)
    assert np.abs(flat).sum() == pytest.approx(absolute_sum, rel=REL_EPS)


def test_flatten_token_weights_keeps_order_and_sign():
    flat = m9.flatten_token_weights([np.array([0.5, 0.5]), np.array([-0.25]), np.array([0.1, -0.3, 0.2])])
    np.testing.assert_allclose(flat, [0.5, 0.5, -0.25, 0.1, -0.3, 0.2], rtol=REL)


def test_dr_grpo_token_weights_rejects_short_fixed_length():
    with pytest.raises(ValueError, match="fixed_length"):
        m9.dr_grpo_token_weights(SEED_GROUP, SEED_LENGTHS, fixed_length=7)


@pytest.mark.edge("zeros_and_empties")  # length 0
@pytest.mark.edge("boundaries")  # 15: the soft zone's start, 20: L_max
@pytest.mark.parametrize("length, expected", [(0, 0.0), (15, 0.0), (16, -0.2), (18, -0.6), (20, -1.0), (21, -1.0)])
def test_overlong_penalty_rows(length, expected):
    assert m9.overlong_penalty(length, max_length=20, cache_length=5) == pytest.approx(expected, rel=REL)


@pytest.mark.edge("ties_and_near_ties")  # equal log-probabilities: exactly 0
def test_k3_kl_rows():
    values = m9.k3_kl(np.array([-1.0, -2.0, -1.0]), np.array([-1.0, -1.0, -2.0]))
    np.testing.assert_allclose(values, [0.0, math.e - 2.0, math.exp(-1.0)], rtol=REL, atol=1e-15)


# --- entropy, pass@k and exact mode training --------------------------------
@pytest.mark.edge("zeros_and_empties")  # 0 log 0 = 0
def test_categorical_entropy_rows():
    assert m9.categorical_entropy([0.25, 0.25, 0.25, 0.25]) == pytest.approx(math.log(4), rel=REL)
    assert m9.categorical_entropy([1.0, 0.0]) == 0.0  # 0 log 0 = 0
    np.testing.assert_allclose(m9.categorical_entropy([[0.5, 0.5], [1.0, 0.0]]), [math.log(2), 0.0], rtol=REL)


def test_pass_at_k_independent_rows():
    assert m9.pass_at_k_independent(0.5, 4) == pytest.approx(1 - 0.5 ** 4, rel=REL)


def test_pass_at_k_independent_when_p_is_not_one_half():  # p^k and (1 - p)^k differ here
    assert m9.pass_at_k_independent(0.2, 3) == pytest.approx(1 - 0.8 ** 3, rel=REL)


@pytest.mark.edge("boundaries")  # n - c < k: every draw holds a right answer
@pytest.mark.edge("zeros_and_empties")  # c = 0
def test_pass_at_k_unbiased_rows():
    assert m9.pass_at_k_unbiased(10, 3, 4) == pytest.approx(1 - 35 / 210, rel=REL)  # 1 - C(7,4)/C(10,4)
    assert m9.pass_at_k_unbiased(5, 3, 3) == 1.0  # only 2 wrong answers: any 3 include a right one
    assert m9.pass_at_k_unbiased(5, 0, 3) == 0.0


@pytest.mark.edge("extremes")
def test_pass_at_k_unbiased_large_n():
    # C(2000, 1000) is about 2e600: beyond float64 (1.8e308), so float binomials give inf / inf = nan
    expected = 1 - math.comb(1990, 1000) / math.comb(2000, 1000)  # Python ints: exact, then one rounding
    observed = m9.pass_at_k_unbiased(2000, 10, 1000)
    assert observed == pytest.approx(expected, rel=1e-9), say(
        f"n = 2000, c = 10, k = 1000: expected {expected}, got {observed}; never form C(n, k) as a float",
        f"n = 2000, c = 10, k = 1000: ожидалось {expected}, получено {observed}; не вычисляйте C(n, k) во float")


@pytest.mark.edge("zeros_and_empties")
def test_synthetic_mode_training_zero_steps_is_initial_state():
    state = m9.synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=0)
    logits, rewards = np.array(m9.DEFAULT_MODE_LOGITS), np.array(m9.DEFAULT_MODE_REWARDS)
    pi = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(state["probabilities"], pi, rtol=REL)
    np.testing.assert_allclose(state["logits"], logits, rtol=REL)
    # the summary: sum pi r, the mass of the modes with r > 0 (0.8176 here, not capped), and H(pi)
    expected = {"expected_reward": pi @ rewards, "successful_mass": pi[rewards > 0].sum(),
                "entropy": -(pi * np.log(pi)).sum()}
    for key, want in expected.items():
        assert state[key] == pytest.approx(want, rel=REL), say(f"steps = 0: {key} should be {want:.12g}, got {state[key]!r}",
                                                               f"steps = 0: {key} должно быть {want:.12g}, получено {state[key]!r}")


# the seed notebook's finite-training table (module defaults, beta_entropy 0, lr 0.18), rounded to 4 places
SEED_MODE_TABLE = {0: [0.4088, 0.4088, 0.0912, 0.0912], 9: [0.4809, 0.364, 0.0775, 0.0775],
                   19: [0.5651, 0.3066, 0.0641, 0.0641], 39: [0.7119, 0.2019, 0.0431, 0.0431],
                   60: [0.8098, 0.1314, 0.0294, 0.0294]}


@pytest.mark.parametrize("steps", SEED_MODE_TABLE)
def test_synthetic_mode_training_seed_table(steps):
    state = m9.synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=steps)
    observed = np.round(np.asarray(state["probabilities"], dtype=float), 4).tolist()
    assert np.allclose(observed, SEED_MODE_TABLE[steps], atol=1.5e-4), say(
        f"step {steps}: expected probabilities {SEED_MODE_TABLE[steps]}, got {observed}; "
        f"dJ/dz_k = pi_k (r_k - sum_j pi_j r_j) - beta pi_k (log pi_k + H)",
        f"шаг {steps}: ожидались вероятности {SEED_MODE_TABLE[steps]}, получено {observed}; "
        f"dJ/dz_k = pi_k (r_k - sum_j pi_j r_j) - beta pi_k (log pi_k + H)")


def test_synthetic_mode_training_concentrates_on_one_mode():
    start = m9.synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=0)
    end = m9.synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60)
    assert end["expected_reward"] > start["expected_reward"]
    assert end["entropy"] < start["entropy"]
    assert end["probabilities"].max() > 0.8
    bonus = m9.synthetic_mode_training(beta_entropy=0.5, learning_rate=0.18, steps=60)
    assert bonus["entropy"] > end["entropy"]  # the entropy bonus slows the collapse


# --- the promised result types: the grader checks them before it compares values ------
# Scalars are Python float (np.float64 is a float too; an int is accepted) or, for the verifier's
# decision, int; arrays are np.ndarray of float64 (bool for clip_activity); the token weights a
# list of float64 arrays. A float32 array, a 0./1. float mask, a list for an array, a (1,) array
# for a scalar all lose the grader's points, however close the numbers.
PROMISED = {  # kind -> what it is, in Python's words (the same in every language)
    "int": "int",
    "float": "float",
    "float64 array": "np.ndarray (dtype float64)",
    "bool array": "np.ndarray (dtype bool)",
    "list of float64 arrays": "list[np.ndarray (dtype float64, 1-D)]",
}


def _is_kind(value, kind: str) -> bool:
    if kind == "int":
        return type(value) is int
    if kind == "float":
        return isinstance(value, float) or type(value) is int
    if kind == "float64 array":
        return isinstance(value, np.ndarray) and value.dtype == np.float64
    if kind == "bool array":
        return isinstance(value, np.ndarray) and value.dtype == np.bool_
    return (isinstance(value, list)
            and all(isinstance(w, np.ndarray) and w.dtype == np.float64 and w.ndim == 1 for w in value))


def _described(value) -> str:
    if isinstance(value, np.ndarray):
        return f"np.ndarray of dtype {value.dtype}, shape {value.shape}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {sorted({type(v).__name__ for v in value})}"
    return type(value).__name__


def _assert_promised(value, kind: str, function: str, shape=None):
    promised = PROMISED[kind]
    assert _is_kind(value, kind), say(f"{function} should return {promised}, got {_described(value)}",
                                      f"{function} должна возвращать {promised}, получено {_described(value)}")
    if shape is not None:
        assert value.shape == shape, say(f"{function} should return shape {shape}, got {value.shape}",
                                         f"{function} должна возвращать форму {shape}, получена {value.shape}")


def test_verify_detailed_returns_a_verifier_result():
    result = m9.verify_detailed(r"\boxed{3}", "3")
    assert isinstance(result, m9.VerifierResult), say(f"expected a VerifierResult, got {_described(result)}",
                                                      f"ожидался VerifierResult, получено {_described(result)}")
    fields = {"reward": type(result.reward).__name__, "accuracy": type(result.accuracy).__name__,
              "status": type(result.status).__name__, "extracted": type(result.extracted).__name__}
    assert fields == {"reward": "float", "accuracy": "int", "status": "str", "extracted": "str"}, say(
        f"VerifierResult fields should be reward: float, accuracy: int, status: str, extracted: str, got {fields}",
        f"поля VerifierResult: reward: float, accuracy: int, status: str, extracted: str, получено {fields}")


def test_verify_numeric_answer_returns_an_int():
    _assert_promised(m9.verify_numeric_answer("so 12", 12), "int", "verify_numeric_answer")
    _assert_promised(m9.verify_numeric_answer("so 11", 12), "int", "verify_numeric_answer")


def test_informative_group_probability_returns_a_float():
    _assert_promised(m9.informative_group_probability(0.5, 8), "float", "informative_group_probability")


def test_expected_draws_for_informative_groups_returns_a_float():
    _assert_promised(m9.expected_draws_for_informative_groups(10, 0.5, 8), "float",
                     "expected_draws_for_informative_groups")


@pytest.mark.edge("dtypes")
def test_group_relative_advantages_returns_float64_of_the_input_shape():
    rewards = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], dtype=np.float32)  # float32 in, float64 out
    _assert_promised(m9.group_relative_advantages(rewards), "float64 array", "group_relative_advantages", (2, 3))
    _assert_promised(m9.group_relative_advantages([1, 0, 0, 0], scale=False), "float64 array",
                     "group_relative_advantages", (4,))


def test_leave_one_out_baseline_returns_float64_of_the_input_shape():
    _assert_promised(m9.leave_one_out_baseline([1, 0, 0, 1]), "float64 array", "leave_one_out_baseline", (4,))


def test_clipped_surrogate_terms_returns_float64():
    _assert_promised(m9.clipped_surrogate_terms(SEED_RATIOS, np.array([1.0, 1.0, -1.0, -1.0])), "float64 array",
                     "clipped_surrogate_terms", (4,))


def test_clip_activity_returns_a_bool_array():
    _assert_promised(m9.clip_activity(np.array([[0.5, 1.5], [1.1, 0.9]]), np.array([[1.0], [-1.0]])), "bool array",
                     "clip_activity", (2, 2))


def test_gspo_sequence_ratios_returns_float64_per_response():
    _assert_promised(m9.gspo_sequence_ratios(np.zeros((3, 2)), np.zeros((3, 2)), np.ones((3, 2))), "float64 array",
                     "gspo_sequence_ratios", (3,))


def test_original_grpo_token_weights_returns_a_list_of_float64_arrays():
    _assert_promised(m9.original_grpo_token_weights(SEED_GROUP, SEED_LENGTHS), "list of float64 arrays",
                     "original_grpo_token_weights")


def test_dr_grpo_token_weights_returns_a_list_of_float64_arrays():
    _assert_promised(m9.dr_grpo_token_weights(SEED_GROUP, SEED_LENGTHS, 8), "list of float64 arrays",
                     "dr_grpo_token_weights")


def test_dapo_token_weights_returns_a_list_of_float64_arrays():
    _assert_promised(m9.dapo_token_weights(SEED_GROUP, SEED_LENGTHS), "list of float64 arrays", "dapo_token_weights")


def test_response_contributions_returns_a_float64_array():
    _assert_promised(m9.response_contributions([[0.25, 0.5], [-0.5]]), "float64 array", "response_contributions",
                     (2,))


def test_flatten_token_weights_returns_a_float64_array():
    _assert_promised(m9.flatten_token_weights([[0.25, 0.25], [-0.5]]), "float64 array", "flatten_token_weights", (3,))


def test_overlong_penalty_returns_a_float():
    for length in (10, 18, 25):  # each branch
        _assert_promised(m9.overlong_penalty(length, 20, 5), "float", "overlong_penalty")


def test_k3_kl_returns_float64_of_the_input_shape():
    _assert_promised(m9.k3_kl(np.zeros((2, 3)), -np.ones((2, 3))), "float64 array", "k3_kl", (2, 3))


def test_categorical_entropy_returns_a_float_for_one_distribution():
    # one distribution: a float, not a (1,) array; a batch (..., K): an array of shape (...)
    _assert_promised(m9.categorical_entropy([0.5, 0.5]), "float", "categorical_entropy")
    _assert_promised(m9.categorical_entropy(np.full((2, 3, 2), 0.5)), "float64 array", "categorical_entropy", (2, 3))


def test_pass_at_k_independent_returns_a_float():
    _assert_promised(m9.pass_at_k_independent(0.5, 4), "float", "pass_at_k_independent")


def test_pass_at_k_unbiased_returns_a_float():
    for n, c, k in ((10, 3, 4), (5, 3, 3)):  # the formula and the n - c < k shortcut
        _assert_promised(m9.pass_at_k_unbiased(n, c, k), "float", "pass_at_k_unbiased")


def test_synthetic_mode_training_returns_the_promised_dict():
    state = m9.synthetic_mode_training(steps=3)
    assert isinstance(state, dict), say(f"expected a dict, got {_described(state)}",
                                        f"ожидался dict, получено {_described(state)}")
    for key in ("probabilities", "logits"):
        _assert_promised(state[key], "float64 array", f"synthetic_mode_training(...)[{key!r}]", (4,))
    for key in ("expected_reward", "successful_mass", "entropy"):
        _assert_promised(state[key], "float", f"synthetic_mode_training(...)[{key!r}]")


# --- inputs are never modified in place (the grader fails a check whose call changed an input) ----
def _same(before, after) -> bool:
    if isinstance(before, np.ndarray):
        return (isinstance(after, np.ndarray) and before.dtype == after.dtype and before.shape == after.shape
                and np.array_equal(before, after, equal_nan=True))
    if isinstance(before, (list, tuple)):
        return type(before) is type(after) and len(before) == len(after) and all(map(_same, before, after))
    return before == after


def _assert_inputs_unchanged(function, *args, **kwargs):
    before = copy.deepcopy((args, kwargs))
    function(*args, **kwargs)
    named = [*(f"argument {i + 1}" for i in range(len(args))), *kwargs]
    changed = [name for name, b, a in zip(named, [*before[0], *before[1].values()], [*args, *kwargs.values()])
               if not _same(b, a)]
    assert not changed, say(f"{function.__name__} modified its input in place ({', '.join(changed)}): "
                            f"compute on a copy, e.g. np.array(values, dtype=np.float64), or write r = r - mean",
                            f"{function.__name__} изменила свой вход на месте ({', '.join(changed)}): "
                            f"считайте на копии, например np.array(values, dtype=np.float64), или пишите r = r - mean")


def test_leave_one_out_baseline_leaves_its_input_unchanged():
    _assert_inputs_unchanged(m9.leave_one_out_baseline, np.array([[1.0, 0.0, 2.0], [3.0, 3.0, 0.0]]))


def test_clipped_surrogate_terms_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.clipped_surrogate_terms, SEED_RATIOS.copy(), np.array([1.0, 1.0, -1.0, -1.0]))


def test_clip_activity_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.clip_activity, SEED_RATIOS.copy(), np.array([1.0, 1.0, -1.0, -1.0]))


def test_gspo_sequence_ratios_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.gspo_sequence_ratios, np.array([[-1.0, -2.0, -9.0], [-0.5, -0.5, -0.5]]),
                             np.array([[-1.5, -2.5, -1.0], [-0.5, -0.5, -0.5]]), np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]))


def test_original_grpo_token_weights_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.original_grpo_token_weights, SEED_GROUP.copy(), list(SEED_LENGTHS))


def test_dr_grpo_token_weights_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.dr_grpo_token_weights, SEED_GROUP.copy(), list(SEED_LENGTHS), 8)


def test_dapo_token_weights_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.dapo_token_weights, SEED_GROUP.copy(), list(SEED_LENGTHS))


def test_response_contributions_leaves_its_input_unchanged():
    _assert_inputs_unchanged(m9.response_contributions, [np.array([0.25, 0.25]), np.array([-0.5])])


def test_flatten_token_weights_leaves_its_input_unchanged():
    _assert_inputs_unchanged(m9.flatten_token_weights, [np.array([0.25, 0.25]), np.array([-0.5])])


def test_k3_kl_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.k3_kl, np.array([-1.0, -2.0, -1.0]), np.array([-1.0, -1.0, -2.0]))


def test_categorical_entropy_of_an_empty_batch():
    # no distributions at all, (0, K): an empty array of entropies (only an empty last axis is refused)
    entropies = m9.categorical_entropy(np.zeros((0, 3)))
    assert isinstance(entropies, np.ndarray) and entropies.shape == (0,) and entropies.dtype == np.float64, say(
        f"an empty batch of shape (0, 3) should give an empty float64 array, got {entropies!r}",
        f"пустой батч формы (0, 3) должен давать пустой массив float64, получено {entropies!r}")


def test_categorical_entropy_leaves_its_input_unchanged():
    _assert_inputs_unchanged(m9.categorical_entropy, np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]))


def test_synthetic_mode_training_leaves_its_inputs_unchanged():
    _assert_inputs_unchanged(m9.synthetic_mode_training, steps=3, rewards=np.array([1.0, 0.0, 0.5]),
                             initial_logits=np.array([0.0, 1.0, 2.0]))


# --- invalid arguments raise ValueError naming the argument ---------------------
def test_informative_group_probability_rejects_bad_arguments():
    with pytest.raises(ValueError, match="p"):
        m9.informative_group_probability(1.5, 4)
    with pytest.raises(ValueError, match="group_size"):
        m9.informative_group_probability(0.5, 0)


def test_group_relative_advantages_rejects_empty_group():
    with pytest.raises(ValueError, match="rewards"):
        m9.group_relative_advantages(np.zeros((2, 0)))


def test_original_grpo_token_weights_rejects_zero_length():
    with pytest.raises(ValueError, match="lengths"):
        m9.original_grpo_token_weights([1.0, 0.0], [3, 0])


def test_overlong_penalty_rejects_negative_length():
    with pytest.raises(ValueError, match="length"):
        m9.overlong_penalty(-1, 20, 5)


def test_pass_at_k_unbiased_rejects_more_correct_than_samples():
    with pytest.raises(ValueError, match=r"\bc\b"):
        m9.pass_at_k_unbiased(5, 6, 2)


def test_k3_kl_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="logprobs"):
        m9.k3_kl(np.zeros(2), np.zeros(3))


# --- every argument check the grader makes, made here too ------------------------
# One row per public `raises=` case of the grader's checks, in _refused.json (written by the kit's
# `rl4llm build`): a function that accepts these inputs without raising loses the grader's points for them.
REFUSED = json.loads(Path(__file__).with_name("_refused.json").read_text(encoding="utf-8"))


def _refused(function: str) -> list:
    """The rows of ``function``: (args, kwargs, exception) with the grader's label as the test id."""
    rows = REFUSED.get(f"{m9.__name__}.{function}", [])
    return [pytest.param(untagged(row["args"]), untagged(row["kwargs"]), getattr(builtins, row["raises"]), id=row["label"])
            for row in rows]


@pytest.mark.parametrize("args, kwargs, error", _refused("verify_detailed"))
def test_verify_detailed_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.verify_detailed(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("verify_numeric_answer"))
def test_verify_numeric_answer_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.verify_numeric_answer(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("informative_group_probability"))
def test_informative_group_probability_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.informative_group_probability(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("expected_draws_for_informative_groups"))
def test_expected_draws_for_informative_groups_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.expected_draws_for_informative_groups(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("group_relative_advantages"))
def test_group_relative_advantages_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.group_relative_advantages(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("leave_one_out_baseline"))
def test_leave_one_out_baseline_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.leave_one_out_baseline(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("clipped_surrogate_terms"))
def test_clipped_surrogate_terms_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.clipped_surrogate_terms(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("clip_activity"))
def test_clip_activity_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.clip_activity(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("gspo_sequence_ratios"))
def test_gspo_sequence_ratios_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.gspo_sequence_ratios(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("original_grpo_token_weights"))
def test_original_grpo_token_weights_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.original_grpo_token_weights(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("dr_grpo_token_weights"))
def test_dr_grpo_token_weights_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.dr_grpo_token_weights(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("dapo_token_weights"))
def test_dapo_token_weights_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.dapo_token_weights(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("response_contributions"))
def test_response_contributions_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.response_contributions(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("flatten_token_weights"))
def test_flatten_token_weights_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.flatten_token_weights(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("overlong_penalty"))
def test_overlong_penalty_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.overlong_penalty(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("k3_kl"))
def test_k3_kl_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.k3_kl(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("categorical_entropy"))
def test_categorical_entropy_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.categorical_entropy(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("pass_at_k_independent"))
def test_pass_at_k_independent_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.pass_at_k_independent(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("pass_at_k_unbiased"))
def test_pass_at_k_unbiased_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.pass_at_k_unbiased(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs, error", _refused("synthetic_mode_training"))
def test_synthetic_mode_training_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.synthetic_mode_training(*args, **kwargs)


# --- edge rows ------------------------------------------------------------------------------
# @pytest.mark.edge("<class>") marks a row of one edge class: extremes (near overflow/underflow),
# zeros_and_empties, ties_and_near_ties, boundaries, large_padding, dtypes, number_formats.
# Each input below is also one of the grader's cases. `pytest -m edge` runs them alone.
TOLERANCE_ROWS = [  # text, reference, tolerances, status
    ("1000.0005", 1000, {}, "correct"),                     # |diff| 5e-4 <= rel_tol * |ref| = 1e-3
    ("0.000002", 0, {}, "wrong"),                           # |diff| 2e-6 > abs_tol 1e-6
    ("12", 12.5, {"rel_tol": 0.0, "abs_tol": 0.5}, "correct"),  # ON the tolerance: <=, not <
    ("0.1 + 0.2 = 0.30000000000000004", "0.3", {}, "correct"),
    ("we get -12", "12", {}, "wrong"),                      # -12 is not 12
    ("we get 0.1", 0.1, {}, "correct"),                     # a float reference
    ("x = 1e309", "1e309", {}, "correct"),                  # beyond float64, within 10^1000: read exactly
]


@pytest.mark.edge("boundaries")
@pytest.mark.parametrize("text, reference, tolerances, status", TOLERANCE_ROWS)
def test_verify_numeric_answer_tolerance_rows(text, reference, tolerances, status):
    assert m9.verify_numeric_answer(text, reference, **tolerances) == (status == "correct")


@pytest.mark.edge("boundaries")
@pytest.mark.parametrize("text, reference, tolerances, status", TOLERANCE_ROWS)
def test_verify_detailed_tolerance_rows(text, reference, tolerances, status):
    result = m9.verify_detailed(text, reference, **tolerances)
    assert result.status == status, say(f"{text!r} vs {reference!r} {tolerances}: expected {status!r}, got {result.status!r}",
                                        f"{text!r} против {reference!r} {tolerances}: ожидалось {status!r}, получено {result.status!r}")


@pytest.mark.parametrize("new, old, mask, expected", [
    pytest.param(np.array([[-0.2, -1.0, -np.inf], [-0.4, -np.inf, -np.inf]]),
                 np.array([[-0.5, -0.7, -np.inf], [-0.1, -np.inf, -np.inf]]),
                 np.array([[True, True, False], [True, False, False]]), [1.0, math.exp(-0.3)],
                 marks=pytest.mark.edge("large_padding"), id="-inf padding under a bool mask"),
    pytest.param(np.array([[-1.0, -1.0], [-2.0, -1.0]]), np.array([[-1.5, -1.5], [-1.0, -3.0]]),
                 np.array([[0.0, 0.0], [1.0, 1.0]]), [1.0, math.exp(0.5)],
                 marks=pytest.mark.edge("zeros_and_empties"), id="no active token: ratio 1"),
])
def test_gspo_sequence_ratios_edge_rows(new, old, mask, expected):
    # by hand: exp(mean of new - old over the ACTIVE tokens); padding is never read; no active token gives 1
    observed = m9.gspo_sequence_ratios(new, old, mask)
    assert np.allclose(observed, expected, rtol=REL), say(f"expected {expected}, got {observed}",
                                                          f"ожидалось {expected}, получено {observed}")


ALL_EQUAL, ALL_EQUAL_LENGTHS = np.array([0.5, 0.5, 0.5]), [2, 4, 6]


@pytest.mark.edge("ties_and_near_ties")
def test_original_grpo_token_weights_all_equal_group_is_zero():
    weights = m9.original_grpo_token_weights(ALL_EQUAL, ALL_EQUAL_LENGTHS)
    assert [w.tolist() for w in weights] == [[0.0] * n for n in ALL_EQUAL_LENGTHS]


@pytest.mark.edge("ties_and_near_ties")
def test_dapo_token_weights_all_equal_group_is_zero():
    weights = m9.dapo_token_weights(ALL_EQUAL, ALL_EQUAL_LENGTHS)
    assert [w.tolist() for w in weights] == [[0.0] * n for n in ALL_EQUAL_LENGTHS]


@pytest.mark.parametrize("rewards, lengths, fixed_length, expected", [
    pytest.param(ALL_EQUAL, ALL_EQUAL_LENGTHS, 6, [[0.0] * n for n in ALL_EQUAL_LENGTHS],
                 marks=pytest.mark.edge("ties_and_near_ties"), id="an all-equal group: zeros"),
    pytest.param(np.array([1.0, 0.0, 0.0, 0.0]), [3, 3, 3, 3], 3, [[0.0625] * 3] + [[-1 / 48] * 3] * 3,
                 marks=pytest.mark.edge("boundaries"), id="budget = length: (r - mean) / (G L)"),
    pytest.param(np.array([1.0, 0.0]), [1, 1], 1, [[0.25], [-0.25]],
                 marks=pytest.mark.edge("boundaries"), id="fixed_length = 1"),
])
def test_dr_grpo_token_weights_edge_rows(rewards, lengths, fixed_length, expected):
    weights = m9.dr_grpo_token_weights(rewards, lengths, fixed_length)
    assert len(weights) == len(expected) and all(np.allclose(w, e, rtol=REL, atol=1e-15) for w, e in zip(weights, expected)), say(
        f"expected {expected}, got {[w.tolist() for w in weights]}", f"ожидалось {expected}, получено {[w.tolist() for w in weights]}")


@pytest.mark.parametrize("weights, contributions, flat", [
    pytest.param([np.array([0.3, 0.3]), np.zeros(0), np.array([-0.1])], [0.6, 0.0, -0.1], [0.3, 0.3, -0.1],
                 marks=pytest.mark.edge("zeros_and_empties"), id="an empty response"),
    pytest.param([[0.2, 0.2, 0.2, 0.2], [-0.4, -0.4]], [0.8, -0.8], [0.2, 0.2, 0.2, 0.2, -0.4, -0.4],
                 marks=pytest.mark.edge("dtypes"), id="lists instead of arrays"),
])
def test_response_contributions_and_flatten_token_weights_edge_rows(weights, contributions, flat):
    np.testing.assert_allclose(m9.response_contributions(weights), contributions, rtol=REL, atol=1e-15)
    np.testing.assert_allclose(m9.flatten_token_weights(weights), flat, rtol=REL)


@pytest.mark.edge("zeros_and_empties")
def test_flatten_token_weights_of_no_responses_is_empty():
    flat = m9.flatten_token_weights([])
    _assert_promised(flat, "float64 array", "flatten_token_weights", (0,))


@pytest.mark.edge("boundaries")
@pytest.mark.parametrize("length, max_length, cache_length, expected", [
    (0, 1, 1, 0.0), (1, 1, 1, -1.0),        # the smallest sizes: L_max = L_cache = 1
    (4, 10, 10, -0.4),                      # L_cache = L_max: the soft zone starts at 0
    (99, 100, 1, 0.0), (100, 100, 1, -1.0), # L_cache = 1: a hard cut at L_max
])
def test_overlong_penalty_edges_of_the_soft_zone(length, max_length, cache_length, expected):
    observed = m9.overlong_penalty(length, max_length, cache_length)
    assert observed == pytest.approx(expected, rel=REL), say(
        f"overlong_penalty({length}, {max_length}, {cache_length}): expected {expected}, got {observed!r}",
        f"overlong_penalty({length}, {max_length}, {cache_length}): ожидалось {expected}, получено {observed!r}")


@pytest.mark.edge("boundaries")
def test_categorical_entropy_one_mode_and_a_sum_off_by_rounding():
    assert m9.categorical_entropy([1.0]) == 0.0  # K = 1
    # 0.7 + 0.2 + 0.1 is 0.9999999999999999 in float64: within the 1e-6 the spec allows, so no refusal
    expected = -(0.7 * math.log(0.7) + 0.2 * math.log(0.2) + 0.1 * math.log(0.1))
    assert m9.categorical_entropy([0.7, 0.2, 0.1]) == pytest.approx(expected, rel=REL)


@pytest.mark.edge("boundaries")
@pytest.mark.parametrize("p, k, expected", [(0.1, 1, 0.1), (0.0, 5, 0.0), (1.0, 5, 1.0)])
def test_pass_at_k_independent_edges(p, k, expected):
    observed = m9.pass_at_k_independent(p, k)
    assert observed == pytest.approx(expected, rel=REL, abs=1e-15), say(
        f"p = {p}, k = {k}: expected {expected}, got {observed!r}", f"p = {p}, k = {k}: ожидалось {expected}, получено {observed!r}")


@pytest.mark.edge("boundaries")
@pytest.mark.parametrize("n, c, k, expected", [
    (1, 1, 1, 1.0), (1, 0, 1, 0.0),  # n = 1
    (8, 8, 4, 1.0),                   # c = n: every sample right
    (4, 1, 4, 1.0),                   # k = n: the one right sample is always drawn
    (5, 3, 2, 0.9),                   # n - c = k: 1 - C(2, 2) / C(5, 2) = 1 - 1/10
])
def test_pass_at_k_unbiased_edges(n, c, k, expected):
    observed = m9.pass_at_k_unbiased(n, c, k)
    assert observed == pytest.approx(expected, rel=REL), say(
        f"n = {n}, c = {c}, k = {k}: expected {expected}, got {observed!r}",
        f"n = {n}, c = {c}, k = {k}: ожидалось {expected}, получено {observed!r}")


@pytest.mark.edge("extremes")
def test_synthetic_mode_training_huge_logits():
    # z = (1000, 0, 0): pi = (1, e^-1000, e^-1000) = (1, 0, 0) once shifted by the max; the gradient is then 0
    state = m9.synthetic_mode_training(steps=5, rewards=[1.0, 0.0, 0.0], initial_logits=[1000.0, 0.0, 0.0])
    assert np.allclose(state["probabilities"], [1.0, 0.0, 0.0], rtol=0.0, atol=1e-12), say(
        f"logits (1000, 0, 0): expected pi = (1, 0, 0), got {state['probabilities']}; subtract the max before exp",
        f"логиты (1000, 0, 0): ожидалось pi = (1, 0, 0), получено {state['probabilities']}; вычтите максимум перед exp")
    np.testing.assert_allclose(state["logits"], [1000.0, 0.0, 0.0], rtol=1e-12)
    assert state["successful_mass"] == pytest.approx(1.0) and state["expected_reward"] == pytest.approx(1.0)


@pytest.mark.parametrize("beta, rewards, logits", [
    pytest.param(0.5, None, None, id="the module defaults, beta 0.5"),
    pytest.param(0.3, [0.2, 0.2], [0.0, 3.0], marks=pytest.mark.edge("ties_and_near_ties"),
                 id="equal rewards: only the bonus moves"),
])
def test_synthetic_mode_training_one_step_by_hand(beta, rewards, logits):
    kwargs = {} if rewards is None else {"rewards": rewards, "initial_logits": logits}
    state = m9.synthetic_mode_training(beta_entropy=beta, learning_rate=0.18, steps=1, **kwargs)
    r = np.array(m9.DEFAULT_MODE_REWARDS if rewards is None else rewards)
    z = np.array(m9.DEFAULT_MODE_LOGITS if logits is None else logits)
    pi = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    entropy = -(pi * np.log(pi)).sum()
    # one step of z <- z + lr (pi (r - pi.r) - beta pi (log pi + H)), written out
    expected = z + 0.18 * (pi * (r - pi @ r) - beta * pi * (np.log(pi) + entropy))
    assert np.allclose(state["logits"], expected, rtol=1e-12, atol=1e-15), say(
        f"one step, beta {beta}: expected logits {expected}, got {state['logits']}",
        f"один шаг, beta {beta}: ожидались логиты {expected}, получено {state['logits']}")


# --- structure rows: shapes and Python types ---------------------------------------------------------
# @pytest.mark.edge("shapes"): a batch of one, a square batch (N = T, where a reduction over the wrong axis
# still has the right shape), an empty batch, a group of one. @pytest.mark.edge("python_types") /
# ("dtypes"): int lists, NumPy scalars, ndarrays (never changed in place), float32 arrays. Each row compares
# the call with the same values written the plain way (float64 arrays, Python floats), or with a value by hand.
def _same_answer(got, want, what: str):
    if isinstance(want, dict):
        for key in want:
            _same_answer(got[key], want[key], f"{what}[{key!r}]")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), say(f"{what}: expected a list of {len(want)}, got {_described(got)}",
                                                                    f"{what}: ожидался список из {len(want)}, получено {_described(got)}")
        for index, (g, w) in enumerate(zip(got, want)):
            _same_answer(g, w, f"{what}[{index}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape, say(
            f"{what}: expected a {want.dtype} array of shape {want.shape}, got {_described(got)}",
            f"{what}: ожидался массив {want.dtype} формы {want.shape}, получено {_described(got)}")
        assert np.allclose(got, want, rtol=1e-6, atol=1e-12), say(f"{what}: expected {want}, got {got}",
                                                                 f"{what}: ожидалось {want}, получено {got}")
    else:
        assert type(got) is float and got == pytest.approx(want, rel=1e-6, abs=1e-12), say(
            f"{what}: expected the Python float {want!r}, got {got!r} ({type(got).__name__})",
            f"{what}: ожидалось число float {want!r}, получено {got!r} ({type(got).__name__})")


def _structure_row(function, args, want, kwargs=None):
    """function(*args, **kwargs) returns ``want`` (its types too) and leaves every input unchanged."""
    kwargs = kwargs or {}
    before = copy.deepcopy((args, kwargs))
    got = function(*args, **kwargs)
    for old, new in zip(jsonable(before), jsonable((args, kwargs))):
        assert old == new, say(f"{function.__name__} changed its input in place", f"{function.__name__} изменила свой вход на месте")
    _same_answer(got, want, function.__name__)


def jsonable(value):
    """A comparable snapshot of inputs (arrays by dtype and values)."""
    if isinstance(value, np.ndarray):
        return [(str(value.dtype), value.shape, value.tolist())]
    if isinstance(value, dict):
        return [(key, jsonable(item)) for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return [repr(value)]


@pytest.mark.edge("python_types")
def test_informative_group_probability_python_types():
    _structure_row(m9.informative_group_probability, (np.float32(0.25), 2), 0.375)  # 1 - 1/16 - 9/16
    _structure_row(m9.informative_group_probability, (1, 3), 0.0)


@pytest.mark.edge("python_types")
def test_expected_draws_for_informative_groups_python_types():
    _structure_row(m9.expected_draws_for_informative_groups, (np.int64(3), np.float32(0.25), 4), 3 / 0.6796875)


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
def test_group_relative_advantages_structures():
    row = np.array([0.2, 0.9, 0.4, 0.0])
    _structure_row(m9.group_relative_advantages, (row[None, :],), m9.group_relative_advantages(row)[None, :])
    _structure_row(m9.group_relative_advantages, ([[1, 0, 0], [1, 1, 0]],),
                   m9.group_relative_advantages(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]), eps=0.25),
                   {"eps": np.float32(0.25)})


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.edge("dtypes")
def test_leave_one_out_baseline_structures():
    _structure_row(m9.leave_one_out_baseline, (np.array([[1.0, 2.0, 6.0]]),), np.array([[4.0, 3.5, 1.5]]))
    _structure_row(m9.leave_one_out_baseline, ([[1, 2, 3], [4, 5, 9]],), np.array([[2.5, 2.0, 1.5], [7.0, 6.5, 4.5]]))
    _structure_row(m9.leave_one_out_baseline, (np.array([1.5, 2.0, 0.25, 4.0], dtype=np.float32),),
                   np.array([6.25 / 3, 5.75 / 3, 2.5, 1.25]))


SQUARE_RATIOS = np.array([[0.5, 1.1, 1.6], [0.7, 1.3, 0.9], [1.5, 0.95, 0.6]])
SQUARE_ADVANTAGES = np.array([1.0, -1.0, 2.0])
FLOAT32_RATIOS = np.array([0.5, 1.1, 1.3, 2.0, 0.7], dtype=np.float32)


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.edge("dtypes")
@pytest.mark.parametrize("function", ["clipped_surrogate_terms", "clip_activity"])
def test_clipped_surrogate_terms_and_clip_activity_structures(function):
    f = getattr(m9, function)
    per_row = np.stack([f(SQUARE_RATIOS[i], SQUARE_ADVANTAGES[i], 0.2, 0.2) for i in range(3)])
    _structure_row(f, (SQUARE_RATIOS, SQUARE_ADVANTAGES[:, None], 0.2, 0.2), per_row)  # one advantage per ROW
    per_column = np.stack([f(SQUARE_RATIOS[:, j], SQUARE_ADVANTAGES[j], 0.2, 0.2) for j in range(3)], axis=1)
    _structure_row(f, (SQUARE_RATIOS, SQUARE_ADVANTAGES, 0.2, 0.2), per_column)  # (T,): NumPy broadcasting, per COLUMN
    _structure_row(f, ([1, 2, 0, 1], [1, -1, 2, -2]), f(np.array([1.0, 2.0, 0.0, 1.0]), np.array([1.0, -1.0, 2.0, -2.0])))
    _structure_row(f, (FLOAT32_RATIOS, np.array([1.0, 1.0, 1.0, -1.0, -1.0])),
                   f(FLOAT32_RATIOS.astype(np.float64), np.array([1.0, 1.0, 1.0, -1.0, -1.0])))


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
def test_gspo_sequence_ratios_structures():
    _structure_row(m9.gspo_sequence_ratios, (np.array([[-1.0, -0.5, -2.0]]), np.array([[-1.5, -0.5, -1.0]]),
                                            np.array([[1.0, 1.0, 0.0]])), np.array([math.exp(0.25)]))
    _structure_row(m9.gspo_sequence_ratios, ([[-1.0, -2.0], [-0.5, -0.25]], [[-1.5, -1.0], [-0.5, -0.75]], [[1, 1], [1, 0]]),
                   np.array([math.exp(-0.25), 1.0]))


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.parametrize("function, extra", [("original_grpo_token_weights", ()), ("dapo_token_weights", ()),
                                             ("dr_grpo_token_weights", (8,))])
def test_original_grpo_token_weights_dapo_token_weights_dr_grpo_token_weights_structures(function, extra):
    f = getattr(m9, function)
    _structure_row(f, (np.array([1.0]), [3], *extra), [np.zeros(3)])  # a group of one: nothing to compare with
    _structure_row(f, ([1, 0, 1], np.array([2, 5, 8]), *extra), f(np.array([1.0, 0.0, 1.0]), [2, 5, 8], *extra))


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.edge("dtypes")
def test_response_contributions_and_flatten_token_weights_structures():
    _structure_row(m9.response_contributions, ([np.array([0.25, 0.25, 0.25])],), np.array([0.75]))
    _structure_row(m9.flatten_token_weights, ([np.array([0.25, 0.25, 0.25])],), np.array([0.25, 0.25, 0.25]))
    _structure_row(m9.response_contributions, ([np.array([1, 2]), np.array([-3])],), np.array([3.0, -3.0]))
    _structure_row(m9.flatten_token_weights, ([np.array([1, 2]), np.array([-3])],), np.array([1.0, 2.0, -3.0]))


@pytest.mark.edge("python_types")
def test_overlong_penalty_python_types():
    _structure_row(m9.overlong_penalty, (np.int64(18), 20, 5), -0.6)  # (15 - 18) / 5


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.edge("dtypes")
def test_k3_kl_structures():
    logp, ref = np.array([-0.5, -3.0, -1.0]), np.array([-1.5, -1.0, -1.0])
    _structure_row(m9.k3_kl, (logp[None, :], ref[None, :]), m9.k3_kl(logp, ref)[None, :])
    _structure_row(m9.k3_kl, ([-1, -2, 0], [-2, -1, 0]), m9.k3_kl(np.array([-1.0, -2.0, 0.0]), np.array([-2.0, -1.0, 0.0])))
    low, high = np.array([-0.5, -1.25, -2.0], dtype=np.float32), np.array([-1.0, -1.0, -0.25], dtype=np.float32)
    _structure_row(m9.k3_kl, (low, high), m9.k3_kl(low.astype(np.float64), high.astype(np.float64)))


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.edge("dtypes")
def test_categorical_entropy_structures():
    h = -(0.5 * math.log(0.5) + 0.5 * math.log(0.25))
    _structure_row(m9.categorical_entropy, (np.array([[0.5, 0.25, 0.25]]),), np.array([h]))
    _structure_row(m9.categorical_entropy, ([[1, 0], [0, 1]],), np.array([0.0, 0.0]))
    _structure_row(m9.categorical_entropy, (np.array([0.5, 0.25, 0.25], dtype=np.float32),), h)


@pytest.mark.edge("python_types")
def test_pass_at_k_independent_python_types():
    _structure_row(m9.pass_at_k_independent, (np.float32(0.25), 2), 0.4375)


@pytest.mark.edge("python_types")
def test_pass_at_k_unbiased_python_types():
    _structure_row(m9.pass_at_k_unbiased, (10, np.int64(3), 4), 1 - 35 / 210)


@pytest.mark.edge("shapes")
@pytest.mark.edge("python_types")
@pytest.mark.edge("dtypes")
def test_synthetic_mode_training_structures():
    one = {"probabilities": np.array([1.0]), "expected_reward": 1.0, "successful_mass": 1.0, "entropy": 0.0,
           "logits": np.array([0.5])}
    _structure_row(m9.synthetic_mode_training, (), one, {"steps": 10, "rewards": [1.0], "initial_logits": [0.5]})
    plain = m9.synthetic_mode_training(beta_entropy=0.2, steps=15, rewards=[1.0, 0.6, 0.0], initial_logits=[0.5, 1.0, 0.0])
    _structure_row(m9.synthetic_mode_training, (), plain, {"beta_entropy": 0.2, "steps": 15, "rewards": np.array([1.0, 0.6, 0.0]),
                                                          "initial_logits": np.array([0.5, 1.0, 0.0])})
    plain = m9.synthetic_mode_training(steps=8, rewards=[1.0, 0.5, 0.0], initial_logits=[0.25, 0.5, -0.5])
    _structure_row(m9.synthetic_mode_training, (), plain, {"steps": 8, "rewards": np.array([1.0, 0.5, 0.0], dtype=np.float32),
                                                          "initial_logits": np.array([0.25, 0.5, -0.5], dtype=np.float32)})
