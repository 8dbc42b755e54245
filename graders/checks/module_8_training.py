"""Hidden checks of module_8_training: sequence_logprobs and dpo_loss (API: graders/checks/__init__.py).

Each exercise has one harness that runs every case on both sides (the engine's
call mode is per exercise, so the value-and-gradient cases and the experiment
share it):

- **Value and gradient** (the default ``check``): small tensors, the returned
  value and gradients compared with the reference, as the ``LossAndGrads`` call
  mode computes them (but a tensor that does not depend on an input has gradient
  0 there, not None). ``sequence_logprobs`` returns a (B,) vector, so its
  gradient is that of ``(out * gradient_weights).sum()`` w.r.t. ``logits``
  (distinct weights per row, so a row scaled wrongly shows). ``dpo_loss``:
  the (loss, chosen_rewards, rejected_rewards) values and d loss / d policy
  log-probs, label_smoothing 0 and > 0; ``check="rewards detached"`` cases ask
  whether the returned rewards are detached; ValueError cases for beta <= 0 and
  label_smoothing outside [0, 0.5) (the validation is inside the fence).
- **Outcome** (``check="toy experiment"``, the harness's trusted part:
  :func:`sequence_logprobs_toy`, :func:`dpo_loss_toy`; in a worker it runs in
  the trusted process, where no learner code runs, and each call of the
  learner's function is answered by the learner's child, gradients included:
  :mod:`graders.engine.worker.served`): the PUBLIC starter's given
  ``dpo_toy.run_toy_dpo_experiment`` (the trusted process's own copy of the given
  module) under the toy's "check" profile
  (the smoke profile with 40 warm-up steps, 5 moderate and 10
  high-pressure DPO steps: about 0.15 s) with ONLY the exercise under test
  taken from the learner. The other
  exercise comes from a small correct helper written inside the harness (the
  masked cross-entropy with the causal shift, summed per sequence; the DPO
  formula of the docstring), never from the learner's file -- so a mistake in
  one exercise never costs points on the other, and the starter's stub of the
  other exercise is never called. The given supervised warm-up scores tokens
  with the run's log-probability function, so ``sequence_logprobs`` shapes the
  reference policy too. The worker sends back only what the run TRAINED
  (:func:`dpo_toy_parameters`, the harnesses' prelude: the warmed-up reference's,
  the moderate policy's and the high-pressure policy's parameters), and the
  grader measures them with its own code
  (:func:`graders.checks.toy_scores.dpo_toy_metrics`: the kit's copy of the
  toy, the reference's ``sequence_logprobs`` and ``dpo_loss``), for the
  reference's run and the learner's alike: the metrics must land in bands
  around the reference's, and no number the worker reports is compared (a
  worker that patches its copy of the toy to report the published outcomes
  earns nothing: tests/test_toy_forgery.py). The helper of the other exercise
  never enters the learner's process (tests/test_trusted_process.py). The public test
  ``test_sequence_logprobs_and_dpo_loss_train_the_toy_like_the_reference``
  makes the same run with BOTH of the learner's functions and compares with the
  reference outcomes that ``rl4llm build`` writes to
  ``starter/module_08/_toy_reference.json``.

Sizing: the toy run is nearly all of each harness's time (the other cases take
under 0.01 s together, the 16 Hypothesis draws about 0.004 s; the fixed cases
alone already catch every catalogue entry). Every entry the run can see (all but
label_smoothing_ignored -- the run uses label smoothing 0 -- and the two about
the returned rewards, which it ignores) misses the after-DPO bands alone by at
least 25 widths at every size tried (down to 20 warm-up, 1 moderate and 3
high-pressure steps, where a correct float32-internal sequence_logprobs comes
within 4% of a band's edge), so the run is sized to still show what the bands
encode, at seed 7: the warmed-up reference greedily generates all 8 chosen
responses (after 30 warm-up steps only 6), 5 moderate steps keep them (pair
accuracy 1, the chosen log-likelihood unchanged), and 10 high-pressure steps keep
pair accuracy 1 while the chosen log-likelihood falls from -0.65 to -5.1 and no
chosen response is generated any more (after 5 steps one still is). Correct
float32-internal and looped implementations stay within 1% of every band.
Since the grader measures the trained parameters itself (not the learner's
loss values as the run logged them), ``sum_instead_of_mean`` lands inside every
band (0.66 of a width at worst: Adam's steps do not see a constant factor on the
loss), and only the value cases catch it; every other entry the run can see
misses a band by at least 33 widths (measured over every band at seed 7).

Tolerances: float64 rtol 1e-5 / atol 1e-6 (a correct float32-internal or
looped implementation passes); float32 inputs rtol 1e-4 / atol 1e-4.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from graders.checks.edges import NO_PADDING, NO_TEXT, NO_TIES, TENSORS_ONLY, declare
from graders.checks import Case, Harness, Tensor, close, exercise, hypothesis_cases, st
from graders.checks.bands import compare_with_bands
from graders.checks.toy_scores import dpo_toy_metrics
from graders.text import Text

M = "module_8_training"
F32 = dict(rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- bands
# key -> (rtol, atol, what it is, what a miss means); each text a Text (English, Russian)
_PLUGGED = Text("the toy DPO run with your function plugged in differs from the reference run",
            "игрушечный запуск DPO с вашей функцией отличается от эталонного")
_DETACH = Text("return the rewards with .detach(): they are for logging, not for gradients",
           "верните награды через .detach(): они нужны для логов, а не для градиентов")
OUTCOME_BANDS = {
    **{f"{part}_{key}": (1e-3, 1e-3, Text(f"{what} ({stage})", f"{what_ru} ({stage_ru})"), _PLUGGED)
       for part, stage, stage_ru in (("before", "the reference policy", "эталонная политика"),
                                     ("after", "after moderate DPO", "после умеренного DPO"),
                                     ("stress", "after high-pressure DPO", "после DPO с сильным давлением"))
       for key, what, what_ru in (("loss", "the DPO loss", "функция потерь DPO"),
                                  ("mean_margin", "the mean margin h", "средний отступ h"),
                                  ("mean_chosen_logp", "the mean log pi(y_w|x)", "среднее log pi(y_w|x)"),
                                  ("mean_rejected_logp", "the mean log pi(y_l|x)", "среднее log pi(y_l|x)"))},
    **{f"{part}_pair_accuracy": (0.0, 0.13, Text(f"the pair accuracy ({part})", f"точность по парам ({part_ru})"),
                                 _PLUGGED)
       for part, part_ru in (("before", "до"), ("after", "после"), ("stress", "после сильного давления"))},
    "policy_generation_match": (0.0, 0.13, Text("the greedy generation match after moderate DPO",
                                            "доля совпадений жадной генерации после умеренного DPO"), _PLUGGED),
    "stress_generation_match": (0.0, 0.13, Text("the greedy generation match after high-pressure DPO",
                                            "доля совпадений жадной генерации после DPO с сильным давлением"),
                                _PLUGGED),
    "chosen_rewards_detached": (0.0, 0.0, Text("whether the returned chosen_rewards are detached (1 = yes)",
                                           "отсоединены ли возвращённые chosen_rewards (1 = да)"), _DETACH),
    "rejected_rewards_detached": (0.0, 0.0, Text("whether the returned rejected_rewards are detached (1 = yes)",
                                             "отсоединены ли возвращённые rejected_rewards (1 = да)"), _DETACH),
}


# ----------------------------------------------------------------------------- harnesses
def dpo_toy_parameters(toy, *, loss_fn, logprob_fn) -> dict:
    """The given toy's "check" run (seed 7) with these functions: the parameters it trained, per stage.

    {"reference": the warmed-up reference, "moderate": after moderate DPO, "stress": after high-pressure
    DPO}, each the policy's state dict. Sent to the worker as the harnesses' prelude; the grader measures
    the parameters with its own code (Harness.score), never trusting a number the run reports.
    """
    stages, train = {}, toy.train_dpo

    def recording(policy, *args, **kwargs):  # the toy trains a copy of the reference per regime
        stages.setdefault("reference", {k: v.detach().clone() for k, v in policy.state_dict().items()})
        history = train(policy, *args, **kwargs)
        stages["stress" if "moderate" in stages else "moderate"] = {
            k: v.detach().clone() for k, v in policy.state_dict().items()}
        return history

    toy.train_dpo = recording
    try:
        toy.run_toy_dpo_experiment("check", seed=7, loss_fn=loss_fn, logprob_fn=logprob_fn)
    finally:
        toy.train_dpo = train
    return stages


def sequence_logprobs_checks(fn, learner, starter, *args, check="value and gradient", **kwargs):
    """The value-and-gradient checks of sequence_logprobs, run on both sides (learner in the worker,
    reference in the grader): ``fn(logits, input_ids, mask)`` and the gradient of
    ``(out * gradient_weights).sum()`` w.r.t. ``logits``. The toy experiment: :func:`sequence_logprobs_toy`."""
    import torch

    weights = kwargs.pop("gradient_weights")
    logits = args[0]
    out = fn(*args, **kwargs)
    grad = None
    if isinstance(out, torch.Tensor) and out.is_floating_point() and out.shape == weights.shape:
        if out.requires_grad:
            (grad,) = torch.autograd.grad((out * weights.to(out.dtype)).sum(), [logits], allow_unused=True)
        if grad is None:  # a tensor that does not depend on logits: its gradient is 0
            grad = torch.zeros_like(logits)
    return {"value": out, "grad": grad}


def dpo_loss_checks(fn, learner, starter, *args, check="loss and gradients", **kwargs):
    """The value checks of dpo_loss, run on both sides (learner in the worker, reference in the grader).

    - check="loss and gradients": the returned (loss, chosen_rewards, rejected_rewards) and
      d loss / d policy_chosen_logps, d loss / d policy_rejected_logps;
    - check="rewards detached": 1.0 per returned reward vector that carries no gradient.

    The toy experiment: :func:`dpo_loss_toy`.
    """
    import torch

    out = fn(*args, **kwargs)
    parts = tuple(out) if isinstance(out, (tuple, list)) and len(out) == 3 else None
    if check == "rewards detached":
        if parts is None:
            return {"returned": out}
        return {"chosen_rewards_detached": float(not getattr(parts[1], "requires_grad", False)),
                "rejected_rewards_detached": float(not getattr(parts[2], "requires_grad", False))}
    grads = None
    loss = parts[0] if parts is not None else out
    if isinstance(loss, torch.Tensor) and loss.numel() == 1 and loss.is_floating_point():
        computed = [None, None]
        if loss.requires_grad:
            computed = torch.autograd.grad(loss.reshape(()), [args[0], args[1]], allow_unused=True)
        # an input the loss does not depend on has gradient 0
        grads = {name: torch.zeros_like(args[i]) if computed[i] is None else computed[i]
                 for i, name in enumerate(("policy_chosen_logps", "policy_rejected_logps"))}
    return {"value": out, "grad": grads}


def sequence_logprobs_toy(fn, starter, *args, check=None, **kwargs):
    """The toy experiment of sequence_logprobs (a trusted case: never in the learner's process): the
    starter's given toy DPO experiment with ``fn`` as the log-probability function (of the warm-up and of
    DPO) and a correct DPO loss written here; returns :func:`dpo_toy_parameters`."""
    import torch.nn.functional as F

    def dpo(policy_chosen, policy_rejected, reference_chosen, reference_rejected, *, beta, label_smoothing=0.0):
        margin = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
        losses = (1 - label_smoothing) * F.softplus(-beta * margin) + label_smoothing * F.softplus(beta * margin)
        return (losses.mean(), (beta * (policy_chosen - reference_chosen)).detach(),
                (beta * (policy_rejected - reference_rejected)).detach())

    return dpo_toy_parameters(starter("dpo_toy"), loss_fn=dpo, logprob_fn=fn)


def dpo_loss_toy(fn, starter, *args, check=None, **kwargs):
    """The toy experiment of dpo_loss (a trusted case: never in the learner's process): the starter's
    given toy DPO experiment with ``fn`` as the loss and a correct sequence log-probability written here
    (the masked NLL with the causal shift, summed); returns :func:`dpo_toy_parameters`."""
    import torch.nn.functional as F

    def logps(logits, input_ids, mask):
        nll = F.cross_entropy(logits[:, :-1].transpose(1, 2), input_ids[:, 1:], reduction="none")
        return -(nll * mask).sum(dim=-1)

    return dpo_toy_parameters(starter("dpo_toy"), loss_fn=fn, logprob_fn=logps)


_PRELUDE = inspect.getsource(dpo_toy_parameters)


# ----------------------------------------------------------------------------- sequence_logprobs cases
def _seq_case(logits, input_ids, mask, weights, *, dtype="float64", label="", hidden=True,
              weight=1.0, edge=()):
    tolerances = F32 if dtype == "float32" else {}
    return Case(args=(Tensor(np.asarray(logits, dtype=float), dtype, requires_grad=True),
                      Tensor(np.asarray(input_ids), "long"), Tensor(np.asarray(mask, dtype=bool), "bool")),
                kwargs={"gradient_weights": Tensor(np.asarray(weights, dtype=float), dtype)},
                label=label, hidden=hidden, weight=weight, edge=edge, **tolerances)


def _random_sequences(rng: np.random.Generator, batch: int, width: int, vocab: int, *, scale: float = 2.0):
    """Random logits, ids and a response mask: a prompt prefix (False), the response (True), padding (False)."""
    logits = rng.normal(0.0, scale, size=(batch, width, vocab))
    ids = rng.integers(0, vocab, size=(batch, width))
    mask = np.zeros((batch, width - 1), dtype=bool)
    for row in range(batch):
        start = int(rng.integers(0, width - 1))
        stop = int(rng.integers(start, width))
        mask[row, start:stop] = True
    return logits, ids, mask


def _drawn_sequence_case(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    batch, width, vocab = int(rng.integers(1, 5)), int(rng.integers(2, 9)), int(rng.integers(2, 8))
    logits, ids, mask = _random_sequences(rng, batch, width, vocab, scale=float(rng.choice([0.5, 2.0, 5.0])))
    float32 = bool(rng.random() < 0.3)
    return _seq_case(logits, ids, mask, rng.normal(0.0, 1.0, size=batch), dtype="float32" if float32 else "float64")


@exercise(f"{M}.sequence_logprobs",
          edges=declare("extremes", "zeros_and_empties", "dtypes", "shapes", python_types=TENSORS_ONLY, ties_and_near_ties=NO_TIES, boundaries="no domain parameter: a mask of False is zeros_and_empties", large_padding="padding positions hold ordinary logits and id 0 (the toy batch), masked out", number_formats=NO_TEXT),
          points=3, call=Harness(sequence_logprobs_checks, given=("dpo_toy",), prelude=_PRELUDE, score=dpo_toy_metrics,
                       trusted=sequence_logprobs_toy), timeout=60,
          compare=compare_with_bands(OUTCOME_BANDS, close()))
def _sequence_logprobs():
    # --- public: the rows of starter/module_08/test_module_8_training.py
    hand = [[[0.0, 0.0], [math.log(3.0), 0.0], [5.0, 5.0]]]
    yield _seq_case(hand, [[1, 1, 0]], [[True, True]], [1.0], hidden=False, edge="shapes",
                    label=Text("one sequence of 3 tokens, V = 2 (log 1/2 + log 3/4)", "одна последовательность из 3 токенов, V = 2 (log 1/2 + log 3/4)"))
    yield _seq_case(hand, [[1, 1, 0]], [[False, True]], [1.0], hidden=False, label=Text("only the last target scored", "учитывается только последний целевой токен"))
    yield _seq_case(np.zeros((2, 4, 3)), [[0, 1, 2, 0], [0, 2, 2, 1]], [[False, True, True], [True, True, False]],
                    [1.0, 1.0], hidden=False, label=Text("uniform logits, two masked sequences", "равномерные логиты, две последовательности с маской"))
    # --- hidden fixed cases
    rng = np.random.default_rng(8_101)
    logits, ids, _ = _random_sequences(rng, 3, 7, 6)
    mask = np.array([[False, False, True, True, True, False], [False, True, True, True, True, True],
                     [False, False, False, True, False, False]])
    yield _seq_case(logits, ids, mask, [1.0, -0.5, 2.0], label=Text("three sequences: prompt, response, padding", "три последовательности: промпт, ответ, паддинг"))
    square_logits, square_ids, _ = _random_sequences(np.random.default_rng(8_104), 3, 4, 3)
    square_mask = np.array([[True, True, False], [False, True, True], [True, False, False]])
    yield _seq_case(square_logits, square_ids, square_mask, [1.0, -0.5, 2.0], edge="shapes",
                    label=Text("B = T - 1 = V = 3: a transposed gather or sum has the right shape",
                               "B = T - 1 = V = 3: транспонированные gather или сумма дают верную форму"))
    yield _seq_case(logits[:1], ids[:1], mask[:1], [1.5], edge="shapes",
                    label=Text("a batch of one sequence (B = 1)", "батч из одной последовательности (B = 1)"))
    yield _seq_case(logits, ids, mask, [1.0, -0.5, 2.0], dtype="float32", edge="dtypes", label=Text("the same in float32", "то же во float32"))
    yield _seq_case(logits, ids, np.zeros_like(mask), [0.3, 1.0, -1.0], edge="zeros_and_empties", label=Text("nothing masked in: every sum is 0", "маска пуста: каждая сумма равна 0"))
    yield _seq_case(logits * 8.0, ids, mask, [1.0, 1.0, 1.0], label=Text("large logits (spread of about +-50)", "большие логиты (разброс около +-50)"))
    yield _seq_case([[[1000.0, -1000.0], [-1000.0, 1000.0], [0.0, 0.0]]], [[0, 0, 0]], [[True, True]], [1.0],
                    hidden=False, edge="extremes", label=Text("logits +-1000: log-probabilities 0 and -2000 (the public row)",
                                                               "логиты +-1000: логарифмы вероятностей 0 и -2000 (открытая строка)"))
    yield _seq_case(hand, [[1, 1, 0]], [[False, False]], [1.0], hidden=False, edge="zeros_and_empties",
                    label=Text("nothing scored: the sum is 0 (the public row)", "ничего не учитывается: сумма 0 (открытая строка)"))
    long_logits, long_ids, long_mask = _random_sequences(rng, 2, 12, 10)
    long_mask[:, 3:] = True
    yield _seq_case(long_logits, long_ids, long_mask, [0.7, -1.3], label=Text("two sequences of 12 tokens, V = 10", "две последовательности по 12 токенов, V = 10"))
    # --- property-based (fixed seed)
    yield from hypothesis_cases(st.integers(0, 2**31 - 1), count=16, seed=8_102, to_case=_drawn_sequence_case)
    # --- outcome: the learner's sequence_logprobs in the given toy DPO experiment
    yield Case(kwargs={"check": "toy experiment"}, weight=4.0, hidden=False,
               label=Text("toy DPO experiment (grading configuration) with your sequence_logprobs", "игрушечный эксперимент DPO (конфигурация проверки) с вашей sequence_logprobs"))


# ----------------------------------------------------------------------------- dpo_loss cases
def _dpo_case(chosen, rejected, ref_chosen, ref_rejected, *, beta, label_smoothing=None, dtype="float64",
              label="", hidden=True, weight=1.0, check=None, raises=None, edge=()):
    kwargs = {"beta": beta}
    if label_smoothing is not None:
        kwargs["label_smoothing"] = label_smoothing
    if check is not None:
        kwargs["check"] = check
    tolerances = F32 if dtype == "float32" else {}
    return Case(args=(Tensor(np.asarray(chosen, dtype=float), dtype, requires_grad=True),
                      Tensor(np.asarray(rejected, dtype=float), dtype, requires_grad=True),
                      Tensor(np.asarray(ref_chosen, dtype=float), dtype),
                      Tensor(np.asarray(ref_rejected, dtype=float), dtype)),
                kwargs=kwargs, label=label, hidden=hidden, weight=weight, raises=raises, edge=edge,
                **tolerances)


def _random_pairs(rng: np.random.Generator, batch: int, spread: float = 3.0):
    ref_chosen, ref_rejected = -rng.uniform(2.0, 20.0, size=batch), -rng.uniform(2.0, 20.0, size=batch)
    chosen = ref_chosen + rng.normal(0.0, spread, size=batch)
    rejected = ref_rejected + rng.normal(0.0, spread, size=batch)
    return chosen, rejected, ref_chosen, ref_rejected


def _drawn_pair_case(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 9))
    beta = float(rng.choice([0.05, 0.1, 0.25, 0.5, 2.0, 4.0]))
    smoothing = float(rng.choice([0.0, 0.0, 0.05, 0.2, 0.4]))
    float32 = bool(rng.random() < 0.3)
    return _dpo_case(*_random_pairs(rng, batch, spread=float(rng.choice([0.5, 3.0]))), beta=beta,
                     label_smoothing=smoothing, dtype="float32" if float32 else "float64")


@exercise(f"{M}.dpo_loss",
          edges=declare("extremes", "zeros_and_empties", "dtypes", "shapes", python_types=TENSORS_ONLY, ties_and_near_ties=NO_TIES, boundaries="label_smoothing in [0, 0.5): 0 is every plain row, 0.5 a refusal row; beta > 0 is open", large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=4, call=Harness(dpo_loss_checks, given=("dpo_toy",), prelude=_PRELUDE, score=dpo_toy_metrics,
                       trusted=dpo_loss_toy, observed_grads=(1, 2)), timeout=60,  # "rewards detached"
          compare=compare_with_bands(OUTCOME_BANDS, close()))
def _dpo_loss():
    # --- public: the rows of starter/module_08/test_module_8_training.py
    yield _dpo_case([-1.0], [-2.0], [-1.5], [-1.5], beta=0.5, dtype="float32", hidden=False, edge="shapes",
                    label=Text("h = 1, beta = 0.5: loss log(1 + e^-0.5), rewards +-0.25", "h = 1, beta = 0.5: функция потерь log(1 + e^-0.5), награды +-0.25"))
    yield _dpo_case([-3.0, -7.0], [-7.0, -3.0], [-3.0, -7.0], [-7.0, -3.0], beta=0.1, hidden=False, edge="zeros_and_empties",
                    label=Text("policy = reference: loss log 2", "политика = референс: функция потерь log 2"))
    yield _dpo_case([0.0, 0.0], [-2.0, 2.0], [0.0, 0.0], [0.0, 0.0], beta=1.0, hidden=False,
                    label=Text("two pairs with h = +2 and -2: the mean of the two losses", "две пары с h = +2 и -2: среднее двух значений функции потерь"))
    yield _dpo_case([1.0], [-1.0], [0.0], [0.0], beta=1.0, label_smoothing=0.25, hidden=False,
                    label=Text("cDPO eps = 0.25 at h = 2", "cDPO eps = 0.25 при h = 2"))
    yield _dpo_case([-2.0], [-2.0], [-2.0], [-2.0], beta=0.5, hidden=False, label=Text("gradient at h = 0: -+0.25", "градиент при h = 0: -+0.25"))
    # --- hidden fixed cases
    rng = np.random.default_rng(8_201)
    pairs = _random_pairs(rng, 5)
    yield _dpo_case(*pairs, beta=0.1, label=Text("five pairs, beta 0.1", "пять пар, beta 0.1"))
    yield _dpo_case(*pairs, beta=2.0, label_smoothing=0.1, label=Text("five pairs, beta 2, eps 0.1", "пять пар, beta 2, eps 0.1"))
    yield _dpo_case(*pairs, beta=0.3, label_smoothing=0.45, label=Text("five pairs, beta 0.3, eps 0.45", "пять пар, beta 0.3, eps 0.45"))
    yield _dpo_case([-2.5], [-1.0], [-2.0], [-1.5], beta=2.0, label_smoothing=0.1, edge="shapes",
                    label=Text("a batch of one pair (B = 1), float64", "батч из одной пары (B = 1), float64"))
    yield _dpo_case(*_random_pairs(rng, 6), beta=0.3, label_smoothing=0.2, dtype="float32", edge="dtypes",
                    label=Text("six pairs in float32, beta 0.3, eps 0.2", "шесть пар во float32, beta 0.3, eps 0.2"))
    yield _dpo_case([-1.0, -30.0, -5.0, -2.0], [-25.0, -1.0, -5.5, -2.0], [-8.0, -8.0, -5.0, -3.0],
                    [-8.0, -8.0, -5.0, -1.0], beta=1.5, label_smoothing=0.1,
                    label=Text("large margins (|beta h| up to 30), eps 0.1", "большие отступы (|beta h| до 30), eps 0.1"))
    yield _dpo_case([0.0, 0.0], [-1000.0, 1000.0], [0.0, 0.0], [0.0, 0.0], beta=1.0, hidden=False, edge="extremes",
                    label=Text("h = +-1000: losses 0 and 1000, mean 500 (the public row)",
                               "h = +-1000: потери 0 и 1000, среднее 500 (открытая строка)"))
    yield _dpo_case(*pairs, beta=0.5, check="rewards detached", label=Text("the returned rewards are detached", "возвращаемые награды отсоединены от графа (detach)"))
    yield _dpo_case(*pairs, beta=0.5, label_smoothing=0.2, check="rewards detached",
                    label=Text("the returned rewards are detached (eps 0.2)", "возвращаемые награды отсоединены от графа (detach), eps 0.2"))
    for beta, smoothing, what in ((0.0, 0.0, "beta = 0"), (-0.1, 0.0, "beta < 0"),
                                  (0.1, 0.5, "label_smoothing = 0.5"), (0.1, -0.1, "label_smoothing < 0")):
        yield _dpo_case(*pairs, beta=beta, label_smoothing=smoothing, raises=ValueError,
                        label=Text(f"{what} is refused (ValueError)", f"{what} отклоняется (ValueError)"),
                        weight=0.5)
    # --- property-based (fixed seed)
    yield from hypothesis_cases(st.integers(0, 2**31 - 1), count=16, seed=8_202, to_case=_drawn_pair_case)
    # --- outcome: the learner's dpo_loss in the given toy DPO experiment
    yield Case(kwargs={"check": "toy experiment"}, weight=4.0, hidden=False,
               label=Text("toy DPO experiment (grading configuration) with your dpo_loss", "игрушечный эксперимент DPO (конфигурация проверки) с вашей dpo_loss"))


# Each exercise's formula typeset for the notebooks' Markdown (`rl4llm build`); the first line of its
# docstring holds the same formula in plain text.
LATEX = {
    "sequence_logprobs": r"\log \pi(y \mid x) = \sum_t m_t \log \operatorname{softmax}(\ell_t)[y_{t+1}]",
    "dpo_loss": (
        r"\mathcal{L} = \operatorname{mean}\left[(1-\varepsilon)\operatorname{softplus}(-\beta h) + "
        r"\varepsilon \operatorname{softplus}(\beta h)\right],\quad h = (\log\pi_w - \log\pi^{\mathrm{ref}}_w) "
        r"- (\log\pi_l - \log\pi^{\mathrm{ref}}_l)"
    ),
}
