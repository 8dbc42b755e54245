"""The toy checks' metrics, measured in the grading process from the parameters a toy run trained.

A ``check="toy experiment"`` case of module 8 or 9 runs the given toy in the
worker with the learner's function plugged in, and returns only what the run
TRAINED: the policy's parameters at the stages the metrics look at
(:func:`graders.checks.module_8_training.dpo_toy_parameters`, the toy branch of
:func:`graders.checks.module_9_training.grpo_checks`). The grader then measures
them here with its own trusted code -- the kit's copy of the given module
(``kit.starter_module``, loaded before any learner code ran) and the reference
solutions' functions -- for the learner's run and the reference's run alike
(``Harness(score=...)``, applied by :func:`graders.engine.judging.references.scored`).
So no number the worker reports is compared: a worker that forges the
published outcomes, or patches its copy of the toy, sends parameters, and
earns the toy check only if those parameters measure like the reference's.

What is accepted (anything else measures as ``None``, a failed check): a dict
with exactly the stages below, each a state dict with exactly the toy model's
parameter names, float64 arrays of exactly their shapes, all finite -- so a
reply is at most a few hundred kilobytes, bounded by the kit's model, not by
the learner.

Only the grader imports this module (the worker never does: it is not in the
harness's source).
"""

from __future__ import annotations

import copy
import math

import numpy as np

TOY_CHECK = "toy experiment"
DPO_STAGES = ("reference", "moderate", "stress")


def _state(value, model) -> dict | None:
    """``value`` as a state dict for ``model`` (same names, float64 arrays of the same shapes, finite)."""
    import torch

    expected = model.state_dict()
    if not isinstance(value, dict) or set(value) != set(expected):
        return None
    state = {}
    for name, tensor in expected.items():
        array = value[name]
        if (not isinstance(array, np.ndarray) or array.dtype != np.float64 or array.shape != tuple(tensor.shape)
                or not np.isfinite(array).all()):
            return None
        state[name] = torch.from_numpy(np.array(array))
    return state


def _loaded(model, value) -> bool:
    state = _state(value, model)
    if state is not None:
        model.load_state_dict(state)
    return state is not None


class _one_thread:  # noqa: N801 - a context manager used like a function
    """The toy's own numerics: one torch thread; the global RNG left as it was (model constructors draw)."""

    def __enter__(self):
        import torch

        self.torch, self.threads = torch, torch.get_num_threads()
        torch.set_num_threads(1)
        self.rng = torch.random.fork_rng(devices=[])
        self.rng.__enter__()
        return self

    def __exit__(self, *exc):
        self.rng.__exit__(*exc)
        self.torch.set_num_threads(self.threads)
        return False


def dpo_toy_metrics(value, case, kit):
    """Module 8's toy outcome (``dpo_toy.check_metrics``'s keys) measured from the trained parameters.

    Per stage the DPO loss, pair accuracy, mean margin and mean log-likelihoods as the given
    ``train_dpo`` logs them, with the reference's ``sequence_logprobs`` and ``dpo_loss``; the greedy
    generation matches by the given ``generation_match``. Any other case: ``value`` as it is.
    """
    if case.kwargs.get("check") != TOY_CHECK:
        return value
    if not isinstance(value, dict) or set(value) != set(DPO_STAGES):
        return None
    import torch

    toy, reference = kit.starter_module("dpo_toy"), kit.reference_module("module_8_training")
    config = toy.PROFILES["check"]
    examples = toy.toy_preference_examples()
    vocab = toy.build_vocabulary(examples)
    batch = toy.pair_batch(examples, vocab)
    with _one_thread(), torch.no_grad():
        models = {}
        for stage in DPO_STAGES:
            models[stage] = toy.TinyPolicy(len(vocab), config.embedding_dim, config.hidden_dim).double()
            if not _loaded(models[stage], value[stage]):
                return None
        ref_chosen, ref_rejected = toy._sequence_pair_logps(models["reference"], batch, reference.sequence_logprobs)
        out = {}
        for part, stage, beta in (("before", "reference", config.beta), ("after", "moderate", config.beta),
                                  ("stress", "stress", config.stress_beta)):
            chosen, rejected = toy._sequence_pair_logps(models[stage], batch, reference.sequence_logprobs)
            loss, _, _ = reference.dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta=beta,
                                            label_smoothing=config.label_smoothing)
            margin = (chosen - ref_chosen) - (rejected - ref_rejected)
            out[part] = {"loss": loss.item(), "pair_accuracy": (margin > toy.MARGIN_TOL).double().mean().item(),
                         "mean_margin": margin.mean().item(), "mean_chosen_logp": chosen.mean().item(),
                         "mean_rejected_logp": rejected.mean().item()}
        out["policy_generation_match"] = toy.generation_match(models["moderate"], vocab, examples)[0]
        out["stress_generation_match"] = toy.generation_match(models["stress"], vocab, examples)[0]
    return toy.check_metrics(out)


def grpo_toy_metrics(value, case, kit):
    """Module 9's toy outcome (``grpo_toy.check_metrics``'s keys) measured from the trained parameters.

    The grader warms up the policy itself (the given ``warm_up_once``: the loss plays no part in it)
    and draws the first update's rollouts from it exactly as the run does; the first update's mean
    loss and ratio range are measured at the parameters each of its epochs starts from (the grader's
    own warm-up for the first, the learner run's for the others), with the reference's ``grpo_loss``
    and ``group_relative_advantages``; the accuracy and KL after training by the given
    ``evaluate_policy`` on the final parameters. Any other case: ``value`` as it is.
    """
    if case.kwargs.get("check") != TOY_CHECK:
        return value
    if not isinstance(value, dict) or set(value) != {"epochs", "final"} or not isinstance(value["epochs"], list):
        return None
    import torch

    toy = kit.starter_module("grpo_toy")
    formulas = kit.reference_module("module_9_reference")
    loss_fn = kit.reference_module("module_9_training").grpo_loss
    config = toy.profile_config("check", seed=9, loss_type=case.kwargs["loss_type"])
    if len(value["epochs"]) != config.update_epochs:
        return None
    vocab = toy.Vocab()
    train, heldout = toy.arithmetic_prompts(config.num_train_prompts, config.num_heldout_prompts, seed=config.seed)
    with _one_thread():
        torch.manual_seed(config.seed)
        policy = toy.GRUPolicy(len(vocab), config.embed_dim, config.hidden_dim)
        toy.warm_up_once(policy, vocab, toy.warmup_pool(heldout, toy.MAX_OPERAND), config)  # trains: needs grad
        with torch.no_grad():
            return _measured(toy, formulas, loss_fn, policy, vocab, train, config, value)


def _measured(toy, formulas, loss_fn, policy, vocab, train, config, value) -> dict | None:
    """The metrics of :func:`grpo_toy_metrics` from the warmed-up ``policy`` (the behaviour and reference)."""
    import torch

    reference = copy.deepcopy(policy).requires_grad_(False)
    groups, _ = toy.collect_rollouts(policy, vocab, train, config, generator=torch.Generator().manual_seed(
        config.seed + 1), generator_version="policy-v0")
    first = {"first_update_loss": 0.0, "first_update_ratio_min": 1.0, "first_update_ratio_max": 1.0}
    if groups:  # else the run skipped its first update, and logs these defaults
        first = _first_update(toy, formulas, loss_fn, policy, vocab, groups, {p.prompt_id: p for p in train},
                              config, value["epochs"])
        if first is None:
            return None
    if not _loaded(policy, value["final"]):
        return None
    after, _ = toy.evaluate_policy(policy, reference, vocab, train, config, seed=config.seed + 2, formulas=formulas)
    return {**first, "after_train_accuracy": after["accuracy"], "after_train_kl": after["teacher_forced_kl"]}


def _first_update(toy, formulas, loss_fn, policy, vocab, groups, lookup, config, epochs) -> dict | None:
    """The given ``grpo_update``'s logged loss and ratio range, at the parameters of each epoch (the first
    epoch's: ``policy`` as it is, the behaviour policy; the others': ``epochs[1:]``)."""
    import torch

    rows = [row for group in groups for row in group]
    rewards = torch.tensor([[row.reward for row in group] for group in groups], dtype=torch.float64)
    scale = config.scale_rewards and config.loss_type != "dr_grpo"
    advantages = toy.group_advantages(rewards, scale, config.adv_eps, formulas).reshape(-1)
    prompts, responses = [lookup[row.prompt_id] for row in rows], [row.response_tokens for row in rows]
    old, _, mask = toy.teacher_forced(policy, vocab, prompts, responses, config.temperature)
    for i, row in enumerate(rows):
        old[i, :len(row.old_logprobs)] = torch.tensor(row.old_logprobs, dtype=torch.float64)
        if config.mask_truncated and not row.terminated:
            mask[i] = 0.0
    active, ratios, losses = mask > 0, [], []
    for epoch, state in enumerate(epochs):
        if epoch and not _loaded(policy, state):
            return None
        new, _, _ = toy.teacher_forced(policy, vocab, prompts, responses, config.temperature)
        losses.append(float(loss_fn(new, old, advantages, mask, loss_type=config.loss_type, eps_low=config.eps_low,
                                    eps_high=config.eps_high, max_length=config.max_new_tokens)))
        ratios.append(torch.exp(new - old)[active])
    ratio = torch.cat(ratios)
    if not len(ratio) or not all(map(math.isfinite, losses)):
        return None
    return {"first_update_loss": float(np.mean(losses)), "first_update_ratio_min": float(ratio.min()),
            "first_update_ratio_max": float(ratio.max())}
