"""The plain importance-weighted objective rho * A, without the clipped term."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "no_clipping"
HINT = ("looks like rho*A without clipping; take min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A) "
        "per token, so a ratio that has moved far enough gets no further push")


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))
    adv = advantages.to(new_logprobs.dtype)[:, None]
    surrogate = torch.where(active, ratio * adv, zeros)
    counts = active.sum(dim=1).to(new_logprobs.dtype)
    if loss_type == "grpo":
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    elif loss_type == "dr_grpo":
        length = new_logprobs.shape[1] if max_length is None else max_length
        objective = surrogate.sum() / (new_logprobs.shape[0] * length)
    else:
        objective = surrogate.sum() / counts.sum().clamp(min=1.0)
    return -objective
