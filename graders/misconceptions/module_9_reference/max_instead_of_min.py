"""Taking the max of the two branches instead of the min (an optimistic bound)."""

EXERCISE = "module_9_reference.clipped_surrogate_terms"
NAME = "max_instead_of_min"
HINT = 'looks like max instead of min: the clipped objective takes the pessimistic MIN of the two branches'


def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.maximum(ratio * advantage, np.clip(ratio, 1.0 - eps_low, 1.0 + eps_high) * advantage)
