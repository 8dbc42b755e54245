"""lambda + eta (C - d) without the projection max(0, .): multipliers can go negative."""

EXERCISE = "module_8_reference.dual_ascent_step"
NAME = "dual_ascent_without_projection"
HINT = "a multiplier went negative: project the step onto lambda >= 0 with max(0, lambda + eta (C - d))"


def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):
    lam = _non_negative("multipliers", multipliers)
    costs = _as_array("observed_costs", observed_costs)
    limits_array = _as_array("limits", limits)
    _same_shape(("multipliers", "observed_costs", "limits"), lam, costs, limits_array)
    eta = float(_positive("learning_rate", learning_rate))
    return _out(lam + eta * (costs - limits_array), lam)
