"""Summing absolute token weights (the seed table's other column)."""

EXERCISE = "module_9_reference.response_contributions"
NAME = "absolute_sum"
HINT = 'looks like sum |w_it|; the contribution keeps the sign: c_i = sum_t w_it'


def response_contributions(token_weights):
    return np.array([np.abs(np.asarray(w, dtype=np.float64)).sum() for w in token_weights])
