"""p^k: the chance that ALL k answers are right."""

EXERCISE = "module_9_reference.pass_at_k_independent"
NAME = "all_attempts_correct"
HINT = 'looks like p^k (all k right); pass@k needs at least ONE right: 1 - (1 - p)^k'


def pass_at_k_independent(p, k):
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return p ** k
