"""Wrong versions of |dL/dh| = beta sigma(-beta h) (dpo_gradient_weight).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def weight_missing_inner_beta(h, beta):
    """beta is missing inside the sigmoid: the weight is beta sigma(-beta h), the sigmoid of the scaled margin

    ru: нет beta внутри сигмоиды: вес равен beta sigma(-beta h), сигмоиде от масштабированного отступа
    """
    return np.asarray(beta, dtype=np.float64) * _right(h, 1.0)  # beta sigma(-h)


def weight_missing_outer_beta(h, beta):
    """the factor beta in front is missing: d softplus(-beta h)/dh = -beta sigma(-beta h),
    so |dL/dh| = beta sigma(-beta h)

    ru: нет множителя beta перед сигмоидой: d softplus(-beta h)/dh = -beta sigma(-beta h), поэтому |dL/dh| = beta
    sigma(-beta h)
    """
    h, beta = np.asarray(h, dtype=np.float64), np.asarray(beta, dtype=np.float64)
    return _out(np.exp(-np.logaddexp(0.0, beta * h)), h, beta)


def weight_naive_sigmoid_overflow(h, beta):
    """NaN at large |beta h|: exp overflows in exp(x) / (1 + exp(x));
    use sigma(-x) = 1 / (1 + exp(x)) or exp(-softplus(x))

    ru: NaN при большом |beta h|: exp переполняется в exp(x) / (1 + exp(x)); используйте sigma(-x) = 1 / (1 +
    exp(x)) или exp(-softplus(x))
    """
    h, beta = np.asarray(h, dtype=np.float64), np.asarray(beta, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        odds = np.exp(-beta * h)
        return _out(beta * odds / (1.0 + odds), h, beta)


def weight_sigma_of_positive_margin(h, beta):
    """looks like sigma(+beta h): DPO weights WRONG pairs (h < 0) most, beta sigma(-beta h)

    ru: похоже на sigma(+beta h): DPO сильнее всего взвешивает НЕВЕРНО упорядоченные пары (h < 0), вес beta
    sigma(-beta h)
    """
    return _right(np.negative(h), beta)  # beta sigma(+beta h)
