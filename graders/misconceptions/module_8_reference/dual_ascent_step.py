"""Wrong versions of lambda_j <- max(0, lambda_j + eta (C_hat_j - d_j)) (dual_ascent_step).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def dual_ascent_projected_increment(multipliers, observed_costs, limits, learning_rate):
    """lambda never decreases: project the NEW value, max(0, lambda + eta (C - d)), not the increment

    ru: lambda никогда не уменьшается: проецируйте НОВОЕ значение, max(0, lambda + eta (C - d)), а не приращение
    """
    lam, costs, limits = (np.asarray(value, dtype=np.float64) for value in (multipliers, observed_costs, limits))
    return _out(lam + np.maximum(0.0, float(learning_rate) * (costs - limits)), lam)


def dual_ascent_without_limits(multipliers, observed_costs, limits, learning_rate):
    """the limits d_j are missing from the step: the gradient of the dual is C_hat_j - d_j, not C_hat_j

    ru: в шаге нет порогов d_j: градиент двойственной функции равен C_hat_j - d_j, а не C_hat_j
    """
    return _right(multipliers, observed_costs, np.zeros(np.shape(limits)), learning_rate)  # d = 0


def dual_ascent_without_projection(multipliers, observed_costs, limits, learning_rate):
    """a multiplier went negative: project the step onto lambda >= 0 with max(0, lambda + eta (C - d))

    ru: множитель стал отрицательным: проецируйте шаг на lambda >= 0 с помощью max(0, lambda + eta (C - d))
    """
    lam, costs, limits = (np.asarray(value, dtype=np.float64) for value in (multipliers, observed_costs, limits))
    return _out(lam + float(learning_rate) * (costs - limits), lam)


def dual_ascent_wrong_sign(multipliers, observed_costs, limits, learning_rate):
    """the step has the wrong sign: a violated constraint (C > d) must RAISE lambda: max(0, lambda + eta (C - d))

    ru: у шага не тот знак: нарушенное ограничение (C > d) должно УВЕЛИЧИВАТЬ lambda: max(0, lambda + eta (C - d))
    """
    return _right(multipliers, limits, observed_costs, learning_rate)  # + eta (d - C)
