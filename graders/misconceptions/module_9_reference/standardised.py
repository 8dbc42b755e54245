"""Dr. GRPO with standardised advantages: the std division kept."""

EXERCISE = "module_9_reference.dr_grpo_token_weights"
NAME = "standardised"
HINT = 'looks like standardised advantages; Dr. GRPO drops the std: w = (r_i - mean(r)) / (G * L)'


def dr_grpo_token_weights(rewards, lengths, fixed_length, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    advantages = group_relative_advantages(rewards, eps=eps)  # standardised
    return [np.full(size, a / (group * fixed_length)) for a, size in zip(advantages, sizes)]
