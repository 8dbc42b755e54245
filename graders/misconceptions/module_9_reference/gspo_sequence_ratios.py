"""Wrong versions of s_i = exp(mean over active tokens of new - old) (gspo_sequence_ratios).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _log_ratios(new_logprobs, old_logprobs, mask):
    """(new - old, 0 where masked; the active positions), both (N, T), without _right's checks."""
    active = np.asarray(mask, dtype=np.float64) == 1
    new, old = np.asarray(new_logprobs, dtype=np.float64), np.asarray(old_logprobs, dtype=np.float64)
    return np.where(active, new, 0.0) - np.where(active, old, 0.0), active


def arithmetic_mean_of_ratios(new_logprobs, old_logprobs, mask):
    """looks like the arithmetic mean of exp(new - old); GSPO takes exp of the MEAN LOG-ratio (a geometric mean)

    ru: похоже на арифметическое среднее exp(new - old); GSPO берёт exp от СРЕДНЕГО ЛОГАРИФМА отношения
    (геометрическое среднее)
    """
    log_ratio, active = _log_ratios(new_logprobs, old_logprobs, mask)
    counts = active.sum(axis=1)  # (N,)
    token_ratios = np.where(active, np.exp(log_ratio), 0.0)
    return np.where(counts > 0, token_ratios.sum(axis=1) / np.maximum(counts, 1), 1.0)


def divides_by_full_width(new_logprobs, old_logprobs, mask):
    """looks like the masked sum divided by T; divide by the number of ACTIVE tokens of each response

    ru: похоже, маскированная сумма поделена на T; делите на число АКТИВНЫХ токенов каждого ответа
    """
    log_ratio, _active = _log_ratios(new_logprobs, old_logprobs, mask)
    return np.exp(log_ratio.sum(axis=1) / log_ratio.shape[1])


def ignores_mask(new_logprobs, old_logprobs, mask):
    """looks like padding positions are included; average only over active tokens (mask == 1)

    ru: похоже, позиции паддинга учтены; усредняйте только по активным токенам (mask == 1)
    """
    log_ratio = np.asarray(new_logprobs, dtype=np.float64) - np.asarray(old_logprobs, dtype=np.float64)
    return np.exp(log_ratio.mean(axis=1))  # padding included


def inverted_ratio(new_logprobs, old_logprobs, mask):
    """looks like exp(old - new); the ratio is pi_new / pi_old = exp(new_logprobs - old_logprobs)

    ru: похоже на exp(old - new); отношение равно pi_new / pi_old = exp(new_logprobs - old_logprobs)
    """
    return _right(old_logprobs, new_logprobs, mask)


def sum_not_mean(new_logprobs, old_logprobs, mask):
    """looks like exp(sum of log-ratios), the raw sequence ratio;
    GSPO normalises by the response length: exp(mean)

    ru: похоже на exp(суммы логарифмов отношений), сырое отношение для последовательности; GSPO нормирует на длину
    ответа: exp(mean)
    """
    log_ratio, _active = _log_ratios(new_logprobs, old_logprobs, mask)
    return np.exp(log_ratio.sum(axis=1))
