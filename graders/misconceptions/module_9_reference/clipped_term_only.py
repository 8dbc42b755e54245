"""Returning only the clipped branch clip(rho) * A, without the min."""

EXERCISE = "module_9_reference.clipped_surrogate_terms"
NAME = "clipped_term_only"
HINT = 'looks like clip(rho, 1 - eps_low, 1 + eps_high)*A alone; take the min with the unclipped rho*A'


def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.clip(ratio, 1.0 - eps_low, 1.0 + eps_high) * advantage
