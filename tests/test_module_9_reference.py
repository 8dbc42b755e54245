"""The kit's own tests of solutions/module_09/module_9_reference.py.

Formula rows for every exercise, invalid arguments (ValueError naming the
argument), inputs left unchanged, return types, verifier robustness (any str,
1 MB adversarial responses, the adversarial cases the docstrings promise),
and the public learner tests run against the solutions and the untouched starter.
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from devtools.benchmark.cli import megabyte_responses
from graders.loader import load_module
from graders.paths import SOLUTIONS_DIR


SOLUTION_PATH = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
m9 = load_module(SOLUTION_PATH, "_kit_tests_module_9_reference")
PROPERTY = settings(max_examples=100, deadline=None, database=None)
REL = 1e-9
STATUSES = {"correct", "wrong", "no_answer", "parse_error", "zero_division", "non_finite"}


def test_reference_file_imports_only_numpy_and_stdlib():
    tree = ast.parse(SOLUTION_PATH.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "math", "numbers", "re", "dataclasses", "fractions", "numpy"}, imported


# --- verifier: the adversarial cases -------------------------------------------
ADVERSARIAL = [  # (text, reference, status, extracted)
    (r"\boxed{1} \boxed{2} \boxed{3}", 3, "correct", "3"),           # several boxes: the last wins
    (r"\\boxed{3}", 3, "correct", "3"),                               # two backslashes (the seed's raw strings)
    (r"\\\boxed{3}", 3, "correct", "3"),
    ("boxed{3} is not a box, 4 is the answer", 4, "correct", "4"),   # no backslash: not a box
    (r"\boxed{5} so the answer is 6", 5, "correct", "5"),            # a box beats any bare number
    ("The answer 42 is wrong; the correct one is 41", 42, "wrong", "41"),  # gold number in a wrong derivation
    ("1/0", 0, "zero_division", "1/0"),
    (r"\boxed{0/0}", 0, "zero_division", "0/0"),
    ("3/0.0", 0, "zero_division", "3/0.0"),
    ("1e999999", 0, "non_finite", "1e999999"),                       # overflow, never computed
    ("-1e999999", 0, "non_finite", "-1e999999"),
    ("1e-999999", 0, "non_finite", "1e-999999"),                     # beyond 10^-1000: out of range too
    ("1e99999999999999999999", 0, "non_finite", "1e99999999999999999999"),
    ("0e999999999999", 0, "correct", "0e999999999999"),              # zero is zero at any exponent
    ("1e1000", 10 ** 1000, "correct", "1e1000"),                      # the largest magnitude in range
    ("1e1001", 0, "non_finite", "1e1001"),
    ("1" + "0" * 1001, 0, "non_finite", "1" + "0" * 1001),
    ("1." + "1" * 1200, 1, "parse_error", "1." + "1" * 1200),       # more than 1000 significant digits
    (r"\boxed{inf}", 0, "non_finite", "inf"),
    (r"\boxed{-\infty}", 0, "non_finite", r"-\infty"),
    (r"\boxed{NaN}", 0, "non_finite", "NaN"),
    ("\x00\x1b[31m 7 \x07", 7, "correct", "7"),                      # control characters
    ("1,234,567", 1234567, "correct", "1,234,567"),                  # thousands separators
    ("-1,234.5", -1234.5, "correct", "-1,234.5"),
    ("1,2", 2, "correct", "2"),                                       # not a thousands number
    ("1,2345", 2345, "correct", "2345"),
    ("+5", 5, "correct", "+5"),
    ("x-5", 5, "correct", "5"),                                       # a minus after a letter is an operator
    ("5-3=2", 2, "correct", "2"),
    ("(3)-2", 2, "correct", "2"),
    ("y = -2", -2, "correct", "-2"),
    (".5", 0.5, "correct", ".5"),
    ("It is 3.", 3, "correct", "3"),
    ("1.5E+3", 1500, "correct", "1.5E+3"),
    ("-6/8", "-0.75", "correct", "-6/8"),
    (r"$\boxed{\$12}$", 12, "correct", r"\$12"),                     # $ and \$ are stripped in a box
    (r"\boxed{ 1,000 }", 1000, "correct", " 1,000 "),
    (r"\boxed{\boxed{7}}", 7, "correct", "7"),                       # braces nest
    (r"\boxed{3", 3, "parse_error", None),                           # unbalanced: the last box never closes
    (r"\boxed{2} and then \boxed{3", 2, "parse_error", None),        # ... even after a good box
    (r"\boxed{}", 0, "parse_error", ""),
    (r"\boxed{x=3}", 3, "parse_error", "x=3"),
    (r"\boxed{\frac{3}{7}}", "3/7", "parse_error", r"\frac{3}{7}"),  # strict: plain numbers only
    (r"\boxed{1,2}", 2, "parse_error", "1,2"),
    ("}}}{{{ 4", 4, "correct", "4"),
    ("", 0, "no_answer", None),
    ("no digits here, nan", 0, "no_answer", None),
    ("\u0663", 3, "no_answer", None),                                  # only ASCII digits count
    ("3/7", "0.428571", "correct", "3/7"),                            # reference as a decimal string
    ("0.428571", "3/7", "correct", "0.428571"),                       # reference as a fraction string
    ("0.1", 0.1, "correct", "0.1"),
    ("0.1000011", 0.1, "wrong", "0.1000011"),                         # |diff| 1.1e-6 > max(1e-6, 1e-7)
]


@pytest.mark.parametrize("text, reference, status, extracted", ADVERSARIAL)
def test_verify_detailed_adversarial(text, reference, status, extracted):
    result = m9.verify_detailed(text, reference)
    assert (result.status, result.extracted) == (status, extracted)
    assert result.accuracy == int(status == "correct") and type(result.accuracy) is int
    assert result.reward == float(result.accuracy) and type(result.reward) is float
    assert m9.verify_numeric_answer(text, reference) == result.accuracy


def test_verifier_result_is_frozen_and_versioned():
    result = m9.verify_detailed("3", 3)
    with pytest.raises(AttributeError):
        result.status = "wrong"
    assert isinstance(m9.VERIFIER_VERSION, str) and m9.VERIFIER_VERSION


@pytest.mark.parametrize("call, argument", [
    (lambda: m9.verify_detailed("3", "abc"), "reference"),
    (lambda: m9.verify_detailed("3", r"\boxed{1/0}"), "reference"),
    (lambda: m9.verify_detailed("3", float("nan")), "reference"),
    (lambda: m9.verify_detailed("3", True), "reference"),
    (lambda: m9.verify_detailed(None, 3), "text"),
    (lambda: m9.verify_detailed(b"3", 3), "text"),
    (lambda: m9.verify_detailed("3", 3, rel_tol=-1.0), "rel_tol"),
    (lambda: m9.verify_numeric_answer("3", 3, abs_tol=float("inf")), "abs_tol"),
])
def test_verify_detailed_rejects_bad_reference_and_arguments(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


# --- verifier: robustness ----------------------------------------------------------
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None), max_size=300)
verifier_pieces = st.lists(st.sampled_from([
    "\\boxed{", "\\\\boxed{", "boxed{", "{", "}", "\\", "$", " ", "\x00", "\n", "1", "0", "7", "234", ",", ".",
    "e", "E", "-", "+", "/", "nan", "inf", "\\infty", "e999999", "9" * 40, "frac",
]), max_size=60).map("".join)


def _check_verdict(text: str) -> None:
    result = m9.verify_detailed(text, "7")
    assert result.status in STATUSES
    assert result.accuracy in (0, 1) and result.accuracy == int(result.status == "correct")
    assert m9.verify_numeric_answer(text, 7) in (0, 1)


@PROPERTY
@given(any_text)
def test_verify_detailed_never_raises_on_any_text(text):
    _check_verdict(text)


@settings(max_examples=300, deadline=None, database=None)
@given(verifier_pieces)
def test_verify_detailed_never_raises_on_verifier_shaped_text(text):
    _check_verdict(text)


@PROPERTY
@given(st.integers(-10 ** 12, 10 ** 12), st.integers(-10 ** 12, 10 ** 12), any_text)
def test_verify_numeric_answer_last_box_wins(first, last, noise):
    text = f"\\boxed{{{first}}} {noise.replace('boxed', '')} \\boxed{{{last}}}"
    assert m9.verify_numeric_answer(text, last) == 1


@PROPERTY
@given(st.integers(-10 ** 15, 10 ** 15))
def test_verify_numeric_answer_reads_thousands_separators(value):
    assert m9.verify_numeric_answer(f"so the total is {value:,} apples", value) == 1


@PROPERTY
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_verify_numeric_answer_reads_python_floats(value):
    assert m9.verify_numeric_answer(f"\\boxed{{{value!r}}}", value, rel_tol=0.0, abs_tol=0.0) == 1


@PROPERTY
@given(st.fractions(max_denominator=10 ** 6))
def test_verify_numeric_answer_reads_fractions_exactly(value):
    reference = Fraction(value)
    text = f"answer: {reference.numerator}/{reference.denominator}"
    assert m9.verify_numeric_answer(text, f"{reference.numerator}/{reference.denominator}", rel_tol=0.0,
                                    abs_tol=0.0) == 1


HUGE_RESPONSES = megabyte_responses()  # how long each takes is the benchmark's: verify-megabyte


@pytest.mark.parametrize("name", sorted(HUGE_RESPONSES))
@pytest.mark.slow  # a megabyte response each (0.4-0.6 s); the verifier's rules are tested fast on short texts
def test_verify_detailed_grades_a_megabyte_response(name):
    assert m9.verify_detailed(HUGE_RESPONSES[name], 7).status in STATUSES


@pytest.mark.slow  # megabyte responses (about 1 s); the verdicts are tested fast on short texts
def test_verify_detailed_megabyte_verdicts():
    verdicts = {name: m9.verify_detailed(HUGE_RESPONSES[name], 7).status for name in
                ("digits", "tiny_decimal", "long_decimal", "open_boxes", "deep_box", "huge_exponent",
                 "control_characters", "signs")}
    assert verdicts == {"digits": "non_finite", "tiny_decimal": "non_finite", "long_decimal": "parse_error",
                        "open_boxes": "parse_error", "deep_box": "parse_error", "huge_exponent": "non_finite",
                        "control_characters": "correct", "signs": "no_answer"}


# --- informative groups ------------------------------------------------------------
@pytest.mark.parametrize("p, group_size, expected", [
    (0.5, 2, 0.5), (0.5, 8, 1 - 2 / 256), (0.1, 2, 0.18), (0.25, 3, 1 - 1 / 64 - 27 / 64),
    (0.0, 4, 0.0), (1.0, 4, 0.0), (0.3, 1, 0.0), (1e-12, 2, 2e-12 - 2e-24),
])
def test_informative_group_probability_rows(p, group_size, expected):
    value = m9.informative_group_probability(p, group_size)
    assert type(value) is float and value == pytest.approx(expected, rel=1e-9, abs=1e-300)


@PROPERTY
@given(st.floats(0.01, 0.99), st.integers(1, 64))
def test_informative_group_probability_equals_the_plain_formula(p, group_size):
    plain = 1 - p ** group_size - (1 - p) ** group_size
    assert m9.informative_group_probability(p, group_size) == pytest.approx(plain, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("args, expected", [
    ((100, 0.5, 2), 200.0), ((0, 0.5, 8), 0.0), ((5, 0.0, 8), math.inf), ((5, 1.0, 8), math.inf),
    ((3, 0.3, 1), math.inf), ((1, 0.5, 8), 1 / (1 - 2 / 256)),
])
def test_expected_draws_for_informative_groups_rows(args, expected):
    value = m9.expected_draws_for_informative_groups(*args)
    assert type(value) is float and value == pytest.approx(expected, rel=REL)


# --- advantages ----------------------------------------------------------------------
def _loop_advantages(rewards: np.ndarray, scale: bool, eps: float, ddof: int) -> np.ndarray:
    out = np.zeros_like(rewards, dtype=float)
    for index in np.ndindex(rewards.shape[:-1]):
        group = np.asarray(rewards[index], dtype=float)
        if group.max() == group.min():
            continue
        centred = group - group.mean()
        out[index] = centred / (group.std(ddof=ddof) + eps) if scale else centred
    return out


@PROPERTY
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=2, max_side=9),
                  elements=st.floats(-5, 5, allow_subnormal=False)),
       st.booleans(), st.sampled_from([0.0, 1e-6, 0.1]), st.sampled_from([0, 1]))
def test_group_relative_advantages_equals_a_loop(rewards, scale, eps, ddof):
    np.testing.assert_allclose(m9.group_relative_advantages(rewards, scale, eps=eps, ddof=ddof),
                               _loop_advantages(rewards, scale, eps, ddof), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("rewards, kwargs, expected", [
    ([1.0, 0.0], {}, [1.0 / (0.5 + 1e-6) * 0.5, -1.0 / (0.5 + 1e-6) * 0.5]),
    ([1.0, 0.0], {"eps": 0.0}, [1.0, -1.0]),
    ([1.0, 0.0, 0.0, 0.0], {"eps": 0.0}, [math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3)]),
    ([1.0, 0.0, 0.0, 0.0], {"eps": 0.0, "ddof": 1}, [1.5, -0.5, -0.5, -0.5]),
    ([[2.0, 2.0], [3.0, 1.0]], {"scale": False}, [[0.0, 0.0], [1.0, -1.0]]),
    ([[0.1, 0.1, 0.1]], {"eps": 0.0}, [[0.0, 0.0, 0.0]]),
    ([5.0], {}, [0.0]),
])
def test_group_relative_advantages_rows(rewards, kwargs, expected):
    np.testing.assert_allclose(m9.group_relative_advantages(rewards, **kwargs), expected, rtol=REL, atol=1e-15)


@pytest.mark.parametrize("rewards, expected", [
    ([1.0, 2.0, 3.0, 4.0], [3.0, 8 / 3, 7 / 3, 2.0]),
    ([[1.0, 0.0], [0.5, 0.5]], [[0.0, 1.0], [0.5, 0.5]]),
])
def test_leave_one_out_baseline_rows(rewards, expected):
    np.testing.assert_allclose(m9.leave_one_out_baseline(rewards), expected, rtol=REL)


# --- clipping ----------------------------------------------------------------------
@pytest.mark.parametrize("ratio, advantage, expected, active", [
    (1.35, 1.0, 1.2, True), (0.85, 1.0, 0.85, False), (0.5, 1.0, 0.5, False),
    (1.10, -1.0, -1.1, False), (0.70, -1.0, -0.8, True), (1.5, -2.0, -3.0, False),
    (1.2, 1.0, 1.2, False), (0.8, -1.0, -0.8, False),  # exactly on the boundary: not active
    (3.0, 0.0, 0.0, False),
])
def test_clipped_surrogate_terms_and_clip_activity_rows(ratio, advantage, expected, active):
    terms = m9.clipped_surrogate_terms(np.array([ratio]), np.array([advantage]))
    assert terms.dtype == np.float64 and terms[0] == pytest.approx(expected, rel=REL, abs=1e-15)
    assert m9.clip_activity(np.array([ratio]), np.array([advantage])).tolist() == [active]


@PROPERTY
@given(hnp.arrays(np.float64, st.integers(1, 12), elements=st.floats(0, 5)),
       hnp.arrays(np.float64, st.integers(1, 12), elements=st.floats(-5, 5)),
       st.floats(0, 0.5), st.floats(0, 0.5))
def test_clip_activity_marks_where_the_clipped_branch_wins(ratios, advantages, eps_low, eps_high):
    if ratios.shape != advantages.shape:
        advantages = np.resize(advantages, ratios.shape)
    unclipped = ratios * advantages
    clipped = np.clip(ratios, 1 - eps_low, 1 + eps_high) * advantages
    terms = m9.clipped_surrogate_terms(ratios, advantages, eps_low, eps_high)
    np.testing.assert_array_equal(terms, np.minimum(unclipped, clipped))
    active = m9.clip_activity(ratios, advantages, eps_low, eps_high)
    assert np.all(active[clipped < unclipped]), "the min picked a smaller clipped term but activity is False"
    assert np.all(clipped[active] <= unclipped[active]), "active where the clipped term is not the min"


def test_clipped_surrogate_terms_broadcast_a_scalar_advantage():
    terms = m9.clipped_surrogate_terms(np.array([[0.5, 1.5]]), 2.0, eps_low=0.1, eps_high=0.3)
    np.testing.assert_allclose(terms, [[1.0, 2.6]], rtol=REL)


def test_gspo_sequence_ratios_rows():
    new = np.array([[-1.0, -2.0, np.nan], [-0.5, -0.5, -0.5], [0.0, 0.0, 0.0]])
    old = np.array([[-1.5, -2.5, -np.inf], [-1.0, -0.5, 0.0], [-7.0, 1.0, 2.0]])
    mask = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 0]])
    np.testing.assert_allclose(m9.gspo_sequence_ratios(new, old, mask), [math.exp(0.5), 1.0, 1.0], rtol=REL)
    np.testing.assert_allclose(m9.gspo_sequence_ratios(new[:2], old[:2], mask[:2].astype(bool)),
                               [math.exp(0.5), 1.0], rtol=REL)


# --- loss reductions -------------------------------------------------------------------
SQ = math.sqrt(2) / 2  # standardized advantages of [1, 0, 1] are [SQ, -2 SQ, SQ] (population std)
SHRINK = (math.sqrt(2) / 3) / (math.sqrt(2) / 3 + 1e-6)


@pytest.mark.parametrize("name, per_token", [
    ("original_grpo", [SQ * SHRINK / 6, -2 * SQ * SHRINK / 15, SQ * SHRINK / 24]),   # A_i / (3 |o_i|)
    ("dr_grpo", [1 / 72, -2 / 72, 1 / 72]),                                          # (r_i - 2/3) / (3 * 8)
    ("dapo", [SQ * SHRINK / 15, -2 * SQ * SHRINK / 15, SQ * SHRINK / 15]),          # A_i / 15
])
def test_token_weights_seed_rows(name, per_token):
    rewards, lengths = np.array([1.0, 0.0, 1.0]), [2, 5, 8]
    weights = {"original_grpo": lambda: m9.original_grpo_token_weights(rewards, lengths),
               "dr_grpo": lambda: m9.dr_grpo_token_weights(rewards, lengths, 8),
               "dapo": lambda: m9.dapo_token_weights(rewards, lengths)}[name]()
    assert isinstance(weights, list) and [w.shape for w in weights] == [(2,), (5,), (8,)]
    for w, value in zip(weights, per_token):
        assert w.dtype == np.float64
        np.testing.assert_allclose(w, value, rtol=REL)


def test_token_weights_sum_to_zero_over_equal_lengths():
    rewards, lengths = np.array([1.0, 0.0, 0.0, 1.0, 1.0]), [4] * 5
    for weights in (m9.original_grpo_token_weights(rewards, lengths), m9.dapo_token_weights(rewards, lengths),
                    m9.dr_grpo_token_weights(rewards, lengths, 4)):
        assert abs(m9.flatten_token_weights(weights).sum()) < 1e-12
    # equal lengths: original GRPO and DAPO coincide
    np.testing.assert_allclose(m9.flatten_token_weights(m9.original_grpo_token_weights(rewards, lengths)),
                               m9.flatten_token_weights(m9.dapo_token_weights(rewards, lengths)), rtol=REL)


def test_response_contributions_and_flatten_rows():
    weights = [np.array([0.5, 0.5]), np.array([-1.0]), np.array([0.25, 0.25, 0.25])]
    np.testing.assert_allclose(m9.response_contributions(weights), [1.0, -1.0, 0.75], rtol=REL)
    np.testing.assert_allclose(m9.flatten_token_weights(weights), [0.5, 0.5, -1.0, 0.25, 0.25, 0.25], rtol=REL)
    assert m9.flatten_token_weights([]).shape == (0,)


@pytest.mark.parametrize("length, max_length, cache_length, expected", [
    (0, 20, 5, 0.0), (15, 20, 5, 0.0), (16, 20, 5, -0.2), (20, 20, 5, -1.0), (21, 20, 5, -1.0),
    (10, 10, 10, -1.0), (1, 10, 10, -0.1), (12_000, 16_384, 4_096, 0.0), (14_336, 16_384, 4_096, -0.5),
])
def test_overlong_penalty_rows(length, max_length, cache_length, expected):
    value = m9.overlong_penalty(length, max_length, cache_length)
    assert type(value) is float and value == pytest.approx(expected, rel=REL, abs=1e-15)


@PROPERTY
@given(hnp.arrays(np.float64, st.integers(1, 10), elements=st.floats(-30, 0)),
       hnp.arrays(np.float64, st.integers(1, 10), elements=st.floats(-30, 0)))
def test_k3_kl_is_nonnegative_and_matches_its_formula(logprobs, ref_logprobs):
    ref_logprobs = np.resize(ref_logprobs, logprobs.shape)
    values = m9.k3_kl(logprobs, ref_logprobs)
    assert np.all(values >= 0)
    d = ref_logprobs - logprobs
    np.testing.assert_allclose(values, np.exp(d) - d - 1, rtol=1e-9, atol=1e-12)


def test_k3_kl_rows():
    np.testing.assert_allclose(m9.k3_kl([-1.0, -2.0, -1.0, -1.0], [-1.0, -1.0, -2.0, -1.0 + 1e-10]),
                               [0.0, math.e - 2, math.exp(-1), 5e-21], rtol=1e-6, atol=0)


# --- entropy, pass@k, mode training ------------------------------------------------------
def test_categorical_entropy_rows():
    assert m9.categorical_entropy([0.25] * 4) == pytest.approx(math.log(4), rel=REL)
    assert m9.categorical_entropy([1.0, 0.0, 0.0]) == 0.0
    batch = m9.categorical_entropy(np.array([[[0.5, 0.5]], [[0.1, 0.9]]]))
    assert batch.shape == (2, 1)
    np.testing.assert_allclose(batch[:, 0], [math.log(2), -(0.1 * math.log(0.1) + 0.9 * math.log(0.9))], rtol=REL)


@pytest.mark.parametrize("p, k, expected", [(0.5, 4, 0.9375), (0.0, 3, 0.0), (1.0, 3, 1.0), (0.2, 1, 0.2)])
def test_pass_at_k_independent_rows(p, k, expected):
    value = m9.pass_at_k_independent(p, k)
    assert type(value) is float and value == pytest.approx(expected, rel=REL)


@PROPERTY
@given(st.integers(1, 80).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_unbiased_equals_exact_binomials(case):
    n, c, k = case
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    value = m9.pass_at_k_unbiased(n, c, k)
    assert type(value) is float and value == pytest.approx(float(exact), rel=1e-9, abs=1e-12)


def test_pass_at_k_unbiased_large_n_is_stable():
    assert m9.pass_at_k_unbiased(10_000, 1, 1) == pytest.approx(1e-4, rel=1e-9)
    assert m9.pass_at_k_unbiased(10_000, 0, 100) == 0.0


def test_synthetic_mode_training_documented_numbers():
    start, end = m9.synthetic_mode_training(steps=0), m9.synthetic_mode_training()
    assert start["expected_reward"] == pytest.approx(0.654, abs=5e-4)
    assert start["entropy"] == pytest.approx(1.168, abs=5e-4)
    assert end["expected_reward"] == pytest.approx(0.889, abs=5e-4)
    assert end["entropy"] == pytest.approx(0.645, abs=5e-4)
    assert start["probabilities"][0] == pytest.approx(0.41, abs=5e-3)
    assert end["probabilities"][0] == pytest.approx(0.81, abs=5e-3)
    assert end["successful_mass"] == pytest.approx(end["probabilities"][:2].sum(), rel=REL)
    for key, kind in (("expected_reward", float), ("successful_mass", float), ("entropy", float)):
        assert type(end[key]) is kind
    assert end["probabilities"].dtype == np.float64 and end["logits"].dtype == np.float64


def test_synthetic_mode_training_rises_and_collapses_step_by_step():
    states = [m9.synthetic_mode_training(steps=step) for step in range(0, 61, 5)]
    rewards = [s["expected_reward"] for s in states]
    entropies = [s["entropy"] for s in states]
    assert all(b > a for a, b in zip(rewards, rewards[1:]))
    assert all(b < a for a, b in zip(entropies, entropies[1:]))


def _objective(logits: np.ndarray, rewards: np.ndarray, beta: float) -> float:
    pi = np.exp(logits - logits.max())
    pi /= pi.sum()
    return float(pi @ rewards - beta * (pi * np.log(pi)).sum())


@pytest.mark.parametrize("beta", [0.0, 0.3])
def test_synthetic_mode_training_one_step_is_the_exact_gradient(beta):
    rewards, logits, lr = np.array([0.2, 1.0, -0.5]), np.array([0.3, -0.1, 0.4]), 0.01
    step = m9.synthetic_mode_training(beta, lr, 1, rewards=rewards, initial_logits=logits)
    h = 1e-6
    gradient = np.array([(_objective(logits + h * e, rewards, beta) - _objective(logits - h * e, rewards, beta))
                         / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(step["logits"], logits + lr * gradient, rtol=1e-8, atol=1e-10)


def test_synthetic_mode_training_entropy_bonus_keeps_entropy_higher():
    assert m9.synthetic_mode_training(0.5)["entropy"] > m9.synthetic_mode_training(0.0)["entropy"]


# --- invalid arguments, unchanged inputs, return types -----------------------------
@pytest.mark.parametrize("call, argument", [
    (lambda: m9.informative_group_probability(-0.1, 4), "p"),
    (lambda: m9.informative_group_probability(float("nan"), 4), "p"),
    (lambda: m9.informative_group_probability(0.5, 0), "group_size"),
    (lambda: m9.informative_group_probability(0.5, 2.5), "group_size"),
    (lambda: m9.expected_draws_for_informative_groups(-1, 0.5, 4), "num_informative"),
    (lambda: m9.group_relative_advantages([]), "rewards"),
    (lambda: m9.group_relative_advantages(np.zeros((2, 2, 2))), "rewards"),
    (lambda: m9.group_relative_advantages([1.0, np.nan]), "rewards"),
    (lambda: m9.group_relative_advantages([1.0, 0.0], eps=-1.0), "eps"),
    (lambda: m9.group_relative_advantages([1.0], ddof=1), "ddof"),
    (lambda: m9.leave_one_out_baseline([[1.0], [2.0]]), "rewards"),
    (lambda: m9.clipped_surrogate_terms([1.0, 2.0], [1.0, 2.0, 3.0]), "ratios"),
    (lambda: m9.clipped_surrogate_terms([-1.0], [1.0]), "ratios"),
    (lambda: m9.clipped_surrogate_terms([1.0], [np.inf]), "advantages"),
    (lambda: m9.clip_activity([1.0], [1.0], eps_low=-0.1), "eps_low"),
    (lambda: m9.clip_activity([1.0], [1.0], eps_high=np.nan), "eps_high"),
    (lambda: m9.gspo_sequence_ratios(np.zeros((2, 3)), np.zeros((2, 3)), np.ones((2, 2))), "shapes"),
    (lambda: m9.gspo_sequence_ratios(np.zeros((2, 3)), np.zeros((2, 3)), np.full((2, 3), 0.5)), "mask"),
    (lambda: m9.gspo_sequence_ratios(np.zeros(3), np.zeros(3), np.ones(3)), "new_logprobs"),
    (lambda: m9.original_grpo_token_weights([1.0, 0.0], [3]), "lengths"),
    (lambda: m9.original_grpo_token_weights([1.0, 0.0], [3, 2.5]), "lengths"),
    (lambda: m9.dapo_token_weights([1.0, 0.0], 5), "lengths"),
    (lambda: m9.dapo_token_weights([[1.0, 0.0]], [1, 2]), "rewards"),
    (lambda: m9.dr_grpo_token_weights([1.0, 0.0], [3, 9], 8), "fixed_length"),
    (lambda: m9.response_contributions([np.zeros((2, 2))]), "token_weights"),
    (lambda: m9.overlong_penalty(5, 0, 1), "max_length"),
    (lambda: m9.overlong_penalty(5, 10, 0), "cache_length"),
    (lambda: m9.overlong_penalty(5, 10, 11), "cache_length"),
    (lambda: m9.overlong_penalty(True, 10, 5), "length"),
    (lambda: m9.k3_kl(np.zeros(2), np.zeros(3)), "logprobs"),
    (lambda: m9.categorical_entropy([0.5, 0.6]), "probabilities"),
    (lambda: m9.categorical_entropy([1.5, -0.5]), "probabilities"),
    (lambda: m9.categorical_entropy([]), "probabilities"),
    (lambda: m9.pass_at_k_independent(1.5, 2), "p"),
    (lambda: m9.pass_at_k_independent(0.5, 0), "k"),
    (lambda: m9.pass_at_k_unbiased(0, 0, 1), "n"),
    (lambda: m9.pass_at_k_unbiased(5, 2, 6), "k"),
    (lambda: m9.synthetic_mode_training(-0.1), "beta_entropy"),
    (lambda: m9.synthetic_mode_training(0.0, -1.0), "learning_rate"),
    (lambda: m9.synthetic_mode_training(0.0, 0.1, -1), "steps"),
    (lambda: m9.synthetic_mode_training(rewards=[1.0, 0.0]), "initial_logits"),
])
def test_invalid_arguments_raise_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_inputs_are_never_modified():
    rewards, ratios = np.array([[1.0, 0.0, 1.0]]), np.array([[1.4, 0.6, 1.0]])
    new, old, mask = np.full((1, 3), -1.0), np.full((1, 3), -1.2), np.ones((1, 3))
    lengths, probabilities = [2, 5, 8], np.array([0.2, 0.8])
    weights = [np.array([0.1, 0.1]), np.array([0.2])]
    rewards_k, logits_k = np.array([1.0, 0.0]), np.array([0.5, 0.1])
    arrays = (rewards, ratios, new, old, mask, probabilities, rewards_k, logits_k, *weights)
    before = [a.copy() for a in arrays]
    m9.group_relative_advantages(rewards)
    m9.group_relative_advantages(rewards, scale=False)
    m9.leave_one_out_baseline(rewards)
    m9.clipped_surrogate_terms(ratios, rewards)
    m9.clip_activity(ratios, rewards)
    m9.gspo_sequence_ratios(new, old, mask)
    m9.original_grpo_token_weights(rewards[0], lengths)
    m9.dr_grpo_token_weights(rewards[0], lengths, 8)
    m9.dapo_token_weights(rewards[0], lengths)
    m9.response_contributions(weights)
    m9.flatten_token_weights(weights)
    m9.k3_kl(new, old)
    m9.categorical_entropy(probabilities)
    m9.synthetic_mode_training(0.1, 0.5, 5, rewards=rewards_k, initial_logits=logits_k)
    for original, after in zip(before, arrays):
        np.testing.assert_array_equal(original, after)
    assert lengths == [2, 5, 8]


def test_array_returns_are_fresh_float64_arrays():
    rewards = np.array([1.0, 0.0, 0.5])
    for result in (m9.group_relative_advantages(rewards), m9.leave_one_out_baseline(rewards),
                   m9.clipped_surrogate_terms(rewards + 1, rewards), m9.k3_kl(rewards - 2, rewards - 1),
                   m9.gspo_sequence_ratios(rewards[None] - 2, rewards[None] - 1, np.ones((1, 3))),
                   m9.response_contributions([rewards]), m9.flatten_token_weights([rewards])):
        assert isinstance(result, np.ndarray) and result.dtype == np.float64
        assert not np.shares_memory(result, rewards)
    assert m9.clip_activity(rewards + 1, rewards).dtype == bool
