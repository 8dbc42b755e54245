"""Centred rewards without the std division."""

EXERCISE = "module_9_reference.dapo_token_weights"
NAME = "dapo_centred_not_standardised"
HINT = 'looks like r_i - mean(r) without the std; DAPO keeps the standardised advantage: A_i / sum_j |o_j|'


def dapo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    centred = group_relative_advantages(rewards, scale=False)  # r_i - mean(r)
    return [np.full(size, c / sum(sizes)) for c, size in zip(centred, sizes)]
