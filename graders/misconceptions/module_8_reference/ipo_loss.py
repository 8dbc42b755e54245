"""Wrong versions of L = (h - 1/(2 tau))^2 (ipo_loss).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def ipo_absolute_error(h, tau):
    """looks like |h - 1/(2 tau)|; IPO is a SQUARED regression loss, (h - 1/(2 tau))^2

    ru: похоже на |h - 1/(2 tau)|; IPO — КВАДРАТИЧНАЯ регрессионная потеря, (h - 1/(2 tau))^2
    """
    h, tau = np.asarray(h, dtype=np.float64), np.asarray(tau, dtype=np.float64)
    return _out(np.abs(h - 1.0 / (2.0 * tau)), h, tau)


def ipo_target_half_tau(h, tau):
    """looks like target tau/2; IPO regresses the margin to 1/(2 tau): L = (h - 1/(2 tau))^2

    ru: похоже на цель tau/2; IPO приближает отступ к 1/(2 tau): L = (h - 1/(2 tau))^2
    """
    h, tau = np.asarray(h, dtype=np.float64), np.asarray(tau, dtype=np.float64)
    return _out((h - tau / 2.0) ** 2, h, tau)


def ipo_target_inverse_tau(h, tau):
    """looks like target 1/tau; the IPO target is 1/(2 tau)

    ru: похоже на цель 1/tau; цель IPO равна 1/(2 tau)
    """
    return _right(h, np.divide(tau, 2.0))  # 1/(2 (tau/2)) = 1/tau


def ipo_target_tau(h, tau):
    """looks like target tau; IPO regresses the margin to 1/(2 tau) (a small tau asks for a LARGE margin):
    L = (h - 1/(2 tau))^2

    ru: похоже на цель tau; IPO приближает отступ к 1/(2 tau) (малое tau требует БОЛЬШОГО отступа): L = (h - 1/(2
    tau))^2
    """
    h, tau = np.asarray(h, dtype=np.float64), np.asarray(tau, dtype=np.float64)
    return _out((h - tau) ** 2, h, tau)
