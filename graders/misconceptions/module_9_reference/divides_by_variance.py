"""Dividing by the variance instead of the standard deviation."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "divides_by_variance"
HINT = 'looks like a division by the variance; GRPO divides by the standard deviation (its square root) + eps'


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=-1, keepdims=True)
    if not scale:
        return centred
    return centred / (r.var(axis=-1, ddof=ddof, keepdims=True) + eps)
