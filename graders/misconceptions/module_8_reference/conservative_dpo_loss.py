"""Wrong versions of L = (1 - eps) softplus(-beta h) + eps softplus(beta h) (conservative_dpo_loss).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def cdpo_flipped_term_missing(h, beta, label_smoothing):
    """the flipped-label term is missing:
    add eps softplus(+beta h) (the loss if the pair were the other way round)

    ru: нет члена с перевёрнутой меткой: добавьте eps softplus(+beta h) (потерю для случая, когда пара на самом деле
    наоборот)
    """
    eps = np.asarray(label_smoothing, dtype=np.float64)
    return (1.0 - eps) * _right(h, beta, 0.0)  # _right at eps = 0 is softplus(-beta h)


def cdpo_naive_softplus_overflow(h, beta, label_smoothing):
    """inf at large |beta h|: one of exp(+-beta h) overflows; compute softplus stably (logaddexp(0, x))

    ru: inf при большом |beta h|: одна из exp(+-beta h) переполняется; вычисляйте softplus устойчиво (logaddexp(0,
    x))
    """
    h, beta, eps = (np.asarray(value, dtype=np.float64) for value in (h, beta, label_smoothing))
    with np.errstate(over="ignore"):
        loss = (1.0 - eps) * np.log(1.0 + np.exp(-beta * h)) + eps * np.log(1.0 + np.exp(beta * h))
    return _out(loss, h, beta, eps)


def cdpo_one_minus_two_eps(h, beta, label_smoothing):
    """looks like (1 - 2 eps) times the DPO loss; cDPO mixes both labels:
    (1-eps) softplus(-beta h) + eps softplus(beta h)

    ru: похоже на (1 - 2 eps), умноженное на потерю DPO; cDPO смешивает обе метки: (1-eps) softplus(-beta h) + eps
    softplus(beta h)
    """
    eps = np.asarray(label_smoothing, dtype=np.float64)
    return (1.0 - 2.0 * eps) * _right(h, beta, 0.0)  # _right at eps = 0 is softplus(-beta h)


def cdpo_weights_swapped(h, beta, label_smoothing):
    """the weights are swapped: the observed label keeps weight 1 - eps,
    L = (1-eps) softplus(-beta h) + eps softplus(beta h)

    ru: веса перепутаны: наблюдаемая метка сохраняет вес 1 - eps, L = (1-eps) softplus(-beta h) + eps softplus(beta
    h)
    """
    return _right(np.negative(h), beta, label_smoothing)  # the pair taken the other way round


def cdpo_beta_outside_softplus(h, beta, label_smoothing):
    """beta multiplies the loss instead of the margin: each term is softplus(-+beta h),
    L = (1-eps) softplus(-beta h) + eps softplus(beta h), not beta [(1-eps) softplus(-h) + eps softplus(h)]

    ru: beta умножает потерю, а не отступ: каждый член равен softplus(-+beta h), L = (1-eps) softplus(-beta h) + eps
    softplus(beta h), а не beta [(1-eps) softplus(-h) + eps softplus(h)]
    """
    loss = _right(h, 1.0, label_smoothing)  # beta = 1 inside
    return np.asarray(beta, dtype=np.float64) * loss if np.ndim(beta) else float(beta) * loss
