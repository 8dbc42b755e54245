"""log sigma(beta h) returned as the loss: the minus sign of the negative log-likelihood forgotten."""

EXERCISE = "module_8_reference.dpo_loss_from_margin"
NAME = "dpo_log_sigmoid_without_minus"
HINT = "the loss is negative: DPO minimises the NEGATIVE log-likelihood, L = -log sigma(beta h) >= 0"


def dpo_loss_from_margin(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(-np.logaddexp(0.0, -beta * h), h, beta)
