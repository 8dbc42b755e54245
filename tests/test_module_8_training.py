"""The kit's own tests of solutions/module_08/module_8_training.py, its given dpo_toy.py and the notebook.

Data and masks, parity of the two exercises with a loop and with the NumPy
reference, the experiment's contract, pinned smoke numbers (identical at 1 and
2 torch threads), wrong implementations that measurably change the outcome,
the exercise file apart from the toy (short; the seed's names still importable
from it; your functions by default), the whole seed notebook run headless, and
the public learner tests.
"""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graders.fences import exercises_in
from devtools.goldens import load_golden
from graders.loader import load_module
from graders.paths import REPO_ROOT, SEEDS_DIR, SOLUTIONS_DIR
from graders.walkthrough.run import run_seed_subprocess


SOLUTION_PATH = SOLUTIONS_DIR / "module_08" / "module_8_training.py"
TOY_PATH = SOLUTIONS_DIR / "module_08" / "dpo_toy.py"
toy = load_module(TOY_PATH, "_kit_tests_dpo_toy", given={"toy_optim": TOY_PATH.with_name("toy_optim.py")})  # the
# given toy (with its optimiser, shared with Module 9's toy), and the exercise file that imports it
t8 = load_module(SOLUTION_PATH, "_kit_tests_module_8_training", given={"dpo_toy": toy})
r8 = load_module(SOLUTIONS_DIR / "module_08" / "module_8_reference.py", "_kit_tests_module_8_reference_parity")
# A reduced budget (about a quarter of a second) for the tests that run the experiment several times.
REDUCED = toy.ToyDPOConfig(sft_steps=80, steps=20, stress_steps=5)
SPEC_KEYS = {"before", "after", "stress", "reference_generation_match", "policy_generation_match",
             "stress_generation_match", "history", "stress_history", "teacher_forced_kl_chosen",
             "teacher_forced_kl_rejected", "stress_generations"}
METRICS = {"loss", "pair_accuracy", "mean_margin", "mean_chosen_logp", "mean_rejected_logp"}


@pytest.mark.parametrize("path", [SOLUTION_PATH, TOY_PATH], ids=lambda path: path.stem)
def test_training_files_are_standalone(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "copy", "dataclasses", "torch", "dpo_toy", "toy_optim"}, imported


def test_exercises_and_the_given_code_banner():
    # the toy's two exercises come first; any later exercise of the file comes from the registry's reading
    assert exercises_in(SOLUTION_PATH)[:2] == ["module_8_training.sequence_logprobs", "module_8_training.dpo_loss"]
    assert "Given (you need not change it)" in SOLUTION_PATH.read_text(encoding="utf-8")
    given = TOY_PATH.read_text(encoding="utf-8")
    assert "### BEGIN SOLUTION" not in given and "You need not change anything in this file." in given


def test_the_exercise_file_is_short_and_the_seed_still_finds_its_names():
    # STYLE 5 and 15: the exercises apart from the toy; the course notebook imports these from the exercise file
    source = SOLUTION_PATH.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 120
    names = [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]
    assert names[:3] == ["sequence_logprobs", "dpo_loss", "run_toy_dpo_experiment"]
    assert set(names[3:]) <= {exercise.split(".", 1)[1] for exercise in exercises_in(SOLUTION_PATH)}
    seed = (SEEDS_DIR / "module_08_seed.txt").read_text(encoding="utf-8")
    block = seed[seed.index("from module_8_training import ("):]
    names = [name.strip() for name in block[block.index("(") + 1:block.index(")")].split(",") if name.strip()]
    assert names and all(hasattr(t8, name) for name in names), names


def test_the_experiment_defaults_to_the_files_own_functions():
    with pytest.raises(TypeError, match="loss_fn"):  # the given toy has no DPO of its own
        toy.run_toy_dpo_experiment(REDUCED, seed=7)
    spied = []

    def logps(*args):
        spied.append("logps")
        return t8.sequence_logprobs(*args)

    config = toy.ToyDPOConfig(sft_steps=2, steps=1, stress_steps=1)
    assert t8.run_toy_dpo_experiment(config) == toy.run_toy_dpo_experiment(
        config, loss_fn=t8.dpo_loss, logprob_fn=t8.sequence_logprobs)
    t8.run_toy_dpo_experiment(config, logprob_fn=logps)
    assert spied


# --- data -------------------------------------------------------------------------------------
def test_templates_and_vocabulary():
    examples = t8.toy_preference_examples()
    assert len(examples) == 8 and len({ex.prompt for ex in examples}) == 8
    assert all(ex.chosen != ex.rejected for ex in examples)
    with pytest.raises(AttributeError):
        examples[0].chosen = ("x",)
    vocab = t8.build_vocabulary(examples)
    assert vocab == t8.build_vocabulary(list(reversed(examples)))  # deterministic: sorted, not insertion order
    assert vocab.tokens[:3] == ("<pad>", "<bos>", "<eos>")
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id) == (0, 1, 2)
    assert vocab.decode(vocab.encode(examples[0].chosen)) == list(examples[0].chosen)
    with pytest.raises(KeyError, match="purple"):
        vocab.encode(["the", "purple"])
    with pytest.raises(ValueError, match="reserved"):
        t8.build_vocabulary([toy.PreferenceExample(("a",), ("<eos>",), ("b",))])


def test_pair_batch_masks_select_exactly_the_response_and_eos():
    examples = t8.toy_preference_examples()
    vocab = t8.build_vocabulary(examples)
    batch = t8.pair_batch(examples, vocab)
    for side in ("chosen", "rejected"):
        ids, mask = batch[f"{side}_ids"], batch[f"{side}_mask"]
        assert ids.dtype == torch.long and mask.dtype == torch.bool
        assert mask.shape == (8, ids.shape[1] - 1)
        for i, ex in enumerate(examples):
            response = getattr(ex, side)
            assert vocab.decode(ids[i, 1:][mask[i]]) == [*response, "<eos>"]
            assert ids[i, 0] == vocab.bos_id
            assert vocab.decode(ids[i, 1: 1 + len(ex.prompt)]) == list(ex.prompt)
            used = 2 + len(ex.prompt) + len(response)
            assert torch.all(ids[i, used:] == vocab.pad_id)
    with pytest.raises(ValueError, match="examples"):
        t8.pair_batch([], vocab)


# --- the exercises: parity -----------------------------------------------------------------------
def test_sequence_logprobs_matches_a_loop():
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 6, 5, generator=generator, dtype=torch.float64)
    ids = torch.randint(0, 5, (3, 6), generator=generator)
    mask = torch.rand(3, 5, generator=generator) > 0.4
    expected = torch.zeros(3, dtype=torch.float64)
    for b in range(3):
        for t in range(5):
            if mask[b, t]:
                expected[b] += logits[b, t, ids[b, t + 1]] - torch.logsumexp(logits[b, t], dim=0)
    assert torch.allclose(t8.sequence_logprobs(logits, ids, mask), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("beta, eps", [(0.1, 0.0), (0.5, 0.2), (2.0, 0.45)])
def test_dpo_loss_matches_the_numpy_reference(beta, eps):
    rng = np.random.default_rng(1)
    pc, pr, rc, rr = (torch.tensor(rng.normal(-5.0, 3.0, 6)) for _ in range(4))
    loss, chosen_rewards, rejected_rewards = t8.dpo_loss(pc, pr, rc, rr, beta=beta, label_smoothing=eps)
    h = ((pc - rc) - (pr - rr)).numpy()
    assert math.isclose(loss.item(), r8.conservative_dpo_loss(h, beta, eps).mean(), rel_tol=1e-12)
    np.testing.assert_allclose(chosen_rewards.numpy(), beta * (pc - rc).numpy(), rtol=1e-12)
    np.testing.assert_allclose(rejected_rewards.numpy(), beta * (pr - rr).numpy(), rtol=1e-12)


@pytest.mark.parametrize("kwargs, named", [({"beta": 0.0}, "beta"), ({"beta": 0.1, "label_smoothing": 0.5},
                                                                      "label_smoothing")])
def test_dpo_loss_rejects_invalid_arguments(kwargs, named):
    x = torch.zeros(2)
    with pytest.raises(ValueError, match=named):
        t8.dpo_loss(x, x, x, x, **kwargs)


# --- the experiment's contract ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def reduced_run():
    return t8.run_toy_dpo_experiment(REDUCED, seed=7)


def test_experiment_returns_the_spec_keys(reduced_run):
    result = reduced_run
    assert set(result) == SPEC_KEYS
    for key in ("before", "after", "stress"):
        assert set(result[key]) == METRICS and all(math.isfinite(v) for v in result[key].values())
    assert len(result["history"]) == REDUCED.steps + 1 and len(result["stress_history"]) == REDUCED.stress_steps + 1
    assert [row["step"] for row in result["history"]] == list(range(REDUCED.steps + 1))
    assert {k: v for k, v in result["history"][0].items() if k != "step"} == result["before"]
    assert {k: v for k, v in result["history"][-1].items() if k != "step"} == result["after"]
    assert result["before"]["loss"] == pytest.approx(math.log(2.0)) and result["before"]["mean_margin"] == 0.0
    assert len(result["stress_generations"]) == 8
    assert all(set(row) == {"prompt", "chosen", "generated"} for row in result["stress_generations"])
    for key in ("reference_generation_match", "policy_generation_match", "stress_generation_match"):
        assert result[key] * 8 == round(result[key] * 8)  # a fraction of the 8 templates
    assert result["teacher_forced_kl_chosen"] > 0 and result["teacher_forced_kl_rejected"] > 0


@pytest.mark.slow  # a second training run (about 0.7 s); the spec keys' test above keeps the run itself fast
def test_experiment_is_deterministic_and_leaves_the_callers_rng_and_threads_alone(reduced_run):
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        again = t8.run_toy_dpo_experiment(REDUCED, seed=7, loss_fn=t8.dpo_loss, logprob_fn=t8.sequence_logprobs)
        assert torch.get_num_threads() == 2  # the run uses one thread and gives the caller's setting back
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(torch.rand(3), expected_next)
    assert json.dumps(again, sort_keys=True) == json.dumps(reduced_run, sort_keys=True)
    with pytest.raises(ValueError, match="profile"):
        t8.run_toy_dpo_experiment("huge")


# --- wrong implementations change the outcome measurably -------------------------------------------
def _flipped_sign(pc, pr, rc, rr, *, beta, label_smoothing=0.0):
    h = (pc - rc) - (pr - rr)
    return F.softplus(beta * h).mean(), (beta * (pc - rc)).detach(), (beta * (pr - rr)).detach()


def _no_reference(pc, pr, rc, rr, *, beta, label_smoothing=0.0):
    h = pc - pr
    return F.softplus(-beta * h).mean(), (beta * pc).detach(), (beta * pr).detach()


def _no_causal_shift(logits, input_ids, mask):
    token_logps = F.log_softmax(logits[:, 1:], dim=-1).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (token_logps * mask).sum(-1)


@pytest.mark.slow  # a training run (about 0.7 s); the loss's formula is tested fast above
def test_dpo_loss_with_the_sign_flipped_unlearns_the_preference(reduced_run):
    assert reduced_run["after"]["pair_accuracy"] == 1.0 and reduced_run["after"]["mean_margin"] > 1.0
    wrong = t8.run_toy_dpo_experiment(REDUCED, seed=7, loss_fn=_flipped_sign)
    assert wrong["after"]["pair_accuracy"] == 0.0 and wrong["after"]["mean_margin"] < -1.0


@pytest.mark.slow  # a training run (about 0.7 s); the loss's formula is tested fast above
def test_dpo_loss_without_the_reference_starts_from_the_wrong_loss(reduced_run):
    wrong = t8.run_toy_dpo_experiment(REDUCED, seed=7, loss_fn=_no_reference)
    # at step 0 the policy IS the reference, so a correct DPO loss is log 2 whatever beta is
    assert abs(wrong["before"]["loss"] - math.log(2.0)) > 0.1
    assert abs(wrong["after"]["loss"] - reduced_run["after"]["loss"]) > 0.1


@pytest.mark.slow  # a training run (about 0.8 s); test_sequence_logprobs_matches_a_loop stays fast
def test_sequence_logprobs_without_the_causal_shift_scores_the_wrong_tokens(reduced_run):
    wrong = t8.run_toy_dpo_experiment(REDUCED, seed=7, logprob_fn=_no_causal_shift)
    # the warm-up scores tokens with the same function: without the shift it rewards copying the token at
    # each position instead of predicting the next, so the reference generates none of the chosen responses
    # and tells chosen from rejected apart by less than a nat (correctly: all of them, by several nats)
    assert reduced_run["reference_generation_match"] == 1.0 and wrong["reference_generation_match"] == 0.0
    gap = {name: run["before"]["mean_chosen_logp"] - run["before"]["mean_rejected_logp"]
           for name, run in (("correct", reduced_run), ("wrong", wrong))}
    assert gap["wrong"] < 1.0 < 5.0 < gap["correct"], gap


# --- the pinned smoke numbers ------------------------------------------------------------------------
SMOKE_SCRIPT = ("import json, sys, torch; torch.set_num_threads(int(sys.argv[1])); "
                "from devtools.goldens import module08_summary; print(json.dumps(module08_summary()))")
EXACT = ("pair_accuracy",)
STRESS_REL = 1e-4  # the high-pressure run is a long high-learning-rate run: round-off grows along it
REL = 1e-7


def _compare(actual, expected, path=""):
    if isinstance(expected, dict):
        assert set(actual) == set(expected), path
        for key in expected:
            _compare(actual[key], expected[key], f"{path}.{key}")
        return
    if path.endswith(EXACT) or path.endswith("generation_match"):
        assert actual == expected, path
        return
    rel = STRESS_REL if path.startswith(".stress") else REL
    assert actual == pytest.approx(expected, rel=rel, abs=1e-9), path


@pytest.fixture(scope="module")
def smoke_runs():
    """The golden producer at 1 and 2 torch threads, in two fresh interpreters side by side."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    processes = {threads: subprocess.Popen([sys.executable, "-c", SMOKE_SCRIPT, str(threads)], cwd=REPO_ROOT, env=env,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for threads in (1, 2)}
    results = {}
    for threads, process in processes.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        results[threads] = json.loads(out)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
def test_smoke_numbers_match_the_golden(smoke_runs, threads):
    _compare(smoke_runs[threads], load_golden("module08_smoke"))


def test_smoke_golden_shows_what_the_course_teaches():
    golden = load_golden("module08_smoke")
    assert golden["after"]["pair_accuracy"] == 1.0 and golden["stress"]["pair_accuracy"] == 1.0
    assert golden["reference_generation_match"] == 1.0
    assert golden["policy_generation_match"] >= 7 / 8  # moderate DPO keeps greedy generation
    assert golden["stress_generation_match"] <= 2 / 8  # high pressure loses most templates ...
    assert golden["stress"]["mean_chosen_logp"] < golden["before"]["mean_chosen_logp"] - 10.0  # ... and the chosen
    assert golden["stress"]["mean_margin"] > golden["after"]["mean_margin"]  # while its margin is larger


# --- the course notebook ------------------------------------------------------------------------------
def test_bundled_seed_is_a_verbatim_copy():
    """The course's Module 8 notebook as it was given to the kit (graders/seeds/SHA256SUMS, recorded when it was
    copied in)."""
    import hashlib

    sums = dict(line.split()[::-1] for line in (SEEDS_DIR / "SHA256SUMS").read_text(encoding="utf-8").splitlines())
    assert hashlib.sha256((SEEDS_DIR / "module_08_seed.txt").read_bytes()).hexdigest() == sums["module_08_seed.txt"]


@pytest.mark.slow
def test_whole_seed_notebook_runs_headless(tmp_path):
    completed = run_seed_subprocess("module08", out_dir=tmp_path, capture=True, timeout=300)
    assert completed.returncode == 0, (completed.stdout[-3000:], completed.stderr[-3000:])
    figures = sorted(path.name for path in tmp_path.glob("figure_*.png"))
    assert figures == [f"figure_{n:02d}.png" for n in range(1, 5)]
    assert all((tmp_path / name).stat().st_size > 10_000 for name in figures)
    for text in ("high-pressure DPO", "constrained Lagrangian: 1.335", "teacher-forced KL on chosen prefixes"):
        assert text in completed.stdout
