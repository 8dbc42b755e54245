"""The TRL capstone end to end on CPU: tiny GRPO and DPO runs (in this process: TRL is imported once),
their passports and figures, `rl4llm capstone grade` with teeth (the verifier or the loss by the engine, the passport
against the installed kit and against itself, the adapter re-evaluated against the base model), every
tampering of issue 12 losing points, and the real profiles refusing cleanly without a GPU."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from graders.capstone.passport import check_passport, kit_verifier_version
from graders.capstone.grade import grade_learner_code, grade_submission, grade_verifiers
from graders.cli import main
from graders.paths import REPO_ROOT, SOLUTIONS_DIR
from graders.capstone.run.data import canonical_hash, tiny_preference_rows, tiny_second_digit_rows
from graders.capstone.run.models import sha256_file
from graders.capstone.run.profiles import CapstoneError, get_profile

KIT_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
KIT_LOSS = SOLUTIONS_DIR / "module_08" / "module_8_training.py"
CONSTANT = '''VERIFIER_VERSION = {version!r}


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    return {value}  # a broken verifier: every answer gets the same reward
'''


def _run(algorithm: str, out: Path, learner_file: Path) -> Path:
    """A tiny run with the learner's file (GRPO: the verifier; DPO: the loss), copied into the run folder:
    the submission."""
    from graders.capstone.run.run import RunOptions, run_capstone

    chosen = {"verifier": learner_file} if algorithm == "grpo" else {"loss": learner_file}
    run_capstone(RunOptions(algorithm, "tiny", out, progress=False, **chosen))
    shutil.copy(learner_file, out / learner_file.name)
    return out


def _loss_mutant_source(name: str) -> str:
    """The kit's module_8_training.py with its dpo_loss replaced by the catalogued mistake ``name``
    (graders/misconceptions/module_8_training/dpo_loss.py)."""
    import inspect

    import graders.misconceptions.module_8_training.dpo_loss as catalogue

    mutant = inspect.getsource(getattr(catalogue, name)).replace(f"def {name}(", "def dpo_loss(", 1)
    return (KIT_LOSS.read_text(encoding="utf-8") + "\n\n_right = dpo_loss\n\n\n"
            + inspect.getsource(catalogue._logratios) + "\n\n" + mutant)


def _flipped_source() -> str:
    """The kit's verifier with its verdict flipped: a sign-flipped reward (1 for wrong, 0 for right)."""
    return (KIT_VERIFIER.read_text(encoding="utf-8") + "\n\n_right = verify_numeric_answer\n\n\n"
            "def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):\n"
            "    return 1 - _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Tiny runs in this process: GRPO with the kit's verifier, with a constant-1 one and with a flipped
    one (the same profile, seed and steps); DPO with the kit's loss, a sign-flipped one and one without beta."""
    root = tmp_path_factory.mktemp("capstone")
    files = {"learner": root / "learner" / "module_9_reference.py", "flipped": root / "flipped" / "module_9_reference.py",
             "dpo_flipped": root / "dpo_flipped" / "module_8_training.py",
             "dpo_no_beta": root / "dpo_no_beta" / "module_8_training.py"}
    sources = {"learner": CONSTANT.format(version=kit_verifier_version(), value=1), "flipped": _flipped_source(),
               "dpo_flipped": _loss_mutant_source("sign_flipped"), "dpo_no_beta": _loss_mutant_source("beta_missing")}
    for name, path in files.items():
        path.parent.mkdir()
        path.write_text(sources[name], encoding="utf-8")
    return {"grpo": _run("grpo", root / "grpo", KIT_VERIFIER), "dpo": _run("dpo", root / "dpo", KIT_LOSS),
            "learner": _run("grpo", root / "learner_run", files["learner"]),
            "flipped": _run("grpo", root / "flipped_run", files["flipped"]),
            "dpo_flipped": _run("dpo", root / "dpo_flipped_run", files["dpo_flipped"]),
            "dpo_no_beta": _run("dpo", root / "dpo_no_beta_run", files["dpo_no_beta"]),
            "learner_file": files["learner"], "loss_sources": sources}


@pytest.fixture(scope="module")
def verifier_checks() -> dict:
    """The engine's verdicts on the kit's verifier and three broken ones, in one sandboxed batch."""
    version = kit_verifier_version()
    return grade_verifiers({"kit": KIT_VERIFIER.read_text(encoding="utf-8"),
                            "one": CONSTANT.format(version=version, value=1),
                            "zero": CONSTANT.format(version=version, value=0), "absent": None})


HOSTILE_LOSS = """

import pathlib as _pathlib
_right = dpo_loss


def dpo_loss(*args, **kwargs):  # hostile: leaves a mark outside, and answers only once it has read the reference
    try:
        _pathlib.Path({marker!r}).write_text("escaped")
    except OSError:
        pass
    _pathlib.Path({reference!r}).read_text()
    return _right(*args, **kwargs)
"""


@pytest.fixture(scope="module")
def loss_checks(runs, tmp_path_factory) -> dict:
    """The engine's verdicts on the kit's loss file, the two broken ones the DPO runs used, a hostile one and
    none, in one sandboxed batch; {"marker": the file the hostile one tries to write}."""
    sources = runs["loss_sources"]
    marker = tmp_path_factory.mktemp("hostile_loss") / "escaped.txt"
    hostile = KIT_LOSS.read_text(encoding="utf-8") + HOSTILE_LOSS.format(marker=str(marker), reference=str(KIT_LOSS))
    checks = grade_learner_code({"kit": KIT_LOSS.read_text(encoding="utf-8"), "flipped": sources["dpo_flipped"],
                                 "no_beta": sources["dpo_no_beta"], "hostile": hostile, "absent": None}, "dpo")
    return {**checks, "marker": marker}


def _passport(run_dir: Path) -> dict:
    return json.loads((run_dir / "passport.json").read_text(encoding="utf-8"))


def _failed(report: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in report["checks"] if not check["passed"]}


def _lost(report: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in report["checks"] if check["points"] < check["max_points"]}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grpo", "dpo"])
def test_tiny_run_passes_every_passport_check(runs, name):
    report = check_passport(runs[name])
    assert _failed(report) == {}
    assert report["score"] == report["max_score"] == 12 and report["passed"]


@pytest.mark.slow
def test_passport_records_the_run(runs):
    grpo, dpo = _passport(runs["grpo"]), _passport(runs["dpo"])
    assert set(grpo["versions"]) == {"python", "torch", "transformers", "trl", "peft", "datasets", "accelerate"}
    assert grpo["trainer_class"] == "GRPOTrainer" and dpo["trainer_class"] == "LearnerLossDPOTrainer"
    assert grpo["trainer_args"]["num_generations"] == 8 and grpo["trainer_args"]["loss_type"] == "dapo"
    assert grpo["trainer_args"]["chat_template_kwargs"] == {"enable_thinking": False}
    assert grpo["seeds"] == {"seed": 42, "data_seed": 42} and grpo["overrides"] == {} and grpo["device"] == "cpu"
    assert grpo["data"]["train_sha256"] == canonical_hash(tiny_second_digit_rows("train"))
    assert grpo["data"]["eval_sha256"] == canonical_hash(tiny_second_digit_rows("eval"))
    assert not {row["prompt"] for row in tiny_second_digit_rows("train")} & {row["prompt"] for row in tiny_second_digit_rows("eval")}
    assert dpo["data"]["train_sha256"] == canonical_hash(tiny_preference_rows())
    assert dpo["data"]["eval_sha256"] == canonical_hash(tiny_preference_rows("eval"))
    assert not {row["prompt"] for row in tiny_preference_rows()} & {row["prompt"] for row in tiny_preference_rows("eval")}
    assert dpo["loss"]["sha256"] == sha256_file(KIT_LOSS) and grpo["loss"] is None
    assert grpo["model"]["tiny_config"]["num_hidden_layers"] == 2 and grpo["lora"]["used"] is True
    assert grpo["verifier"]["version"] == kit_verifier_version() and dpo["verifier"] is None
    assert set(grpo["adapter"]["files"]) >= {"adapter_config.json", "adapter_model.safetensors"}
    assert len(grpo["reward_curve"]["values"]) == len(grpo["reward_curve"]["steps"]) == 120
    for run in (grpo, dpo):
        assert all(math.isfinite(v) for v in run["reward_curve"]["values"]) and run["wall_time_s"]["total"] > 0
    assert set(dpo["metrics"]["before"]) >= {"pair_accuracy", "mean_margin"}
    assert 0.0 <= grpo["metrics"]["after"]["truncated_fraction"] <= 1.0
    for name in ("reward_curve.png", "training_curves.png", "accuracy_before_after.png"):
        assert (runs["grpo"] / name).read_bytes()[:4] == b"\x89PNG" and (runs["dpo"] / name).is_file()


@pytest.mark.slow
def test_learner_verifier_is_the_reward(runs):
    passport = _passport(runs["learner"])
    assert passport["verifier"]["path"] == str(runs["learner_file"].resolve())
    assert passport["reward_curve"]["values"] == [1.0] * 120
    assert passport["metrics"]["before"]["greedy_accuracy"] == passport["metrics"]["after"]["greedy_accuracy"] == 1.0
    assert _passport(runs["grpo"])["reward_curve"]["values"] != passport["reward_curve"]["values"]


# ----------------------------------------------------------------------------- a tiny run that can fail
@pytest.mark.slow
def test_tiny_grpo_learns_with_the_right_reward_only(runs, verifier_checks):
    """The same profile, seed and 120 steps: the held-out accuracy the grader measures with the kit's
    verifier rises with the right reward, and not with a constant or a sign-flipped one."""
    from graders.capstone.reeval import MIN_IMPROVEMENT, reevaluate

    gains = {}
    for name in ("grpo", "learner", "flipped"):
        measured = reevaluate(_passport(runs[name]), runs[name])
        gains[name] = measured["after"]["greedy_accuracy"] - measured["before"]["greedy_accuracy"]
    metric, minimum = MIN_IMPROVEMENT[("grpo", "tiny")]
    assert metric == "greedy_accuracy"
    assert gains["grpo"] >= minimum + 0.2, gains  # a margin, so the check is not decided by a single row
    assert gains["learner"] == 0.0, gains  # constant reward: every advantage is 0, the adapter stays 0
    assert gains["flipped"] <= 0.0, gains
    for name in ("learner", "flipped"):
        lost = _lost(grade_submission(runs[name], verifier_check=verifier_checks["kit"]))
        assert "improvement" in lost, (name, lost)


@pytest.mark.slow
def test_tiny_dpo_learns_with_the_right_loss_only(runs, loss_checks):
    """The same profile, seed and 100 steps with the learner's loss: the held-out margin the grader measures
    rises far with the right loss (toward log 3 / beta ~ 11 nats), stays under log 3 ~ 1.1 without beta and
    falls with the sign flipped; only the right run earns "improvement"."""
    from graders.capstone.reeval import MIN_IMPROVEMENT, reevaluate

    metric, minimum = MIN_IMPROVEMENT[("dpo", "tiny")]
    gains = {}
    for name in ("dpo", "dpo_no_beta", "dpo_flipped"):
        measured = reevaluate(_passport(runs[name]), runs[name])
        gains[name] = measured["after"][metric] - measured["before"][metric]
        claimed = _passport(runs[name])["metrics"]
        assert math.isclose(gains[name], claimed["after"][metric] - claimed["before"][metric], abs_tol=1e-4)
    assert gains["dpo"] >= minimum + 1.0, gains  # a margin, so the check is not decided by one pair
    assert gains["dpo_no_beta"] <= math.log(3) + 0.2, gains  # its optimum: log(p / (1 - p)), p = 3/4
    assert gains["dpo_flipped"] < 0.0, gains
    for name, check in (("dpo_no_beta", "no_beta"), ("dpo_flipped", "flipped")):
        lost = _lost(grade_submission(runs[name], verifier_check=loss_checks[check]))
        assert "improvement" in lost and "loss" in lost, (name, lost)


# ----------------------------------------------------------------------------- grading a submission
@pytest.mark.slow
def test_the_engine_grades_the_learner_loss(loss_checks):
    assert loss_checks["kit"].points == loss_checks["kit"].max_points == 7
    assert "module_8_training.sequence_logprobs: passed" in loss_checks["kit"].message
    for broken in ("flipped", "no_beta"):  # sequence_logprobs keeps its 3 points, dpo_loss loses most of its 4
        assert 3 <= loss_checks[broken].points < 5, loss_checks[broken]
        assert "module_8_training.dpo_loss: failed" in loss_checks[broken].message
    assert loss_checks["absent"].points == 0 and "no module_8_training.py" in loss_checks["absent"].message
    # the capstone's loss file is graded in the engine's sandbox: no reference, no write outside, beside 7/7
    assert loss_checks["hostile"].points == 3, loss_checks["hostile"]  # sequence_logprobs is the kit's, honest
    assert "module_8_training.dpo_loss: error (0.0/4.0)" in loss_checks["hostile"].message
    assert "refuses access to the reference solutions" in loss_checks["hostile"].message
    assert not loss_checks["marker"].exists()


@pytest.mark.slow
def test_the_engine_grades_the_learner_verifier(verifier_checks):
    assert verifier_checks["kit"].points == verifier_checks["kit"].max_points == 3
    for broken in ("one", "zero"):  # the engine's partial credit: the cases a constant happens to get right
        assert verifier_checks[broken].points < 2, verifier_checks[broken]
        assert "verify_numeric_answer: failed" in verifier_checks[broken].message
    assert verifier_checks["absent"].points == 0 and "no module_9_reference.py" in verifier_checks["absent"].message


@pytest.mark.slow
@pytest.mark.parametrize("name, points", [("grpo", 22), ("dpo", 26)])  # DPO: the loss is worth 7, GRPO's verifier 3
def test_an_honest_submission_gets_every_point(runs, verifier_checks, loss_checks, name, points):
    learner_check = verifier_checks["kit"] if name == "grpo" else loss_checks["kit"]
    report = grade_submission(runs[name], verifier_check=learner_check)
    assert _lost(report) == {}
    assert report["score"] == report["max_score"] == points


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grpo", "dpo"])
def test_a_real_tiny_runs_claims_get_every_point(runs, name):
    """graders/capstone/claims.py on a real run: its versions, its full TRL config and its wall time."""
    from graders.capstone.claims import CLAIM_NAMES, check_claims, train_runtime

    passport = _passport(runs[name])
    checks = {check.name: check for check in check_claims(passport)}
    assert {n: c.points for n, c in checks.items()} == dict.fromkeys(CLAIM_NAMES, 1.0), checks
    assert "every one of" in checks["claims.trainer_args"].message
    runtime, train = train_runtime(passport["log_history"]), passport["wall_time_s"]["train"]
    assert runtime <= train + 0.01 and train <= passport["wall_time_s"]["total"]
    print(f"{name}: train_runtime {runtime:.3f} s, wall_time_s.train {train:.3f} s, total "
          f"{passport['wall_time_s']['total']:.3f} s")


@pytest.mark.slow
def test_the_grade_cli_prints_and_writes_the_report(runs, tmp_path, capsys):
    submission = shutil.make_archive(str(tmp_path / "sub"), "zip", runs["grpo"])
    assert main(["capstone", "grade", submission, "--out", str(tmp_path / "report"), "--lang", "ru"]) == 0
    printed = capsys.readouterr().out
    assert "баллы: 22/22" in printed and "reevaluation" in printed
    assert json.loads((tmp_path / "report" / "capstone_grade.json").read_text(encoding="utf-8"))["score"] == 22


def _tamper(run_dir: Path, change: str) -> None:
    """Edit the submission at ``run_dir`` the way issue 12 found a student could."""
    passport = _passport(run_dir)
    if change == "after_accuracy":
        passport["metrics"]["after"]["greedy_accuracy"] = 0.97
    elif change == "curve_rewritten":
        passport["reward_curve"]["values"] = sorted(passport["reward_curve"]["values"])
    elif change == "log_history_emptied":
        passport["log_history"] = []
    elif change == "fake_verifier_hash":
        passport["verifier"]["sha256"] = "a" * 64
    elif change == "fake_adapter_hash":
        passport["adapter"]["files"]["adapter_model.safetensors"] = "b" * 64
    elif change == "fake_data_hash":
        passport["data"]["train_sha256"] = "c" * 64
    elif change == "relabelled_full":
        passport["profile"] = "full"
    elif change == "dry_run":
        passport["overrides"] = {"max_steps": 1}
    elif change == "adapter_swapped":  # another run's adapter, with its hashes copied into the passport
        other = run_dir.parent / "other_adapter"
        shutil.copy(run_dir / "adapter" / "adapter_model.safetensors", other)
        import torch
        from safetensors.torch import load_file, save_file

        weights = {key: torch.zeros_like(value) for key, value in load_file(other).items()}
        save_file(weights, run_dir / "adapter" / "adapter_model.safetensors")
        from graders.capstone.run.passport import sha256_tree

        passport["adapter"]["files"] = sha256_tree(run_dir / "adapter")
        passport["metrics"]["after"]["greedy_accuracy"] = 0.97
    elif change == "tiny_png":
        (run_dir / "training_curves.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    elif change == "verifier_swapped":
        (run_dir / "module_9_reference.py").write_text("# edited after the run\n" + KIT_VERIFIER.read_text())
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")


TAMPERED = [  # change, a check that must lose its points, words its message must contain
    ("after_accuracy", "reevaluation", "not what was measured"),
    ("curve_rewritten", "consistency", "not the curve of its own log_history"),
    ("log_history_emptied", "consistency", "log_history is empty"),
    ("fake_verifier_hash", "consistency", "verifier sha256"),
    ("fake_adapter_hash", "consistency", "adapter/adapter_model.safetensors"),
    ("fake_data_hash", "passport.data", "other rows"),
    ("relabelled_full", "passport.trainer_args", "max_steps=120 (expected 80)"),
    ("relabelled_full", "consistency", "runs on cuda"),
    ("dry_run", "consistency", "a dry run"),
    ("adapter_swapped", "reevaluation", "not what was measured"),
    ("tiny_png", "figures", "training_curves.png is missing or not a PNG"),
    ("verifier_swapped", "consistency", "verifier sha256"),
]


@pytest.mark.slow
@pytest.mark.parametrize("change, check, words", TAMPERED, ids=[f"{row[0]}-{row[1]}" for row in TAMPERED])
def test_each_tampering_loses_points(runs, verifier_checks, tmp_path, change, check, words):
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    _tamper(run_dir, change)
    report = grade_submission(run_dir, verifier_check=verifier_checks["kit"])
    lost = _lost(report)
    assert check in lost, report
    assert words in lost[check]
    assert report["score"] < report["max_score"]


@pytest.mark.slow
def test_broken_verifiers_lose_the_verifier_points(runs, verifier_checks):
    honest = grade_submission(runs["grpo"], verifier_check=verifier_checks["kit"])["score"]
    for broken in ("one", "zero", "absent"):
        lost = 3 - verifier_checks[broken].points
        assert grade_submission(runs["grpo"], verifier_check=verifier_checks[broken])["score"] == honest - lost >= 0


@pytest.mark.slow
def test_expectations_come_from_the_installed_kit(runs, verifier_checks, tmp_path):
    """A submission that ships its own profiles.py (and a passport matching it) changes nothing."""
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    own = (REPO_ROOT / "graders" / "capstone" / "run" / "profiles.py").read_text().replace('"loss_type": "dapo"', '"loss_type": "grpo"')
    (run_dir / "profiles.py").write_text(own, encoding="utf-8")
    passport = _passport(run_dir)
    passport["trainer_args"]["loss_type"] = "grpo"
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    lost = _lost(grade_submission(run_dir, verifier_check=verifier_checks["kit"]))
    assert "loss_type='grpo' (expected 'dapo')" in lost["passport.trainer_args"]


@pytest.mark.slow
def test_an_unreadable_adapter_scores_zero_there(runs, verifier_checks, tmp_path):
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    (run_dir / "adapter" / "adapter_model.safetensors").write_bytes(b"not safetensors")
    (run_dir / "adapter" / "adapter_model.bin").write_bytes(b"a pickle would run code")
    from graders.capstone.run.passport import sha256_tree

    passport = _passport(run_dir)  # re-hashed by the student, so the passport is consistent
    passport["adapter"]["files"] = sha256_tree(run_dir / "adapter")
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    lost = _lost(grade_submission(run_dir, verifier_check=verifier_checks["kit"]))
    assert "could not be re-evaluated" in lost["reevaluation"] and "adapter_model.bin" in lost["reevaluation"]


# ----------------------------------------------------------------------------- the passport checks alone
@pytest.mark.slow
def test_cli_check_prints_and_writes_the_report(runs, tmp_path, capsys):
    run_dir = shutil.copytree(runs["dpo"], tmp_path / "dpo")
    assert main(["capstone", "check", str(run_dir), "--lang", "en"]) == 0
    printed = capsys.readouterr().out
    assert "score: 12/12" in printed and "[PASS] trainer_args" in printed
    assert main(["capstone", "check", str(tmp_path / "missing")]) == 2  # nowhere to write the report


@pytest.mark.parametrize("content, words", [("{not json", "not valid JSON"), ("[1, 2]", "JSON object"),
                                            (None, "no passport.json")])
def test_unreadable_passport_is_a_failed_report(tmp_path, content, words):
    if content is not None:
        (tmp_path / "passport.json").write_text(content, encoding="utf-8")
    report = check_passport(tmp_path)
    assert report["score"] == 0 and not report["passed"]
    assert words in _failed(report)["passport"] and words in _failed(report)["figure"]


def test_an_empty_submission_scores_zero(tmp_path):
    from graders.capstone.grade import GradeCheck

    report = grade_submission(tmp_path, verifier_check=GradeCheck("verifier", 0.0, 3.0, "none"))
    assert report["score"] == 0 and report["max_score"] > 12


@pytest.mark.slow
def test_malformed_fields_never_crash(runs, tmp_path):
    run_dir = shutil.copytree(runs["grpo"], tmp_path / "run")
    passport = _passport(run_dir)
    passport.update(versions=3, trainer_args=[], metrics="good")
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    failed = _failed(check_passport(run_dir))
    assert {"versions", "trainer_args", "metrics", "seeds"} <= set(failed)
    assert "malformed passport" in failed["versions"]


# ----------------------------------------------------------------------------- real profiles without a GPU
@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_real_profiles_build_the_course_arguments(tmp_path):
    from graders.capstone.run.run import trainer_arguments

    expected_grpo = {"learning_rate": 5e-6, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
                     "max_completion_length": 512, "num_generations": 4, "num_iterations": 1, "loss_type": "dapo",
                     "scale_rewards": "group", "importance_sampling_level": "token", "epsilon": 0.2,
                     "epsilon_high": 0.28, "beta": 0.0, "mask_truncated_completions": True, "logging_steps": 1,
                     "chat_template_kwargs": {"enable_thinking": False}, "seed": 42}
    expected_dpo = {"max_steps": 20, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8,
                    "learning_rate": 1e-5, "logging_steps": 1, "seed": 42}
    for algorithm, name, expected in [("grpo", "smoke", {**expected_grpo, "max_steps": 2}),
                                      ("grpo", "full", {**expected_grpo, "max_steps": 80}),
                                      ("dpo", "smoke", {**expected_dpo, "max_steps": 2}),
                                      ("dpo", "full", expected_dpo)]:
        profile = get_profile(algorithm, name)
        assert profile.model == "Qwen/Qwen3-0.6B" and profile.needs_gpu
        args = trainer_arguments(profile, tmp_path).to_dict()  # CPU: only to inspect them
        assert {key: args[key] for key in expected} == expected, (algorithm, name)
    assert get_profile("grpo", "full").data.eval_split == "test[:32]"  # held out, not train
    overridden = trainer_arguments(get_profile("grpo", "smoke"), tmp_path, overrides={"max_steps": 1,
                                                                                      "max_completion_length": 8})
    assert (overridden.max_steps, overridden.max_completion_length) == (1, 8)


def test_real_profiles_refuse_without_a_gpu(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the real profiles would run")
    code = main(["capstone", "run", "--algo", "grpo", "--profile", "smoke", "--out", str(tmp_path / "smoke"),
                 "--verifier", str(KIT_VERIFIER)])
    error = capsys.readouterr().err
    assert code == 2 and "needs a CUDA GPU" in error and "--device cpu" in error
    assert not (tmp_path / "smoke").exists()
    from graders.capstone.run.run import RunOptions, run_capstone

    with pytest.raises(CapstoneError, match="Qwen/Qwen3-0.6B and needs a CUDA GPU"):
        run_capstone(RunOptions("dpo", "full", tmp_path / "full"))


def test_capstone_is_not_part_of_the_one_source_build():
    from graders.build import solution_files

    assert not [path for path in solution_files() if "capstone" in path.parts]


UNUSABLE = [  # algorithm, the learner's file (None: the untouched starter; "": no flag), words of the error
    ("grpo", None, "raised NotImplementedError on a simple answer"),
    ("grpo", "def verify_numeric_answer(text, reference, **kw):\n    return 0.5\n", "must return 0 or 1"),
    ("grpo", "x = 1\n", "defines no function verify_numeric_answer"),
    ("grpo", "", "GRPO needs your verifier"),
    ("dpo", None, "raised NotImplementedError on a batch of two pairs"),
    ("dpo", "import torch\n\ndef sequence_logprobs(logits, input_ids, mask):\n    return logits.sum(-1)\n\n"
     "def dpo_loss(a, b, c, d, *, beta, label_smoothing=0.0):\n    return (a - b).mean(), a, b\n",
     "sequence_logprobs returned Tensor of shape (2, 3), a (B,) tensor expected"),
    ("dpo", "import torch\n\ndef sequence_logprobs(logits, input_ids, mask):\n    return logits.sum((1, 2))\n\n"
     "def dpo_loss(a, b, c, d, *, beta, label_smoothing=0.0):\n    return 0.5, a, b\n",
     "dpo_loss returned the loss float, a scalar tensor with gradient expected"),
    ("dpo", "x = 1\n", "defines no function sequence_logprobs, dpo_loss"),
    ("dpo", "", "DPO needs your loss"),
]


@pytest.mark.parametrize("algorithm, source, words", UNUSABLE)
def test_an_unusable_verifier_or_loss_stops_before_training(tmp_path, capsys, algorithm, source, words):
    name, flag, module = (("module_9_reference.py", "--verifier", "module_09") if algorithm == "grpo"
                          else ("module_8_training.py", "--loss", "module_08"))
    if source is None:
        path = REPO_ROOT / "starter" / module / name
    else:
        path = tmp_path / name
        path.write_text(source, encoding="utf-8")
    learner = [] if source == "" else [flag, str(path)]
    code = main(["capstone", "run", "--algo", algorithm, "--profile", "tiny", "--out", str(tmp_path / "run"),
                 *learner, "--quiet", "--lang", "en"])
    assert code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "run" / "passport.json").exists()
