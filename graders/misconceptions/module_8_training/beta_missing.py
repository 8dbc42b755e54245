"""The loss on the raw margin h instead of beta * h (the rewards keep beta)."""

EXERCISE = "module_8_training.dpo_loss"
NAME = "beta_missing"
HINT = ("looks like beta is missing from the loss: it is softplus(-beta h), and beta sets how far "
        "the policy may move from the reference")


def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
             *, beta, label_smoothing=0.0):
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    chosen_logratios = policy_chosen_logps - reference_chosen_logps
    rejected_logratios = policy_rejected_logps - reference_rejected_logps
    margin = chosen_logratios - rejected_logratios
    losses = (1.0 - label_smoothing) * F.softplus(-margin) + label_smoothing * F.softplus(margin)
    return losses.mean(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()
