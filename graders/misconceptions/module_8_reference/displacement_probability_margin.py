"""log_margin = p_chosen - p_rejected: the probabilities subtracted, the log forgotten."""

EXERCISE = "module_8_reference.likelihood_displacement_curve"
NAME = "displacement_probability_margin"
HINT = "the margin is a difference of LOG-probabilities, log p_chosen - log p_rejected (= 2t), not p_chosen - p_rejected"


def likelihood_displacement_curve(t):
    t = _as_array("t", t)
    logits = np.stack([-t, -3.0 * t, 4.0 * t])
    log_probs = logits - np.logaddexp.reduce(logits, axis=0)
    probs = np.exp(log_probs)
    return {"chosen": _out(probs[0], t), "rejected": _out(probs[1], t),
            "other": _out(probs[2], t), "log_margin": _out(probs[0] - probs[1], t)}
