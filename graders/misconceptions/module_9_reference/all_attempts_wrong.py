"""(1 - p)^k: the chance that every attempt fails."""

EXERCISE = "module_9_reference.pass_at_k_independent"
NAME = "all_attempts_wrong"
HINT = 'looks like (1 - p)^k, the chance that all k fail; pass@k is one minus that'


def pass_at_k_independent(p, k):
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return (1.0 - p) ** k
