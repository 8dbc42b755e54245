"""Subtracting only the all-correct group: 1 - p^G."""

EXERCISE = "module_9_reference.informative_group_probability"
NAME = "forgets_all_wrong_group"
HINT = 'looks like 1 - p^G: an all-WRONG group ((1 - p)^G) carries no signal either; P_info = 1 - p^G - (1 - p)^G'


def informative_group_probability(p, group_size):
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return 1.0 - p ** group_size
