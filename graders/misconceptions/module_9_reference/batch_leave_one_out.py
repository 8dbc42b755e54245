"""Leaving one out of the whole batch instead of its own group."""

EXERCISE = "module_9_reference.leave_one_out_baseline"
NAME = "batch_leave_one_out"
HINT = 'looks like the other answers of the whole BATCH; RLOO averages the other answers of the same group (last axis)'


def leave_one_out_baseline(rewards):
    r = np.asarray(rewards, dtype=np.float64)
    return (r.sum() - r) / (r.size - 1)
