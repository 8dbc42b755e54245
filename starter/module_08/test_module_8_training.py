"""Public tests for module_8_training: your sequence_logprobs and dpo_loss, small enough to check by hand.

Run from the kit's root:  pytest starter/module_08
"""

from __future__ import annotations

import gc
import json
import math
from pathlib import Path

import pytest
import torch

import module_8_training as training
from _kit_say import say

# torch's import leaves ~160,000 objects that live until the end of the run: keep them out of every
# garbage collection (pytest's at the end of the session, the interpreter's at exit; ~0.5 s of each run)
gc.freeze()


def test_sequence_logprobs_hand_case():
    # one sequence of 3 tokens, vocabulary of 2; logits at t predict the token at t + 1
    logits = torch.tensor([[[0.0, 0.0], [math.log(3.0), 0.0], [5.0, 5.0]]], dtype=torch.float64)
    input_ids = torch.tensor([[1, 1, 0]])
    mask = torch.tensor([[True, True]])
    # by hand: position 0 gives p(1) = 1/2, position 1 gives p(0) = 3/4; the last logits predict nothing
    expected = math.log(0.5) + math.log(0.75)
    assert torch.allclose(training.sequence_logprobs(logits, input_ids, mask),
                          torch.tensor([expected], dtype=torch.float64))
    only_last = training.sequence_logprobs(logits, input_ids, torch.tensor([[False, True]]))
    assert math.isclose(only_last.item(), math.log(0.75), rel_tol=1e-12)


def test_sequence_logprobs_on_the_toy_batch_masks():
    examples = training.toy_preference_examples()
    vocab = training.build_vocabulary(examples)
    batch = training.pair_batch(examples, vocab)
    first = examples[0]
    assert batch["chosen_mask"].shape[1] == batch["chosen_ids"].shape[1] - 1
    assert batch["chosen_mask"][0].sum().item() == len(first.chosen) + 1
    assert batch["rejected_mask"][0].sum().item() == len(first.rejected) + 1
    # uniform logits: every scored token costs log V, so log pi(y|x) = -(|y| + 1) log V
    ids, mask = batch["chosen_ids"], batch["chosen_mask"]
    logits = torch.zeros(*ids.shape, len(vocab), dtype=torch.float64)
    expected = -mask.sum(dim=1).to(torch.float64) * math.log(len(vocab))
    assert torch.allclose(training.sequence_logprobs(logits, ids, mask), expected)


def test_sequence_logprobs_is_differentiable():
    logits = torch.zeros(2, 4, 3, dtype=torch.float64, requires_grad=True)
    ids = torch.tensor([[0, 1, 2, 0], [0, 2, 2, 1]])
    mask = torch.tensor([[False, True, True], [True, True, False]])
    training.sequence_logprobs(logits, ids, mask).sum().backward()
    assert logits.grad is not None
    assert torch.all(logits.grad[:, -1] == 0)  # the last position predicts nothing
    assert torch.all(logits.grad[0, 0] == 0)  # masked target: no gradient


def _described(value) -> str:
    if isinstance(value, torch.Tensor):
        dtype, shape = value.dtype, tuple(value.shape)
        if value.requires_grad:
            return say(f"a {dtype} tensor of shape {shape} (with grad)", f"тензор {dtype} формы {shape} (с градиентом)")
        return say(f"a {dtype} tensor of shape {shape} (without grad)", f"тензор {dtype} формы {shape} (без градиента)")
    return f"{type(value).__module__}.{type(value).__name__}"


def _assert_tensor(value, *, shape: tuple, dtype, requires_grad: bool, what: str) -> None:
    ok = (isinstance(value, torch.Tensor) and tuple(value.shape) == shape and value.dtype == dtype
          and value.requires_grad == requires_grad)
    grad = (say("with grad", "с градиентом") if requires_grad
            else say("detached (no grad)", "отсоединённый (без градиента, .detach())"))
    assert ok, say(f"{what}: expected a {dtype} tensor of shape {shape}, {grad}; got {_described(value)}",
                   f"{what}: ожидался тензор {dtype} формы {shape}, {grad}; получено {_described(value)}")


def _assert_unchanged(before, after, what: str) -> None:
    for i, (old, new) in enumerate(zip(before, after)):
        same = old.shape == new.shape and torch.equal(old, new.detach())
        assert same, say(f"{what} modified its input #{i + 1} in place: inputs must come back unchanged "
                         f"(no in-place ops such as x -= ... or x.masked_fill_ on an input)",
                         f"{what} изменила свой вход #{i + 1} на месте: входы должны остаться прежними "
                         f"(никаких операций на месте вроде x -= ... или x.masked_fill_ над входом)")


@pytest.mark.edge("dtypes")
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
def test_sequence_logprobs_returns_a_b_tensor_with_grad_and_leaves_inputs_unchanged(dtype):
    logits = torch.linspace(-2.0, 2.0, 2 * 4 * 3, dtype=dtype).reshape(2, 4, 3).requires_grad_()
    ids = torch.tensor([[0, 1, 2, 0], [0, 2, 2, 1]])
    mask = torch.tensor([[False, True, True], [True, True, False]])
    before = [t.detach().clone() for t in (logits, ids, mask)]
    out = training.sequence_logprobs(logits, ids, mask)
    _assert_unchanged(before, (logits, ids, mask), "sequence_logprobs")
    _assert_tensor(out, shape=(2,), dtype=dtype, requires_grad=True, what="sequence_logprobs")


def test_dpo_loss_hand_case():
    # h = (-1 - -1.5) - (-2 - -1.5) = 1, loss = softplus(-beta h) = log(1 + e^-0.5)
    loss, chosen_rewards, rejected_rewards = training.dpo_loss(
        torch.tensor([-1.0]), torch.tensor([-2.0]), torch.tensor([-1.5]), torch.tensor([-1.5]), beta=0.5)
    assert math.isclose(loss.item(), math.log1p(math.exp(-0.5)), rel_tol=1e-6)
    assert math.isclose(chosen_rewards.item(), 0.25, rel_tol=1e-6)
    assert math.isclose(rejected_rewards.item(), -0.25, rel_tol=1e-6)
    assert not chosen_rewards.requires_grad and not rejected_rewards.requires_grad


@pytest.mark.edge("dtypes")
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
def test_dpo_loss_returns_a_loss_with_grad_and_detached_rewards(dtype):
    # as in training: the policy's log-probabilities carry gradient, the reference's do not
    policy_chosen = torch.tensor([-1.0, -4.0, -2.5], dtype=dtype, requires_grad=True)
    policy_rejected = torch.tensor([-2.0, -3.0, -2.5], dtype=dtype, requires_grad=True)
    reference_chosen = torch.tensor([-1.5, -3.5, -2.0], dtype=dtype)
    reference_rejected = torch.tensor([-1.5, -3.5, -3.0], dtype=dtype)
    inputs = (policy_chosen, policy_rejected, reference_chosen, reference_rejected)
    before = [t.detach().clone() for t in inputs]
    out = training.dpo_loss(*inputs, beta=0.5, label_smoothing=0.1)
    _assert_unchanged(before, inputs, "dpo_loss")
    assert isinstance(out, tuple) and len(out) == 3, say(
        f"dpo_loss returns a tuple (loss, chosen_rewards, rejected_rewards), got {_described(out)}",
        f"dpo_loss возвращает кортеж (loss, chosen_rewards, rejected_rewards), получено {_described(out)}")
    loss, chosen_rewards, rejected_rewards = out
    _assert_tensor(loss, shape=(), dtype=dtype, requires_grad=True, what="the loss (the batch mean)")
    # the rewards beta (log pi - log pi_ref) are for logging: .detach() them
    _assert_tensor(chosen_rewards, shape=(3,), dtype=dtype, requires_grad=False, what="chosen_rewards")
    _assert_tensor(rejected_rewards, shape=(3,), dtype=dtype, requires_grad=False, what="rejected_rewards")
    expected = 0.5 * (policy_chosen - reference_chosen).detach()
    assert torch.allclose(chosen_rewards, expected), say(
        f"chosen_rewards should be beta (log pi - log pi_ref) = {expected.tolist()}, got {chosen_rewards.tolist()}",
        f"chosen_rewards должны быть beta (log pi - log pi_ref) = {expected.tolist()}, получено "
        f"{chosen_rewards.tolist()}")


@pytest.mark.edge("zeros_and_empties")  # h = 0: log 2
def test_dpo_loss_is_log_two_at_the_reference_and_averages_the_batch():
    logps = torch.tensor([-3.0, -7.0], dtype=torch.float64)
    loss, _, _ = training.dpo_loss(logps, logps.flip(0), logps, logps.flip(0), beta=0.1)
    assert math.isclose(loss.item(), math.log(2.0), rel_tol=1e-12)
    # a batch of two pairs with h = +2 and h = -2 averages the two per-pair losses
    policy_chosen = torch.tensor([0.0, 0.0], dtype=torch.float64)
    policy_rejected = torch.tensor([-2.0, 2.0], dtype=torch.float64)
    zeros = torch.zeros(2, dtype=torch.float64)
    loss, _, _ = training.dpo_loss(policy_chosen, policy_rejected, zeros, zeros, beta=1.0)
    expected = (math.log1p(math.exp(-2.0)) + math.log1p(math.exp(2.0))) / 2
    assert math.isclose(loss.item(), expected, rel_tol=1e-12)


def test_dpo_loss_label_smoothing():
    # cDPO with eps = 0.25 at h = 2, beta = 1: 0.75 softplus(-2) + 0.25 softplus(2)
    zeros = torch.zeros(1, dtype=torch.float64)
    loss, _, _ = training.dpo_loss(torch.tensor([1.0], dtype=torch.float64), torch.tensor([-1.0], dtype=torch.float64),
                                   zeros, zeros, beta=1.0, label_smoothing=0.25)
    expected = 0.75 * math.log1p(math.exp(-2.0)) + 0.25 * math.log1p(math.exp(2.0))
    assert math.isclose(loss.item(), expected, rel_tol=1e-12)


def test_dpo_loss_gradient_raises_chosen_and_lowers_rejected():
    chosen = torch.tensor([-2.0], dtype=torch.float64, requires_grad=True)
    rejected = torch.tensor([-2.0], dtype=torch.float64, requires_grad=True)
    reference = torch.tensor([-2.0], dtype=torch.float64)
    loss, _, _ = training.dpo_loss(chosen, rejected, reference, reference, beta=0.5)
    loss.backward()
    # dL/dh = -beta sigma(-beta h) = -0.25 at h = 0
    assert math.isclose(chosen.grad.item(), -0.25, rel_tol=1e-12)
    assert math.isclose(rejected.grad.item(), 0.25, rel_tol=1e-12)


# --- every argument check the grader makes, made here too ------------------------
# (tests/test_public_coverage.py keeps the two in step)
@pytest.mark.parametrize("beta, label_smoothing", [pytest.param(0.0, 0.0, id="beta = 0"),
                                                   pytest.param(0.1, 0.5, id="label_smoothing = 0.5"),
                                                   pytest.param(0.1, -0.1, id="label_smoothing < 0")])
def test_dpo_loss_refuses_what_the_grader_refuses(beta, label_smoothing):
    logps = [torch.tensor([-1.0, -2.0], dtype=torch.float64) for _ in range(4)]
    with pytest.raises(ValueError):
        training.dpo_loss(*logps, beta=beta, label_smoothing=label_smoothing)


# --- the toy experiment: the autograder's own short DPO run, with your two functions --------------------
# The autograder trains the given toy (dpo_toy, profile "check": a 40-step warm-up, 5 moderate and 10
# high-pressure DPO steps; about 0.15 s) once with your sequence_logprobs and once with your dpo_loss
# (the other function its own) and compares each outcome with the reference's run. This test makes the
# run with BOTH of yours and compares with the reference outcomes in _toy_reference.json (written by the
# kit's build, with the grader's bands). When only this test fails, the tests above of the two functions
# say which one is off.
TOY = json.loads(Path(__file__).with_name("_toy_reference.json").read_text(encoding="utf-8"))


@pytest.mark.toy_run
def test_sequence_logprobs_and_dpo_loss_train_the_toy_like_the_reference():
    import dpo_toy

    got = dpo_toy.check_metrics(dpo_toy.run_toy_dpo_experiment("check", seed=7, loss_fn=training.dpo_loss,
                                                               logprob_fn=training.sequence_logprobs))
    for exercise in ("module_8_training.sequence_logprobs", "module_8_training.dpo_loss"):
        (run,) = TOY[exercise]["runs"]
        for key, rtol, atol in TOY[exercise]["bands"]:  # the most telling first
            want, have = run["outcome"][key], float(got[key])
            tol = atol + rtol * abs(want)
            assert math.isfinite(have) and abs(have - want) <= tol, say(
                f"toy DPO run with your sequence_logprobs and dpo_loss: {key} is {have:.6g}, the reference run "
                f"gives {want:.6g} (+- {tol:.2g}) (the autograder makes this run too, and computes the "
                f"reference's on its own machine)",
                f"игрушечный запуск DPO с вашими sequence_logprobs и dpo_loss: {key} = {have:.6g}, эталонный "
                f"запуск даёт {want:.6g} (± {tol:.2g}) (автогрейдер делает этот же запуск, а эталонный считает "
                f"на своей машине)")


# --- edge rows ------------------------------------------------------------------------------
# @pytest.mark.edge("<class>") marks a row of one edge class (extremes, zeros_and_empties, dtypes, ...);
# the grader holds the same input. `pytest -m edge` runs them alone.
@pytest.mark.edge("extremes")
def test_sequence_logprobs_logits_of_1000():
    # by hand: log_softmax(1000, -1000)[0] = 0 and log_softmax(-1000, 1000)[0] = -2000 (exp(1000) overflows)
    logits = torch.tensor([[[1000.0, -1000.0], [-1000.0, 1000.0], [0.0, 0.0]]], dtype=torch.float64)
    out = training.sequence_logprobs(logits, torch.tensor([[0, 0, 0]]), torch.tensor([[True, True]]))
    assert torch.isfinite(out).all() and math.isclose(out.item(), -2000.0, rel_tol=1e-12), say(
        f"logits +-1000: expected -2000 (use log_softmax, not log(softmax)), got {out.tolist()}",
        f"логиты +-1000: ожидалось -2000 (используйте log_softmax, а не log(softmax)), получено {out.tolist()}")


@pytest.mark.edge("zeros_and_empties")
def test_sequence_logprobs_nothing_scored_is_zero():
    logits = torch.tensor([[[0.0, 0.0], [math.log(3.0), 0.0], [5.0, 5.0]]], dtype=torch.float64)
    out = training.sequence_logprobs(logits, torch.tensor([[1, 1, 0]]), torch.tensor([[False, False]]))
    assert out.tolist() == [0.0], say(f"an all-False mask: expected [0.0], got {out.tolist()}",
                                      f"маска из одних False: ожидалось [0.0], получено {out.tolist()}")


@pytest.mark.edge("extremes")
def test_dpo_loss_margins_of_1000():
    # by hand: softplus(-1000) = 0 and softplus(1000) = 1000, mean 500 (exp(1000) overflows: use softplus/logsigmoid)
    zeros = torch.zeros(2, dtype=torch.float64)
    loss, _, _ = training.dpo_loss(zeros, torch.tensor([-1000.0, 1000.0], dtype=torch.float64), zeros, zeros, beta=1.0)
    assert math.isclose(loss.item(), 500.0, rel_tol=1e-12), say(
        f"h = +-1000: expected 500, got {loss.item()!r}", f"h = +-1000: ожидалось 500, получено {loss.item()!r}")


# --- structure rows: a batch of one, and B = T - 1 = V (a transposed gather or sum keeps the right shape) --
@pytest.mark.edge("shapes")
def test_sequence_logprobs_structures():
    torch.manual_seed(0)
    logits, ids = torch.randn(3, 4, 3, dtype=torch.float64), torch.randint(0, 3, (3, 4))
    mask = torch.tensor([[True, True, False], [False, True, True], [True, False, False]])
    by_hand = torch.stack([sum(torch.log_softmax(logits[b, t], -1)[ids[b, t + 1]] for t in range(3) if mask[b, t])
                           for b in range(3)])
    observed = training.sequence_logprobs(logits, ids, mask)
    assert torch.allclose(observed, by_hand), say(f"B = T - 1 = V = 3: expected {by_hand}, got {observed}",
                                                  f"B = T - 1 = V = 3: ожидалось {by_hand}, получено {observed}")
    one = training.sequence_logprobs(logits[:1], ids[:1], mask[:1])
    assert one.shape == (1,) and torch.allclose(one, by_hand[:1]), say(
        f"a batch of one: expected {by_hand[:1]}, got {one}", f"батч из одной последовательности: ожидалось {by_hand[:1]}, получено {one}")


@pytest.mark.edge("shapes")
def test_dpo_loss_structures():
    # a batch of one pair: h = (-2.5 + 2) - (-1 + 1.5) = -1, beta 2, eps 0.1: 0.9 softplus(2) + 0.1 softplus(-2)
    loss, chosen, rejected = training.dpo_loss(*(torch.tensor([x], dtype=torch.float64) for x in (-2.5, -1.0, -2.0, -1.5)),
                                               beta=2.0, label_smoothing=0.1)
    expected = 0.9 * math.log1p(math.exp(2.0)) + 0.1 * math.log1p(math.exp(-2.0))
    assert loss.dim() == 0 and loss.item() == pytest.approx(expected, rel=1e-9), say(
        f"a batch of one pair: expected a 0-d loss {expected}, got {loss}", f"батч из одной пары: ожидалась 0-мерная функция потерь {expected}, получено {loss}")
    assert chosen.shape == rejected.shape == (1,)
