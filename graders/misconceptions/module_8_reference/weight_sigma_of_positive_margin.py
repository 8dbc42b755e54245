"""beta sigma(+beta h): the largest weight goes to pairs already ranked right."""

EXERCISE = "module_8_reference.dpo_gradient_weight"
NAME = "weight_sigma_of_positive_margin"
HINT = "looks like sigma(+beta h): DPO weights WRONG pairs (h < 0) most, beta sigma(-beta h)"


def dpo_gradient_weight(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    return _out(beta * np.exp(-np.logaddexp(0.0, -beta * h)), h, beta)
