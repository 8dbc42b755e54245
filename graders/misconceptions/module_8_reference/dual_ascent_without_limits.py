"""max(0, lambda + eta C): the limits d are forgotten, so every multiplier only grows."""

EXERCISE = "module_8_reference.dual_ascent_step"
NAME = "dual_ascent_without_limits"
HINT = "the limits d_j are missing from the step: the gradient of the dual is C_hat_j - d_j, not C_hat_j"


def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):
    lam = _non_negative("multipliers", multipliers)
    costs = _as_array("observed_costs", observed_costs)
    limits_array = _as_array("limits", limits)
    _same_shape(("multipliers", "observed_costs", "limits"), lam, costs, limits_array)
    eta = float(_positive("learning_rate", learning_rate))
    return _out(np.maximum(0.0, lam + eta * costs), lam)
