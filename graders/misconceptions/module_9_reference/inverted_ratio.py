"""The ratio upside down: old over new."""

EXERCISE = "module_9_reference.gspo_sequence_ratios"
NAME = "inverted_ratio"
HINT = 'looks like exp(old - new); the ratio is pi_new / pi_old = exp(new_logprobs - old_logprobs)'


def gspo_sequence_ratios(new_logprobs, old_logprobs, mask):
    new = np.asarray(new_logprobs, dtype=np.float64)
    old = np.asarray(old_logprobs, dtype=np.float64)
    active = np.asarray(mask, dtype=np.float64) == 1
    log_ratio = np.where(active, new, 0.0) - np.where(active, old, 0.0)  # (N, T)
    counts = active.sum(axis=1)  # (N,)
    return np.exp(-log_ratio.sum(axis=1) / np.maximum(counts, 1))
