"""Wrong versions of c_i = sum_t w_it (response_contributions).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def absolute_sum(token_weights):
    """looks like sum |w_it|; the contribution keeps the sign: c_i = sum_t w_it

    ru: похоже на sum |w_it|; вклад сохраняет знак: c_i = sum_t w_it
    """
    return _right([np.abs(np.asarray(w, dtype=np.float64)) for w in token_weights])


def mean_not_sum(token_weights):
    """looks like the MEAN over tokens; a response's contribution is the SUM of its token weights

    ru: похоже на СРЕДНЕЕ по токенам; вклад ответа — СУММА весов его токенов
    """
    return np.array([np.mean(np.asarray(w, dtype=np.float64)) for w in token_weights])


def per_token_weight(token_weights):
    """looks like one token's weight per response; sum all |o_i| token weights: c_i = sum_t w_it

    ru: похоже на вес одного токена для каждого ответа; суммируйте все |o_i| весов токенов: c_i = sum_t w_it
    """
    return np.array([float(np.asarray(w, dtype=np.float64)[0]) for w in token_weights])
