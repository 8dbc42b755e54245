"""Concatenating the absolute token weights."""

EXERCISE = "module_9_reference.flatten_token_weights"
NAME = "absolute_values"
HINT = "looks like |w| was concatenated; keep each weight's sign (the seed table takes abs only for its sum column)"


def flatten_token_weights(token_weights):
    arrays = [np.abs(np.asarray(w, dtype=np.float64)) for w in token_weights]
    return np.concatenate(arrays) if arrays else np.zeros(0)
