"""eps softplus(-beta h) + (1 - eps) softplus(beta h): the two label weights swapped."""

EXERCISE = "module_8_reference.conservative_dpo_loss"
NAME = "cdpo_weights_swapped"
HINT = "the weights are swapped: the observed label keeps weight 1 - eps, L = (1-eps) softplus(-beta h) + eps softplus(beta h)"


def conservative_dpo_loss(h, beta, label_smoothing):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    eps = _as_array("label_smoothing", label_smoothing)
    if np.any(eps < 0) or np.any(eps >= 0.5):
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    loss = eps * np.logaddexp(0.0, -beta * h) + (1.0 - eps) * np.logaddexp(0.0, beta * h)
    return _out(loss, h, beta, eps)
