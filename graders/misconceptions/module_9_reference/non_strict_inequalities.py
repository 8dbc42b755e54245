"""Counting a ratio exactly on the boundary as clipped (>= and <=)."""

EXERCISE = "module_9_reference.clip_activity"
NAME = "non_strict_inequalities"
HINT = 'looks like >= / <=: on the boundary both branches are equal, so the token still gets gradient (use > and <)'


def clip_activity(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ((advantage > 0) & (ratio >= 1.0 + eps_high)) | ((advantage < 0) & (ratio <= 1.0 - eps_low))
