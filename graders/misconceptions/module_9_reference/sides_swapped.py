"""Pairing A > 0 with the lower bound and A < 0 with the upper one."""

EXERCISE = "module_9_reference.clip_activity"
NAME = "sides_swapped"
HINT = 'looks like the sides are swapped: A > 0 is clipped ABOVE 1 + eps_high, A < 0 BELOW 1 - eps_low'


def clip_activity(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ((advantage > 0) & (ratio < 1.0 - eps_low)) | ((advantage < 0) & (ratio > 1.0 + eps_high))
