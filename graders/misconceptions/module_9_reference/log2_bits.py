"""Entropy in bits (log2) instead of nats."""

EXERCISE = "module_9_reference.categorical_entropy"
NAME = "log2_bits"
HINT = 'looks like log2 (bits); the course uses natural logarithms (nats)'


def categorical_entropy(probabilities):
    p = np.asarray(probabilities, dtype=np.float64)
    terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    entropy = -terms.sum(axis=-1)
    return float(entropy) if p.ndim == 1 else entropy
