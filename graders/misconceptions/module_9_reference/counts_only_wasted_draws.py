"""Counting only the uninformative draws before the B-th success, B(1 - P)/P (the negative binomial's failures)."""

EXERCISE = "module_9_reference.expected_draws_for_informative_groups"
NAME = "counts_only_wasted_draws"
HINT = 'looks like B (1 - P_info) / P_info, the wasted draws only; the total number of draws is B / P_info'


def expected_draws_for_informative_groups(num_informative, p, group_size):
    wanted = _integer(num_informative, "num_informative", 0)
    informative = informative_group_probability(p, group_size)
    if wanted == 0:
        return 0.0
    return math.inf if informative == 0.0 else wanted * (1.0 - informative) / informative
