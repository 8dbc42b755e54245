"""Wrong versions of p = softmax(-t, -3t, 4t) for (chosen, rejected, other),
log p_chosen - log p_rejected = 2t (likelihood_displacement_curve).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def displacement_chosen_rejected_swapped(t):
    """chosen and rejected are swapped: the logits are (-t, -3t, 4t) for (chosen, rejected, other),
    so the margin is +2t

    ru: chosen и rejected перепутаны: логиты равны (-t, -3t, 4t) для (chosen, rejected, other), поэтому отступ равен
    +2t
    """
    curve = _right(t)
    swapped = {"chosen": curve["rejected"], "rejected": curve["chosen"], "log_margin": 0.0 - curve["log_margin"]}
    return {**curve, **swapped}  # 0.0 - x: no -0.0


def displacement_margin_in_bits(t):
    """the log-margin is off by 1/ln 2: use natural logarithms, log p_chosen - log p_rejected = 2t

    ru: лог-отступ отличается множителем 1/ln 2: используйте натуральные логарифмы, log p_chosen - log p_rejected =
    2t
    """
    curve = _right(t)
    return {**curve, "log_margin": _out(np.log2(curve["chosen"]) - np.log2(curve["rejected"]), t)}


def displacement_not_normalised(t):
    """the three probabilities do not sum to 1: apply the softmax, exp(logit) / sum of exp(logits)

    ru: три вероятности не дают в сумме 1: примените softmax, exp(logit) / сумма exp(logits)
    """
    t = np.asarray(t, dtype=np.float64)
    logits = np.stack([-t, -3.0 * t, 4.0 * t])
    probs = np.exp(logits)  # no softmax
    return {"chosen": _out(probs[0], t), "rejected": _out(probs[1], t),
            "other": _out(probs[2], t), "log_margin": _out(logits[0] - logits[1], t)}


def displacement_probability_margin(t):
    """the margin is a difference of LOG-probabilities, log p_chosen - log p_rejected (= 2t),
    not p_chosen - p_rejected

    ru: отступ — это разность ЛОГАРИФМОВ вероятностей, log p_chosen - log p_rejected (= 2t), а не p_chosen -
    p_rejected
    """
    curve = _right(t)
    return {**curve, "log_margin": _out(curve["chosen"] - curve["rejected"], t)}
