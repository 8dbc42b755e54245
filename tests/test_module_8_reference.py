"""The kit's own tests of solutions/module_08/module_8_reference.py.

Hand-checkable rows (expected values computed here by the direct formula, not
by the kit's stable code path), stability at |beta h| = 1e4, ValueError naming
the argument, inputs left unchanged, return types and broadcasting, and the
public learner tests run against the solutions and the untouched starter.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest

from graders.loader import load_module
from graders.paths import SOLUTIONS_DIR


SOLUTION_PATH = SOLUTIONS_DIR / "module_08" / "module_8_reference.py"
m8 = load_module(SOLUTION_PATH, "_kit_tests_module_8_reference")
REL = 1e-9

PI_REF = np.array([0.55, 0.30, 0.15])
REWARDS = np.array([0.0, 1.0, -0.5])


def softplus(x: float) -> float:
    """log(1 + e^x) for moderate x, by the textbook formula."""
    return math.log(1.0 + math.exp(x))


def test_reference_file_imports_only_numpy_and_stdlib():
    tree = ast.parse(SOLUTION_PATH.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "math", "numpy"}, imported


def test_every_public_function_is_an_exercise():
    from graders import course
    from graders.build import exercises_in

    tree = ast.parse(SOLUTION_PATH.read_text(encoding="utf-8"))
    public = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")}
    assert public and set(exercises_in(SOLUTION_PATH)) == {f"module_8_reference.{name}" for name in public}
    assert [e for e in course.exercises(["8"]) if e.startswith("module_8_reference.")] == exercises_in(SOLUTION_PATH)


# --- the KL-regularised optimum: the notebook's frontier, row by row ---------------------------
@pytest.mark.parametrize("beta", [4.0, 2.0, 1.0, 0.5, 0.25])
def test_frontier_row(beta):
    weights = [p * math.exp(r / beta) for p, r in zip(PI_REF, REWARDS)]
    policy = [w / sum(weights) for w in weights]
    reward = sum(p * r for p, r in zip(policy, REWARDS))
    kl = sum(p * math.log(p / q) for p, q in zip(policy, PI_REF))
    frontier = m8.reward_kl_frontier(PI_REF, REWARDS, [beta])
    assert frontier["beta"].tolist() == [beta]
    assert math.isclose(frontier["reward"][0], reward, rel_tol=REL)
    assert math.isclose(frontier["kl"][0], kl, rel_tol=REL)
    np.testing.assert_allclose(frontier["policies"][0], policy, rtol=REL)
    np.testing.assert_allclose(m8.optimal_kl_policy(PI_REF, REWARDS, beta), policy, rtol=REL)


def test_frontier_keeps_the_order_of_betas_and_its_types():
    frontier = m8.reward_kl_frontier(PI_REF, REWARDS, np.array([0.25, 4.0, 1.0]))
    assert set(frontier) == {"beta", "reward", "kl", "policies"}
    assert frontier["beta"].tolist() == [0.25, 4.0, 1.0]
    assert frontier["kl"][0] > frontier["kl"][2] > frontier["kl"][1]
    for key in ("beta", "reward", "kl", "policies"):
        assert frontier[key].dtype == np.float64
    assert frontier["policies"].shape == (3, 3)


def test_optimal_kl_policy_limits_and_zero_support():
    np.testing.assert_allclose(m8.optimal_kl_policy(PI_REF, REWARDS, 1e8), PI_REF, rtol=1e-7)
    greedy = m8.optimal_kl_policy(PI_REF, REWARDS, 1e-3)
    assert greedy[1] == pytest.approx(1.0) and greedy[2] == 0.0  # exp(-500) underflows to 0, no NaN
    zero = m8.optimal_kl_policy([0.5, 0.0, 0.5], [0.0, 1e4, 1.0], 1.0)
    assert zero[1] == 0.0 and zero.sum() == pytest.approx(1.0)
    huge = m8.optimal_kl_policy(PI_REF, np.array([1e4, -1e4, 0.0]), 1e-2)
    assert np.all(np.isfinite(huge)) and huge[0] == 1.0
    frontier = m8.reward_kl_frontier([0.5, 0.0, 0.5], [0.0, 5.0, 1.0], [1.0])
    assert np.isfinite(frontier["kl"]).all() and frontier["kl"][0] >= 0.0


# --- token-level shaping ---------------------------------------------------------------------
def test_shape_token_rewards_notebook_case():
    shaped = m8.shape_token_rewards(np.array([-0.8, -1.1, -0.4, -0.7]), np.array([-0.9, -0.9, -0.5, -0.6]),
                                    terminal_reward=2.0, beta=0.15, mask=np.array([0.0, 1.0, 1.0, 1.0]))
    expected = [0.0, -0.15 * (-1.1 + 0.9), -0.15 * (-0.4 + 0.5), -0.15 * (-0.7 + 0.6) + 2.0]
    np.testing.assert_allclose(shaped, expected, rtol=REL, atol=1e-15)
    assert shaped[0] == 0.0 and shaped.dtype == np.float64


def test_shape_token_rewards_batch_with_padding():
    policy = np.array([[-1.0, -2.0, -0.5, np.nan], [-0.3, -0.2, -0.1, -0.4]])
    reference = np.array([[-1.5, -1.0, -0.5, -9.0], [-0.3, -0.2, -0.3, -0.1]])
    mask = np.array([[1, 1, 0, 0], [0, 1, 1, 0]], dtype=bool)  # padding may hold NaN
    shaped = m8.shape_token_rewards(policy, reference, np.array([1.0, -1.0]), beta=0.5, mask=mask)
    expected = [[-0.5 * 0.5, -0.5 * -1.0 + 1.0, 0.0, 0.0], [0.0, 0.0, -0.5 * 0.2 - 1.0, 0.0]]
    np.testing.assert_allclose(shaped, expected, rtol=REL, atol=1e-15)
    # the active sum is R - beta log(pi(y)/pi_ref(y))
    assert shaped[1].sum() == pytest.approx(-1.0 - 0.5 * ((-0.2 - 0.1) - (-0.2 - 0.3)), rel=REL)


# --- constraints -----------------------------------------------------------------------------
def test_constrained_lagrangian_notebook_case():
    value = m8.constrained_lagrangian(expected_reward=1.4, expected_costs=[0.10, 0.03], limits=[0.06, 0.04],
                                      multipliers=[2.0, 1.5])
    assert type(value) is float
    assert math.isclose(value, 1.335, rel_tol=REL)  # 1.4 - (2*0.04 + 1.5*(-0.01))
    assert math.isclose(m8.constrained_lagrangian(1.0, 0.5, 0.25, 2.0), 0.5, rel_tol=REL)


def test_dual_ascent_step_rows():
    updated = m8.dual_ascent_step([2.0, 1.5, 0.0], [0.10, 0.03, 0.0], [0.06, 0.04, 0.5], learning_rate=10.0)
    np.testing.assert_allclose(updated, [2.4, 1.4, 0.0], rtol=REL)
    assert m8.dual_ascent_step([0.05], [0.0], [0.1], 1.0).tolist() == [0.0]  # projected at zero
    assert type(m8.dual_ascent_step(1.0, 0.3, 0.1, 0.5)) is float


@pytest.mark.parametrize("args, q, reward, cost", [
    ((0.6, 1.0, 1.0, 0.25), 0.25, 0.7, 0.25),   # the lecture's example: the budget binds
    ((0.6, 1.0, 1.0, 2.0), 1.0, 1.0, 1.0),      # budget above the risky cost: always risky
    ((0.6, 0.5, 1.0, 0.25), 0.0, 0.6, 0.0),     # risky is worse: never take it
    ((0.6, 1.0, 0.0, 0.0), 1.0, 1.0, 0.0),      # free risky action
])
def test_two_action_constrained_optimum(args, q, reward, cost):
    result = m8.two_action_constrained_optimum(*args)
    assert math.isclose(result["q"], q, rel_tol=REL)
    assert math.isclose(result["expected_reward"], reward, rel_tol=REL)
    assert math.isclose(result["expected_cost"], cost, rel_tol=REL, abs_tol=1e-15)


def test_two_action_multiplier_makes_the_lagrangian_flat():
    result = m8.two_action_constrained_optimum(0.6, 1.0, 1.0, 0.25)
    assert math.isclose(result["multiplier"], 0.4, rel_tol=REL)  # lambda* = (1.0 - 0.6) / 1.0


# --- DPO family: rows by the textbook formulas --------------------------------------------------
@pytest.mark.parametrize("h, beta", [(0.8, 0.2), (0.0, 1.0), (-3.0, 0.5), (10.0, 0.1), (2.0, 3.0)])
def test_dpo_rows(h, beta):
    assert math.isclose(m8.dpo_loss_from_margin(h, beta), -math.log(1.0 / (1.0 + math.exp(-beta * h))), rel_tol=REL)
    assert math.isclose(m8.dpo_gradient_weight(h, beta), beta / (1.0 + math.exp(beta * h)), rel_tol=REL)
    for eps in (0.0, 0.1, 0.3):
        expected = (1 - eps) * softplus(-beta * h) + eps * softplus(beta * h)
        assert math.isclose(m8.conservative_dpo_loss(h, beta, eps), expected, rel_tol=REL)


def test_notebook_dpo_table():
    assert math.isclose(m8.dpo_loss_from_margin(0.8, beta=0.2), 0.6163437730407397, rel_tol=REL)
    assert math.isclose(m8.conservative_dpo_loss(0.8, beta=0.2, label_smoothing=0.1), 0.6323437730407397, rel_tol=REL)
    assert math.isclose(m8.ipo_loss(0.8, tau=0.5), 0.04, rel_tol=REL)


@pytest.mark.parametrize("h, tau, expected", [(0.8, 0.5, 0.04), (0.0, 0.25, 4.0), (5.0, 0.1, 0.0), (-1.0, 1.0, 2.25)])
def test_ipo_rows(h, tau, expected):
    assert m8.ipo_loss(h, tau) == pytest.approx(expected, rel=REL, abs=1e-15)


def test_simpo_notebook_case():
    # z = 2*(-4/4) - 2*(-5.4/6) - 0.3 = -0.5
    assert math.isclose(m8.simpo_loss(-4.0, 4, -5.4, 6, beta=2.0, target_margin=0.3), softplus(0.5), rel_tol=REL)
    assert math.isclose(m8.simpo_loss(-4.0, 4, -5.4, 6, beta=2.0, target_margin=0.3), 0.9740769841801067, rel_tol=REL)


def test_orpo_notebook_case():
    odds_chosen = -0.7 - math.log(1.0 - math.exp(-0.7))
    odds_rejected = -1.5 - math.log(1.0 - math.exp(-1.5))
    expected = 0.8 + 0.2 * softplus(-(odds_chosen - odds_rejected))
    value = m8.orpo_total_loss(0.8, -0.7, -1.5, lam=0.2)
    assert math.isclose(value, expected, rel_tol=REL)
    assert math.isclose(value, 0.8511092808136584, rel_tol=REL)
    assert m8.orpo_total_loss(0.8, -0.7, -1.5, lam=0.0) == 0.8


@pytest.mark.parametrize("t", [0.0, 0.25, 0.5, 1.0])
def test_likelihood_displacement_rows(t):
    weights = [math.exp(-t), math.exp(-3 * t), math.exp(4 * t)]
    chosen, rejected, other = (w / sum(weights) for w in weights)
    disp = m8.likelihood_displacement_curve(np.array([t]))
    assert math.isclose(disp["chosen"][0], chosen, rel_tol=REL)
    assert math.isclose(disp["rejected"][0], rejected, rel_tol=REL)
    assert math.isclose(disp["other"][0], other, rel_tol=REL)
    assert math.isclose(disp["log_margin"][0], 2 * t, rel_tol=REL, abs_tol=1e-15)
    assert type(m8.likelihood_displacement_curve(t)["chosen"]) is float


# --- stability ----------------------------------------------------------------------------------
def test_stable_at_margins_of_1e4():
    h = np.array([-1e4, -50.0, 0.0, 50.0, 1e4])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        loss = m8.dpo_loss_from_margin(h, 1.0)
        weight = m8.dpo_gradient_weight(h, 1.0)
        cdpo = m8.conservative_dpo_loss(h, 1.0, 0.1)
        ipo = m8.ipo_loss(h, 0.5)
        simpo = m8.simpo_loss(h, 1, -h, 1, beta=0.5, target_margin=0.0)
    for values in (loss, weight, cdpo, ipo, simpo):
        assert np.all(np.isfinite(values))
    assert loss[0] == 1e4 and loss[-1] == 0.0
    assert weight[0] == 1.0 and weight[-1] == 0.0
    assert cdpo[0] == pytest.approx(0.9e4, rel=REL) and cdpo[-1] == pytest.approx(0.1e4, rel=REL)
    assert simpo[0] == 1e4 and simpo[-1] == 0.0


def test_orpo_stable_for_extreme_mean_logps():
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        near_zero = m8.orpo_total_loss(0.0, -1e-300, -1e4, lam=1.0)
        far = m8.orpo_total_loss(0.0, -1e4, -1e-300, lam=1.0)
        tiny = m8.orpo_total_loss(0.0, -1e-10, -2e-10, lam=1.0)
    assert math.isfinite(near_zero) and near_zero < 1e-300  # chosen odds are enormous: loss ~ 0
    # logodds(-1e-300) = -1e-300 - log(1e-300) = 690.8; logodds(-1e4) = -1e4: ratio -10690.8
    assert far == pytest.approx(1e4 - math.log(1e-300), rel=1e-9)
    # log(1 - e^m) ~ log(-m) near 0: logodds ratio = log(2), loss = softplus(-log 2) = log(1.5)
    assert tiny == pytest.approx(math.log(1.5), rel=1e-6)


# --- conventions: types, broadcasting, errors, no in-place changes --------------------------------
def test_scalars_give_floats_and_arrays_broadcast():
    assert type(m8.dpo_loss_from_margin(1.0, 0.5)) is float
    assert type(m8.orpo_total_loss(0.5, -0.5, -1.0, 0.1)) is float
    h = np.linspace(-1.0, 1.0, 4)
    beta = np.array([[0.5], [1.0], [2.0]])
    for result in (m8.dpo_loss_from_margin(h, beta), m8.dpo_gradient_weight(h, beta),
                   m8.conservative_dpo_loss(h, beta, 0.1)):
        assert isinstance(result, np.ndarray) and result.shape == (3, 4) and result.dtype == np.float64
    assert m8.ipo_loss([0.0, 1.0], 0.5).dtype == np.float64
    assert m8.simpo_loss(np.array([-4.0, -2.0]), 4, -5.4, 6, 2.0, 0.3).shape == (2,)
    assert m8.orpo_total_loss(0.8, np.array([-0.7, -0.2]), -1.5, 0.2).shape == (2,)
    assert m8.likelihood_displacement_curve(np.zeros((2, 3)))["other"].shape == (2, 3)


CALLS = {
    "optimal_kl_policy": lambda **kw: m8.optimal_kl_policy(**{"reference": PI_REF, "rewards": REWARDS, "beta": 1.0, **kw}),
    "reward_kl_frontier": lambda **kw: m8.reward_kl_frontier(**{"reference": PI_REF, "rewards": REWARDS, "betas": [1.0], **kw}),
    "shape_token_rewards": lambda **kw: m8.shape_token_rewards(**{"policy_logp": [-1.0, -2.0], "reference_logp": [-1.0, -1.0],
                                                                  "terminal_reward": 1.0, "beta": 0.1, "mask": [1, 1], **kw}),
    "constrained_lagrangian": lambda **kw: m8.constrained_lagrangian(**{"expected_reward": 1.0, "expected_costs": [0.1],
                                                                        "limits": [0.2], "multipliers": [1.0], **kw}),
    "dual_ascent_step": lambda **kw: m8.dual_ascent_step(**{"multipliers": [1.0], "observed_costs": [0.1], "limits": [0.2],
                                                            "learning_rate": 0.1, **kw}),
    "two_action_constrained_optimum": lambda **kw: m8.two_action_constrained_optimum(
        **{"safe_reward": 0.6, "risky_reward": 1.0, "risky_cost": 1.0, "budget": 0.25, **kw}),
    "dpo_loss_from_margin": lambda **kw: m8.dpo_loss_from_margin(**{"h": 1.0, "beta": 0.1, **kw}),
    "dpo_gradient_weight": lambda **kw: m8.dpo_gradient_weight(**{"h": 1.0, "beta": 0.1, **kw}),
    "conservative_dpo_loss": lambda **kw: m8.conservative_dpo_loss(**{"h": 1.0, "beta": 0.1, "label_smoothing": 0.1, **kw}),
    "ipo_loss": lambda **kw: m8.ipo_loss(**{"h": 1.0, "tau": 0.1, **kw}),
    "simpo_loss": lambda **kw: m8.simpo_loss(**{"chosen_logp_sum": -4.0, "chosen_length": 4, "rejected_logp_sum": -5.0,
                                                "rejected_length": 5, "beta": 2.0, "target_margin": 0.3, **kw}),
    "orpo_total_loss": lambda **kw: m8.orpo_total_loss(**{"chosen_nll": 0.8, "chosen_mean_logp": -0.7,
                                                          "rejected_mean_logp": -1.5, "lam": 0.2, **kw}),
    "likelihood_displacement_curve": lambda **kw: m8.likelihood_displacement_curve(**{"t": 0.5, **kw}),
}

INVALID = [  # (function, bad argument, value, name the message must contain)
    ("optimal_kl_policy", "beta", 0.0, "beta"),
    ("optimal_kl_policy", "beta", -1.0, "beta"),
    ("optimal_kl_policy", "reference", [0.5, 0.6, 0.1], "reference"),  # sums to 1.2
    ("optimal_kl_policy", "reference", [1.2, -0.3, 0.1], "reference"),  # negative
    ("optimal_kl_policy", "rewards", [0.0, 1.0], "shapes must match"),
    ("optimal_kl_policy", "rewards", [0.0, np.nan, 1.0], "rewards"),
    ("reward_kl_frontier", "betas", [1.0, 0.0], "betas"),
    ("reward_kl_frontier", "betas", [], "betas"),
    ("reward_kl_frontier", "reference", [[0.5, 0.5]], "reference"),
    ("shape_token_rewards", "mask", [0, 0], "mask"),
    ("shape_token_rewards", "mask", [1, 2], "mask"),
    ("shape_token_rewards", "mask", [1, 1, 1], "shapes must match"),
    ("shape_token_rewards", "beta", -0.1, "beta"),
    ("shape_token_rewards", "policy_logp", [np.nan, -1.0], "policy_logp"),
    ("shape_token_rewards", "terminal_reward", [1.0, 2.0, 3.0], "terminal_reward"),
    ("constrained_lagrangian", "multipliers", [-1.0], "multipliers"),
    ("constrained_lagrangian", "limits", [0.1, 0.2], "shapes must match"),
    ("constrained_lagrangian", "expected_reward", [1.0, 2.0], "expected_reward"),
    ("dual_ascent_step", "multipliers", [-0.5], "multipliers"),
    ("dual_ascent_step", "learning_rate", 0.0, "learning_rate"),
    ("dual_ascent_step", "limits", [0.1, 0.2], "shapes must match"),
    ("two_action_constrained_optimum", "budget", -0.1, "budget"),
    ("two_action_constrained_optimum", "risky_cost", -1.0, "risky_cost"),
    ("dpo_loss_from_margin", "beta", 0.0, "beta"),
    ("dpo_loss_from_margin", "h", np.inf, "h"),
    ("dpo_gradient_weight", "beta", -2.0, "beta"),
    ("conservative_dpo_loss", "label_smoothing", 0.5, "label_smoothing"),
    ("conservative_dpo_loss", "label_smoothing", -0.1, "label_smoothing"),
    ("conservative_dpo_loss", "beta", 0.0, "beta"),
    ("ipo_loss", "tau", 0.0, "tau"),
    ("simpo_loss", "chosen_length", 0, "chosen_length"),
    ("simpo_loss", "rejected_length", -3, "rejected_length"),
    ("simpo_loss", "beta", 0.0, "beta"),
    ("orpo_total_loss", "chosen_mean_logp", 0.0, "chosen_mean_logp"),
    ("orpo_total_loss", "rejected_mean_logp", 0.1, "rejected_mean_logp"),
    ("orpo_total_loss", "lam", -1.0, "lam"),
    ("orpo_total_loss", "chosen_nll", -0.1, "chosen_nll"),
    ("likelihood_displacement_curve", "t", "abc", "t"),
]


@pytest.mark.parametrize("function, argument, value, named", INVALID,
                         ids=[f"{f}-{a}-{i}" for i, (f, a, _, _) in enumerate(INVALID)])
def test_invalid_arguments_raise_naming_the_argument(function, argument, value, named):
    with pytest.raises(ValueError, match=named):
        CALLS[function](**{argument: value})


def test_inputs_are_not_modified():
    arrays = {
        "reference": PI_REF.copy(), "rewards": REWARDS.copy(), "betas": np.array([1.0, 0.5]),
        "policy_logp": np.array([-0.8, -1.1, -0.4]), "reference_logp": np.array([-0.9, -0.9, -0.5]),
        "mask": np.array([0.0, 1.0, 1.0]), "costs": np.array([0.1, 0.03]), "limits": np.array([0.06, 0.04]),
        "multipliers": np.array([2.0, 1.5]), "h": np.array([-1.0, 0.0, 2.0]), "t": np.array([0.0, 0.5]),
        "chosen": np.array([-4.0, -2.0]), "mean": np.array([-0.7, -0.3]),
    }
    before = {key: value.copy() for key, value in arrays.items()}
    m8.optimal_kl_policy(arrays["reference"], arrays["rewards"], 1.0)
    m8.reward_kl_frontier(arrays["reference"], arrays["rewards"], arrays["betas"])
    m8.shape_token_rewards(arrays["policy_logp"], arrays["reference_logp"], 1.0, 0.1, arrays["mask"])
    m8.constrained_lagrangian(1.0, arrays["costs"], arrays["limits"], arrays["multipliers"])
    m8.dual_ascent_step(arrays["multipliers"], arrays["costs"], arrays["limits"], 0.5)
    for function in (m8.dpo_loss_from_margin, m8.dpo_gradient_weight):
        function(arrays["h"], 0.5)
    m8.conservative_dpo_loss(arrays["h"], 0.5, 0.1)
    m8.ipo_loss(arrays["h"], 0.5)
    m8.simpo_loss(arrays["chosen"], 4, -5.0, 5, 2.0, 0.3)
    m8.orpo_total_loss(0.8, arrays["mean"], -1.5, 0.2)
    m8.likelihood_displacement_curve(arrays["t"])
    for key, value in arrays.items():
        np.testing.assert_array_equal(value, before[key], err_msg=key)


def test_an_all_zero_answer_fails_the_rows():
    """Guard against loose goldens (docs/style.md, rule 7): zeros are far from every row above."""
    assert not math.isclose(0.0, m8.dpo_loss_from_margin(0.8, 0.2), abs_tol=1e-6)
    assert not np.allclose(0.0, m8.reward_kl_frontier(PI_REF, REWARDS, [1.0])["kl"], atol=1e-6)
