"""(r_i - mean) / L: the 1/G of the mean over responses is missing."""

EXERCISE = "module_9_reference.dr_grpo_token_weights"
NAME = "dr_grpo_no_group_factor"
HINT = 'looks like (r_i - mean(r)) / L; the mean over the G responses gives w = (r_i - mean(r)) / (G * L)'


def dr_grpo_token_weights(rewards, lengths, fixed_length, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / fixed_length) for c, size in zip(centred, sizes)]
