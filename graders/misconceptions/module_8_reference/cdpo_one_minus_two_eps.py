"""(1 - 2 eps) softplus(-beta h): label noise applied as a shrink factor of the DPO loss."""

EXERCISE = "module_8_reference.conservative_dpo_loss"
NAME = "cdpo_one_minus_two_eps"
HINT = "looks like (1 - 2 eps) times the DPO loss; cDPO mixes both labels: (1-eps) softplus(-beta h) + eps softplus(beta h)"


def conservative_dpo_loss(h, beta, label_smoothing):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    eps = _as_array("label_smoothing", label_smoothing)
    if np.any(eps < 0) or np.any(eps >= 0.5):
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    loss = (1.0 - 2.0 * eps) * np.logaddexp(0.0, -beta * h)
    return _out(loss, h, beta, eps)
