"""Wrong versions of P_info = 1 - p^G - (1 - p)^G (informative_group_probability).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def at_least_one_correct(p, group_size):
    """looks like 1 - (1 - p)^G (at least one right, i.e. pass@G);
    an all-correct group (p^G) is uninformative too

    ru: похоже на 1 - (1 - p)^G (хотя бы один верный, т. е. pass@G); группа из одних верных ответов (p^G) тоже
    неинформативна
    """
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return 1.0 - (1.0 - p) ** group_size


def forgets_all_wrong_group(p, group_size):
    """looks like 1 - p^G: an all-WRONG group ((1 - p)^G) carries no signal either; P_info = 1 - p^G - (1 - p)^G

    ru: похоже на 1 - p^G: группа из одних НЕВЕРНЫХ ответов ((1 - p)^G) тоже не несёт сигнала; P_info = 1 - p^G - (1
    - p)^G
    """
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return 1.0 - p ** group_size


def two_answer_formula(p, group_size):
    """looks like 2p(1 - p), which holds for G = 2 only; use 1 - p^G - (1 - p)^G

    ru: похоже на 2p(1 - p), что верно только при G = 2; используйте 1 - p^G - (1 - p)^G
    """
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return 0.0 if group_size == 1 else 2.0 * p * (1.0 - p)


def uninformative_probability(p, group_size):
    """looks like p^G + (1 - p)^G, the chance of an all-equal (UNinformative) group; P_info is one minus that

    ru: похоже на p^G + (1 - p)^G, вероятность группы из одинаковых ответов (НЕинформативной); P_info — единица
    минус это
    """
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    return p ** group_size + (1.0 - p) ** group_size
