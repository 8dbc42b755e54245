"""Wrong versions of L = -log sigma(beta h) = softplus(-beta h) (dpo_loss_from_margin).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def dpo_beta_missing(h, beta):
    """beta is missing: the implicit reward margin is beta * h, L = softplus(-beta h)

    ru: нет beta: отступ неявной награды равен beta * h, L = softplus(-beta h)
    """
    return _right(h, 1.0)


def dpo_log_sigmoid_without_minus(h, beta):
    """the loss is negative: DPO minimises the NEGATIVE log-likelihood, L = -log sigma(beta h) >= 0

    ru: потеря отрицательна: DPO минимизирует ОТРИЦАТЕЛЬНОЕ логарифмическое правдоподобие, L = -log sigma(beta h) >=
    0
    """
    return -_right(h, beta)


def dpo_naive_softplus_overflow(h, beta):
    """inf at large negative beta h: exp(-beta h) overflows;
    use softplus(x) = logaddexp(0, x) (or max(x, 0) + log1p(exp(-|x|)))

    ru: inf при большом отрицательном beta h: exp(-beta h) переполняется; используйте softplus(x) = logaddexp(0, x)
    (или max(x, 0) + log1p(exp(-|x|)))
    """
    h, beta = np.asarray(h, dtype=np.float64), np.asarray(beta, dtype=np.float64)
    with np.errstate(over="ignore"):
        return _out(np.log(1.0 + np.exp(-beta * h)), h, beta)


def dpo_sign_flipped(h, beta):
    """the loss grows with the margin: DPO is -log sigma(beta h) = softplus(-beta h), which FALLS as h grows

    ru: потеря растёт вместе с отступом: DPO равна -log sigma(beta h) = softplus(-beta h), она УБЫВАЕТ с ростом h
    """
    return _right(np.negative(h), beta)  # softplus(+beta h)


def dpo_beta_outside_log_sigmoid(h, beta):
    """beta multiplies the loss instead of the margin: L = softplus(-beta h) = -log sigma(beta h),
    not beta softplus(-h) (beta belongs inside the log-sigmoid)

    ru: beta умножает потерю, а не отступ: L = softplus(-beta h) = -log sigma(beta h), а не beta softplus(-h) (beta
    должна стоять внутри лог-сигмоиды)
    """
    return np.asarray(beta, dtype=np.float64) * _right(h, 1.0) if np.ndim(beta) else float(beta) * _right(h, 1.0)
