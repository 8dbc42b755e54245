"""(h - tau/2)^2: the IPO target written as tau/2 instead of 1/(2 tau)."""

EXERCISE = "module_8_reference.ipo_loss"
NAME = "ipo_target_half_tau"
HINT = "looks like target tau/2; IPO regresses the margin to 1/(2 tau): L = (h - 1/(2 tau))^2"


def ipo_loss(h, tau):
    h = _as_array("h", h)
    tau = _positive("tau", tau)
    return _out((h - tau / 2.0) ** 2, h, tau)
