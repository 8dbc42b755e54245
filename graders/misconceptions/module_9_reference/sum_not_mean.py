"""exp of the SUM of token log-ratios: the sequence likelihood ratio, not length-normalised."""

EXERCISE = "module_9_reference.gspo_sequence_ratios"
NAME = "sum_not_mean"
HINT = 'looks like exp(sum of log-ratios), the raw sequence ratio; GSPO normalises by the response length: exp(mean)'


def gspo_sequence_ratios(new_logprobs, old_logprobs, mask):
    new = np.asarray(new_logprobs, dtype=np.float64)
    old = np.asarray(old_logprobs, dtype=np.float64)
    active = np.asarray(mask, dtype=np.float64) == 1
    log_ratio = np.where(active, new, 0.0) - np.where(active, old, 0.0)  # (N, T)
    return np.exp(log_ratio.sum(axis=1))
