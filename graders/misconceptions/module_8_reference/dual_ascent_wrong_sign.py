"""max(0, lambda - eta (C - d)): a descent step, so violated constraints get a SMALLER multiplier."""

EXERCISE = "module_8_reference.dual_ascent_step"
NAME = "dual_ascent_wrong_sign"
HINT = "the step has the wrong sign: a violated constraint (C > d) must RAISE lambda: max(0, lambda + eta (C - d))"


def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):
    lam = _non_negative("multipliers", multipliers)
    costs = _as_array("observed_costs", observed_costs)
    limits_array = _as_array("limits", limits)
    _same_shape(("multipliers", "observed_costs", "limits"), lam, costs, limits_array)
    eta = float(_positive("learning_rate", learning_rate))
    return _out(np.maximum(0.0, lam - eta * (costs - limits_array)), lam)
