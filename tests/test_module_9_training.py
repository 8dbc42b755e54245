"""Module 9's toy GRPO step and loop (solutions/module_09: module_9_training.py, grpo_toy.py, arithmetic_toy.py).

- the whole seed notebook runs headless against solutions/module_09;
- a golden file pins the smoke run (seed 9, DAPO) and holds under 1 and 2 torch threads;
- the course's pattern: train accuracy up, token entropy down, teacher-forced KL up;
- grpo_loss: gradient = minus module_9_reference's token weights, clipping, masking, errors;
- a grpo_loss with the sign flipped, without the mask, or with DAPO normalised per
  response gives a measurably worse or different run in the same seed;
- rollouts, verifier, grammar, prompts and config keep their contracts;
- the exercise file holds grpo_loss, its validation and a thin run_toy_grpo_experiment
  (your loss by default); the task and the loop are given modules; every name the
  seed imports from the exercise file is still there.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import subprocess
import sys
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch

from devtools.goldens import load_golden
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR
from graders.walkthrough.run import run_seed_subprocess

MODULE_DIR = SOLUTIONS_DIR / "module_09"
TRAINING_PATH = MODULE_DIR / "module_9_training.py"
# the given modules first, then the exercise file that imports them (one copy of each, shared)
task = load_module(MODULE_DIR / "arithmetic_toy.py", "_kit_m9_arithmetic_toy")
toy = load_module(MODULE_DIR / "grpo_toy.py", "_kit_m9_grpo_toy", given={"arithmetic_toy": task})
m9t = load_module(TRAINING_PATH, "_kit_m9_training", given={"arithmetic_toy": task, "grpo_toy": toy})
m9r = load_module(MODULE_DIR / "module_9_reference.py", "_kit_m9_reference_for_training")

METRIC_KEYS = ("accuracy", "mean_reward", "mean_length", "entropy", "teacher_forced_kl", "pass_at_4")
HISTORY_KEYS = ("update", "eval_accuracy", "eval_entropy", "informative_fraction", "ratio_min", "ratio_mean",
                "ratio_max", "clip_fraction_low", "clip_fraction_high", "loss")
# Tolerances of the golden comparison. The run is float64 on one intra-op thread, so on one
# platform it is bitwise reproducible; across platforms only rounding (~1e-16) can differ.
# Perturbing the initial weights by 1e-9 (relative) changes nothing in the 6th decimal, and
# even 1e-6 moves after-RL metrics by < 0.015: the bands below leave room for that while a
# loss with a wrong reduction or a missing mask lands outside them (see the misconception tests).
BEFORE_TOL = 0.01  # before RL: warm-up and evaluation only (a couple of flipped samples at most)
AFTER_TOL = {"accuracy": 0.03, "mean_reward": 0.03, "pass_at_4": 0.03, "intermediate_consistency": 0.03,
             "truncation_rate": 0.02, "mean_length": 0.05, "entropy": 0.03, "teacher_forced_kl": 0.05}
FIRST_UPDATE_REL = 1e-6  # the first update's ratio statistics: a pure function of the first batch and the loss


def _golden_mismatches(observed: dict, golden: dict) -> list[str]:
    problems = []
    for split in ("before_train", "before_heldout", "after_train", "after_heldout"):
        for key, expected in golden[split].items():
            tol = BEFORE_TOL if split.startswith("before") else AFTER_TOL[key]
            if key == "teacher_forced_kl" and split.startswith("before"):
                tol = 1e-12  # the policy IS the reference before RL
            got = observed[split][key]
            if not abs(got - expected) <= tol:
                problems.append(f"{split}.{key}: expected {expected:.6f} +- {tol}, got {got:.6f}")
    for key in ("ratio_min", "ratio_mean", "ratio_max", "loss"):
        expected, got = golden["first_update"][key], observed["first_update"][key]
        if not math.isclose(got, expected, rel_tol=FIRST_UPDATE_REL, abs_tol=1e-12):
            problems.append(f"first_update.{key}: expected {expected:.9f}, got {got:.9f}")
    return problems


def _summary(result: dict) -> dict:
    keys = ("before_train", "after_train", "before_heldout", "after_heldout")
    return {**{k: result[k] for k in keys}, "first_update": result["history"][0]}


@pytest.fixture(scope="module")
def smoke():
    return m9t.run_toy_grpo_experiment(profile="smoke", seed=9, loss_type="dapo")


# ----------------------------------------------------------------------------- the seed notebook
@pytest.mark.slow
def test_seed_notebook_runs_headless_against_solutions(tmp_path):
    completed = run_seed_subprocess("module09", out_dir=tmp_path, capture=True, timeout=300)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    figures = sorted(tmp_path.glob("figure_*.png"))
    assert len(figures) == 5, [f.name for f in figures]  # informative groups, finite run, history, ratios, coverage
    assert all(f.stat().st_size > 5000 for f in figures)
    assert "notebook-inspection" in completed.stdout


# ----------------------------------------------------------------------------- golden and pattern
@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_smoke_run_matches_the_golden_file(smoke):
    problems = _golden_mismatches(_summary(smoke), load_golden("module09_smoke"))
    assert not problems, "regenerate with `python -m devtools.goldens module09` only if intended:\n" + "\n".join(problems)


def test_golden_comparison_rejects_an_all_zero_run():
    golden = load_golden("module09_smoke")
    zeros = {split: {k: 0.0 for k in values} for split, values in golden.items()}
    assert len(_golden_mismatches(zeros, golden)) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
def test_golden_holds_under_torch_thread_count(threads, smoke):
    code = ("import json, torch; torch.set_num_threads(%d); from devtools.goldens import module09_summary; "
            "print(json.dumps(module09_summary())); print(torch.get_num_threads())" % threads)
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                               timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.strip().splitlines()
    observed = json.loads(lines[-2])
    assert int(lines[-1]) == threads, "the experiment must restore the caller's thread count"
    assert not _golden_mismatches(observed, load_golden("module09_smoke"))
    assert observed == json.loads(json.dumps(_summary(smoke))), "the run should not depend on the thread count"


@pytest.mark.slow  # the smoke training run (about 4 s); the loss and the loop's parts are tested fast below
def test_smoke_run_shows_the_course_pattern(smoke):
    before, after = smoke["before_train"], smoke["after_train"]
    assert 0.1 < before["accuracy"] < 0.6, "the warm-up should leave room for RL (informative groups)"
    assert after["accuracy"] >= before["accuracy"] + 0.25
    assert after["entropy"] <= before["entropy"] - 0.1
    assert before["teacher_forced_kl"] == 0.0 and after["teacher_forced_kl"] >= 0.1
    history = smoke["history"]
    assert history[-1]["eval_kl"] > history[0]["eval_kl"] > 0
    assert history[-1]["eval_entropy"] < history[0]["eval_entropy"]


@pytest.mark.slow  # the smoke training run (about 4 s)
def test_smoke_run_moves_ratios_and_engages_clipping(smoke):
    history = smoke["history"]
    assert min(h["ratio_min"] for h in history) < 1 - 0.2 < 1 + 0.28 < max(h["ratio_max"] for h in history)
    assert sum(h["clip_fraction_low"] for h in history) > 0 and sum(h["clip_fraction_high"] for h in history) > 0
    assert all(0 <= h["informative_fraction"] <= 1 for h in history)
    assert any(h["informative_fraction"] < 1 for h in history), "dynamic sampling should drop some groups"


@pytest.mark.slow  # the smoke training run (about 4 s)
def test_experiment_returns_the_contracted_keys(smoke):
    for split in ("before_train", "after_train", "before_heldout", "after_heldout"):
        assert set(METRIC_KEYS) <= set(smoke[split]), split
        assert all(isinstance(v, float) and math.isfinite(v) for v in smoke[split].values())
    config = smoke["config"]
    assert isinstance(config, toy.GRPOConfig) and config.loss_type == "dapo" and config.seed == 9
    assert len(smoke["history"]) == config.updates
    assert [h["update"] for h in smoke["history"]] == list(range(1, config.updates + 1))
    assert all(set(HISTORY_KEYS) <= set(h) for h in smoke["history"])
    ids = [p.prompt_id for p in smoke["prompts"]]
    assert len(ids) <= 24 and set(smoke["before_train_by_prompt"]) == set(smoke["after_train_by_prompt"]) == set(ids)
    assert isinstance(smoke["policy"], torch.nn.Module) and isinstance(smoke["vocab"], task.Vocab)
    assert smoke["history"][-1]["eval_accuracy"] == smoke["after_train"]["accuracy"]


def test_full_profile_is_larger_than_smoke():
    smoke_config, full_config = toy.profile_config("smoke"), toy.profile_config("full")
    assert full_config.updates > smoke_config.updates and full_config.eval_samples >= smoke_config.eval_samples
    with pytest.raises(ValueError, match="profile"):
        toy.profile_config("huge")


# ----------------------------------------------------------------------------- misconceptions: outcomes
def _flipped(*args, **kwargs):
    return -m9t.grpo_loss(*args, **kwargs)


def _no_mask(new, old, advantages, mask, **kwargs):
    return m9t.grpo_loss(new, old, advantages, torch.ones_like(mask), **kwargs)


def _dapo_per_response(new, old, advantages, mask, **kwargs):
    return m9t.grpo_loss(new, old, advantages, mask, **{**kwargs, "loss_type": "grpo"})


@pytest.mark.slow  # a second training run (about 1.5 s); the loss's sign is tested fast by the gradient tests
def test_sign_flipped_loss_makes_the_run_worse(smoke):
    run = m9t.run_toy_grpo_experiment(profile="smoke", seed=9, loss_type="dapo", loss_fn=_flipped)
    assert run["after_train"]["accuracy"] < run["before_train"]["accuracy"] - 0.2
    assert run["after_train"]["accuracy"] < smoke["after_train"]["accuracy"] - 0.5


@pytest.mark.parametrize("wrong", [_no_mask, _dapo_per_response], ids=["no_mask", "dapo_per_response"])
@pytest.mark.slow  # a training run each (about 2 s); reductions and masks are tested fast by the grpo_loss tests
def test_wrong_reduction_or_missing_mask_changes_the_run(wrong, smoke):
    run = m9t.run_toy_grpo_experiment(profile="smoke", seed=9, loss_type="dapo", loss_fn=wrong)
    golden = load_golden("module09_smoke")
    # the first update sees exactly the reference's rollouts: its ratio path fingerprints the loss
    first, reference_first = run["history"][0], smoke["history"][0]
    changes = [abs(first[k] / reference_first[k] - 1) for k in ("ratio_min", "ratio_max", "eval_kl")]
    assert max(changes) > 0.03, changes
    # and the run ends outside the golden bands that the reference meets
    assert any("after_" in problem for problem in _golden_mismatches(_summary(run), golden))


def test_loss_fn_is_plugged_in_with_the_config_keywords():
    calls = []

    def spy(new, old, advantages, mask, **kwargs):
        calls.append(kwargs)
        assert new.requires_grad and not old.requires_grad and new.shape == old.shape == mask.shape
        return m9t.grpo_loss(new, old, advantages, mask, **kwargs)

    config = replace(toy.profile_config("smoke"), updates=2, update_epochs=3, warmup_steps=30, eval_samples=4)
    run = m9t.run_toy_grpo_experiment(profile=config, loss_fn=spy)
    assert len(calls) == 3 * sum(h["informative_fraction"] > 0 for h in run["history"]) > 0
    assert calls[0] == {"loss_type": "dapo", "eps_low": 0.2, "eps_high": 0.28, "max_length": config.max_new_tokens}


def test_progress_bar(capsys):
    config = replace(toy.profile_config("smoke"), updates=2, warmup_steps=5, eval_samples=4)
    m9t.run_toy_grpo_experiment(profile=config, progress=True)
    assert "toy GRPO" in capsys.readouterr().err


# ----------------------------------------------------------------------------- grpo_loss
def _grad(new, old, advantages, mask, **kwargs):
    new = torch.as_tensor(new, dtype=torch.float64).clone().requires_grad_(True)
    loss = m9t.grpo_loss(new, torch.as_tensor(old, dtype=torch.float64), torch.as_tensor(advantages, dtype=torch.float64),
                         torch.as_tensor(mask, dtype=torch.float64), **kwargs)
    loss.backward()
    return loss.detach(), new.grad


def _batch(lengths, width, rng):
    logprobs = -rng.uniform(0.1, 3.0, size=(len(lengths), width))
    mask = (np.arange(width)[None, :] < np.asarray(lengths)[:, None]).astype(float)
    return logprobs, mask


def _expected_grad(weights, width):
    out = np.zeros((len(weights), width))
    for i, w in enumerate(weights):
        out[i, :len(w)] = -np.asarray(w)
    return out


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "dapo"])
def test_grpo_loss_gradient_is_minus_the_reference_token_weights(loss_type, case):
    rng = np.random.default_rng(100 + case)
    group = int(rng.integers(2, 7))
    rewards = rng.integers(0, 2, group).astype(float) if case % 2 else rng.normal(size=group)
    rewards[0], rewards[1] = 1.0, 0.0  # never an all-equal group
    lengths = [int(x) for x in rng.integers(1, 7, group)]
    width = max(lengths) + int(rng.integers(0, 3))
    fixed = width + 2
    if loss_type == "grpo":
        weights = m9r.original_grpo_token_weights(rewards, lengths)
    elif loss_type == "dr_grpo":
        weights = m9r.dr_grpo_token_weights(rewards, lengths, fixed_length=fixed)
    else:
        weights = m9r.dapo_token_weights(rewards, lengths)
    advantages = m9r.group_relative_advantages(rewards, scale=loss_type != "dr_grpo")
    logprobs, mask = _batch(lengths, width, rng)
    _, grad = _grad(logprobs, logprobs, advantages, mask, loss_type=loss_type, eps_low=0.2, eps_high=0.28,
                    max_length=fixed)
    np.testing.assert_allclose(grad.numpy(), _expected_grad(weights, width), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "dapo"])
def test_grpo_loss_over_several_groups(loss_type):
    # N responses from several groups: grpo and dr_grpo divide by N (the per-group reference weights
    # divided by the number of groups); dapo divides by all active tokens of the batch.
    groups = [(np.array([1.0, 0.0, 1.0]), [2, 5, 8]), (np.array([0.0, 0.0, 1.0]), [3, 1, 4])]
    rng = np.random.default_rng(7)
    all_lengths = [n for _, lengths in groups for n in lengths]
    total_tokens = sum(all_lengths)
    weights, advantages = [], []
    for rewards, lengths in groups:
        if loss_type == "grpo":
            weights += [w / len(groups) for w in m9r.original_grpo_token_weights(rewards, lengths)]
        elif loss_type == "dr_grpo":
            weights += [w / len(groups) for w in m9r.dr_grpo_token_weights(rewards, lengths, fixed_length=8)]
        else:
            weights += [w * sum(lengths) / total_tokens for w in m9r.dapo_token_weights(rewards, lengths)]
        advantages += list(m9r.group_relative_advantages(rewards, scale=loss_type != "dr_grpo"))
    logprobs, mask = _batch(all_lengths, 8, rng)
    _, grad = _grad(logprobs, logprobs, advantages, mask, loss_type=loss_type, eps_low=0.2, eps_high=0.2,
                    max_length=8)
    np.testing.assert_allclose(grad.numpy(), _expected_grad(weights, 8), rtol=1e-9, atol=1e-15)


def test_seed_reduction_table_through_grpo_loss():
    # the seed notebook's example: rewards (1, 0, 1), lengths (2, 5, 8), Dr. GRPO with L = 8
    rewards, lengths = np.array([1.0, 0.0, 1.0]), [2, 5, 8]
    logprobs, mask = _batch(lengths, 8, np.random.default_rng(0))
    expected = {"grpo": [0.2357, -0.4714, 0.2357], "dr_grpo": [0.0278, -0.1389, 0.1111],
                "dapo": [0.0943, -0.4714, 0.3771]}
    for loss_type, contributions in expected.items():
        advantages = toy.group_advantages(torch.tensor(rewards), scale=loss_type != "dr_grpo")
        _, grad = _grad(logprobs, logprobs, advantages, mask, loss_type=loss_type, eps_low=0.2, eps_high=0.2,
                        max_length=8)
        np.testing.assert_allclose(-grad.sum(dim=1).numpy(), contributions, atol=5e-5)


def test_group_advantages_match_the_reference():
    rewards = np.array([[1.0, 0.0, 0.0, 1.0], [0.3, 0.3, 0.3, 0.3], [2.0, -1.0, 0.5, 0.0]])
    for scale in (True, False):
        ours = toy.group_advantages(torch.tensor(rewards), scale=scale).numpy()
        np.testing.assert_allclose(ours, m9r.group_relative_advantages(rewards, scale=scale), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "dapo"])
def test_grpo_loss_clipping_matches_the_reference_surrogate(loss_type):
    rng = np.random.default_rng(3)
    new, old = -rng.uniform(0.1, 2, (6, 5)), -rng.uniform(0.1, 2, (6, 5))
    advantages, mask = rng.normal(size=6), np.ones((6, 5))
    terms = m9r.clipped_surrogate_terms(np.exp(new - old), advantages[:, None], eps_low=0.1, eps_high=0.3)
    divisor = {"grpo": 6 * 5, "dr_grpo": 6 * 7, "dapo": 30}[loss_type]
    loss, grad = _grad(new, old, advantages, mask, loss_type=loss_type, eps_low=0.1, eps_high=0.3, max_length=7)
    assert math.isclose(float(loss), -terms.sum() / divisor, rel_tol=1e-12)
    active = m9r.clip_activity(np.exp(new - old), advantages[:, None], eps_low=0.1, eps_high=0.3)
    assert active.any() and (~active).any()
    assert np.all(grad.numpy()[active] == 0.0), "the clipped branch carries no gradient"
    np.testing.assert_allclose(grad.numpy()[~active], (-np.exp(new - old) * advantages[:, None] / divisor)[~active],
                               rtol=1e-12)


def test_grpo_loss_huge_eps_equals_the_unclipped_objective():
    rng = np.random.default_rng(4)
    new, old, advantages = -rng.uniform(0.1, 2, (4, 3)), -rng.uniform(0.1, 2, (4, 3)), rng.normal(size=4)
    loss, _ = _grad(new, old, advantages, np.ones((4, 3)), loss_type="dapo", eps_low=1 - 1e-12, eps_high=1e9)
    assert math.isclose(float(loss), -(np.exp(new - old) * advantages[:, None]).mean(), rel_tol=1e-12)


def test_grpo_loss_masked_tokens_get_exactly_zero_gradient_even_holding_garbage():
    new = np.array([[-1.0, 1e6, np.inf], [-0.5, -0.7, -np.inf]])
    old = np.array([[-1.1, -1e6, 0.0], [-0.4, -0.9, np.nan]])
    mask = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    for loss_type in ("grpo", "dr_grpo", "dapo"):
        loss, grad = _grad(new, old, [1.0, -2.0], mask, loss_type=loss_type, eps_low=0.2, eps_high=0.28)
        assert torch.isfinite(loss) and torch.isfinite(grad).all()
        assert torch.all(grad[mask == 0] == 0.0)
        assert torch.all(grad[mask == 1] != 0.0)


def test_grpo_loss_response_without_active_tokens_contributes_zero():
    new, mask = np.full((2, 3), -1.0), np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    loss, grad = _grad(new, new, [1.0, 5.0], mask, loss_type="grpo", eps_low=0.2, eps_high=0.2)
    assert math.isclose(float(loss), -0.5) and torch.all(grad[1] == 0)  # (1/N) * 1.0 with N = 2
    loss, _ = _grad(new, new, [1.0, 5.0], np.zeros((2, 3)), loss_type="dapo", eps_low=0.2, eps_high=0.2)
    assert float(loss) == 0.0


@pytest.mark.parametrize("change, match", [
    (dict(old=torch.zeros(2, 4)), "old_logprobs"),
    (dict(mask=torch.ones(3, 3)), "mask"),
    (dict(advantages=torch.zeros(3)), "advantages"),
    (dict(loss_type="ppo"), "loss_type"),
    (dict(eps_low=1.5), "eps_low"),
    (dict(max_length=2), "max_length"),
])
def test_grpo_loss_invalid_arguments_are_named(change, match):
    args = dict(new=torch.zeros(2, 3), old=torch.zeros(2, 3), advantages=torch.zeros(2), mask=torch.ones(2, 3),
                loss_type="dr_grpo", eps_low=0.2, eps_high=0.2, max_length=3)
    args.update(change)
    with pytest.raises(ValueError, match=match):
        m9t.grpo_loss(args.pop("new"), args.pop("old"), args.pop("advantages"), args.pop("mask"), **args)


# ----------------------------------------------------------------------------- rollouts
@pytest.fixture(scope="module")
def policy_and_prompts():
    config = replace(toy.profile_config("smoke"), warmup_steps=60)
    vocab = task.Vocab()
    train, heldout = task.arithmetic_prompts(config.num_train_prompts, config.num_heldout_prompts, seed=config.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is fastest on a shared machine
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            policy = task.GRUPolicy(len(vocab), config.embed_dim, config.hidden_dim)
        pool = task.warmup_pool(heldout, task.MAX_OPERAND)
        toy.supervised_warmup(policy, vocab, pool, config, torch.Generator().manual_seed(0))
    finally:
        torch.set_num_threads(threads)
    return policy, vocab, train


def test_collect_rollouts_stores_behaviour_logprobs_with_mask_and_temperature(policy_and_prompts):
    policy, vocab, train = policy_and_prompts
    config = toy.GRPOConfig(group_size=4, prompt_batch=6, temperature=0.7)
    groups, discarded = task.collect_rollouts(policy, vocab, train, config, generator=torch.Generator().manual_seed(1),
                                             generator_version="v7")
    assert discarded == 0.0 and len(groups) == 6 and all(len(g) == 4 for g in groups)
    rows = [row for g in groups for row in g]
    lookup = {p.prompt_id: p for p in train}
    prompts = [lookup[r.prompt_id] for r in rows]
    behaviour, _, mask = task.teacher_forced(policy, vocab, prompts, [r.response_tokens for r in rows], 0.7)
    plain, _, _ = task.teacher_forced(policy, vocab, prompts, [r.response_tokens for r in rows], 1.0)
    for i, row in enumerate(rows):
        n = len(row.response_tokens)
        assert row.generator_version == "v7" and row.verifier_version == task.VERIFIER_VERSION
        assert len(row.old_logprobs) == n and int(mask[i].sum()) == n
        np.testing.assert_allclose(row.old_logprobs, behaviour[i, :n].tolist(), rtol=0, atol=1e-12)
        assert row.terminated == (row.response_tokens[-1] == task.EOS)
        verdict = task.verify_arithmetic(row.response_tokens, lookup[row.prompt_id])
        assert (row.reward, row.accuracy, row.verifier_status) == (verdict.reward, verdict.correctness, verdict.status)
        for t, token in enumerate(row.response_tokens):
            assert token in task.allowed_next_tokens(tuple(row.response_tokens[:t]))
    assert not torch.allclose(behaviour * mask, plain * mask), "temperature must be part of the behaviour distribution"
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows[0].reward = 2.0


def test_collect_rollouts_is_deterministic_and_dynamic_sampling_drops_all_equal_groups(policy_and_prompts):
    policy, vocab, train = policy_and_prompts
    plain = toy.GRPOConfig(group_size=4, prompt_batch=16, dynamic_sampling=False)
    dynamic = replace(plain, dynamic_sampling=True)
    first, _ = task.collect_rollouts(policy, vocab, train, plain, generator=torch.Generator().manual_seed(5),
                                    generator_version="a")
    again, _ = task.collect_rollouts(policy, vocab, train, plain, generator=torch.Generator().manual_seed(5),
                                    generator_version="a")
    assert first == again
    kept, discarded = task.collect_rollouts(policy, vocab, train, dynamic, generator=torch.Generator().manual_seed(5),
                                           generator_version="a")
    informative = [g for g in first if len({r.reward for r in g}) > 1]
    assert kept == informative and 0 < len(informative) < 16
    assert discarded == pytest.approx(1 - len(informative) / 16)


# ----------------------------------------------------------------------------- verifier, grammar, prompts, config
@pytest.mark.parametrize("response, expected", [
    ("7 ; 1 2 <eos>", (1, 1, "ok", 1.0, "correct")),
    ("6 ; 1 2 <eos>", (1, 0, "ok", 1.0, "correct")),      # right answer, wrong intermediate: still rewarded
    ("7 ; 1 3 <eos>", (0, 1, "ok", 0.0, "wrong")),
    ("7 ; 1 2", (0, 1, "truncated", 0.0, "truncated")),
    ("7 1 2 <eos>", (0, 0, "malformed", 0.0, "malformed")),
    ("<eos>", (0, 0, "malformed", 0.0, "malformed")),
    ("7 ; 1 2 <eos> 3", (0, 1, "malformed", 0.0, "malformed")),
    ("", (0, 0, "truncated", 0.0, "truncated")),
])
def test_verify_arithmetic_components(response, expected):
    prompt = task.ArithmeticPrompt("3+4+5", (3, 4, 5))
    verdict = task.verify_arithmetic(response.split(), prompt)
    assert (verdict.correctness, verdict.intermediate_consistent, verdict.format_status, verdict.reward,
            verdict.status) == expected
    assert verdict.version == task.VERIFIER_VERSION


def test_grammar_number_separator_number_eos():
    digits = set(task.DIGITS)
    assert set(task.allowed_next_tokens(())) == digits
    assert set(task.allowed_next_tokens(("1",))) == digits | {";"}
    assert task.allowed_next_tokens(("0",)) == (";",)  # no leading zeros
    assert task.allowed_next_tokens(("1", "2", "3")) == (";",)  # at most three digits
    assert set(task.allowed_next_tokens(("7", ";", "1"))) == digits | {"<eos>"}
    assert task.allowed_next_tokens(("7", ";", "1", "<eos>")) == ()
    prompt = task.ArithmeticPrompt("9+9+9", (9, 9, 9))
    assert prompt.target_tokens == ("1", "8", ";", "2", "7", "<eos>") and prompt.text == "9 + 9 + 9 ="


def test_arithmetic_prompts_are_stable_and_held_out_is_never_trained_on():
    train, heldout = task.arithmetic_prompts(16, 32, seed=9)
    again, _ = task.arithmetic_prompts(16, 32, seed=9)
    assert train == again and len(train) == 16 and len(heldout) == 32
    assert all(p.prompt_id == "+".join(map(str, p.operands)) for p in train + heldout)
    assert not {p.operands for p in train} & {p.operands for p in heldout}
    pool = {p.operands for p in task.warmup_pool(heldout, task.MAX_OPERAND)}
    assert not pool & {p.operands for p in heldout} and {p.operands for p in train} <= pool
    with pytest.raises(ValueError, match="num_train"):
        task.arithmetic_prompts(0, 5)
    with pytest.raises(ValueError, match="max_operand"):
        task.arithmetic_prompts(4, 4, max_operand=12)


def test_grpo_config_is_frozen_json_serialisable_and_validated():
    config = toy.GRPOConfig(group_size=4, prompt_batch=2, updates=1, update_epochs=1, loss_type="dapo")
    assert json.loads(json.dumps(asdict(config))) == asdict(config)
    assert config.rollouts_per_batch == 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.group_size = 3
    for bad, match in [(dict(loss_type="ppo"), "loss_type"), (dict(group_size=1), "group_size"),
                       (dict(updates=0), "updates"), (dict(eps_low=1.0), "eps_low")]:
        with pytest.raises(ValueError, match=match):
            toy.GRPOConfig(**bad)
    assert toy.profile_config("smoke", loss_type="dr_grpo").scale_rewards is False


GIVEN_MODULES = ("arithmetic_toy", "grpo_toy")


def _imported_roots(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    return roots | {node.module.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module}


@pytest.mark.parametrize("path", [TRAINING_PATH] + [MODULE_DIR / f"{name}.py" for name in GIVEN_MODULES],
                         ids=lambda path: path.stem)
def test_training_files_are_standalone(path):
    # the standard library, numpy, torch, tqdm, the given modules next to them, and the learner's own
    # module_9_reference (the loop computes with its functions, see your_formulas); never the kit
    assert _imported_roots(path) <= {"__future__", "copy", "math", "dataclasses", "functools", "hashlib", "importlib",
                                     "pathlib", "sys", "typing", "numpy", "torch", "tqdm", "module_9_reference",
                                     "toy_optim", *GIVEN_MODULES}, path.name


def test_the_exercise_file_holds_the_exercise_and_the_toy_lives_in_given_modules():
    # STYLE 5 and 15: the file a learner edits is short; the task, the policy and the loop are given modules
    source = TRAINING_PATH.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 150
    tree = ast.parse(source)
    defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    assert defined == ["_check_loss_inputs", "grpo_loss", "run_toy_grpo_experiment"]
    for name in GIVEN_MODULES:
        given = (MODULE_DIR / f"{name}.py").read_text(encoding="utf-8")
        assert "### BEGIN SOLUTION" not in given and "GIVEN CODE -- you need not change anything in this file." in given
        assert len(given.splitlines()) <= 360, name  # STYLE 5: about 300 lines; grpo_toy holds the whole loop


def test_every_name_the_seed_imports_from_the_training_file_is_there():
    # the course notebook runs unchanged: `from module_9_training import (...)` still finds every name
    seed = (REPO_ROOT / "graders" / "seeds" / "module_09_seed.txt").read_text(encoding="utf-8")
    block = seed[seed.index("from module_9_training import ("):]
    names = [name.strip() for name in block[block.index("(") + 1:block.index(")")].split(",") if name.strip()]
    assert names and all(hasattr(m9t, name) for name in names), names


def test_the_experiment_defaults_to_the_files_own_grpo_loss_and_forwards_everything():
    calls = []

    def fake(profile, seed, loss_type, *, loss_fn, progress, formulas):
        calls.append((profile, seed, loss_type, loss_fn, progress, formulas))
        return {}

    original = toy.run_toy_grpo_experiment
    toy.run_toy_grpo_experiment = fake
    try:
        m9t.run_toy_grpo_experiment("full", 3, "grpo", progress=True, formulas="f")
        m9t.run_toy_grpo_experiment(loss_fn=_flipped)
    finally:
        toy.run_toy_grpo_experiment = original
    assert calls == [("full", 3, "grpo", m9t.grpo_loss, True, "f"), ("smoke", 9, "dapo", _flipped, False, None)]
    with pytest.raises(TypeError, match="loss_fn"):  # the given loop has no loss of its own
        toy.run_toy_grpo_experiment(toy.profile_config("smoke"))


# slow: torch.optim.Adam's first use imports torch._dynamo (about 2 s); the toys' Adam changes with the toys only
@pytest.mark.slow
def test_the_toys_written_out_adam_is_bit_identical_to_torch_optim_adam():
    # the toys' Adam (one file, solutions/common/toy_optim.py, which both toys import) stands in for
    # torch.optim.Adam (whose first use imports torch._dynamo, a second in every grading worker): same
    # parameters, same gradients, same numbers to the last bit -- including a parameter that has no gradient
    # on some steps (torch counts its steps only when it has one)
    toy = load_module(SOLUTIONS_DIR / "common" / "toy_optim.py", "_adam_toy_optim")

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Embedding(7, 5), torch.nn.GRU(5, 6, batch_first=True)).double(), \
            torch.nn.Linear(6, 7).double()

    (ours_body, ours_head), (theirs_body, theirs_head) = model(), model()
    ours = toy.Adam([*ours_body.parameters(), *ours_head.parameters()], lr=3e-2)
    theirs = torch.optim.Adam([*theirs_body.parameters(), *theirs_head.parameters()], lr=3e-2)
    tokens = torch.randint(0, 7, (4, 5), generator=torch.Generator().manual_seed(1))
    for step in range(6):
        for body, head, optimiser in ((ours_body, ours_head, ours), (theirs_body, theirs_head, theirs)):
            optimiser.zero_grad()
            hidden, _ = body(tokens)
            logits = head(hidden) if step % 3 else hidden.sum(-1, keepdim=True).expand(-1, -1, 7)  # head idle
            torch.nn.functional.cross_entropy(logits.transpose(1, 2), tokens).backward()
            optimiser.step()
    for mine, reference in zip([*ours_body.parameters(), *ours_head.parameters()],
                               [*theirs_body.parameters(), *theirs_head.parameters()]):
        assert torch.equal(mine, reference)
    assert ours.steps[-1] == 4.0 and ours.steps[0] == 6.0  # the head had gradients on 4 of the 6 steps
