"""Wrong versions of (A > 0 and rho > 1 + eps_high) or (A < 0 and rho < 1 - eps_low) (clip_activity).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def activity_symmetric_eps_low(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like eps_low used on both sides; A > 0 is clipped above 1 + eps_high

    ru: похоже, eps_low использован с обеих сторон; при A > 0 отсечение идёт выше 1 + eps_high
    """
    return _right(ratios, advantages, eps_low, eps_low)


def ignores_advantage_sign(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like every ratio outside the range counts;
    the clip only binds for A > 0 above 1 + eps_high and A < 0 below 1 - eps_low

    ru: похоже, учитывается каждое отношение вне диапазона; отсечение действует только при A > 0 выше 1 + eps_high и
    при A < 0 ниже 1 - eps_low
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return (ratio > 1.0 + eps_high) | (ratio < 1.0 - eps_low)


def non_strict_inequalities(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like >= / <=: on the boundary both branches are equal,
    so the token still gets gradient (use > and <)

    ru: похоже на >= / <=: на границе обе ветви равны, поэтому токен всё ещё получает градиент (используйте > и <)
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ((advantage > 0) & (ratio >= 1.0 + eps_high)) | ((advantage < 0) & (ratio <= 1.0 - eps_low))


def sides_swapped(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like the sides are swapped: A > 0 is clipped ABOVE 1 + eps_high, A < 0 BELOW 1 - eps_low

    ru: похоже, стороны перепутаны: при A > 0 отсечение идёт ВЫШЕ 1 + eps_high, при A < 0 — НИЖЕ 1 - eps_low
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ((advantage > 0) & (ratio < 1.0 - eps_low)) | ((advantage < 0) & (ratio > 1.0 + eps_high))
