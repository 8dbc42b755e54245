"""Module 8 reference: RLHF and direct preference optimisation, one formula per function.

Pure NumPy, natural logarithms. Inputs are never modified. Functions that take
scalars return a Python ``float``; given arrays they broadcast and return
float64 ``np.ndarray``. Invalid arguments raise ``ValueError`` naming the argument.

Axis glossary: K candidate responses, N sequences, T tokens, J constraints.
h is the reference-corrected margin
    h = [log pi(y_w|x) - log pi_ref(y_w|x)] - [log pi(y_l|x) - log pi_ref(y_l|x)].
"""

from __future__ import annotations

import numpy as np


# ---------------------------------------------------------------------------
# Given helpers: input checking and output conversion. You need not change them.
# ---------------------------------------------------------------------------
def _as_array(name: str, value) -> np.ndarray:
    """A float64 copy of ``value``; raises ValueError naming ``name`` if not finite numbers."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric, got {value!r}") from error
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return array


def _positive(name: str, value) -> np.ndarray:
    array = _as_array(name, value)
    if np.any(array <= 0):
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return array


def _non_negative(name: str, value) -> np.ndarray:
    array = _as_array(name, value)
    if np.any(array < 0):
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return array


def _distribution(name: str, value) -> np.ndarray:
    """A 1-D probability vector (non-negative, summing to 1 within 1e-8)."""
    array = _as_array(name, value)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {array.shape}")
    if np.any(array < 0) or abs(array.sum() - 1.0) > 1e-8:
        raise ValueError(f"{name} must be non-negative and sum to 1, got sum {float(array.sum())!r}")
    return array


def _same_shape(names: tuple[str, ...], *arrays: np.ndarray) -> None:
    if any(a.shape != arrays[0].shape for a in arrays):
        shapes = ", ".join(f"{n}{a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"shapes must match: {shapes}")


def _out(result: np.ndarray, *inputs: np.ndarray):
    """Python float when every input was a scalar, else a float64 array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(result)
    return np.asarray(result, dtype=np.float64)


# ---------------------------------------------------------------------------
# The KL-regularised optimum
# ---------------------------------------------------------------------------
def optimal_kl_policy(reference, rewards, beta):
    """pi*(y) = pi_ref(y) exp(r(y)/beta) / Z, Z = sum_y pi_ref(y) exp(r(y)/beta) (KL-regularised RL optimum; Rafailov et al. 2023, DPO, eq. 4).

    Computed with log-sum-exp, so adding a constant to every reward changes
    nothing and large r/beta never overflows; pi_ref(y) = 0 gives pi*(y) = 0.

    Args:
        reference: (K,) pi_ref, non-negative, summing to 1.
        rewards: (K,) r(y), finite.
        beta: KL coefficient, > 0.
    Returns:
        (K,) float64 pi*.
    """
    ### BEGIN SOLUTION
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    beta = float(_positive("beta", beta))
    support = reference > 0
    logits = np.full(reference.shape, -np.inf)
    logits[support] = np.log(reference[support]) + rewards[support] / beta
    logits -= logits[support].max()
    weights = np.exp(logits)  # exp(-inf) = 0 off the support
    return weights / weights.sum()
    ### END SOLUTION


def reward_kl_frontier(reference, rewards, betas) -> dict:
    """For each beta: E_{pi*}[r] and KL(pi* || pi_ref) = sum_y pi*(y) log(pi*(y)/pi_ref(y)) of the exact optimum (DPO, Rafailov et al. 2023, eq. 4).

    Args:
        reference: (K,) pi_ref.
        rewards: (K,) r(y).
        betas: (M,) KL coefficients, each > 0 (a scalar counts as M = 1).
    Returns:
        dict with "beta" (M,), "reward" (M,), "kl" (M,), "policies" (M, K),
        rows in the order of ``betas``. KL is clipped at 0 against round-off.
    """
    ### BEGIN SOLUTION
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    betas = _positive("betas", betas).reshape(-1)
    if betas.size == 0:
        raise ValueError("betas must hold at least one value")
    policies = np.stack([optimal_kl_policy(reference, rewards, b) for b in betas])  # (M, K)
    expected = policies @ rewards
    # pi*(y) > 0 only where pi_ref(y) > 0; terms with pi*(y) = 0 contribute 0 log 0 = 0
    ratio = np.divide(policies, reference, out=np.ones_like(policies), where=policies > 0)
    log_ratio = np.log(ratio)
    kl = np.maximum((policies * log_ratio).sum(axis=1), 0.0)
    return {"beta": betas.copy(), "reward": expected, "kl": kl, "policies": policies}
    ### END SOLUTION


def shape_token_rewards(policy_logp, reference_logp, terminal_reward, beta, mask) -> np.ndarray:
    """r_t = -beta (log pi(y_t|.) - log pi_ref(y_t|.)) on active tokens, + R on the last active token (per-token KL shaping; Ouyang et al. 2022, InstructGPT).

    The active rewards sum to R - beta log(pi(y)/pi_ref(y)); inactive tokens get
    exactly 0 (their log-probabilities may hold padding and are ignored).

    Args:
        policy_logp, reference_logp: (T,) or (N, T) token log-probabilities.
        terminal_reward: R, a scalar or (N,).
        beta: KL coefficient, >= 0.
        mask: same shape, 1 on response tokens, 0 elsewhere; every row needs an active token.
    Returns:
        float64 array shaped like ``policy_logp``.
    """
    ### BEGIN SOLUTION
    mask = _as_array("mask", mask)
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("mask must hold only 0 and 1")
    active = mask == 1
    policy_logp = np.array(policy_logp, dtype=np.float64)
    reference_logp = np.array(reference_logp, dtype=np.float64)
    _same_shape(("policy_logp", "reference_logp", "mask"), policy_logp, reference_logp, mask)
    if mask.ndim not in (1, 2):
        raise ValueError(f"mask must be (T,) or (N, T), got shape {mask.shape}")
    if not np.all(np.isfinite(policy_logp[active])):
        raise ValueError("policy_logp must be finite on active tokens")
    if not np.all(np.isfinite(reference_logp[active])):
        raise ValueError("reference_logp must be finite on active tokens")
    beta = float(_non_negative("beta", beta))
    rows = active.reshape(-1, active.shape[-1])  # (T,) -> (1, T)
    if not np.all(rows.any(axis=1)):
        raise ValueError("mask must have at least one active token in every row")
    terminal = _as_array("terminal_reward", terminal_reward)
    if terminal.ndim > 1 or terminal.size not in (1, rows.shape[0]):
        raise ValueError(f"terminal_reward must be a scalar or ({rows.shape[0]},), got shape {terminal.shape}")
    shaped = np.where(active, -beta * (policy_logp - reference_logp), 0.0).reshape(rows.shape)
    last = rows.shape[1] - 1 - np.argmax(rows[:, ::-1], axis=1)  # last active index per row
    shaped[np.arange(rows.shape[0]), last] += np.broadcast_to(terminal.reshape(-1), (rows.shape[0],))
    return shaped.reshape(mask.shape)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Constraints (safe RLHF)
# ---------------------------------------------------------------------------
def constrained_lagrangian(expected_reward, expected_costs, limits, multipliers) -> float:
    """L = E[R] - sum_j lambda_j (E[C_j] - d_j), lambda_j >= 0 (Lagrangian of constrained RLHF; Dai et al. 2024, Safe RLHF).

    Args:
        expected_reward: E[R], a scalar.
        expected_costs, limits, multipliers: (J,) E[C_j], d_j, lambda_j (scalars count as J = 1).
    Returns:
        L as a Python float.
    """
    ### BEGIN SOLUTION
    reward = _as_array("expected_reward", expected_reward)
    if reward.ndim != 0:
        raise ValueError(f"expected_reward must be a scalar, got shape {reward.shape}")
    costs = _as_array("expected_costs", expected_costs).reshape(-1)
    limits = _as_array("limits", limits).reshape(-1)
    multipliers = _non_negative("multipliers", multipliers).reshape(-1)
    _same_shape(("expected_costs", "limits", "multipliers"), costs, limits, multipliers)
    return float(reward - np.sum(multipliers * (costs - limits)))
    ### END SOLUTION


def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):
    """lambda_j <- max(0, lambda_j + eta (C_hat_j - d_j)) (projected dual ascent on the multipliers; Safe RLHF, Dai et al. 2024).

    Args:
        multipliers: (J,) lambda_j >= 0.
        observed_costs: (J,) estimated E[C_j].
        limits: (J,) d_j.
        learning_rate: eta > 0.
    Returns:
        (J,) float64 new multipliers (a float when every input is a scalar).
    """
    ### BEGIN SOLUTION
    lam = _non_negative("multipliers", multipliers)
    costs = _as_array("observed_costs", observed_costs)
    limits_array = _as_array("limits", limits)
    _same_shape(("multipliers", "observed_costs", "limits"), lam, costs, limits_array)
    eta = float(_positive("learning_rate", learning_rate))
    return _out(np.maximum(0.0, lam + eta * (costs - limits_array)), lam)
    ### END SOLUTION


def two_action_constrained_optimum(safe_reward, risky_reward, risky_cost, budget) -> dict:
    """max_q (1-q) r_safe + q r_risky  s.t.  q c_risky <= d: q* = min(1, d/c_risky) if r_risky > r_safe else 0 (two-action constrained MDP).

    The safe action costs 0, so any budget d >= 0 is feasible. When the
    constraint binds, the optimal multiplier is lambda* = (r_risky - r_safe)/c_risky.

    Args:
        safe_reward, risky_reward: rewards of the two actions.
        risky_cost: c_risky >= 0.
        budget: d >= 0.
    Returns:
        dict of floats: "q", "expected_reward", "expected_cost", "multiplier".
    """
    ### BEGIN SOLUTION
    safe = float(_as_array("safe_reward", safe_reward))
    risky = float(_as_array("risky_reward", risky_reward))
    cost = float(_non_negative("risky_cost", risky_cost))
    budget = float(_non_negative("budget", budget))
    if risky <= safe:
        q, multiplier = 0.0, 0.0  # the safe action is at least as good and costs nothing
    elif cost <= budget:
        q, multiplier = 1.0, 0.0  # the constraint does not bind
    else:
        q, multiplier = budget / cost, (risky - safe) / cost
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky,
            "expected_cost": q * cost, "multiplier": multiplier}
    ### END SOLUTION


# ---------------------------------------------------------------------------
# DPO and its relatives
# ---------------------------------------------------------------------------
def dpo_loss_from_margin(h, beta):
    """L = -log sigma(beta h) = softplus(-beta h) (DPO; Rafailov et al. 2023, eq. 7).

    Stable for |beta h| up to 1e4 and beyond (softplus via logaddexp).

    Args:
        h: reference-corrected margin, scalar or array.
        beta: > 0, scalar or array broadcasting with h.
    Returns:
        float or float64 array of the broadcast shape.
    """
    ### BEGIN SOLUTION
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(np.logaddexp(0.0, -beta * h), h, beta)
    ### END SOLUTION


def dpo_gradient_weight(h, beta):
    """|dL/dh| = beta sigma(-beta h) (DPO gradient weight; Rafailov et al. 2023, section 4).

    Largest for pairs the implicit reward model gets wrong (h < 0).

    Args:
        h: margin, scalar or array.
        beta: > 0.
    Returns:
        float or float64 array.
    """
    ### BEGIN SOLUTION
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(beta * np.exp(-np.logaddexp(0.0, beta * h)), h, beta)  # sigma(-x) = exp(-softplus(x))
    ### END SOLUTION


def conservative_dpo_loss(h, beta, label_smoothing):
    """L = (1 - eps) softplus(-beta h) + eps softplus(beta h) (conservative DPO, cDPO; Mitchell 2023).

    eps is the assumed probability that a preference label is flipped.

    Args:
        h: margin, scalar or array.
        beta: > 0.
        label_smoothing: eps in [0, 0.5).
    Returns:
        float or float64 array.
    """
    ### BEGIN SOLUTION
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    eps = _as_array("label_smoothing", label_smoothing)
    if np.any(eps < 0) or np.any(eps >= 0.5):
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    loss = (1.0 - eps) * np.logaddexp(0.0, -beta * h) + eps * np.logaddexp(0.0, beta * h)
    return _out(loss, h, beta, eps)
    ### END SOLUTION


def ipo_loss(h, tau):
    """L = (h - 1/(2 tau))^2 (IPO; Azar et al. 2023, eq. 17).

    Minimised at h = 1/(2 tau): the margin is regressed to a finite target.

    Args:
        h: margin, scalar or array.
        tau: regularisation strength, > 0.
    Returns:
        float or float64 array.
    """
    ### BEGIN SOLUTION
    h = _as_array("h", h)
    tau = _positive("tau", tau)
    return _out((h - 1.0 / (2.0 * tau)) ** 2, h, tau)
    ### END SOLUTION


def simpo_loss(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    """L = softplus(-z), z = beta logp_w/|y_w| - beta logp_l/|y_l| - gamma (SimPO; Meng et al. 2024, eq. 6).

    Reference-free: the implicit reward is the length-normalised log-probability.

    Args:
        chosen_logp_sum, rejected_logp_sum: summed log-probabilities, scalars or arrays.
        chosen_length, rejected_length: token counts |y|, > 0.
        beta: > 0.
        target_margin: gamma.
    Returns:
        float or float64 array.
    """
    ### BEGIN SOLUTION
    chosen = _as_array("chosen_logp_sum", chosen_logp_sum)
    rejected = _as_array("rejected_logp_sum", rejected_logp_sum)
    chosen_len = _positive("chosen_length", chosen_length)
    rejected_len = _positive("rejected_length", rejected_length)
    beta = _positive("beta", beta)
    gamma = _as_array("target_margin", target_margin)
    z = beta * chosen / chosen_len - beta * rejected / rejected_len - gamma
    return _out(np.logaddexp(0.0, -z), chosen, rejected, chosen_len, rejected_len, beta, gamma)
    ### END SOLUTION


def orpo_total_loss(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """L = NLL_w + lam softplus(-(logodds(m_w) - logodds(m_l))), logodds(m) = m - log(1 - e^m) (ORPO; Hong et al. 2024, eqs. 6-7).

    m is a mean token log-probability, m < 0 (m >= 0 raises); log(1 - e^m) is
    computed as log1p(-exp(m)), switching to log(-expm1(m)) near 0 for accuracy.

    Args:
        chosen_nll: supervised loss on the chosen response, >= 0.
        chosen_mean_logp, rejected_mean_logp: mean log-probabilities m_w, m_l < 0.
        lam: weight of the odds-ratio term, >= 0.
    Returns:
        float or float64 array.
    """
    ### BEGIN SOLUTION
    nll = _non_negative("chosen_nll", chosen_nll)
    lam = _non_negative("lam", lam)
    means = {}
    for name, value in (("chosen_mean_logp", chosen_mean_logp), ("rejected_mean_logp", rejected_mean_logp)):
        m = _as_array(name, value)
        if np.any(m >= 0):
            raise ValueError(f"{name} must be < 0 (a mean log-probability of a non-certain response), got {value!r}")
        means[name] = m

    def log_odds(m: np.ndarray) -> np.ndarray:
        # log(1 - e^m): log1p(-exp(m)) far from 0, log(-expm1(m)) near 0 (both finite for m < 0)
        far = np.minimum(m, -np.log(2.0))  # keeps the unused branch of np.where finite
        log_one_minus = np.where(m < -np.log(2.0), np.log1p(-np.exp(far)), np.log(-np.expm1(m)))
        return m - log_one_minus

    ratio = log_odds(means["chosen_mean_logp"]) - log_odds(means["rejected_mean_logp"])
    total = nll + lam * np.logaddexp(0.0, -ratio)
    return _out(total, nll, means["chosen_mean_logp"], means["rejected_mean_logp"], lam)
    ### END SOLUTION


def likelihood_displacement_curve(t) -> dict:
    """p = softmax(-t, -3t, 4t) for (chosen, rejected, other); log p_chosen - log p_rejected = 2t (likelihood displacement toy; Razin et al. 2024).

    The margin grows with t while the chosen probability falls: mass moves to
    an unlabelled response.

    Args:
        t: update size, scalar or array.
    Returns:
        dict "chosen", "rejected", "other", "log_margin", each shaped like t
        (floats for a scalar t).
    """
    ### BEGIN SOLUTION
    t = _as_array("t", t)
    logits = np.stack([-t, -3.0 * t, 4.0 * t])  # (3, *t.shape)
    log_probs = logits - np.logaddexp.reduce(logits, axis=0)
    probs = np.exp(log_probs)
    margin = log_probs[0] - log_probs[1]
    return {"chosen": _out(probs[0], t), "rejected": _out(probs[1], t),
            "other": _out(probs[2], t), "log_margin": _out(margin, t)}
    ### END SOLUTION
