"""Wrong versions of w_it = A_i / sum_j |o_j|, A standardised (dapo_token_weights).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def dapo_centred_not_standardised(rewards, lengths, *, eps=1e-6):
    """looks like r_i - mean(r) without the std; DAPO keeps the standardised advantage: A_i / sum_j |o_j|

    ru: похоже на r_i - mean(r) без std; DAPO сохраняет стандартизованное преимущество: A_i / sum_j |o_j|
    """
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / sum(lengths)) for c, size in zip(centred, lengths)]


def extra_group_factor(rewards, lengths, *, eps=1e-6):
    """looks like A_i / (G * sum_j |o_j|); every token of the group counts once: A_i / sum_j |o_j|

    ru: похоже на A_i / (G * sum_j |o_j|); каждый токен группы учитывается один раз: A_i / sum_j |o_j|
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / (advantages.size * sum(lengths))) for a, size in zip(advantages, lengths)]


def mean_length_denominator(rewards, lengths, *, eps=1e-6):
    """looks like A_i / mean(|o|); the token-level loss divides by the total token count sum_j |o_j|

    ru: похоже на A_i / mean(|o|); потеря на уровне токенов делит на общее число токенов sum_j |o_j|
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / (sum(lengths) / advantages.size)) for a, size in zip(advantages, lengths)]


def per_response_normalisation(rewards, lengths, *, eps=1e-6):
    """looks like a normalisation per response (A_i / (G |o_i|)); DAPO divides by the group's TOTAL token count

    ru: похоже на нормировку по каждому ответу (A_i / (G |o_i|)); DAPO делит на ОБЩЕЕ число токенов группы
    """
    return original_grpo_token_weights(rewards, lengths, eps=eps)


def own_length_denominator(rewards, lengths, *, eps=1e-6):
    """looks like A_i / |o_i|: each response divided by its OWN length; DAPO divides every token by the group's total
    token count sum_j |o_j|

    ru: похоже на A_i / |o_i|: каждый ответ делится на СВОЮ длину; DAPO делит каждый токен на общее число токенов
    группы sum_j |o_j|
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / size) for a, size in zip(advantages, lengths)]


def group_times_max_length(rewards, lengths, *, eps=1e-6):
    """looks like A_i / (G * max_j |o_j|), a padded-batch constant; DAPO divides by the tokens really generated:
    A_i / sum_j |o_j|

    ru: похоже на A_i / (G * max_j |o_j|), константу батча с паддингом; DAPO делит на число действительно
    сгенерированных токенов: A_i / sum_j |o_j|
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / (advantages.size * max(lengths))) for a, size in zip(advantages, lengths)]
