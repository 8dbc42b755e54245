"""-sum p log p computed directly: 0 * log 0 gives NaN."""

EXERCISE = "module_9_reference.categorical_entropy"
NAME = "nan_on_zero_probability"
HINT = 'looks like NaN from 0 * log(0); by convention 0 log 0 = 0, so skip zero probabilities'


def categorical_entropy(probabilities):
    p = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -(p * np.log(p)).sum(axis=-1)
    return float(entropy) if p.ndim == 1 else entropy
