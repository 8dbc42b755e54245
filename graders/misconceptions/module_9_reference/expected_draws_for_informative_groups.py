"""Wrong versions of E[draws] = B / P_info (expected_draws_for_informative_groups).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def counts_only_wasted_draws(num_informative, p, group_size):
    """looks like B (1 - P_info) / P_info, the wasted draws only; the total number of draws is B / P_info

    ru: похоже на B (1 - P_info) / P_info, только напрасные попытки; общее число попыток равно B / P_info
    """
    wanted = _integer(num_informative, "num_informative", 0)
    informative = informative_group_probability(p, group_size)
    if wanted == 0:
        return 0.0
    return math.inf if informative == 0.0 else wanted * (1.0 - informative) / informative


def divides_by_success_probability(num_informative, p, group_size):
    """looks like B / p; a prompt helps when its GROUP is informative: divide by P_info = 1 - p^G - (1 - p)^G

    ru: похоже на B / p; промпт полезен, когда информативна его ГРУППА: делите на P_info = 1 - p^G - (1 - p)^G
    """
    wanted = _integer(num_informative, "num_informative", 0)
    informative_group_probability(p, group_size)  # checks the arguments
    if wanted == 0:
        return 0.0
    return math.inf if p == 0.0 else wanted / p


def draws_times_probability(num_informative, p, group_size):
    """looks like B * P_info (informative groups among B draws); the waiting time for B of them is B / P_info

    ru: похоже на B * P_info (число информативных групп среди B попыток); ожидаемое число попыток до B таких групп
    равно B / P_info
    """
    wanted = _integer(num_informative, "num_informative", 0)
    return wanted * informative_group_probability(p, group_size)


def inf_even_when_none_wanted(num_informative, p, group_size):
    """looks like inf for B = 0 when P_info = 0; wanting no informative group takes 0 draws whatever P_info is

    ru: похоже на inf при B = 0 и P_info = 0; если информативные группы не нужны, требуется 0 попыток при любом
    P_info
    """
    return math.inf if informative_group_probability(p, group_size) == 0.0 else _right(num_informative, p, group_size)
