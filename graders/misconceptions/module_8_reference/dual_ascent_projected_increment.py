"""lambda + max(0, eta (C - d)): the projection put on the increment, so lambda can never decrease."""

EXERCISE = "module_8_reference.dual_ascent_step"
NAME = "dual_ascent_projected_increment"
HINT = "lambda never decreases: project the NEW value, max(0, lambda + eta (C - d)), not the increment"


def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):
    lam = _non_negative("multipliers", multipliers)
    costs = _as_array("observed_costs", observed_costs)
    limits_array = _as_array("limits", limits)
    _same_shape(("multipliers", "observed_costs", "limits"), lam, costs, limits_array)
    eta = float(_positive("learning_rate", learning_rate))
    return _out(lam + np.maximum(0.0, eta * (costs - limits_array)), lam)
