"""Clipping symmetrically with eps_low on both sides, ignoring eps_high (clip-higher)."""

EXERCISE = "module_9_reference.clipped_surrogate_terms"
NAME = "symmetric_eps_low"
HINT = "looks like eps_low used on both sides; the upper bound is 1 + eps_high (DAPO's clip-higher)"


def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.minimum(ratio * advantage, np.clip(ratio, 1.0 - eps_low, 1.0 + eps_low) * advantage)
