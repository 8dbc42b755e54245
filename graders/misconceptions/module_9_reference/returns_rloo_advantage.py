"""Returning the RLOO advantage r_i - b_i instead of the baseline b_i."""

EXERCISE = "module_9_reference.leave_one_out_baseline"
NAME = "returns_rloo_advantage"
HINT = 'looks like r_i - b_i (the RLOO advantage); this function returns the baseline b_i itself'


def leave_one_out_baseline(rewards):
    r = np.asarray(rewards, dtype=np.float64)
    return r - (r.sum(axis=-1, keepdims=True) - r) / (r.shape[-1] - 1)
