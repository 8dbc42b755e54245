"""The logits -t and -3t assigned the other way round: "chosen" gets -3t, "rejected" gets -t."""

EXERCISE = "module_8_reference.likelihood_displacement_curve"
NAME = "displacement_chosen_rejected_swapped"
HINT = "chosen and rejected are swapped: the logits are (-t, -3t, 4t) for (chosen, rejected, other), so the margin is +2t"


def likelihood_displacement_curve(t):
    t = _as_array("t", t)
    logits = np.stack([-3.0 * t, -t, 4.0 * t])
    log_probs = logits - np.logaddexp.reduce(logits, axis=0)
    probs = np.exp(log_probs)
    return {"chosen": _out(probs[0], t), "rejected": _out(probs[1], t),
            "other": _out(probs[2], t), "log_margin": _out(log_probs[0] - log_probs[1], t)}
