"""Wrong versions of [w_11, ..., w_1|o_1|, w_21, ...] (flatten_token_weights).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def absolute_values(token_weights):
    """looks like |w| was concatenated;
    keep each weight's sign (the seed table takes abs only for its sum column)

    ru: похоже, склеены |w|; сохраняйте знак каждого веса (таблица из seed берёт abs только для столбца сумм)
    """
    return _right([np.abs(np.asarray(w, dtype=np.float64)) for w in token_weights])


def not_concatenated(token_weights):
    """looks like the per-response arrays came back as they were; concatenate them into one 1-D array

    ru: похоже, массивы по ответам возвращены как есть; склейте их в один одномерный массив
    """
    return [np.asarray(w, dtype=np.float64) for w in token_weights]


def zero_padded(token_weights):
    """looks like zero padding to the longest response;
    concatenate the real token weights only (sum_i |o_i| entries)

    ru: похоже на дополнение нулями до самого длинного ответа; склеивайте только настоящие веса токенов (sum_i |o_i|
    элементов)
    """
    arrays = [np.asarray(w, dtype=np.float64) for w in token_weights]
    width = max((a.size for a in arrays), default=0)
    return np.array([np.pad(a, (0, width - a.size)) for a in arrays]).reshape(-1)
