"""eps_low and eps_high swapped: clip(rho, 1 - eps_high, 1 + eps_low)."""

EXERCISE = "module_9_reference.clipped_surrogate_terms"
NAME = "eps_swapped"
HINT = 'looks like eps_low and eps_high swapped; the range is [1 - eps_low, 1 + eps_high]'


def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.minimum(ratio * advantage, np.clip(ratio, 1.0 - eps_high, 1.0 + eps_low) * advantage)
