"""(1 - eps) log(1 + exp(-beta h)) + eps log(1 + exp(beta h)) with plain exps: inf at |beta h| = 1e4."""

EXERCISE = "module_8_reference.conservative_dpo_loss"
NAME = "cdpo_naive_softplus_overflow"
HINT = "inf at large |beta h|: one of exp(+-beta h) overflows; compute softplus stably (logaddexp(0, x))"


def conservative_dpo_loss(h, beta, label_smoothing):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    eps = _as_array("label_smoothing", label_smoothing)
    if np.any(eps < 0) or np.any(eps >= 0.5):
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    with np.errstate(over="ignore"):
        loss = (1.0 - eps) * np.log(1.0 + np.exp(-beta * h)) + eps * np.log(1.0 + np.exp(beta * h))
    return _out(loss, h, beta, eps)
