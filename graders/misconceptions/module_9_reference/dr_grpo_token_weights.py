"""Wrong versions of w_it = (r_i - mean(r)) / (G * L), L = fixed_length (dr_grpo_token_weights).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def dr_grpo_no_group_factor(rewards, lengths, fixed_length, *, eps=1e-6):
    """looks like (r_i - mean(r)) / L; the mean over the G responses gives w = (r_i - mean(r)) / (G * L)

    ru: похоже на (r_i - mean(r)) / L; усреднение по G ответам даёт w = (r_i - mean(r)) / (G * L)
    """
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / fixed_length) for c, size in zip(centred, lengths)]


def longest_response_as_budget(rewards, lengths, fixed_length, *, eps=1e-6):
    """looks like L = max(lengths); Dr. GRPO's L is the fixed generation budget (fixed_length)

    ru: похоже на L = max(lengths); в Dr. GRPO L — фиксированный бюджет генерации (fixed_length)
    """
    return _right(rewards, lengths, max(lengths), eps=eps)


def standardised(rewards, lengths, fixed_length, *, eps=1e-6):
    """looks like standardised advantages; Dr. GRPO drops the std: w = (r_i - mean(r)) / (G * L)

    ru: похоже на стандартизованные преимущества; Dr. GRPO убирает std: w = (r_i - mean(r)) / (G * L)
    """
    advantages = group_relative_advantages(rewards, eps=eps)
    return [np.full(size, a / (advantages.size * fixed_length)) for a, size in zip(advantages, lengths)]


def true_length(rewards, lengths, fixed_length, *, eps=1e-6):
    """looks like a division by the true length |o_i|; Dr. GRPO divides every response by the same budget L

    ru: похоже на деление на истинную длину |o_i|; Dr. GRPO делит каждый ответ на один и тот же бюджет L
    """
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / (centred.size * size)) for c, size in zip(centred, lengths)]
