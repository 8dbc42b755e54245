"""Dr. GRPO dividing by N times the padded width T of the batch, ignoring max_length (the budget L)."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "dr_grpo_padded_width"
HINT = ("looks like Dr. GRPO divided by N * T, the padded width of this batch; the constant is "
        "N * max_length, the generation budget (T only when max_length is None)")


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))
    adv = advantages.to(new_logprobs.dtype)[:, None]
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    surrogate = torch.where(active, torch.minimum(ratio * adv, clipped * adv), zeros)
    counts = active.sum(dim=1).to(new_logprobs.dtype)
    if loss_type == "grpo":
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    elif loss_type == "dr_grpo":
        objective = surrogate.sum() / (new_logprobs.shape[0] * new_logprobs.shape[1])  # max_length ignored
    else:
        objective = surrogate.sum() / counts.sum().clamp(min=1.0)
    return -objective
