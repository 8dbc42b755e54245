"""Wrong versions of L = E[R] - sum_j lambda_j (E[C_j] - d_j) (constrained_lagrangian).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def lagrangian_only_violations(expected_reward, expected_costs, limits, multipliers):
    """satisfied constraints were dropped (max(0, .)); in the Lagrangian slack E[C_j] < d_j counts too, raising L

    ru: выполненные ограничения отброшены (max(0, .)); в лагранжиане запас E[C_j] < d_j тоже учитывается и
    увеличивает L
    """
    costs, limits, multipliers = (np.asarray(value, dtype=np.float64).reshape(-1)
                                  for value in (expected_costs, limits, multipliers))
    return float(expected_reward - np.sum(multipliers * np.maximum(0.0, costs - limits)))


def lagrangian_plus_penalty(expected_reward, expected_costs, limits, multipliers):
    """the penalty has the wrong sign: L = E[R] - sum_j lambda_j (E[C_j] - d_j) (a violation must LOWER L)

    ru: у штрафа не тот знак: L = E[R] - sum_j lambda_j (E[C_j] - d_j) (нарушение должно УМЕНЬШАТЬ L)
    """
    return _right(expected_reward, limits, expected_costs, multipliers)  # - lambda (d - C)


def lagrangian_without_limits(expected_reward, expected_costs, limits, multipliers):
    """the limits d_j are missing: each constraint enters as lambda_j (E[C_j] - d_j), not lambda_j E[C_j]

    ru: нет порогов d_j: каждое ограничение входит как lambda_j (E[C_j] - d_j), а не lambda_j E[C_j]
    """
    return _right(expected_reward, expected_costs, np.zeros(np.shape(limits)), multipliers)  # d = 0
