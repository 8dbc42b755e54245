"""Summing over every axis: one number for a batch of distributions."""

EXERCISE = "module_9_reference.categorical_entropy"
NAME = "sums_over_batch"
HINT = 'looks like one entropy for the whole batch; H is taken along the LAST axis, one value per distribution'


def categorical_entropy(probabilities):
    p = np.asarray(probabilities, dtype=np.float64)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(-terms.sum())
