"""Dividing by the success probability p of one answer instead of the informative-group probability."""

EXERCISE = "module_9_reference.expected_draws_for_informative_groups"
NAME = "divides_by_success_probability"
HINT = 'looks like B / p; a prompt helps when its GROUP is informative: divide by P_info = 1 - p^G - (1 - p)^G'


def expected_draws_for_informative_groups(num_informative, p, group_size):
    wanted = _integer(num_informative, "num_informative", 0)
    informative_group_probability(p, group_size)  # checks the arguments
    if wanted == 0:
        return 0.0
    return math.inf if p == 0.0 else wanted / p
