"""Ignoring the ddof argument: always the population std."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "ddof_ignored"
HINT = "looks like the ddof argument is ignored; ddof=1 (TRL's convention) must give the sample std"


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=-1, keepdims=True)
    if not scale:
        return centred
    return centred / (r.std(axis=-1, keepdims=True) + eps)
