"""An extra 1/G on top of the token-level normalisation."""

EXERCISE = "module_9_reference.dapo_token_weights"
NAME = "extra_group_factor"
HINT = 'looks like A_i / (G * sum_j |o_j|); every token of the group counts once: A_i / sum_j |o_j|'


def dapo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    advantages = group_relative_advantages(rewards, eps=eps)  # standardised
    return [np.full(size, a / (group * sum(sizes))) for a, size in zip(advantages, sizes)]
