"""Returning the clipped objective itself (to be maximised) instead of its negative (to be minimised)."""

EXERCISE = "module_9_training.grpo_loss"
NAME = "sign_flipped"
HINT = ("looks like the objective itself; the loss is MINUS the clipped objective, "
        "so gradient descent raises tokens with positive advantage")


_grpo_loss_before_the_mistake = grpo_loss  # the learner module's own definition


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    # the mistake: the clipped objective is returned as it is; the sign is missing
    return -_grpo_loss_before_the_mistake(new_logprobs, old_logprobs, advantages, mask, loss_type=loss_type,
                                          eps_low=eps_low, eps_high=eps_high, max_length=max_length)
