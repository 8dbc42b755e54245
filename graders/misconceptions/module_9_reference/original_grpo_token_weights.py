"""Wrong versions of w_it = A_i / (G * |o_i|), A standardised (original_grpo_token_weights).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def no_group_factor(rewards, lengths, *, eps=1e-6):
    """looks like A_i / |o_i|: GRPO averages over the G responses too, so w = A_i / (G * |o_i|)

    ru: похоже на A_i / |o_i|: GRPO усредняет ещё и по G ответам, поэтому w = A_i / (G * |o_i|)
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / size) for a, size in zip(advantages, lengths)]


def no_length_normalisation(rewards, lengths, *, eps=1e-6):
    """looks like A_i / G per token: GRPO first averages over each response's tokens, w = A_i / (G * |o_i|)

    ru: похоже на A_i / G на токен: GRPO сначала усредняет по токенам каждого ответа, w = A_i / (G * |o_i|)
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / advantages.size) for a, size in zip(advantages, lengths)]


def original_centred_not_standardised(rewards, lengths, *, eps=1e-6):
    """looks like r_i - mean(r) without the std; original GRPO standardises: A_i = (r_i - mean) / (std + eps)

    ru: похоже на r_i - mean(r) без std; исходный GRPO стандартизует: A_i = (r_i - mean) / (std + eps)
    """
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / (centred.size * size)) for c, size in zip(centred, lengths)]


def token_level_normalisation(rewards, lengths, *, eps=1e-6):
    """looks like A_i / sum_j |o_j| (DAPO's token-level loss); original GRPO uses A_i / (G * |o_i|)

    ru: похоже на A_i / sum_j |o_j| (потеря DAPO на уровне токенов); исходный GRPO использует A_i / (G * |o_i|)
    """
    return dapo_token_weights(rewards, lengths, eps=eps)


def eps_inside_sqrt(rewards, lengths, *, eps=1e-6):
    """looks like A_i = (r_i - mean) / sqrt(var + eps); the standardisation adds eps to the std: (r_i - mean) / (std + eps)

    ru: похоже на A_i = (r_i - mean) / sqrt(var + eps); стандартизация прибавляет eps к std: (r_i - mean) / (std + eps)
    """
    r = np.asarray(rewards, dtype=np.float64)
    advantages = (r - r.mean()) / np.sqrt(r.var() + eps)
    return [np.full(size, a / (r.size * size)) for a, size in zip(advantages, lengths)]
