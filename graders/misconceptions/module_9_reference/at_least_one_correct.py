"""Returning the chance that at least one answer is right, 1 - (1 - p)^G (that is pass@G)."""

EXERCISE = "module_9_reference.informative_group_probability"
NAME = "at_least_one_correct"
HINT = 'looks like 1 - (1 - p)^G (at least one right, i.e. pass@G); an all-correct group (p^G) is uninformative too'


def informative_group_probability(p, group_size):
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return 1.0 - (1.0 - p) ** group_size
