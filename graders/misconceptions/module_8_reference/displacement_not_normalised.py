"""exp(logits) without dividing by their sum: "probabilities" that do not add up to 1."""

EXERCISE = "module_8_reference.likelihood_displacement_curve"
NAME = "displacement_not_normalised"
HINT = "the three probabilities do not sum to 1: apply the softmax, exp(logit) / sum of exp(logits)"


def likelihood_displacement_curve(t):
    t = _as_array("t", t)
    logits = np.stack([-t, -3.0 * t, 4.0 * t])
    probs = np.exp(logits)
    return {"chosen": _out(probs[0], t), "rejected": _out(probs[1], t),
            "other": _out(probs[2], t), "log_margin": _out(logits[0] - logits[1], t)}
