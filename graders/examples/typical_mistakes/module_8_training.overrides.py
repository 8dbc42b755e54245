# Typical mistakes, appended to the reference module_8_training.py by `rl4llm demo`.


def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
             *, beta, label_smoothing=0.0):
    # mistake: beta left out of the loss (it only scales the reported rewards)
    chosen = policy_chosen_logps - reference_chosen_logps
    rejected = policy_rejected_logps - reference_rejected_logps
    h = chosen - rejected
    losses = -(1 - label_smoothing) * F.logsigmoid(h) - label_smoothing * F.logsigmoid(-h)
    return losses.mean(), beta * chosen.detach(), beta * rejected.detach()
