"""Dividing by the sample std (ddof=1) instead of the population std the lecture uses."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "sample_std"
HINT = "looks like sample std (ddof=1); the lecture uses population std (ddof=0)"


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=-1, keepdims=True)
    if not scale:
        return centred
    return centred / (r.std(axis=-1, ddof=1, keepdims=True) + eps)
