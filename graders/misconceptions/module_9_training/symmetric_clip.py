"""Clipping symmetrically with eps_low on both sides, ignoring eps_high (DAPO's clip-higher)."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "symmetric_clip"
HINT = ("looks like a symmetric clip [1 - eps_low, 1 + eps_low]; the upper end is 1 + eps_high "
        "(DAPO's clip-higher: eps_high may differ from eps_low)")


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))
    adv = advantages.to(new_logprobs.dtype)[:, None]
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_low)
    surrogate = torch.where(active, torch.minimum(ratio * adv, clipped * adv), zeros)
    counts = active.sum(dim=1).to(new_logprobs.dtype)
    if loss_type == "grpo":
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    elif loss_type == "dr_grpo":
        length = new_logprobs.shape[1] if max_length is None else max_length
        objective = surrogate.sum() / (new_logprobs.shape[0] * length)
    else:
        objective = surrogate.sum() / counts.sum().clamp(min=1.0)
    return -objective
