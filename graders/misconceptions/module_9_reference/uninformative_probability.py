"""Returning the probability that a group is all-equal, p^G + (1 - p)^G, instead of its complement."""

EXERCISE = "module_9_reference.informative_group_probability"
NAME = "uninformative_probability"
HINT = 'looks like p^G + (1 - p)^G, the chance of an all-equal (UNinformative) group; P_info is one minus that'


def informative_group_probability(p, group_size):
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return p ** group_size + (1.0 - p) ** group_size
