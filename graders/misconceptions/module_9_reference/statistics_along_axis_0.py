"""Taking mean and std along axis 0 (across groups) instead of the last axis (within each group)."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "statistics_along_axis_0"
HINT = 'looks like mean/std along axis 0 (across groups); groups run along the LAST axis of (num_groups, G)'


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=0, keepdims=True)
    if not scale:
        return centred
    return centred / (r.std(axis=0, ddof=ddof, keepdims=True) + eps)
