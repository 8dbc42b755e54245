"""Public tests for grpo_loss in module_9_training.py: run `pytest starter/module_09` from the kit's root.

Every row is small enough to check on paper. Conventions: the loss is the
NEGATIVE clipped objective (a number to minimise); "active" tokens are where
mask == 1; |o_i| is the number of active tokens of response i.
A test fails with one line "NOT IMPLEMENTED: module_9_training.grpo_loss ..."
until you write the function.
"""

from __future__ import annotations

import gc
import math

import pytest
import torch

from module_9_training import grpo_loss

# torch's import leaves ~160,000 objects that live until the end of the run: keep them out of every
# garbage collection (pytest's at the end of the session, the interpreter's at exit; ~0.5 s of each run)
gc.freeze()

REL = 1e-9  # float64 tolerance


def _t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def _loss_and_grad(new, old, advantages, mask, **kwargs):
    new = _t(new).requires_grad_(True)
    loss = grpo_loss(new, _t(old), _t(advantages), _t(mask), **kwargs)
    loss.backward()
    return loss.detach(), new.grad


# Two responses of 2 and 3 active tokens, all ratios 1, advantages 1.0 and 0.5.
#   grpo:    -(1/2) * (1.0 + 0.5)                 = -0.75   (mean over responses of token-means)
#   dr_grpo: -(2 * 1.0 + 3 * 0.5) / (N * L = 2 * 4) = -0.4375
#   dapo:    -(2 * 1.0 + 3 * 0.5) / (2 + 3)       = -0.7
TWO_RESPONSES = dict(new=[[-1.0, -2.0, 0.0], [-0.5, -0.5, -3.0]], old=[[-1.0, -2.0, 0.0], [-0.5, -0.5, -3.0]],
                     advantages=[1.0, 0.5], mask=[[1, 1, 0], [1, 1, 1]])


@pytest.mark.parametrize("loss_type, expected", [("grpo", -0.75), ("dr_grpo", -0.4375), ("dapo", -0.7)])
def test_grpo_loss_reductions_by_hand(loss_type, expected):
    loss = grpo_loss(*(_t(TWO_RESPONSES[k]) for k in ("new", "old", "advantages", "mask")),
                     loss_type=loss_type, eps_low=0.2, eps_high=0.28, max_length=4)
    assert loss.ndim == 0, "return a 0-dim tensor (a scalar loss)"
    assert math.isclose(float(loss), expected, rel_tol=REL), (
        f"{loss_type}: expected {expected}, got {float(loss)}; the loss is MINUS the objective")


@pytest.mark.parametrize("loss_type, weights", [
    ("grpo", [[1.0 / (2 * 2), 1.0 / (2 * 2), 0.0], [0.5 / (2 * 3)] * 3]),  # A_i / (N |o_i|)
    ("dr_grpo", [[1.0 / 8, 1.0 / 8, 0.0], [0.5 / 8] * 3]),                # A_i / (N L), L = 4
    ("dapo", [[1.0 / 5, 1.0 / 5, 0.0], [0.5 / 5] * 3]),                   # A_i / sum_j |o_j|
])
def test_grpo_loss_gradient_is_minus_the_token_weight(loss_type, weights):
    _, grad = _loss_and_grad(**TWO_RESPONSES, loss_type=loss_type, eps_low=0.2, eps_high=0.28, max_length=4)
    assert torch.allclose(grad, -_t(weights), rtol=REL, atol=1e-15), (
        f"{loss_type}: d loss / d new_logprobs should be {(-_t(weights)).tolist()}, got {grad.tolist()}")


def test_grpo_loss_gradient_sign_raises_good_tokens():
    # one response with advantage +1, one with -1: gradient DEScent must raise the first, lower the second
    _, grad = _loss_and_grad([[-1.0], [-1.0]], [[-1.0], [-1.0]], [1.0, -1.0], [[1], [1]],
                             loss_type="dapo", eps_low=0.2, eps_high=0.2)
    assert grad[0, 0] < 0 < grad[1, 0], f"expected gradient [-0.5, +0.5], got {grad.flatten().tolist()}"


# Four one-token responses. rho = exp(new - old) = 1.5, 0.5, 0.5, 1.5; A = +1, +1, -1, -1; eps_low 0.2, eps_high 0.28.
#   A > 0, rho 1.5: min(1.5, 1.28)   = 1.28  (clipped above: no gradient)
#   A > 0, rho 0.5: min(0.5, 0.8)    = 0.5   (unclipped)
#   A < 0, rho 0.5: min(-0.5, -0.8)  = -0.8  (clipped below: no gradient)
#   A < 0, rho 1.5: min(-1.5, -1.28) = -1.5  (unclipped: the pessimistic bound)
# dapo: loss = -(1.28 + 0.5 - 0.8 - 1.5) / 4 = 0.13
CLIP_CASE = dict(new=[[math.log(1.5)], [math.log(0.5)], [math.log(0.5)], [math.log(1.5)]],
                 old=[[0.0]] * 4, advantages=[1.0, 1.0, -1.0, -1.0], mask=[[1]] * 4)


def test_grpo_loss_asymmetric_clipping_by_hand():
    loss, grad = _loss_and_grad(**CLIP_CASE, loss_type="dapo", eps_low=0.2, eps_high=0.28)
    assert math.isclose(float(loss), 0.13, rel_tol=1e-9), f"expected 0.13, got {float(loss)}"
    # d loss / d new = -rho * A / 4 where unclipped, 0 where the clipped branch is taken
    expected = [0.0, -0.5 / 4, 0.0, 1.5 / 4]
    assert torch.allclose(grad.flatten(), _t(expected), rtol=REL, atol=1e-15), (
        f"expected gradient {expected}, got {grad.flatten().tolist()}; take min(rho*A, clip(rho)*A) per token")


def test_grpo_loss_huge_eps_is_the_unclipped_objective():
    loss = grpo_loss(*(_t(CLIP_CASE[k]) for k in ("new", "old", "advantages", "mask")),
                     loss_type="dapo", eps_low=0.999999, eps_high=1e6)
    assert math.isclose(float(loss), -(1.5 + 0.5 - 0.5 - 1.5) / 4, abs_tol=1e-12)


def test_grpo_loss_masked_tokens_get_zero_gradient():
    # the padding holds huge, different values: they must change neither the loss nor any gradient
    loss, grad = _loss_and_grad([[-1.0, 40.0], [-2.0, -3.0]], [[-1.2, -40.0], [-2.0, -3.5]], [1.0, -1.0],
                               [[1, 0], [1, 1]], loss_type="dapo", eps_low=0.2, eps_high=0.28)
    clean, _ = _loss_and_grad([[-1.0, 0.0], [-2.0, -3.0]], [[-1.2, 0.0], [-2.0, -3.5]], [1.0, -1.0],
                              [[1, 0], [1, 1]], loss_type="dapo", eps_low=0.2, eps_high=0.28)
    assert math.isclose(float(loss), float(clean), rel_tol=REL), (
        f"padding changed the loss ({float(loss)} vs {float(clean)}): apply the mask to every token sum and count")
    assert grad[0, 1] == 0.0, f"the masked token got gradient {float(grad[0, 1])}"


def test_grpo_loss_does_not_modify_inputs():
    tensors = {k: _t(TWO_RESPONSES[k]) for k in ("new", "old", "advantages", "mask")}
    copies = {k: v.clone() for k, v in tensors.items()}
    grpo_loss(tensors["new"], tensors["old"], tensors["advantages"], tensors["mask"],
              loss_type="grpo", eps_low=0.2, eps_high=0.28)
    assert all(torch.equal(tensors[k], copies[k]) for k in tensors)
