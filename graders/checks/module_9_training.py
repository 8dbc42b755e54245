"""Hidden checks of module_9_training.grpo_loss (see graders/checks/__init__.py for the API).

One harness, :func:`grpo_checks`, runs every case on both sides (the engine's call
mode is per exercise, so the loss-and-gradient cases and the experiment share it):

- **Loss value and gradient** (``check="loss and gradient"``, the default): small
  (N, T) tensors; the loss value and d loss / d new_logprobs, as the
  ``LossAndGrads`` call mode computes them (but a tensor loss that does not depend
  on new_logprobs has gradient 0, not None), compared with the reference -- every
  ``loss_type``, ratios on both sides of an asymmetric clip range with positive
  and negative advantages, padding that holds finite garbage (its gradient must
  be exactly 0), several groups, a response without active tokens, float64 and
  float32 inputs, and Hypothesis-drawn batches with a fixed seed.
- **Outcome** (``check="toy experiment"``, the harness's trusted part :func:`grpo_toy_run`: in a
  worker it runs in the trusted process, where no learner code runs, each call of the learner's
  ``grpo_loss`` answered by the learner's child, gradients included:
  :mod:`graders.engine.worker.served`): the PUBLIC starter's given
  ``grpo_toy.run_toy_grpo_experiment`` (the trusted process's own copy of the given
  module, loaded before any learner code, so a learner file that patches the
  ``grpo_toy`` it imported changes nothing here; a learner file from before the
  toy moved out, with the loop inline, is graded the same way) with ONLY the
  learner's ``grpo_loss`` plugged in,
  under the toy's "check" profile (the smoke profile with a 60-step warm-up of
  32 examples at Adam 3e-2, two updates, 4 evaluation samples per prompt, one
  held-out prompt: about 0.37 s a run, two runs; the warm-up never sees the
  loss, so the given ``warm_up_once`` keeps its weights, keyed by everything it
  depends on, and the second run reuses them, bit-identical to warming up
  again). The public test ``test_grpo_loss_trains_the_toy_like_the_reference``
  makes the same runs and compares with the reference outcomes that
  ``rl4llm build`` writes to ``starter/module_09/_toy_reference.json``.

  The worker sends back only what the run TRAINED: the parameters each epoch
  of the first update starts from, and the final ones (recorded at the
  optimiser's steps). The grader measures them with its own code
  (:func:`graders.checks.toy_scores.grpo_toy_metrics`): it warms up the policy
  itself, draws the first update's rollouts as the run does, and computes the
  first update's mean loss and ratio range (which fingerprint the steps the
  learner's loss took: the first update sees exactly the reference's rollouts;
  the loss's values are the other cases' business) with the reference's
  ``grpo_loss``, then the train accuracy and the teacher-forced KL after two
  updates by the given ``evaluate_policy``; they must land in bands around the
  reference run, measured the same way. No number the worker reports is
  compared (tests/test_toy_forgery.py).

  The given loop calls four module_9_reference functions (``formulas``); the
  harness passes its own: ``group_relative_advantages`` looked up in
  :data:`BINARY_ADVANTAGES` (the reference's values for every binary group of
  the toy's size, sent as data: the toy's rewards are 0 or 1, and the same
  values are public in ``_toy_reference.json``), so no copy of that formula
  travels even to the trusted process, and constant stand-ins for ``clip_activity``,
  ``categorical_entropy`` and ``pass_at_k_unbiased``, which only feed logged
  metrics that nothing measures.

Sizing: the two toy runs are nearly all of this harness's time; how they are sized (warm-up, updates,
samples, and what each band separates) is in docs/design.md, "How the GRPO toy check is sized".

Tolerances: float64 inputs rtol 1e-5 / atol 1e-6 (a correct implementation that
computes in float32 internally passes); float32 inputs rtol 1e-4 / atol 1e-5.
Padding holds moderate finite values (|x| <= 40 in float64, <= 8 in float32), so
an implementation that multiplies by the mask (rather than ``torch.where``) gets
full marks; ratios stay at least 1e-3 away from the clip boundaries.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from graders.checks.edges import NO_TEXT, TENSORS_ONLY, declare
from graders.checks import Case, Harness, Tensor, close, exercise, hypothesis_cases, st
from graders.checks.bands import compare_with_bands
from graders.checks.toy_scores import grpo_toy_metrics
from graders.text import Text

M = "module_9_training"
LOSS_TYPES = ("grpo", "dr_grpo", "dapo")
F32 = dict(rtol=1e-4, atol=1e-5)  # per-case tolerances for float32 inputs


# ----------------------------------------------------------------------------- the harness
def grpo_checks(fn, learner, starter, *args, check="loss and gradient", **kwargs):
    """The value checks of grpo_loss, run on both sides (learner in the worker, reference in the grader):
    ``fn(*args, **kwargs)``, d loss / d new_logprobs (args[0]) and whether that gradient is exactly 0
    wherever the mask (args[3]) is 0. The toy experiment: :func:`grpo_toy_run`."""
    import torch

    loss = fn(*args, **kwargs)
    grad = None
    if isinstance(loss, torch.Tensor) and loss.numel() == 1 and loss.is_floating_point():
        if loss.requires_grad:
            (grad,) = torch.autograd.grad(loss.reshape(()), [args[0]], allow_unused=True)
        if grad is None:  # a loss that does not depend on new_logprobs: its gradient is 0
            grad = torch.zeros_like(args[0])
    result = {"value": loss, "grad": grad}
    if grad is not None and grad.shape == args[3].shape:  # padding must get EXACTLY zero gradient
        result["masked_gradient_is_exactly_zero"] = float(bool((grad[args[3] == 0] == 0).all()))
    return result


def grpo_toy_run(fn, starter, *args, check=None, **kwargs):
    """The toy experiment of grpo_loss (a trusted case: never in the learner's process): the starter's given
    toy GRPO experiment (``grpo_toy``) with ``fn`` plugged in (kwargs: loss_type), under a reduced grading
    configuration, with the module_9_reference functions it calls taken from here; returns the parameters
    each epoch of the first update starts from and the final ones."""
    from types import SimpleNamespace

    import numpy as np

    def group_relative_advantages(rewards, scale=True, *, eps=1e-6):  # looked up: no formula travels
        r = np.array(rewards, dtype=np.float64)
        table = BINARY_ADVANTAGES.get((bool(scale), r.shape[-1], eps))
        if r.ndim != 2 or table is None or not np.isin(r, (0.0, 1.0)).all():
            raise ValueError("the toy's advantages are looked up for binary groups of its own size only")
        successes = r.sum(axis=-1).astype(int)
        return np.array([[table[c][int(x)] for x in row] for c, row in zip(successes, r)], dtype=np.float64)

    formulas = SimpleNamespace(  # the last three only feed metrics this harness does not return
        group_relative_advantages=group_relative_advantages,
        clip_activity=lambda ratios, advantages, **_: np.zeros(np.broadcast(ratios, advantages).shape, bool),
        categorical_entropy=lambda probabilities: np.zeros(np.shape(probabilities)[:-1]),
        pass_at_k_unbiased=lambda n, c, k: 0.0)
    toy = starter("grpo_toy")  # its warm-up is kept: the second toy case reuses the first one's weights
    config = toy.profile_config("check", seed=9, loss_type=kwargs["loss_type"])
    epochs, update = [], toy.grpo_update

    def recording(policy, optimizer, *args, **options):  # the first update's epochs: where each starts
        def snapshot():
            if len(epochs) < config.update_epochs:
                epochs.append({k: v.detach().clone() for k, v in policy.state_dict().items()})

        def step():
            optimizer.__class__.step(optimizer)
            snapshot()

        if not epochs:
            snapshot()
            optimizer.step = step
        try:
            return update(policy, optimizer, *args, **options)
        finally:
            vars(optimizer).pop("step", None)

    toy.grpo_update = recording
    try:
        out = toy.run_toy_grpo_experiment(config, loss_fn=fn, formulas=formulas)
    finally:
        toy.grpo_update = update
    return {"epochs": epochs, "final": {k: v.detach().clone() for k, v in out["policy"].state_dict().items()}}


def _binary_advantages(group_size: int, eps: float) -> dict:
    """Grader-side: the reference's group_relative_advantages of every binary group of ``group_size`` (its
    arithmetic, here), as {(scale, group_size, eps): {successes c: (A of a 0 reward, A of a 1 reward)}}.

    The toy's rewards are 0 or 1, so this table is all its loop needs of the formula: the harness looks
    advantages up in it (sent as data, the harness's prelude), and no copy of the formula of another
    exercise (module_9_reference's) reaches the learner's process. The same values are public in
    starter/module_09/_toy_reference.json (``advantages``).
    """
    table = {}
    for scale in (True, False):
        rows = {}
        for c in range(group_size + 1):
            r = np.array([[1.0] * c + [0.0] * (group_size - c)])
            all_equal = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
            centred = np.where(all_equal, 0.0, r - r.mean(axis=-1, keepdims=True))
            if scale:
                std = r.std(axis=-1, keepdims=True)
                centred = np.divide(centred, std + eps, out=np.zeros_like(centred), where=~all_equal)
            rows[c] = (float(centred[0, -1]), float(centred[0, 0]))  # the last is a 0 reward, the first a 1
        table[(scale, group_size, eps)] = rows
    return table


BINARY_ADVANTAGES = _binary_advantages(8, 1e-6)  # the toy's check profile: groups of 8, adv_eps 1e-6
_PRELUDE = f"BINARY_ADVANTAGES = {BINARY_ADVANTAGES!r}"


# key -> (rtol, atol, what it is, what a miss means); each text a Text (English, Russian)
_TRAINS = Text("the loss trains differently from the reference", "функция потерь обучает не так, как эталонная")
OUTCOME_BANDS = {
    "first_update_loss": (1e-4, 1e-7, Text("the mean loss of the first update (same rollouts as the reference)",
                                       "средняя функция потерь первого обновления (те же роллауты, что у эталона)"),
                          _TRAINS),
    "first_update_ratio_min": (1e-4, 1e-7, Text("the smallest ratio rho in the first update",
                                            "наименьшее отношение rho в первом обновлении"), _TRAINS),
    "first_update_ratio_max": (1e-4, 1e-7, Text("the largest ratio rho in the first update",
                                            "наибольшее отношение rho в первом обновлении"), _TRAINS),
    "after_train_accuracy": (0.0, 0.1, Text("the train accuracy after two updates",
                                        "точность на обучающих задачах после двух обновлений"), _TRAINS),
    "after_train_kl": (0.25, 0.01, Text("the teacher-forced KL to the reference after two updates",
                                    "KL к эталонной политике (teacher forcing) после двух обновлений"), _TRAINS),
}


# ----------------------------------------------------------------------------- case builders
def _loss_case(new, old, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None, dtype="float64",
               label="", hidden=True, weight=1.0, edge=()):
    kwargs = {"loss_type": loss_type, "eps_low": eps_low, "eps_high": eps_high}
    if max_length is not None:
        kwargs["max_length"] = max_length
    tolerances = F32 if dtype == "float32" else {}
    return Case(args=(Tensor(np.asarray(new, dtype=float), dtype, requires_grad=True),
                      Tensor(np.asarray(old, dtype=float), dtype), Tensor(np.asarray(advantages, dtype=float), dtype),
                      Tensor(np.asarray(mask, dtype=float), dtype)),
                kwargs=kwargs, label=label, hidden=hidden, weight=weight, edge=edge, **tolerances)


def _away_from_boundaries(log_ratio: np.ndarray, eps_low: float, eps_high: float) -> np.ndarray:
    """Nudge log-ratios whose ratio lies within 1e-3 of 1 - eps_low or 1 + eps_high (float32-safe)."""
    out = log_ratio.copy()
    for bound in (1.0 - eps_low, 1.0 + eps_high):
        near = np.abs(np.exp(out) - bound) < 1e-3
        out[near] += 0.01
    return out


def _random_batch(rng: np.random.Generator, lengths, width, *, spread, garbage):
    """old log-probs, new = old + log-ratio, and a mask; padding holds finite garbage in both."""
    n = len(lengths)
    mask = (np.arange(width)[None, :] < np.asarray(lengths)[:, None]).astype(float)
    old = -rng.uniform(0.05, 4.0, size=(n, width))
    new = old + rng.normal(0.0, spread, size=(n, width))
    pad = mask == 0
    new[pad] = rng.uniform(-garbage, garbage, size=int(pad.sum()))
    old[pad] = rng.uniform(-garbage, garbage, size=int(pad.sum()))
    return new, old, mask


def _group_advantages(rng: np.random.Generator, groups: int, size: int, scale: bool) -> np.ndarray:
    rewards = rng.integers(0, 2, size=(groups, size)).astype(float)
    rewards[:, 0], rewards[:, 1] = 1.0, 0.0  # informative groups
    centred = rewards - rewards.mean(axis=1, keepdims=True)
    if scale:
        centred = centred / (rewards.std(axis=1, keepdims=True) + 1e-6)
    return centred.reshape(-1)


def _drawn_case(seed: int) -> Case:
    """A random batch from a Hypothesis-drawn seed (shape, reduction, clip range, dtype, padding)."""
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(2, 7)), int(rng.integers(2, 8))
    loss_type = LOSS_TYPES[int(rng.integers(0, 3))]
    eps_low, eps_high = float(rng.choice([0.1, 0.2, 0.3])), float(rng.choice([0.15, 0.2, 0.28, 0.4]))
    float32 = bool(rng.random() < 0.3)
    lengths = rng.integers(0, width + 1, size=n)
    lengths[0] = max(int(lengths[0]), 1)  # at least one active token in the batch
    new, old, mask = _random_batch(rng, lengths, width, spread=0.5, garbage=8.0 if float32 else 30.0)
    active = mask > 0
    new[active] = old[active] + _away_from_boundaries(new[active] - old[active], eps_low, eps_high)
    advantages = rng.normal(0.0, 1.0, size=n)
    extra = int(rng.integers(-1, 4))
    return _loss_case(new, old, advantages, mask, loss_type=loss_type, eps_low=eps_low, eps_high=eps_high,
                      max_length=None if extra < 0 else width + extra, dtype="float32" if float32 else "float64")


@exercise(f"{M}.grpo_loss",
          edges=declare("large_padding", "dtypes", "zeros_and_empties", "boundaries", "shapes", python_types=TENSORS_ONLY, extremes="ratios are exp(new - old) of one token under two nearby policies: large values sit in the padding (large_padding)", ties_and_near_ties="a ratio on a clip edge is boundaries", number_formats=NO_TEXT),
          points=6, call=Harness(grpo_checks, given=("grpo_toy",), prelude=_PRELUDE, score=grpo_toy_metrics,
                       trusted=grpo_toy_run), timeout=90,
          compare=compare_with_bands(OUTCOME_BANDS, close()))
def _grpo_loss():
    # --- public: the hand-checkable rows of starter/module_09/test_module_9_training.py
    two = dict(new=[[-1.0, -2.0, 0.0], [-0.5, -0.5, -3.0]], old=[[-1.0, -2.0, 0.0], [-0.5, -0.5, -3.0]],
               advantages=[1.0, 0.5], mask=[[1, 1, 0], [1, 1, 1]])
    for loss_type in LOSS_TYPES:
        yield _loss_case(**two, loss_type=loss_type, eps_low=0.2, eps_high=0.28, max_length=4, hidden=False,
                         label=Text(f"two responses, all ratios 1 ({loss_type}, max_length 4)", f"два ответа, все отношения равны 1 ({loss_type}, max_length 4)"))
    clip = dict(new=[[math.log(1.5)], [math.log(0.5)], [math.log(0.5)], [math.log(1.5)]], old=[[0.0]] * 4,
                advantages=[1.0, 1.0, -1.0, -1.0], mask=[[1]] * 4)
    yield _loss_case(**clip, loss_type="dapo", eps_low=0.2, eps_high=0.28, hidden=False, edge="boundaries",
                     label=Text("ratios 1.5 / 0.5 with advantages +1 / -1 (asymmetric clip, dapo)", "отношения 1.5 / 0.5 при преимуществах +1 / -1 (асимметричный клиппинг, dapo)"))
    yield _loss_case([[-1.0], [-1.0]], [[-1.0], [-1.0]], [1.0, -1.0], [[1], [1]], loss_type="dapo",
                     eps_low=0.2, eps_high=0.2, hidden=False, label=Text("gradient sign: advantages +1 and -1", "знак градиента: преимущества +1 и -1"))
    yield _loss_case([[-1.0, 40.0], [-2.0, -3.0]], [[-1.2, -40.0], [-2.0, -3.5]], [1.0, -1.0], [[1, 0], [1, 1]],
                     loss_type="dapo", eps_low=0.2, eps_high=0.28, hidden=False, edge="large_padding",
                     label=Text("padding holding large values (zero gradient there)", "паддинг с большими значениями (градиент там нулевой)"))

    # --- public: an empty response (no active token) and a batch of one token, every reduction
    empty = dict(new=[[-1.0, -1.0], [-2.0, -2.0], [-1.0, 0.0]], old=[[-1.0, -1.0], [-2.0, -2.0], [-1.0, 0.0]],
                 advantages=[1.0, 2.0, 0.5], mask=[[1, 1], [0, 0], [1, 0]])
    for loss_type in LOSS_TYPES:
        yield _loss_case(**empty, loss_type=loss_type, eps_low=0.2, eps_high=0.28, hidden=False, edge="zeros_and_empties",
                         label=Text(f"an empty response counts in N, max_length omitted ({loss_type})",
                                    f"пустой ответ учитывается в N, max_length не задан ({loss_type})"))
    yield _loss_case([[-1.0]], [[-1.0]], [2.0], [[1]], loss_type="dapo", eps_low=0.2, eps_high=0.28, hidden=False,
                     edge="boundaries", label=Text("one active token in the batch (dapo)", "один активный токен в батче (dapo)"))

    # --- shapes: a batch of one (1, T) and a square batch (N = T), where an (N,) advantage broadcast along the
    # wrong axis or a reduction over the wrong dimension still runs
    one = dict(new=[[-1.0, -0.5, -2.0]], old=[[-1.25, -0.5, -1.5]], advantages=[0.75], mask=[[1, 1, 0]])
    square = dict(new=[[-1.0, -0.5, -2.0], [-0.3, -1.2, -0.7], [-2.0, -0.1, -0.4]],
                  old=[[-1.1, -0.4, -2.0], [-0.35, -1.0, -0.6], [-1.9, -0.2, -0.45]],
                  advantages=[1.2, -0.6, 0.3], mask=[[1, 1, 1], [1, 0, 0], [1, 1, 0]])
    for loss_type in LOSS_TYPES:
        yield _loss_case(**one, loss_type=loss_type, eps_low=0.2, eps_high=0.28, edge="shapes", hidden=loss_type != "grpo",
                         label=Text(f"a batch of one response (1, T) ({loss_type})", f"батч из одного ответа (1, T) ({loss_type})"))
        yield _loss_case(**square, loss_type=loss_type, eps_low=0.2, eps_high=0.28, edge="shapes",
                         label=Text(f"a square batch (N = T): one advantage per row ({loss_type})",
                                    f"квадратный батч (N = T): одно преимущество на строку ({loss_type})"))

    # --- hidden: clipping on both sides, every reduction
    padded_clip = dict(new=[[math.log(1.5), 7.0], [math.log(0.5), -3.0], [math.log(0.5), 0.5], [math.log(1.5), 2.0]],
                       old=[[0.0, -7.0], [0.0, 3.0], [0.0, -0.5], [0.0, -2.0]], advantages=[1.0, 1.0, -1.0, -1.0],
                       mask=[[1, 0], [1, 0], [1, 0], [1, 0]])
    for loss_type in ("grpo", "dr_grpo"):
        yield _loss_case(**padded_clip, loss_type=loss_type, eps_low=0.2, eps_high=0.28, max_length=3,
                         label=Text(f"ratios 1.5 / 0.5 with advantages +1 / -1, one padded column ({loss_type})", f"отношения 1.5 / 0.5 при преимуществах +1 / -1, один столбец паддинга ({loss_type})"))
    ratios = np.array([[0.6, 0.85, 0.95, 1.05, 1.2, 1.4], [1.4, 1.2, 1.05, 0.95, 0.85, 0.6],
                       [0.75, 1.15, 1.35, 0.9, 1.0001, 2.0], [0.5, 1.25, 0.82, 1.1, 1.33, 0.7]])
    old = -np.array([[0.3, 1.2, 2.2, 0.7, 1.9, 0.1], [1.0, 0.4, 2.8, 0.2, 1.5, 0.9],
                     [0.6, 0.6, 1.1, 3.0, 0.2, 1.4], [2.0, 0.8, 0.3, 1.6, 0.5, 1.1]])
    uneven = (np.arange(6)[None, :] < np.array([6, 4, 5, 6])[:, None]).astype(float)
    for loss_type in LOSS_TYPES:
        yield _loss_case(old + np.log(ratios), old, [1.3, -0.7, 0.4, -1.1], uneven, loss_type=loss_type,
                         eps_low=0.1, eps_high=0.3, max_length=8,
                         label=Text(f"ratios on both sides of [1 - 0.1, 1 + 0.3], mixed advantages ({loss_type})", f"отношения по обе стороны от [1 - 0.1, 1 + 0.3], преимущества разных знаков "
                                  f"({loss_type})"))
    yield _loss_case(old + np.log(ratios), old, [0.9, 0.9, -0.9, -0.9], np.ones((4, 6)), loss_type="dapo",
                     eps_low=0.2, eps_high=0.28, edge="boundaries", label=Text("ratios between 1 + eps_low and 1 + eps_high (clip-higher)", "отношения между 1 + eps_low и 1 + eps_high (clip-higher)"))

    # --- hidden: several groups with padding, max_length above the longest response
    rng = np.random.default_rng(9_401)
    lengths = [2, 5, 8, 3, 1, 6]
    new, old2, mask = _random_batch(rng, lengths, 8, spread=0.35, garbage=30.0)
    for loss_type in LOSS_TYPES:
        advantages = _group_advantages(rng, 2, 3, scale=loss_type != "dr_grpo")
        yield _loss_case(new, old2, advantages, mask, loss_type=loss_type, eps_low=0.2, eps_high=0.28,
                         max_length=10, label=Text(f"two groups of 3, padding with garbage, max_length 10 ({loss_type})", f"две группы по 3, паддинг с мусором, max_length 10 ({loss_type})"))
    yield _loss_case(new, old2, _group_advantages(rng, 2, 3, scale=False), mask, loss_type="dr_grpo",
                     eps_low=0.2, eps_high=0.28, label=Text("dr_grpo with max_length omitted (L = T)", "dr_grpo без max_length (L = T)"))
    # a response without active tokens (a truncated one, masked out): contributes 0, still counts in N
    empty_mask = np.array([[1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0]], dtype=float)
    new3, old3, _ = _random_batch(rng, [4, 4, 4], 4, spread=0.3, garbage=0.0)
    new3[empty_mask == 0] += 5.0
    for loss_type in LOSS_TYPES:
        yield _loss_case(new3, old3, [0.8, 1.5, -1.2], empty_mask, loss_type=loss_type, eps_low=0.2, eps_high=0.28,
                         max_length=6, edge="zeros_and_empties", label=Text(f"one response without active tokens ({loss_type})", f"один ответ без активных токенов ({loss_type})"))

    # --- no active token in the whole batch: every response contributes 0, so the loss and its gradient are 0
    # (dapo's denominator, the batch's active-token count, is 0 there: the reference's clamp keeps it finite)
    silent = dict(new=[[-1.0, 3.0], [-2.0, -0.5]], old=[[-1.5, -3.0], [-2.0, 0.5]], advantages=[1.0, -0.5],
                  mask=[[0, 0], [0, 0]])
    for loss_type in LOSS_TYPES:
        yield _loss_case(**silent, loss_type=loss_type, eps_low=0.2, eps_high=0.28, hidden=loss_type != "dapo",
                         edge="zeros_and_empties",
                         label=Text(f"no active token in the batch: loss 0 ({loss_type})",
                                    f"в батче нет активных токенов: потеря 0 ({loss_type})"))
    # --- a wide clip range (eps_high >= 1 is legal: clip-higher) and the given validation's refusals
    yield _loss_case(**clip, loss_type="dapo", eps_low=0.2, eps_high=1.5, hidden=False, edge="boundaries",
                     label=Text("eps_high = 1.5 is legal (dapo)", "eps_high = 1.5 допустимо (dapo)"))
    # the refusals stay hidden: their public test is written by hand (recipe.HAND_WRITTEN_REFUSALS)
    yield _loss_case(old + np.log(ratios), old, [1.3, -0.7, 0.4, -1.1], uneven, loss_type="grpo", eps_low=0.5,
                     eps_high=1.5, edge="boundaries",
                     label=Text("a wide clip range, eps_high = 1.5 (legal)", "широкий диапазон клиппинга, eps_high = 1.5 (допустимо)"))
    refused = dict(new=[[-1.0, -2.0], [-0.5, -0.5]], old=[[-1.0, -2.0], [-0.5, -0.5]], advantages=[1.0, 0.5],
                   mask=[[1, 1], [1, 0]])
    for kwargs, en, ru in (
            (dict(eps_high=-0.1), "eps_high < 0 is refused", "eps_high < 0 отклоняется"),
            (dict(eps_low=1.0), "eps_low = 1 is refused", "eps_low = 1 отклоняется"),
            (dict(eps_low=-0.1), "eps_low < 0 is refused", "eps_low < 0 отклоняется"),
            (dict(loss_type="ppo"), "an unknown loss_type is refused", "неизвестный loss_type отклоняется"),
            (dict(max_length=1), "max_length shorter than the longest response is refused",
             "max_length короче самого длинного ответа отклоняется")):
        given = {"loss_type": "dapo", "eps_low": 0.2, "eps_high": 0.28, **kwargs}
        case = _loss_case(**refused, **given, edge="boundaries", label=Text(en, ru))
        yield dataclasses.replace(case, raises=ValueError)
    wrong_shape = _loss_case(refused["new"], refused["old"], [[1.0], [0.5]], refused["mask"], loss_type="dapo",
                             eps_low=0.2, eps_high=0.28, edge="shapes",
                             label=Text("advantages of shape (N, 1) are refused", "преимущества формы (N, 1) отклоняются"))
    yield dataclasses.replace(wrong_shape, raises=ValueError)

    # --- hidden: float32 inputs
    new4, old4, mask4 = _random_batch(rng, [3, 5, 2, 5], 5, spread=0.4, garbage=8.0)
    active = mask4 > 0
    new4[active] = old4[active] + _away_from_boundaries(new4[active] - old4[active], 0.2, 0.28)
    for loss_type in LOSS_TYPES:
        yield _loss_case(new4, old4, [1.1, -0.4, 0.6, -1.3], mask4, loss_type=loss_type, eps_low=0.2, eps_high=0.28,
                         max_length=7, dtype="float32", edge="dtypes", label=Text(f"float32 inputs with padding ({loss_type})", f"входы во float32 с паддингом ({loss_type})"))

    # --- property-based: random batches, every reduction, both dtypes (fixed seed)
    yield from hypothesis_cases(st.integers(0, 2**31 - 1), count=24, seed=9_402, to_case=_drawn_case)

    # --- outcome: the learner's loss in the given toy experiment
    for loss_type, weight in (("dapo", 4.0), ("dr_grpo", 2.0)):
        yield Case(kwargs={"check": "toy experiment", "loss_type": loss_type}, weight=weight, hidden=False,
                   label=Text(f"toy GRPO experiment ({loss_type}, 2 updates of the grading configuration)", f"игрушечный эксперимент GRPO ({loss_type}, 2 обновления в конфигурации проверки)"))


# Each exercise's formula typeset for the notebooks' Markdown (`rl4llm build`); the first line of its
# docstring holds the same formula in plain text.
LATEX = {
    "grpo_loss": (
        r"\mathcal{L} = -\operatorname{reduce}_{t \text{ active}} \min\!\left(\rho_t A,\ "
        r"\operatorname{clip}(\rho_t,\, 1-\varepsilon_{\mathrm{low}},\, 1+\varepsilon_{\mathrm{high}})\, "
        r"A\right),\quad \rho_t = e^{\log\pi_\theta - \log\pi_{\mathrm{old}}}"
    ),
}
