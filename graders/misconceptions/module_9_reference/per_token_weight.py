"""Returning one token's weight per response (they are often all equal)."""

EXERCISE = "module_9_reference.response_contributions"
NAME = "per_token_weight"
HINT = "looks like one token's weight per response; sum all |o_i| token weights: c_i = sum_t w_it"


def response_contributions(token_weights):
    return np.array([float(np.asarray(w, dtype=np.float64)[0]) for w in token_weights])
