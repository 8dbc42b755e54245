"""Returning the list of per-response arrays without concatenating."""

EXERCISE = "module_9_reference.flatten_token_weights"
NAME = "not_concatenated"
HINT = 'looks like the per-response arrays came back as they were; concatenate them into one 1-D array'


def flatten_token_weights(token_weights):
    return [np.asarray(w, dtype=np.float64) for w in token_weights]
