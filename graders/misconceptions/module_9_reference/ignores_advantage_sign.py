"""Any ratio outside [1 - eps_low, 1 + eps_high] counted as clipped, whatever the sign of A."""

EXERCISE = "module_9_reference.clip_activity"
NAME = "ignores_advantage_sign"
HINT = 'looks like every ratio outside the range counts; the clip only binds for A > 0 above 1 + eps_high and A < 0 below 1 - eps_low'


def clip_activity(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return (ratio > 1.0 + eps_high) | (ratio < 1.0 - eps_low)
