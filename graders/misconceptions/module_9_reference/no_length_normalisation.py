"""A_i / G on every token: the per-response mean over tokens is missing."""

EXERCISE = "module_9_reference.original_grpo_token_weights"
NAME = "no_length_normalisation"
HINT = "looks like A_i / G per token: GRPO first averages over each response's tokens, w = A_i / (G * |o_i|)"


def original_grpo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    advantages = group_relative_advantages(rewards, eps=eps)  # standardised
    return [np.full(size, a / group) for a, size in zip(advantages, sizes)]
