"""sigma(-beta h): the chain-rule factor beta in front forgotten."""

EXERCISE = "module_8_reference.dpo_gradient_weight"
NAME = "weight_missing_outer_beta"
HINT = "the factor beta in front is missing: d softplus(-beta h)/dh = -beta sigma(-beta h), so |dL/dh| = beta sigma(-beta h)"


def dpo_gradient_weight(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(np.exp(-np.logaddexp(0.0, beta * h)), h, beta)
