"""Using the G = 2 answer 2p(1 - p) for every group size."""

EXERCISE = "module_9_reference.informative_group_probability"
NAME = "two_answer_formula"
HINT = 'looks like 2p(1 - p), which holds for G = 2 only; use 1 - p^G - (1 - p)^G'


def informative_group_probability(p, group_size):
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return 0.0 if group_size == 1 else 2.0 * p * (1.0 - p)
