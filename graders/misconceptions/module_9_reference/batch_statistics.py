"""Standardising with the mean and std of the whole batch instead of each group's own."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "batch_statistics"
HINT = "looks like the mean/std of the whole batch; GRPO standardises within each group (last axis)"


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean()
    if not scale:
        return centred
    return centred / (r.std(ddof=ddof) + eps)
