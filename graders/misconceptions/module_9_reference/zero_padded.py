"""Padding every response to the longest one with zeros, then flattening."""

EXERCISE = "module_9_reference.flatten_token_weights"
NAME = "zero_padded"
HINT = 'looks like zero padding to the longest response; concatenate the real token weights only (sum_i |o_i| entries)'


def flatten_token_weights(token_weights):
    arrays = [np.asarray(w, dtype=np.float64) for w in token_weights]
    width = max((a.size for a in arrays), default=0)
    return np.array([np.pad(a, (0, width - a.size)) for a in arrays]).reshape(-1)
