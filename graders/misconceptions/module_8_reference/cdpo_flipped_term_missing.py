"""(1 - eps) softplus(-beta h) only: the term for a flipped label, eps softplus(beta h), forgotten."""

EXERCISE = "module_8_reference.conservative_dpo_loss"
NAME = "cdpo_flipped_term_missing"
HINT = "the flipped-label term is missing: add eps softplus(+beta h) (the loss if the pair were the other way round)"


def conservative_dpo_loss(h, beta, label_smoothing):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    eps = _as_array("label_smoothing", label_smoothing)
    if np.any(eps < 0) or np.any(eps >= 0.5):
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    loss = (1.0 - eps) * np.logaddexp(0.0, -beta * h)
    return _out(loss, h, beta, eps)
