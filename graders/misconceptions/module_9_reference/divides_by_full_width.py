"""Dividing the masked log-ratio sum by T instead of the number of active tokens."""

EXERCISE = "module_9_reference.gspo_sequence_ratios"
NAME = "divides_by_full_width"
HINT = 'looks like the masked sum divided by T; divide by the number of ACTIVE tokens of each response'


def gspo_sequence_ratios(new_logprobs, old_logprobs, mask):
    new = np.asarray(new_logprobs, dtype=np.float64)
    old = np.asarray(old_logprobs, dtype=np.float64)
    active = np.asarray(mask, dtype=np.float64) == 1
    log_ratio = np.where(active, new, 0.0) - np.where(active, old, 0.0)  # (N, T)
    return np.exp(log_ratio.sum(axis=1) / new.shape[1])
