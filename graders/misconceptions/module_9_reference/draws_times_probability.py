"""Multiplying by P_info instead of dividing: the expected number of informative groups among B draws."""

EXERCISE = "module_9_reference.expected_draws_for_informative_groups"
NAME = "draws_times_probability"
HINT = 'looks like B * P_info (informative groups among B draws); the waiting time for B of them is B / P_info'


def expected_draws_for_informative_groups(num_informative, p, group_size):
    wanted = _integer(num_informative, "num_informative", 0)
    return wanted * informative_group_probability(p, group_size)
