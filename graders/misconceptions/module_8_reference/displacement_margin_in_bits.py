"""The log-margin in log2: 2t / ln 2 instead of 2t."""

EXERCISE = "module_8_reference.likelihood_displacement_curve"
NAME = "displacement_margin_in_bits"
HINT = "the log-margin is off by 1/ln 2: use natural logarithms, log p_chosen - log p_rejected = 2t"


def likelihood_displacement_curve(t):
    t = _as_array("t", t)
    logits = np.stack([-t, -3.0 * t, 4.0 * t])
    log_probs = logits - np.logaddexp.reduce(logits, axis=0)
    probs = np.exp(log_probs)
    margin = np.log2(probs[0]) - np.log2(probs[1])
    return {"chosen": _out(probs[0], t), "rejected": _out(probs[1], t),
            "other": _out(probs[2], t), "log_margin": _out(margin, t)}
