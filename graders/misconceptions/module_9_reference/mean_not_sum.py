"""The mean token weight of each response instead of the sum."""

EXERCISE = "module_9_reference.response_contributions"
NAME = "mean_not_sum"
HINT = "looks like the MEAN over tokens; a response's contribution is the SUM of its token weights"


def response_contributions(token_weights):
    return np.array([np.mean(np.asarray(w, dtype=np.float64)) for w in token_weights])
