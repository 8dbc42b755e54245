"""Public tests for grpo_loss in module_9_training.py: run `pytest starter/module_09` from the kit's root.

Every row is small enough to check on paper. Conventions: the loss is the
NEGATIVE clipped objective (a number to minimise); "active" tokens are where
mask == 1; |o_i| is the number of active tokens of response i.
A test fails with one line "NOT IMPLEMENTED: module_9_training.grpo_loss ..."
until you write the function.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from _kit_say import say
from module_9_training import grpo_loss

# torch's import leaves ~160,000 objects that live until the end of the run: keep them out of every
# garbage collection (pytest's at the end of the session, the interpreter's at exit; ~0.5 s of each run)
gc.freeze()

REL = 1e-9  # float64 tolerance


@pytest.fixture(scope="module", autouse=True)
def _warm_ups_kept_between_runs(request):
    """The toy's supervised warm-up (about 0.7 s, the same on every run on this machine) kept in pytest's
    cache folder between your runs, as ``grpo_toy.WARMED_UP`` keeps it within one: bit-identical to
    warming up again. The file is named by grpo_toy's source and torch's version, read without pickle;
    without pytest's cache (``-p no:cacheprovider``) nothing is kept."""
    import grpo_toy

    cache = getattr(request.config, "cache", None)
    if cache is None:
        yield
        return
    stamp = hashlib.sha256(Path(grpo_toy.__file__).read_bytes() + torch.__version__.encode()).hexdigest()[:16]
    path = Path(cache.mkdir("rl4llm-toy-warm-ups")) / f"grpo_toy-{stamp}.npz"
    try:
        with np.load(path, allow_pickle=False) as saved:
            for name in saved.files:  # "<key>/<parameter>"
                key, parameter = name.split("/", 1)
                grpo_toy.WARMED_UP.setdefault(key, {})[parameter] = torch.from_numpy(saved[name].copy())
    except (OSError, ValueError, KeyError):
        pass  # none yet, or unreadable: warm up as usual
    known = set(grpo_toy.WARMED_UP)
    yield
    if set(grpo_toy.WARMED_UP) - known:
        arrays = {f"{key}/{parameter}": tensor.detach().numpy() for key, state in grpo_toy.WARMED_UP.items()
                  for parameter, tensor in state.items()}
        try:
            with open(path, "wb") as handle:
                np.savez(handle, **arrays)
        except OSError:
            pass


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
    assert loss.ndim == 0, say("return a 0-dim tensor (a scalar loss)",
                               "верните 0-мерный тензор (скалярное значение функции потерь)")
    assert math.isclose(float(loss), expected, rel_tol=REL), say(
        f"{loss_type}: expected {expected}, got {float(loss)}; the loss is MINUS the objective",
        f"{loss_type}: ожидалось {expected}, получено {float(loss)}; функция потерь — это МИНУС целевая функция")


@pytest.mark.parametrize("loss_type, weights", [
    ("grpo", [[1.0 / (2 * 2), 1.0 / (2 * 2), 0.0], [0.5 / (2 * 3)] * 3]),  # A_i / (N |o_i|)
    ("dr_grpo", [[1.0 / 8, 1.0 / 8, 0.0], [0.5 / 8] * 3]),                # A_i / (N L), L = 4
    ("dapo", [[1.0 / 5, 1.0 / 5, 0.0], [0.5 / 5] * 3]),                   # A_i / sum_j |o_j|
])
def test_grpo_loss_gradient_is_minus_the_token_weight(loss_type, weights):
    _, grad = _loss_and_grad(**TWO_RESPONSES, loss_type=loss_type, eps_low=0.2, eps_high=0.28, max_length=4)
    assert torch.allclose(grad, -_t(weights), rtol=REL, atol=1e-15), say(
        f"{loss_type}: d loss / d new_logprobs should be {(-_t(weights)).tolist()}, got {grad.tolist()}",
        f"{loss_type}: ожидалось d loss / d new_logprobs = {(-_t(weights)).tolist()}, получено {grad.tolist()}")


def test_grpo_loss_gradient_sign_raises_good_tokens():
    # one response with advantage +1, one with -1: gradient DEScent must raise the first, lower the second
    _, grad = _loss_and_grad([[-1.0], [-1.0]], [[-1.0], [-1.0]], [1.0, -1.0], [[1], [1]],
                             loss_type="dapo", eps_low=0.2, eps_high=0.2)
    assert grad[0, 0] < 0 < grad[1, 0], say(f"expected gradient [-0.5, +0.5], got {grad.flatten().tolist()}",
                                            f"ожидался градиент [-0.5, +0.5], получен {grad.flatten().tolist()}")


# Four one-token responses. rho = exp(new - old) = 1.5, 0.5, 0.5, 1.5; A = +1, +1, -1, -1; eps_low 0.2, eps_high 0.28.
#   A > 0, rho 1.5: min(1.5, 1.28)   = 1.28  (clipped above: no gradient)
#   A > 0, rho 0.5: min(0.5, 0.8)    = 0.5   (unclipped)
#   A < 0, rho 0.5: min(-0.5, -0.8)  = -0.8  (clipped below: no gradient)
#   A < 0, rho 1.5: min(-1.5, -1.28) = -1.5  (unclipped: the pessimistic bound)
# dapo: loss = -(1.28 + 0.5 - 0.8 - 1.5) / 4 = 0.13
CLIP_CASE = dict(new=[[math.log(1.5)], [math.log(0.5)], [math.log(0.5)], [math.log(1.5)]],
                 old=[[0.0]] * 4, advantages=[1.0, 1.0, -1.0, -1.0], mask=[[1]] * 4)


@pytest.mark.edge("boundaries")
def test_grpo_loss_asymmetric_clipping_by_hand():
    loss, grad = _loss_and_grad(**CLIP_CASE, loss_type="dapo", eps_low=0.2, eps_high=0.28)
    assert math.isclose(float(loss), 0.13, rel_tol=1e-9), say(f"expected 0.13, got {float(loss)}",
                                                              f"ожидалось 0.13, получено {float(loss)}")
    # d loss / d new = -rho * A / 4 where unclipped, 0 where the clipped branch is taken
    expected = [0.0, -0.5 / 4, 0.0, 1.5 / 4]
    assert torch.allclose(grad.flatten(), _t(expected), rtol=REL, atol=1e-15), say(
        f"expected gradient {expected}, got {grad.flatten().tolist()}; take min(rho*A, clip(rho)*A) per token",
        f"ожидался градиент {expected}, получен {grad.flatten().tolist()}; "
        f"вычисляйте min(rho*A, clip(rho)*A) для каждого токена")


def test_grpo_loss_huge_eps_is_the_unclipped_objective():
    loss = grpo_loss(*(_t(CLIP_CASE[k]) for k in ("new", "old", "advantages", "mask")),
                     loss_type="dapo", eps_low=0.999999, eps_high=1e6)
    assert math.isclose(float(loss), -(1.5 + 0.5 - 0.5 - 1.5) / 4, abs_tol=1e-12)


@pytest.mark.edge("large_padding")
def test_grpo_loss_masked_tokens_get_zero_gradient():
    # the padding holds huge, different values: they must change neither the loss nor any gradient
    loss, grad = _loss_and_grad([[-1.0, 40.0], [-2.0, -3.0]], [[-1.2, -40.0], [-2.0, -3.5]], [1.0, -1.0],
                               [[1, 0], [1, 1]], loss_type="dapo", eps_low=0.2, eps_high=0.28)
    clean, _ = _loss_and_grad([[-1.0, 0.0], [-2.0, -3.0]], [[-1.2, 0.0], [-2.0, -3.5]], [1.0, -1.0],
                              [[1, 0], [1, 1]], loss_type="dapo", eps_low=0.2, eps_high=0.28)
    assert math.isclose(float(loss), float(clean), rel_tol=REL), say(
        f"padding changed the loss ({float(loss)} vs {float(clean)}): apply the mask to every token sum and count",
        f"паддинг изменил значение функции потерь ({float(loss)} против {float(clean)}): учитывайте маску "
        f"в каждой сумме по токенам и в каждом подсчёте числа токенов")
    assert grad[0, 1] == 0.0, say(f"the masked token got gradient {float(grad[0, 1])}",
                                  f"замаскированный токен получил градиент {float(grad[0, 1])}")


@pytest.mark.edge("dtypes")
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_grpo_loss_returns_a_0d_tensor_with_grad_of_the_input_dtype(dtype):
    new = torch.tensor(TWO_RESPONSES["new"], dtype=dtype, requires_grad=True)
    rest = [torch.tensor(TWO_RESPONSES[k], dtype=dtype) for k in ("old", "advantages", "mask")]
    loss = grpo_loss(new, *rest, loss_type="dapo", eps_low=0.2, eps_high=0.28)
    got = (type(loss).__name__, tuple(getattr(loss, "shape", ())), getattr(loss, "dtype", None),
           getattr(loss, "requires_grad", None))
    assert got == ("Tensor", (), dtype, True), say(
        f"expected a 0-dim torch.Tensor of dtype {dtype} that carries gradient (type, shape, dtype, requires_grad "
        f"= ('Tensor', (), {dtype}, True)), got {got}: keep the computation in torch, no .item() or numpy",
        f"ожидался 0-мерный torch.Tensor с dtype {dtype}, несущий градиент (тип, форма, dtype, requires_grad "
        f"= ('Tensor', (), {dtype}, True)), получено {got}: считайте всё в torch, без .item() и numpy")


def test_grpo_loss_does_not_modify_inputs():
    tensors = {k: _t(TWO_RESPONSES[k]) for k in ("new", "old", "advantages", "mask")}
    copies = {k: v.clone() for k, v in tensors.items()}
    grpo_loss(tensors["new"], tensors["old"], tensors["advantages"], tensors["mask"],
              loss_type="grpo", eps_low=0.2, eps_high=0.28)
    assert all(torch.equal(tensors[k], copies[k]) for k in tensors)


# --- the toy experiment: the autograder's own two-update run, with your grpo_loss --------------------
# The autograder trains the given toy (grpo_toy, profile "check": a 60-step warm-up, then two GRPO updates;
# about 0.4 s a run) with your grpo_loss and compares the outcome with the reference's run. This test makes
# the same runs and compares with the reference outcomes in _toy_reference.json (written by the kit's
# build, with the grader's bands). The advantages come from that file too: the toy's rewards are 0 or 1, so
# an advantage depends only on the reward and the number of successes in its group; a mistake in your
# group_relative_advantages shows in ITS tests, not here. The metrics the loop logs with your other
# module_9_reference functions are not compared, so they are switched off.
TOY = json.loads(Path(__file__).with_name("_toy_reference.json").read_text(encoding="utf-8"))


def _advantages_from_the_table(rewards, scale=True, *, eps=1e-6):
    table, size = TOY["advantages"]["scaled" if scale else "unscaled"], TOY["advantages"]["group_size"]
    rewards = np.asarray(rewards, dtype=np.float64)
    rows = []
    for group in rewards.reshape(-1, rewards.shape[-1]):
        assert len(group) == size and set(group.tolist()) <= {0.0, 1.0}, say(
            f"the toy's rewards should be {size} zeros and ones per group, got {group}",
            f"награды игрушечной задачи — {size} нулей и единиц в группе, получено {group}")
        by_reward = table[str(int(group.sum()))]  # [A of a 0 reward, A of a 1 reward]
        rows.append([by_reward[int(r)] for r in group])
    return np.array(rows, dtype=np.float64).reshape(rewards.shape)


TOY_FORMULAS = SimpleNamespace(
    group_relative_advantages=_advantages_from_the_table,
    clip_activity=lambda ratios, advantages, **_: np.zeros(np.broadcast(ratios, advantages).shape, bool),
    categorical_entropy=lambda probabilities: np.zeros(np.shape(probabilities)[:-1]),
    pass_at_k_unbiased=lambda n, c, k: 0.0)


@pytest.mark.toy_run
@pytest.mark.parametrize("run", TOY["module_9_training.grpo_loss"]["runs"], ids=lambda run: run["kwargs"]["loss_type"])
def test_grpo_loss_trains_the_toy_like_the_reference(run):
    import grpo_toy

    loss_type = run["kwargs"]["loss_type"]
    config = grpo_toy.profile_config("check", seed=9, loss_type=loss_type)
    out = grpo_toy.run_toy_grpo_experiment(config, loss_fn=grpo_loss, formulas=TOY_FORMULAS)
    before = {"before_train_accuracy": out["before_train"]["accuracy"],  # measured before your loss ever runs
              "before_train_by_prompt": {str(k): v for k, v in sorted(out["before_train_by_prompt"].items())}}
    if before != TOY["fingerprint"]:
        pytest.skip(say(
            f"torch {torch.__version__} here samples the toy differently from the torch that computed "
            f"_toy_reference.json (the policy differs before any update), so the outcomes cannot be compared "
            f"on this machine; the autograder compares with a reference run it makes on its own machine",
            f"torch {torch.__version__} здесь сэмплирует игрушечную задачу иначе, чем torch, на котором посчитан "
            f"_toy_reference.json (политика отличается ещё до первого обновления), поэтому результаты здесь "
            f"сравнить нельзя; автогрейдер сравнивает с эталонным запуском, который делает на своей машине"))
    got = grpo_toy.check_metrics(out)
    for key, rtol, atol in TOY["module_9_training.grpo_loss"]["bands"]:  # the most telling first
        want, have = run["outcome"][key], got[key]
        tol = atol + rtol * abs(want)
        assert math.isfinite(have) and abs(have - want) <= tol, say(
            f"toy GRPO run ({loss_type}) with your grpo_loss: {key} is {have:.6g}, the reference run gives "
            f"{want:.6g} (+- {tol:.2g}): your loss trains differently from the reference (the autograder makes "
            f"this run too, and computes the reference's on its own machine)",
            f"игрушечный запуск GRPO ({loss_type}) с вашей grpo_loss: {key} = {have:.6g}, эталонный запуск "
            f"даёт {want:.6g} (± {tol:.2g}): ваша функция потерь обучает не так, как эталонная (автогрейдер "
            f"делает этот же запуск, а эталонный считает на своей машине)")


# --- edge rows ------------------------------------------------------------------------------
# @pytest.mark.edge("<class>") marks a row of one edge class (large_padding, dtypes, zeros_and_empties,
# boundaries, ...); the grader holds the same input. `pytest -m edge` runs them alone.
# Three responses, all ratios 1, advantages 1.0, 2.0, 0.5; the second has NO active token (still one of N = 3).
#   grpo:    -(1.0 + 0 + 0.5) / 3                   = -0.5      (an empty response's token-mean is 0, not 0/0)
#   dr_grpo: -(2 * 1.0 + 0 + 1 * 0.5) / (3 * T = 2) = -2.5 / 6  (max_length omitted: L = T, the padded width)
#   dapo:    -(2 * 1.0 + 0 + 1 * 0.5) / 3           = -2.5 / 3
EMPTY_RESPONSE = dict(new=[[-1.0, -1.0], [-2.0, -2.0], [-1.0, 0.0]], old=[[-1.0, -1.0], [-2.0, -2.0], [-1.0, 0.0]],
                      advantages=[1.0, 2.0, 0.5], mask=[[1, 1], [0, 0], [1, 0]])


@pytest.mark.edge("zeros_and_empties")
@pytest.mark.parametrize("loss_type, expected", [("grpo", -0.5), ("dr_grpo", -2.5 / 6), ("dapo", -2.5 / 3)])
def test_grpo_loss_an_empty_response_by_hand(loss_type, expected):
    loss = grpo_loss(*(_t(EMPTY_RESPONSE[k]) for k in ("new", "old", "advantages", "mask")),
                     loss_type=loss_type, eps_low=0.2, eps_high=0.28)
    assert math.isclose(float(loss), expected, rel_tol=REL), say(
        f"{loss_type}, one response without active tokens: expected {expected:.12g}, got {float(loss)}",
        f"{loss_type}, один ответ без активных токенов: ожидалось {expected:.12g}, получено {float(loss)}")


@pytest.mark.edge("boundaries")
def test_grpo_loss_one_active_token():
    loss = grpo_loss(_t([[-1.0]]), _t([[-1.0]]), _t([2.0]), _t([[1]]), loss_type="dapo", eps_low=0.2, eps_high=0.28)
    assert math.isclose(float(loss), -2.0, rel_tol=REL), say(f"one token, A = 2: expected -2.0, got {float(loss)}",
                                                             f"один токен, A = 2: ожидалось -2.0, получено {float(loss)}")


@pytest.mark.edge("zeros_and_empties")
def test_grpo_loss_no_active_token_in_the_batch():
    # every response contributes 0, so the loss is 0 and so is its gradient (dapo divides by the batch's
    # active-token count, 0 here: a count of 0 must not become 0 / 0)
    loss, grad = _loss_and_grad([[-1.0, 3.0], [-2.0, -0.5]], [[-1.5, -3.0], [-2.0, 0.5]], [1.0, -0.5],
                                [[0, 0], [0, 0]], loss_type="dapo", eps_low=0.2, eps_high=0.28)
    assert float(loss) == 0.0 and torch.equal(grad, torch.zeros_like(grad)), say(
        f"dapo, no active token in the batch: expected loss 0 and gradient 0, got {float(loss)} and {grad.tolist()}",
        f"dapo, в батче нет активных токенов: ожидались потеря 0 и градиент 0, получено {float(loss)} и "
        f"{grad.tolist()}")


# --- the given _check_loss_inputs refuses what the grader refuses: keep its call at the top of grpo_loss --------
# It runs before your code, so each row first checks a legal call that your code computes: a wide clip range
# [0.8, 2.5] (eps_high >= 1 is legal): terms min(1.5, 1.5), min(0.5, 0.8), min(-0.5, -0.8), min(-1.5, -1.5),
# dapo: their mean. (tests/test_recipe.py keeps these rows in step with the grader's refusals.)
@pytest.mark.edge("boundaries")
@pytest.mark.parametrize("changed", [pytest.param(dict(eps_high=-0.1), id="eps_high < 0"),
                                     pytest.param(dict(eps_low=1.0), id="eps_low = 1"),
                                     pytest.param(dict(loss_type="ppo"), id="unknown loss_type"),
                                     pytest.param(dict(max_length=1), id="max_length below the longest response"),
                                     pytest.param(dict(advantages=[[1.0], [0.5]]), id="advantages of shape (N, 1)")])
def test_grpo_loss_refuses_what_the_grader_refuses(changed):
    loss = grpo_loss(*(_t(CLIP_CASE[k]) for k in ("new", "old", "advantages", "mask")),
                     loss_type="dapo", eps_low=0.2, eps_high=1.5)
    assert math.isclose(float(loss), -(1.5 + 0.5 - 0.8 - 1.5) / 4, rel_tol=REL), say(
        f"eps_low 0.2, eps_high 1.5: expected {(1.5 + 0.5 - 0.8 - 1.5) / -4:.12g}, got {float(loss)}",
        f"eps_low 0.2, eps_high 1.5: ожидалось {(1.5 + 0.5 - 0.8 - 1.5) / -4:.12g}, получено {float(loss)}")
    call = {"new": [[-1.0, -2.0], [-0.5, -0.5]], "old": [[-1.0, -2.0], [-0.5, -0.5]], "advantages": [1.0, 0.5],
            "mask": [[1, 1], [1, 0]], "loss_type": "dapo", "eps_low": 0.2, "eps_high": 0.28, **changed}
    tensors = [_t(call.pop(k)) for k in ("new", "old", "advantages", "mask")]
    with pytest.raises(ValueError):
        grpo_loss(*tensors, **call)


# --- structure rows: a batch of one (1, T) and a square batch (N = T) ------------------------------------
# In a square batch an (N,) advantage broadcast along the wrong axis, or a mean over the wrong dimension, still
# runs: each response's loss is checked against the same response alone, weighted as the reduction says.
@pytest.mark.edge("shapes")
@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "dapo"])
def test_grpo_loss_structures(loss_type):
    new = torch.tensor([[-1.0, -0.5, -2.0], [-0.3, -1.2, -0.7], [-2.0, -0.1, -0.4]], dtype=torch.float64)
    old = torch.tensor([[-1.1, -0.4, -2.0], [-0.35, -1.0, -0.6], [-1.9, -0.2, -0.45]], dtype=torch.float64)
    advantages = torch.tensor([1.2, -0.6, 0.3], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], dtype=torch.float64)
    ratio = torch.exp(new - old)
    terms = torch.minimum(ratio * advantages[:, None], ratio.clamp(0.8, 1.28) * advantages[:, None]) * mask
    lengths = mask.sum(dim=1)
    expected = {"grpo": -(terms.sum(dim=1) / lengths).mean(), "dr_grpo": -terms.sum() / (3 * 3),
                "dapo": -terms.sum() / lengths.sum()}[loss_type]
    observed = grpo_loss(new, old, advantages, mask, loss_type=loss_type, eps_low=0.2, eps_high=0.28)
    assert float(observed) == pytest.approx(float(expected), rel=1e-9), say(
        f"a square batch (N = T = 3), {loss_type}: expected {float(expected)}, got {float(observed)}",
        f"квадратный батч (N = T = 3), {loss_type}: ожидалось {float(expected)}, получено {float(observed)}")
    one = grpo_loss(new[:1], old[:1], advantages[:1], mask[:1], loss_type=loss_type, eps_low=0.2, eps_high=0.28)
    single = {"grpo": -terms[0].sum() / 3, "dr_grpo": -terms[0].sum() / 3, "dapo": -terms[0].sum() / 3}[loss_type]
    assert one.dim() == 0 and float(one) == pytest.approx(float(single), rel=1e-9), say(
        f"a batch of one (1, T), {loss_type}: expected {float(single)}, got {float(one)}",
        f"батч из одного ответа (1, T), {loss_type}: ожидалось {float(single)}, получено {float(one)}")
