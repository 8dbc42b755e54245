"""Ignoring the mask: padding positions count as tokens (in the sums and in the counts)."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "no_mask"
HINT = ("looks like the mask is ignored: padded positions must contribute nothing "
        "(and receive zero gradient), and only active tokens are counted")


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    ratio = torch.exp(new_logprobs - old_logprobs)
    adv = advantages.to(new_logprobs.dtype)[:, None]
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    surrogate = torch.minimum(ratio * adv, clipped * adv)  # every position, padding included
    n, t = new_logprobs.shape
    if loss_type == "grpo":
        objective = surrogate.mean(dim=1).mean()
    elif loss_type == "dr_grpo":
        objective = surrogate.sum() / (n * (t if max_length is None else max_length))
    else:
        objective = surrogate.mean()
    return -objective
