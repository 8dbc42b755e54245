"""Module 8 training: the two pieces of DPO a training loop needs, and the toy run that uses them.

Your exercises: ``sequence_logprobs`` (log pi(y|x) of a padded batch, with the
causal shift) and ``dpo_loss`` (the DPO / cDPO loss and the implicit rewards).
Everything else is given in ``dpo_toy.py`` next to this file: eight
preference templates, a tiny GRU policy, a supervised warm-up that becomes the
reference pi_ref, and DPO against it in a moderate and a high-pressure regime.
``run_toy_dpo_experiment()`` below runs it with your two functions.
Axis glossary: B pairs, T tokens, V vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import dpo_toy
# the course notebook imports these from this file
from dpo_toy import build_vocabulary, pair_batch, toy_preference_examples  # noqa: F401


# ---------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------
def sequence_logprobs(logits: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log pi(y|x) = sum_t mask_t log softmax(logits[:, t])[input_ids[:, t+1]] (causal shift; DPO, Rafailov et al. 2023).

    The logits at position t predict the token at position t + 1, so use
    ``logits[:, :-1]`` against the targets ``input_ids[:, 1:]``; ``mask`` is
    already aligned with those shifted targets.

    Args:
        logits: (B, T, V) float.
        input_ids: (B, T) long.
        mask: (B, T-1) bool, True on the response tokens (and eos) to score.
    Returns:
        (B,) summed log-probabilities, differentiable with respect to ``logits``.
    """
    ### BEGIN SOLUTION
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)  # (B, T-1, V)
    targets = input_ids[:, 1:].unsqueeze(-1)  # (B, T-1) -> (B, T-1, 1)
    token_logps = log_probs.gather(-1, targets).squeeze(-1)  # (B, T-1)
    return (token_logps * mask.to(token_logps.dtype)).sum(dim=-1)
    ### END SOLUTION


def dpo_loss(policy_chosen_logps: torch.Tensor, policy_rejected_logps: torch.Tensor,
             reference_chosen_logps: torch.Tensor, reference_rejected_logps: torch.Tensor,
             *, beta: float, label_smoothing: float = 0.0):
    """L = mean[(1-eps) softplus(-beta h) + eps softplus(beta h)], h = (pi_w - ref_w) - (pi_l - ref_l) (DPO, Rafailov et al. 2023; cDPO).

    Args:
        policy_chosen_logps, policy_rejected_logps: (B,) log pi(y_w|x), log pi(y_l|x).
        reference_chosen_logps, reference_rejected_logps: (B,) the same under pi_ref.
        beta: > 0.
        label_smoothing: eps in [0, 0.5); 0 gives plain DPO.
    Returns:
        (loss, chosen_rewards, rejected_rewards): the scalar mean loss, and the
        (B,) implicit rewards beta (log pi - log pi_ref), detached.
    """
    ### BEGIN SOLUTION
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
    chosen_logratios = policy_chosen_logps - reference_chosen_logps
    rejected_logratios = policy_rejected_logps - reference_rejected_logps
    margin = chosen_logratios - rejected_logratios  # h, (B,)
    losses = (1.0 - label_smoothing) * F.softplus(-beta * margin) + label_smoothing * F.softplus(beta * margin)
    return losses.mean(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Given (you need not change it): the toy experiment, with your two functions
# ---------------------------------------------------------------------------
def run_toy_dpo_experiment(profile="smoke", seed: int = 7, *, loss_fn=None, logprob_fn=None,
                           progress: bool = False) -> dict:
    """The given toy DPO experiment (``dpo_toy.run_toy_dpo_experiment``), by default with YOUR two functions.

    ``loss_fn`` and ``logprob_fn`` default to your ``dpo_loss`` and
    ``sequence_logprobs``; ``profile``: "smoke", "full" or a
    ``dpo_toy.ToyDPOConfig``; ``seed``: the torch seed of the initial weights.
    Returns the experiment's dict (the reference, moderate and high-pressure
    metrics, generation matches, histories); see ``dpo_toy.run_toy_dpo_experiment``.
    """
    loss_fn = dpo_loss if loss_fn is None else loss_fn
    logprob_fn = sequence_logprobs if logprob_fn is None else logprob_fn
    return dpo_toy.run_toy_dpo_experiment(profile, seed, loss_fn=loss_fn, logprob_fn=logprob_fn, progress=progress)
