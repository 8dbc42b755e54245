"""softplus(-h): beta forgotten, so the loss ignores the KL coefficient."""

EXERCISE = "module_8_reference.dpo_loss_from_margin"
NAME = "dpo_beta_missing"
HINT = "beta is missing: the implicit reward margin is beta * h, L = softplus(-beta h)"


def dpo_loss_from_margin(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(np.logaddexp(0.0, -h), h, beta)
