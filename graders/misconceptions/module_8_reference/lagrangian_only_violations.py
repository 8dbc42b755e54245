"""E[R] - sum lambda max(0, E[C] - d): a penalty method, not the Lagrangian (slack earns nothing)."""

EXERCISE = "module_8_reference.constrained_lagrangian"
NAME = "lagrangian_only_violations"
HINT = "satisfied constraints were dropped (max(0, .)); in the Lagrangian slack E[C_j] < d_j counts too, raising L"


def constrained_lagrangian(expected_reward, expected_costs, limits, multipliers):
    reward = _as_array("expected_reward", expected_reward)
    costs = _as_array("expected_costs", expected_costs).reshape(-1)
    limits = _as_array("limits", limits).reshape(-1)
    multipliers = _non_negative("multipliers", multipliers).reshape(-1)
    _same_shape(("expected_costs", "limits", "multipliers"), costs, limits, multipliers)
    return float(reward - np.sum(multipliers * np.maximum(0.0, costs - limits)))
