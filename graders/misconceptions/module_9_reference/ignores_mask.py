"""Averaging the log-ratio over all T positions, padding included."""

EXERCISE = "module_9_reference.gspo_sequence_ratios"
NAME = "ignores_mask"
HINT = 'looks like padding positions are included; average only over active tokens (mask == 1)'


def gspo_sequence_ratios(new_logprobs, old_logprobs, mask):
    new = np.asarray(new_logprobs, dtype=np.float64)
    old = np.asarray(old_logprobs, dtype=np.float64)
    return np.exp((new - old).mean(axis=1))  # mask unused
