"""Module 9 toy GRPO step: the clipped group-relative loss that trains a tiny arithmetic policy.

Your exercise is ``grpo_loss`` (the "toy GRPO step"): the negative clipped
surrogate objective of GRPO with a frozen old policy, reduced as GRPO, Dr. GRPO
or DAPO. Everything else is given, in two files next to this one:
``arithmetic_toy.py`` (the task and the policy: a GRU language model writes
``a + b ; a + b + c <eos>`` under a grammar, a versioned verifier scores it, and
``collect_rollouts`` samples groups of responses) and ``grpo_toy.py`` (the loop:
warm-up, group-relative advantages, several clipped updates per batch,
evaluation). ``run_toy_grpo_experiment()`` below trains with your ``grpo_loss``.
The given loop also calls four functions of YOUR ``module_9_reference`` (the
file next to this one, as the course notebook imports it):
``group_relative_advantages`` (the advantages it trains on), ``clip_activity``
(the clip fractions it logs), ``categorical_entropy`` (the token entropy) and
``pass_at_k_unbiased`` (pass@4); see ``grpo_toy.your_formulas``.
Axes: N responses, T response tokens.
"""

from __future__ import annotations

import torch

import grpo_toy
# the course notebook imports GRPOConfig, arithmetic_prompts and collect_rollouts from this file
from arithmetic_toy import arithmetic_prompts, collect_rollouts  # noqa: F401
from grpo_toy import LOSS_TYPES, GRPOConfig  # noqa: F401


# ============================================================================= exercise
def _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length):
    """Given validation for grpo_loss: ValueError naming the offending argument."""
    if new_logprobs.ndim != 2:
        raise ValueError(f"new_logprobs must be (N, T), got shape {tuple(new_logprobs.shape)}")
    for name, value in (("old_logprobs", old_logprobs), ("mask", mask)):
        if value.shape != new_logprobs.shape:
            raise ValueError(f"{name} must have shape {tuple(new_logprobs.shape)}, got {tuple(value.shape)}")
    if advantages.shape != new_logprobs.shape[:1]:
        raise ValueError(f"advantages must have shape ({new_logprobs.shape[0]},), got {tuple(advantages.shape)}")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    if not (0 <= eps_low < 1) or eps_high < 0:
        raise ValueError(f"eps_low must be in [0, 1) and eps_high >= 0, got {eps_low}, {eps_high}")
    longest = int((mask > 0).sum(dim=1).max()) if mask.numel() else 0
    if max_length is not None and max_length < longest:
        raise ValueError(f"max_length={max_length} is shorter than the longest response ({longest} tokens)")


def grpo_loss(new_logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor,
              mask: torch.Tensor, *, loss_type: str, eps_low: float, eps_high: float,
              max_length: int | None = None) -> torch.Tensor:
    """loss = -reduce over active tokens of min(rho*A, clip(rho, 1-eps_low, 1+eps_high)*A), rho = exp(new - old) (GRPO, DeepSeekMath 2024; Dr. GRPO 2025; DAPO 2025).

    The scalar to MINIMISE: the negative clipped surrogate objective, reduced as
    ``loss_type`` says (N responses, o_i = active tokens of response i):
      - "grpo":    mean over responses of the token-mean over that response's
                   active tokens: (1/N) sum_i (1/|o_i|) sum_t s_it;
      - "dr_grpo": sum over all active tokens divided by N * max_length;
      - "dapo":    sum over all active tokens divided by the number of active tokens.
    With all ratios 1, d loss / d new_logprobs[i, t] is minus the token weight of
    module_9_reference's original_grpo / dr_grpo / dapo token weights.

    Args:
        new_logprobs: (N, T) log-probabilities of the sampled tokens under the policy
            being trained (carries gradient).
        old_logprobs: (N, T) the same under the frozen old (behaviour) policy.
        advantages: (N,) one advantage per response, shared by its tokens.
        mask: (N, T) 1.0 for active response tokens, 0.0 for padding; masked
            positions must receive exactly zero gradient, whatever finite values they hold.
        loss_type: "grpo", "dr_grpo" or "dapo".
        eps_low, eps_high: clip range [1 - eps_low, 1 + eps_high] of the ratio.
        max_length: L for "dr_grpo" (the generation budget); None means T.

    Returns:
        A 0-dim tensor. A response with no active token contributes 0 (and, for
        "grpo", still counts in N).
    """
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    ### BEGIN SOLUTION
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    # where(), not multiplication: a masked position holding garbage (inf) must not leak NaN gradients
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))  # rho, (N, T)
    adv = advantages.to(new_logprobs.dtype)[:, None]  # (N,) -> (N, 1)
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    surrogate = torch.where(active, torch.minimum(ratio * adv, clipped * adv), zeros)  # (N, T)
    counts = active.sum(dim=1).to(new_logprobs.dtype)  # |o_i|
    if loss_type == "grpo":
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    elif loss_type == "dr_grpo":
        length = new_logprobs.shape[1] if max_length is None else max_length
        objective = surrogate.sum() / (new_logprobs.shape[0] * length)
    else:  # dapo
        objective = surrogate.sum() / counts.sum().clamp(min=1.0)
    loss = -objective
    ### END SOLUTION
    return loss


# ============================================================================= given (you need not change it): the experiment, with your loss
def run_toy_grpo_experiment(profile="smoke", seed: int = 9, loss_type: str = "dapo", *, loss_fn=None,
                            progress: bool = False, formulas=None) -> dict:
    """The given toy GRPO experiment (``grpo_toy.run_toy_grpo_experiment``), by default trained with YOUR ``grpo_loss``.

    ``profile``: "smoke", "full" or a ``GRPOConfig``; ``formulas``: the
    module_9_reference functions the loop calls (default: yours). Returns the
    experiment's dict (metrics before and after RL, the history, the policies).
    """
    loss_fn = grpo_loss if loss_fn is None else loss_fn
    return grpo_toy.run_toy_grpo_experiment(profile, seed, loss_type, loss_fn=loss_fn, progress=progress,
                                            formulas=formulas)
