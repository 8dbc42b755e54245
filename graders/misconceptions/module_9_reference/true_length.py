"""Dr. GRPO divided by each response's true length |o_i| instead of the fixed budget L."""

EXERCISE = "module_9_reference.dr_grpo_token_weights"
NAME = "true_length"
HINT = 'looks like a division by the true length |o_i|; Dr. GRPO divides every response by the same budget L'


def dr_grpo_token_weights(rewards, lengths, fixed_length, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / (group * size)) for c, size in zip(centred, sizes)]
