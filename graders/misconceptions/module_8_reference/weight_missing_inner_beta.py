"""beta sigma(-h): beta kept in front but dropped inside the sigmoid."""

EXERCISE = "module_8_reference.dpo_gradient_weight"
NAME = "weight_missing_inner_beta"
HINT = "beta is missing inside the sigmoid: the weight is beta sigma(-beta h), the sigmoid of the scaled margin"


def dpo_gradient_weight(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(beta * np.exp(-np.logaddexp(0.0, h)), h, beta)
