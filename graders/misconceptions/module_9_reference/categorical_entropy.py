"""Wrong versions of H(p) = -sum_k p_k log p_k along the last axis, 0 log 0 = 0 (categorical_entropy).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def log2_bits(probabilities):
    """looks like log2 (bits); the course uses natural logarithms (nats)

    ru: похоже на log2 (биты); в курсе используются натуральные логарифмы (наты)
    """
    p = np.asarray(probabilities, dtype=np.float64)
    terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    entropy = -terms.sum(axis=-1)
    return float(entropy) if p.ndim == 1 else entropy


def missing_minus_sign(probabilities):
    """looks like sum p log p without the minus; H = -sum_k p_k log p_k >= 0

    ru: похоже на sum p log p без минуса; H = -sum_k p_k log p_k >= 0
    """
    return 0.0 - _right(probabilities)  # 0.0 - x: no -0.0


def nan_on_zero_probability(probabilities):
    """looks like NaN from 0 * log(0); by convention 0 log 0 = 0, so skip zero probabilities

    ru: похоже на NaN из 0 * log(0); по соглашению 0 log 0 = 0, поэтому нулевые вероятности пропускайте
    """
    p = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -(p * np.log(p)).sum(axis=-1)
    return float(entropy) if p.ndim == 1 else entropy


def sums_over_batch(probabilities):
    """looks like one entropy for the whole batch; H is taken along the LAST axis, one value per distribution

    ru: похоже на одну энтропию на весь батч; H берётся по ПОСЛЕДНЕЙ оси, одно значение на каждое распределение
    """
    p = np.asarray(probabilities, dtype=np.float64)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(-terms.sum())


def keeps_the_last_axis(probabilities):
    """looks like the sum kept its axis (keepdims=True): one distribution gives a (1,) array;
    return a float for (K,) and an array of shape (...) for (..., K)

    ru: похоже, сумма сохранила свою ось (keepdims=True): одно распределение даёт массив формы (1,); возвращайте
    float для (K,) и массив формы (...) для (..., K)
    """
    p = np.asarray(probabilities, dtype=np.float64)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return 0.0 - terms.sum(axis=-1, keepdims=True)
