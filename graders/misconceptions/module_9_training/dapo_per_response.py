"""DAPO reduced per response (token-mean of each response, then mean over responses) instead of over all tokens."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "dapo_per_response"
HINT = ("looks like DAPO normalised per response (that is GRPO's reduction); DAPO divides the sum over "
        "ALL active tokens of the batch by their total number, so long responses weigh more")


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))
    adv = advantages.to(new_logprobs.dtype)[:, None]
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    surrogate = torch.where(active, torch.minimum(ratio * adv, clipped * adv), zeros)
    counts = active.sum(dim=1).to(new_logprobs.dtype)
    if loss_type == "dr_grpo":
        length = new_logprobs.shape[1] if max_length is None else max_length
        objective = surrogate.sum() / (new_logprobs.shape[0] * length)
    else:  # grpo and (wrongly) dapo: per-response token means
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    return -objective
