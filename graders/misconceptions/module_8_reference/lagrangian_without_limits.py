"""E[R] - sum lambda E[C]: the limits d_j are forgotten."""

EXERCISE = "module_8_reference.constrained_lagrangian"
NAME = "lagrangian_without_limits"
HINT = "the limits d_j are missing: each constraint enters as lambda_j (E[C_j] - d_j), not lambda_j E[C_j]"


def constrained_lagrangian(expected_reward, expected_costs, limits, multipliers):
    reward = _as_array("expected_reward", expected_reward)
    costs = _as_array("expected_costs", expected_costs).reshape(-1)
    limits = _as_array("limits", limits).reshape(-1)
    multipliers = _non_negative("multipliers", multipliers).reshape(-1)
    _same_shape(("expected_costs", "limits", "multipliers"), costs, limits, multipliers)
    return float(reward - np.sum(multipliers * costs))
