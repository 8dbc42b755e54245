"""Dividing by the std without adding eps, so an all-equal group gives 0/0 = NaN."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "no_eps"
HINT = 'looks like eps is not added to the std: an all-equal group gives NaN (0/0); its advantages are zeros'


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=-1, keepdims=True)
    if not scale:
        return centred
    return centred / r.std(axis=-1, ddof=ddof, keepdims=True)
