"""Using eps_low for the upper bound too."""

EXERCISE = "module_9_reference.clip_activity"
NAME = "activity_symmetric_eps_low"
HINT = 'looks like eps_low used on both sides; A > 0 is clipped above 1 + eps_high'


def clip_activity(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ((advantage > 0) & (ratio > 1.0 + eps_low)) | ((advantage < 0) & (ratio < 1.0 - eps_low))
