"""Centred rewards without dividing by the group std."""

EXERCISE = "module_9_reference.original_grpo_token_weights"
NAME = "original_centred_not_standardised"
HINT = 'looks like r_i - mean(r) without the std; original GRPO standardises: A_i = (r_i - mean) / (std + eps)'


def original_grpo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / (group * size)) for c, size in zip(centred, sizes)]
