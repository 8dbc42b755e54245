"""log sigmoid(beta h) without the minus: the log-likelihood itself, so gradient descent maximises the loss."""

EXERCISE = "module_8_training.dpo_loss"
NAME = "sign_flipped"
HINT = ("looks like the sign is flipped (log sigmoid(beta h) without the minus); the loss to minimise is "
        "-log sigmoid(beta h) = softplus(-beta h), which falls as the chosen response gains on the rejected one")


def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
             *, beta, label_smoothing=0.0):
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    chosen_logratios = policy_chosen_logps - reference_chosen_logps
    rejected_logratios = policy_rejected_logps - reference_rejected_logps
    margin = chosen_logratios - rejected_logratios
    objective = (1.0 - label_smoothing) * F.logsigmoid(beta * margin) + label_smoothing * F.logsigmoid(-beta * margin)
    return objective.mean(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()
