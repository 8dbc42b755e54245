"""k * p (capped at 1): adding the chances as if attempts could not both succeed."""

EXERCISE = "module_9_reference.pass_at_k_independent"
NAME = "union_bound"
HINT = 'looks like min(1, k p), a union bound; independent attempts give 1 - (1 - p)^k'


def pass_at_k_independent(p, k):
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return min(1.0, k * p)
