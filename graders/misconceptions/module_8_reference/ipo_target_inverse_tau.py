"""(h - 1/tau)^2: the factor 2 of the IPO target dropped."""

EXERCISE = "module_8_reference.ipo_loss"
NAME = "ipo_target_inverse_tau"
HINT = "looks like target 1/tau; the IPO target is 1/(2 tau)"


def ipo_loss(h, tau):
    h = _as_array("h", h)
    tau = _positive("tau", tau)
    return _out((h - 1.0 / tau) ** 2, h, tau)
