"""softplus(+beta h): the loss rewards the rejected response (the margin's sign flipped)."""

EXERCISE = "module_8_reference.dpo_loss_from_margin"
NAME = "dpo_sign_flipped"
HINT = "the loss grows with the margin: DPO is -log sigma(beta h) = softplus(-beta h), which FALLS as h grows"


def dpo_loss_from_margin(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(np.logaddexp(0.0, beta * h), h, beta)
