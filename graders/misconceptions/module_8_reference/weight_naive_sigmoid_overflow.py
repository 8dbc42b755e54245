"""beta exp(-beta h) / (1 + exp(-beta h)): inf / inf = NaN for beta h = -1e4."""

EXERCISE = "module_8_reference.dpo_gradient_weight"
NAME = "weight_naive_sigmoid_overflow"
HINT = "NaN at large |beta h|: exp overflows in exp(x) / (1 + exp(x)); use sigma(-x) = 1 / (1 + exp(x)) or exp(-softplus(x))"


def dpo_gradient_weight(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    with np.errstate(over="ignore", invalid="ignore"):
        odds = np.exp(-beta * h)
        return _out(beta * odds / (1.0 + odds), h, beta)
