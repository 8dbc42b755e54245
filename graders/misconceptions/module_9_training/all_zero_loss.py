"""A placeholder loss that is always zero (it runs, but nothing is learned)."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "all_zero_loss"
HINT = "looks like a loss that is always 0 (a placeholder?): nothing is learned from it"


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    return new_logprobs.sum() * 0.0
