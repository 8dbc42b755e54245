"""Clipping the product rho * A instead of the ratio rho."""

EXERCISE = "module_9_reference.clipped_surrogate_terms"
NAME = "clips_the_product"
HINT = 'looks like clip(rho*A, 1 - eps, 1 + eps); clip the RATIO, then multiply by A'


def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.minimum(ratio * advantage, np.clip(ratio * advantage, 1.0 - eps_low, 1.0 + eps_high))
