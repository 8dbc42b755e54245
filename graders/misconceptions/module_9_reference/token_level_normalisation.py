"""DAPO's token-level normalisation A_i / sum_j |o_j| used for GRPO."""

EXERCISE = "module_9_reference.original_grpo_token_weights"
NAME = "token_level_normalisation"
HINT = "looks like A_i / sum_j |o_j| (DAPO's token-level loss); original GRPO uses A_i / (G * |o_i|)"


def original_grpo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    advantages = group_relative_advantages(rewards, eps=eps)  # standardised
    return [np.full(size, a / sum(sizes)) for a, size in zip(advantages, sizes)]
