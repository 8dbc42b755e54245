"""Wrong versions of pass@k = 1 - C(n - c, k) / C(n, k) (pass_at_k_unbiased).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _counts(n, c, k):
    """n, c, k as ints, checked: n >= 1, 0 <= c <= n, 1 <= k <= n."""
    n, c, k = _integer(n, "n", 1), _integer(c, "c", 0), _integer(k, "k", 1)
    if c > n or k > n:
        raise ValueError(f"c and k must be <= n = {n}, got c = {c}, k = {k}")
    return n, c, k


def plug_in_estimate(n, c, k):
    """looks like 1 - (1 - c/n)^k (biased: it treats samples as drawn with replacement);
    the unbiased estimator is 1 - C(n - c, k) / C(n, k)

    ru: похоже на 1 - (1 - c/n)^k (смещённая оценка: она считает, что образцы вытягиваются с возвращением);
    несмещённая оценка равна 1 - C(n - c, k) / C(n, k)
    """
    n, c, k = _counts(n, c, k)
    return 1.0 - (1.0 - c / n) ** k


def product_off_by_one(n, c, k):
    """looks like the product over i = n-c .. n-1; 1 - C(n-c, k)/C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)

    ru: похоже на произведение по i = n-c .. n-1; 1 - C(n-c, k)/C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)
    """
    n, c, k = _counts(n, c, k)
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c, n, dtype=np.float64)))


def unbiased_all_correct(n, c, k):
    """looks like C(c, k) / C(n, k), all k drawn samples correct; pass@k is 1 - C(n - c, k) / C(n, k)

    ru: похоже на C(c, k) / C(n, k), вероятность того, что все k вытянутых образцов верны; pass@k равно 1 - C(n - c,
    k) / C(n, k)
    """
    n, c, k = _counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def unbiased_all_wrong(n, c, k):
    """looks like C(n - c, k) / C(n, k), the chance that all k drawn samples fail; pass@k is one minus that

    ru: похоже на C(n - c, k) / C(n, k), вероятность того, что все k вытянутых образцов неверны; pass@k — единица
    минус это
    """
    n, c, k = _counts(n, c, k)
    return math.comb(n - c, k) / math.comb(n, k)


def float_binomials(n, c, k):
    """looks like C(n - c, k) / C(n, k) with the binomials as floats, which overflow to inf / inf = nan once C(n, k)
    > 1e308; compute 1 - prod_{i=n-c+1}^{n} (1 - k / i) instead

    ru: похоже на C(n - c, k) / C(n, k) с биномиальными коэффициентами во float, которые переполняются до inf / inf =
    nan, как только C(n, k) > 1e308; вычисляйте вместо этого 1 - prod_{i=n-c+1}^{n} (1 - k / i)
    """
    n, c, k = _counts(n, c, k)
    if n - c < k:
        return 1.0

    def comb(top, chosen):  # as scipy.special.comb(top, chosen) computes it: a float
        with np.errstate(over="ignore"):
            return float(np.prod(np.arange(top - chosen + 1, top + 1, dtype=np.float64))
                         / np.prod(np.arange(1, chosen + 1, dtype=np.float64)))
    with np.errstate(invalid="ignore"):
        return float(1.0 - np.float64(comb(n - c, k)) / np.float64(comb(n, k)))
