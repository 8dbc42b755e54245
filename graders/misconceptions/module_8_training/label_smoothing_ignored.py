"""Plain DPO whatever label_smoothing says (the cDPO term is left out)."""

EXERCISE = "module_8_training.dpo_loss"
NAME = "label_smoothing_ignored"
HINT = ("looks like label_smoothing is ignored; with eps > 0 the loss is (1 - eps) softplus(-beta h) + "
        "eps softplus(beta h) (conservative DPO), which reduces to plain DPO only at eps = 0")


def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
             *, beta, label_smoothing=0.0):
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    chosen_logratios = policy_chosen_logps - reference_chosen_logps
    rejected_logratios = policy_rejected_logps - reference_rejected_logps
    margin = chosen_logratios - rejected_logratios
    return F.softplus(-beta * margin).mean(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()
