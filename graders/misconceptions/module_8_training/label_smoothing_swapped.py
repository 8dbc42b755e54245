"""cDPO with the weights swapped: eps on softplus(-beta h) and 1 - eps on softplus(+beta h)."""

EXERCISE = "module_8_training.dpo_loss"
NAME = "label_smoothing_swapped"
HINT = ("looks like the two cDPO terms are swapped (equivalently, the margin h has the wrong sign); the loss is "
        "(1 - eps) softplus(-beta h) + eps softplus(beta h): the label is right with probability 1 - eps")


def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
             *, beta, label_smoothing=0.0):
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    chosen_logratios = policy_chosen_logps - reference_chosen_logps
    rejected_logratios = policy_rejected_logps - reference_rejected_logps
    margin = chosen_logratios - rejected_logratios
    losses = label_smoothing * F.softplus(-beta * margin) + (1.0 - label_smoothing) * F.softplus(beta * margin)
    return losses.mean(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()
