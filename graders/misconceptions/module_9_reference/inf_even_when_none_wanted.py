"""Returning inf whenever P_info = 0, even when no informative group is wanted (B = 0 needs 0 draws)."""

EXERCISE = "module_9_reference.expected_draws_for_informative_groups"
NAME = "inf_even_when_none_wanted"
HINT = 'looks like inf for B = 0 when P_info = 0; wanting no informative group takes 0 draws whatever P_info is'


def expected_draws_for_informative_groups(num_informative, p, group_size):
    wanted = _integer(num_informative, "num_informative", 0)
    informative = informative_group_probability(p, group_size)
    return math.inf if informative == 0.0 else wanted / informative
