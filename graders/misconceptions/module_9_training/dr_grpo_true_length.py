"""Dr. GRPO dividing each response by its own (true) length |o_i| instead of the constant budget L."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "dr_grpo_true_length"
HINT = ("looks like Dr. GRPO divided by each response's true length; Dr. GRPO removes exactly that "
        "length bias and divides the token sum by the constant N * max_length")


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))
    adv = advantages.to(new_logprobs.dtype)[:, None]
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    surrogate = torch.where(active, torch.minimum(ratio * adv, clipped * adv), zeros)
    counts = active.sum(dim=1).to(new_logprobs.dtype)
    if loss_type in ("grpo", "dr_grpo"):  # dr_grpo (wrongly) by |o_i|
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    else:
        objective = surrogate.sum() / counts.sum().clamp(min=1.0)
    return -objective
