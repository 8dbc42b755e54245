"""Dividing by the mean response length instead of the total token count."""

EXERCISE = "module_9_reference.dapo_token_weights"
NAME = "mean_length_denominator"
HINT = 'looks like A_i / mean(|o|); the token-level loss divides by the total token count sum_j |o_j|'


def dapo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    advantages = group_relative_advantages(rewards, eps=eps)  # standardised
    return [np.full(size, a / (sum(sizes) / group)) for a, size in zip(advantages, sizes)]
