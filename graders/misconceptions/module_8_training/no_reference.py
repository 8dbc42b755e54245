"""The margin of the policy alone, h = log pi(y_w) - log pi(y_l), without the reference terms."""

EXERCISE = "module_8_training.dpo_loss"
NAME = "no_reference"
HINT = ("looks like the reference log-probabilities are left out; h = (log pi_w - log pi_ref_w) - "
        "(log pi_l - log pi_ref_l), and the rewards are beta * (log pi - log pi_ref)")


def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
             *, beta, label_smoothing=0.0):
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    margin = policy_chosen_logps - policy_rejected_logps
    losses = (1.0 - label_smoothing) * F.softplus(-beta * margin) + label_smoothing * F.softplus(beta * margin)
    return losses.mean(), (beta * policy_chosen_logps).detach(), (beta * policy_rejected_logps).detach()
