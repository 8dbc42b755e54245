"""The TRL capstone: tiny GRPO and DPO runs end to end through `rl4llm capstone run`, their passports
graded by graders/capstone.py (full score), tampered passports losing the right checks, the learner's
verifier as the reward, and the real-model profiles refusing cleanly without a GPU (nothing downloads)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders.build import solution_files
from graders.capstone import REPORT_NAME, check_passport, kit_verifier_version
from graders.cli import main
from graders.paths import REPO_ROOT
from solutions.capstone.data import canonical_hash, tiny_arithmetic_rows, tiny_preference_rows
from solutions.capstone.profiles import CapstoneError, get_profile

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}
ALWAYS_RIGHT = '''VERIFIER_VERSION = {version!r}


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    return 1  # a broken verifier: every answer is right
'''


def _capstone(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "graders.cli", "capstone", *args], cwd=REPO_ROOT,
                            env={**os.environ, **OFFLINE}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Four tiny runs in parallel subprocesses (TRL's import dominates): GRPO twice, DPO, GRPO with a learner verifier."""
    root = tmp_path_factory.mktemp("capstone")
    learner = root / "learner" / "module_9_reference.py"
    learner.parent.mkdir()
    learner.write_text(ALWAYS_RIGHT.format(version=kit_verifier_version()), encoding="utf-8")
    commands = {
        "grpo": ("--algo", "grpo"), "grpo_again": ("--algo", "grpo"), "dpo": ("--algo", "dpo"),
        "learner": ("--algo", "grpo", "--verifier", str(learner)),
    }
    processes = {name: _capstone("run", *args, "--profile", "tiny", "--out", str(root / name), "--quiet")
                 for name, args in commands.items()}
    for name, process in processes.items():
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, f"capstone run {name} failed:\n{output[-3000:]}"
    return {**{name: root / name for name in commands}, "learner_file": learner}


def _passport(run_dir: Path) -> dict:
    return json.loads((run_dir / "passport.json").read_text(encoding="utf-8"))


def _failed(report: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in report["checks"] if not check["passed"]}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grpo", "dpo"])
def test_tiny_run_gets_full_score(runs, name):
    report = check_passport(runs[name])
    assert _failed(report) == {}
    assert report["score"] == report["max_score"] == 12 and report["passed"]


@pytest.mark.slow
def test_passport_records_the_run(runs):
    grpo, dpo = _passport(runs["grpo"]), _passport(runs["dpo"])
    assert set(grpo["versions"]) == {"python", "torch", "transformers", "trl", "peft", "datasets", "accelerate"}
    assert grpo["trainer_class"] == "GRPOTrainer" and dpo["trainer_class"] == "DPOTrainer"
    assert grpo["trainer_args"]["num_generations"] == 4 and grpo["trainer_args"]["loss_type"] == "dapo"
    assert grpo["data"]["train_sha256"] == canonical_hash(tiny_arithmetic_rows())
    assert dpo["data"]["train_sha256"] == canonical_hash(tiny_preference_rows())
    assert grpo["model"]["tiny_config"]["num_hidden_layers"] == 2 and grpo["lora"]["used"] is True
    assert grpo["verifier"]["version"] == kit_verifier_version() and dpo["verifier"] is None
    assert len(grpo["reward_curve"]["values"]) == len(grpo["reward_curve"]["steps"]) >= 1
    for run in (grpo, dpo):
        assert all(math.isfinite(v) for v in run["reward_curve"]["values"]) and run["wall_time_s"]["total"] > 0
    assert set(dpo["metrics"]["before"]) >= {"pair_accuracy", "mean_margin"}
    assert (runs["grpo"] / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_same_seed_same_run(runs):
    first, again = _passport(runs["grpo"]), _passport(runs["grpo_again"])
    assert first["reward_curve"] == again["reward_curve"]
    assert first["metrics"] == again["metrics"]


@pytest.mark.slow
def test_learner_verifier_is_the_reward(runs):
    passport = _passport(runs["learner"])
    assert passport["verifier"]["path"] == str(runs["learner_file"].resolve())
    assert passport["verifier"]["sha256"] != _passport(runs["grpo"])["verifier"]["sha256"]
    assert passport["reward_curve"]["values"] == [1.0] * len(passport["reward_curve"]["values"])
    assert passport["metrics"]["before"]["greedy_accuracy"] == passport["metrics"]["after"]["greedy_accuracy"] == 1.0
    assert _passport(runs["grpo"])["reward_curve"]["values"] != passport["reward_curve"]["values"]


@pytest.mark.slow
def test_cli_check_prints_and_writes_the_report(runs, tmp_path, capsys):
    run_dir = shutil.copytree(runs["dpo"], tmp_path / "dpo")
    assert main(["capstone", "check", str(run_dir)]) == 0
    printed = capsys.readouterr().out
    assert "score: 12/12" in printed and "[PASS] trainer_args" in printed
    assert json.loads((run_dir / REPORT_NAME).read_text(encoding="utf-8"))["score"] == 12
    assert main(["capstone", "check", str(tmp_path / "missing")]) == 2  # nowhere to write the report


def _tamper(passport: dict, change: str) -> None:
    if change == "verifier_version":
        passport["verifier"]["version"] = "m9-numeric-verifier-0.9"
    elif change == "data_hash":
        passport["data"]["train_sha256"] = "0" * 64
    elif change == "missing_field":
        del passport["metrics"]
    elif change == "loss_type":
        passport["trainer_args"]["loss_type"] = "grpo"
    elif change == "no_lora":
        passport["lora"]["used"] = False
    elif change == "nan_metric":
        passport["metrics"]["after"]["greedy_accuracy"] = float("nan")
    elif change == "empty_curve":
        passport["reward_curve"].update(steps=[], values=[])


TAMPERED = [  # change, the one check that must fail, words its message must contain
    ("verifier_version", "verifier", "m9-numeric-verifier-0.9"),
    ("data_hash", "data", "other rows"),
    ("loss_type", "trainer_args", "loss_type='grpo' (expected 'dapo')"),
    ("no_lora", "lora", "not a PEFT LoRA model"),
    ("nan_metric", "metrics", "greedy_accuracy"),
    ("empty_curve", "reward_curve", "at least one"),
]


@pytest.mark.slow
@pytest.mark.parametrize("change, check, words", TAMPERED, ids=[row[0] for row in TAMPERED])
def test_tampered_passport_loses_exactly_its_check(runs, tmp_path, change, check, words):
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    passport = _passport(run_dir)
    _tamper(passport, change)
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    report = check_passport(run_dir)
    assert list(_failed(report)) == [check]
    assert words in _failed(report)[check]
    assert report["score"] == report["max_score"] - 1


@pytest.mark.slow
def test_missing_field_fails_fields_and_skips_the_rest(runs, tmp_path):
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    passport = _passport(run_dir)
    _tamper(passport, "missing_field")
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    failed = _failed(check_passport(run_dir))
    assert failed["fields"] == "missing field(s): metrics"
    assert "passport" not in failed and failed["metrics"].startswith("not checked")


@pytest.mark.parametrize("content, words", [("{not json", "not valid JSON"), ("[1, 2]", "JSON object"), (None, "no passport.json")])
def test_unreadable_passport_is_a_failed_report(tmp_path, content, words):
    if content is not None:
        (tmp_path / "passport.json").write_text(content, encoding="utf-8")
    report = check_passport(tmp_path)
    assert report["score"] == 0 and not report["passed"]
    assert words in _failed(report)["passport"] and words in _failed(report)["figure"]


@pytest.mark.slow
def test_malformed_fields_never_crash(runs, tmp_path):
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    passport = _passport(run_dir)
    passport.update(versions=3, trainer_args=[], metrics="good")
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    failed = _failed(check_passport(run_dir))
    assert {"versions", "trainer_args", "metrics", "seeds"} <= set(failed)
    assert "malformed passport" in failed["versions"]


def test_real_profiles_build_the_course_arguments(tmp_path):
    from solutions.capstone.run import trainer_arguments

    expected_grpo = {"learning_rate": 5e-6, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
                     "max_completion_length": 192, "num_generations": 4, "num_iterations": 1, "loss_type": "dapo",
                     "scale_rewards": "group", "importance_sampling_level": "token", "epsilon": 0.2,
                     "epsilon_high": 0.28, "beta": 0.0, "mask_truncated_completions": True, "logging_steps": 1}
    expected_dpo = {"max_steps": 20, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8,
                    "learning_rate": 1e-5, "logging_steps": 1}
    for algorithm, name, expected in [("grpo", "smoke", {**expected_grpo, "max_steps": 2}),
                                      ("grpo", "full", {**expected_grpo, "max_steps": 80}),
                                      ("dpo", "smoke", {**expected_dpo, "max_steps": 2}),
                                      ("dpo", "full", expected_dpo)]:
        profile = get_profile(algorithm, name)
        assert profile.model == "Qwen/Qwen3-0.6B" and profile.needs_gpu
        args = trainer_arguments(profile, tmp_path, use_cpu=True).to_dict()  # CPU: only to inspect them
        assert {key: args[key] for key in expected} == expected, (algorithm, name)
    assert get_profile("grpo", "full").data.dataset == "trl-lib/DeepMath-103K"
    assert get_profile("dpo", "full").data.dataset == "trl-lib/ultrafeedback_binarized"


def test_real_profiles_refuse_without_a_gpu(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the real profiles would run")
    process = _capstone("run", "--algo", "grpo", "--profile", "smoke", "--out", str(tmp_path / "smoke"))
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 2 and "needs a CUDA GPU" in output and "--profile tiny" in output
    assert not (tmp_path / "smoke").exists()
    from solutions.capstone.run import run_capstone

    with pytest.raises(CapstoneError, match="Qwen/Qwen3-0.6B and needs a CUDA GPU"):
        run_capstone("dpo", "full", tmp_path / "full")


def test_capstone_is_not_part_of_the_one_source_build():
    assert not [path for path in solution_files() if "capstone" in path.parts]


@pytest.mark.parametrize("source, words", [
    (None, "raised NotImplementedError on a simple answer"),  # the untouched starter
    ("def verify_numeric_answer(text, reference, **kw):\n    return 0.5\n", "must return 0 or 1"),
    ("x = 1\n", "defines no function verify_numeric_answer"),
])
def test_an_unusable_verifier_stops_before_training(tmp_path, capsys, source, words):
    if source is None:
        path = REPO_ROOT / "starter" / "module_09" / "module_9_reference.py"
    else:
        path = tmp_path / "module_9_reference.py"
        path.write_text(source, encoding="utf-8")
    code = main(["capstone", "run", "--algo", "grpo", "--profile", "tiny", "--out", str(tmp_path / "run"),
                 "--verifier", str(path), "--quiet"])
    assert code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "run" / "passport.json").exists()
