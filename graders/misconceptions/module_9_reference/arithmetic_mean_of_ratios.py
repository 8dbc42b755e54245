"""The arithmetic mean of the token ratios instead of their geometric mean."""

EXERCISE = "module_9_reference.gspo_sequence_ratios"
NAME = "arithmetic_mean_of_ratios"
HINT = 'looks like the arithmetic mean of exp(new - old); GSPO takes exp of the MEAN LOG-ratio (a geometric mean)'


def gspo_sequence_ratios(new_logprobs, old_logprobs, mask):
    new = np.asarray(new_logprobs, dtype=np.float64)
    old = np.asarray(old_logprobs, dtype=np.float64)
    active = np.asarray(mask, dtype=np.float64) == 1
    log_ratio = np.where(active, new, 0.0) - np.where(active, old, 0.0)  # (N, T)
    counts = active.sum(axis=1)  # (N,)
    token_ratios = np.where(active, np.exp(log_ratio), 0.0)
    return np.where(counts > 0, token_ratios.sum(axis=1) / np.maximum(counts, 1), 1.0)
