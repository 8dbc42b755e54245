"""|h - 1/(2 tau)|: an absolute error instead of the squared one."""

EXERCISE = "module_8_reference.ipo_loss"
NAME = "ipo_absolute_error"
HINT = "looks like |h - 1/(2 tau)|; IPO is a SQUARED regression loss, (h - 1/(2 tau))^2"


def ipo_loss(h, tau):
    h = _as_array("h", h)
    tau = _positive("tau", tau)
    return _out(np.abs(h - 1.0 / (2.0 * tau)), h, tau)
