"""The unclipped surrogate rho * A: no trust region."""

EXERCISE = "module_9_reference.clipped_surrogate_terms"
NAME = "no_clip"
HINT = 'looks like rho * A without clipping; the PPO/GRPO term is min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A)'


def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ratio * advantage
