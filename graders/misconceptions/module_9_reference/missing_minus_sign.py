"""sum p log p without the minus sign: a negative entropy."""

EXERCISE = "module_9_reference.categorical_entropy"
NAME = "missing_minus_sign"
HINT = 'looks like sum p log p without the minus; H = -sum_k p_k log p_k >= 0'


def categorical_entropy(probabilities):
    p = np.asarray(probabilities, dtype=np.float64)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    entropy = terms.sum(axis=-1)
    return float(entropy) if p.ndim == 1 else entropy
