"""E[R] + sum lambda (E[C] - d): the constraint violation is added instead of subtracted."""

EXERCISE = "module_8_reference.constrained_lagrangian"
NAME = "lagrangian_plus_penalty"
HINT = "the penalty has the wrong sign: L = E[R] - sum_j lambda_j (E[C_j] - d_j) (a violation must LOWER L)"


def constrained_lagrangian(expected_reward, expected_costs, limits, multipliers):
    reward = _as_array("expected_reward", expected_reward)
    costs = _as_array("expected_costs", expected_costs).reshape(-1)
    limits = _as_array("limits", limits).reshape(-1)
    multipliers = _non_negative("multipliers", multipliers).reshape(-1)
    _same_shape(("expected_costs", "limits", "multipliers"), costs, limits, multipliers)
    return float(reward + np.sum(multipliers * (costs - limits)))
