"""The capstone's self-reported fields compared with what the grader can know (graders/capstone/claims.py):
claims.versions, claims.trainer_args, claims.wall_time. A valid tiny passport built by hand (the one of
tests/test_capstone_hardening.py: its full TRL config rebuilt without training, the engine's verdict and
the re-evaluation stubbed) keeps every point; each tampering loses exactly its named check, naming the
field, in English and Russian; a field of the wrong kind never crashes the grade. A real tiny run's
claims are in tests/test_capstone.py (its module-scoped runs)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from graders.capstone.claims import (BOOKKEEPING, CLAIM_NAMES, DRY_RUN_KEYS, check_claims, check_trainer_args,
                                     check_versions, check_wall_time, supported_ranges)
from graders.capstone.run.passport import LIBRARIES, library_versions
from graders.paths import REPO_ROOT
from test_capstone_hardening import (CYRILLIC, FULL_SCORE, _by_name, _copy, _delete, _grade, _load, _save, _set,
                                    assert_full, stubbed, templates)

__all__ = ["stubbed", "templates"]  # the fixtures, imported for this module's tests

# slow: the capstone's tooling; the module's fixture builds real TRL trainer arguments (TRL's import, about 4 s a
# worker, before any test). Not a risk of everyday changes (exercises, checks, hints, texts, docs).
pytestmark = pytest.mark.slow


def _claims(passport: dict, language: str = "en") -> dict[str, tuple[float, str]]:
    return {check.name: (check.points, check.message) for check in check_claims(passport, language)}


def _lost(report: dict) -> dict[str, str]:
    return {c["name"]: c["message"] for c in report["checks"] if c["points"] < c["max_points"]}


def _tampered(templates, tmp_path, change, algorithm: str = "grpo") -> Path:
    run_dir = _copy(templates, tmp_path, algorithm, name="tampered")
    passport = _load(run_dir)
    change(passport)
    _save(run_dir, passport)
    return run_dir


# ----------------------------------------------------------------------------- a correct passport
@pytest.mark.parametrize("algorithm", ["grpo", "dpo"])
def test_a_correct_passport_keeps_every_point_of_the_claims(templates, stubbed, tmp_path, algorithm):
    run_dir = _copy(templates, tmp_path, algorithm)
    claims = _claims(_load(run_dir))
    assert {name: points for name, (points, _) in claims.items()} == dict.fromkeys(CLAIM_NAMES, 1.0), claims
    assert "inside the kit's ranges" in claims["claims.versions"][1]
    assert "every one of" in claims["claims.trainer_args"][1]
    assert "agrees with the Trainer's train_runtime 1.5 s" in claims["claims.wall_time"][1]
    assert_full(run_dir, algorithm)
    graded = _by_name(_grade(run_dir))
    assert all(graded[name]["points"] == graded[name]["max_points"] == 1.0 for name in CLAIM_NAMES)


# ----------------------------------------------------------------------------- tampering: one check each
def _no_train_runtime(passport: dict) -> None:
    for entry in passport["log_history"]:
        entry.pop("train_runtime", None)


# (id, change, the check that is lost, words its message must hold)
TAMPERED = [
    ("trl_9_9_9", _set("versions.trl", "9.9.9"), "claims.versions", "versions.trl 9.9.9 is outside the range"),
    ("trl_garbage", _set("versions.trl", "latest!"), "claims.versions", "versions.trl is 'latest!', not a version"),
    ("trl_below_floor", _set("versions.trl", "0.29.1"), "claims.versions", "versions.trl 0.29.1 is outside"),
    ("torch_below_floor", _set("versions.torch", "1.13.1"), "claims.versions", "versions.torch 1.13.1 is outside"),
    ("python_2", _set("versions.python", "2.7.18"), "claims.versions", "versions.python 2.7.18 is outside"),
    ("warmup_ratio", _set("trainer_args.warmup_ratio", 0.1), "claims.trainer_args", "warmup_ratio: found 0.1"),
    ("weight_decay", _set("trainer_args.weight_decay", 0.1), "claims.trainer_args",
     "weight_decay: found 0.1, expected 0.0"),
    ("lr_scheduler_type", _set("trainer_args.lr_scheduler_type", "cosine"), "claims.trainer_args",
     "lr_scheduler_type: found 'cosine', expected 'linear'"),
    ("temperature", _set("trainer_args.temperature", 0.7), "claims.trainer_args", "temperature: found 0.7"),
    ("max_grad_norm", _set("trainer_args.max_grad_norm", 100.0), "claims.trainer_args",
     "max_grad_norm: found 100.0, expected 1.0"),
    ("removed_key", _delete("trainer_args.adam_beta2"), "claims.trainer_args",
     "adam_beta2: found <missing>, expected 0.999"),
    ("bool_as_int", _set("trainer_args.use_cpu", 1), "claims.trainer_args", "use_cpu: found 1, expected True"),
    ("data_seed", _set("trainer_args.data_seed", 7), "claims.trainer_args", "data_seed: found 7, expected 42"),
    ("wall_time_10x", _set("wall_time_s", {"train": 15.0, "total": 16.0}), "claims.wall_time",
     "wall_time_s.train 15 s disagrees with the Trainer's train_runtime 1.5 s"),
    ("wall_time_below_runtime", _set("wall_time_s", {"train": 1.0, "total": 2.5}), "claims.wall_time",
     "wall_time_s.train 1 s disagrees"),
    ("total_below_train", _set("wall_time_s", {"train": 1.6, "total": 1.55}), "claims.wall_time",
     "wall_time_s.total 1.55 s is less than wall_time_s.train 1.6 s"),
    ("no_train", _delete("wall_time_s.train"), "claims.wall_time", "wall_time_s.train must be a finite number > 0"),
    ("no_train_runtime", _no_train_runtime, "claims.wall_time", "log_history has no train_runtime"),
]


@pytest.mark.parametrize("change, lost, words", [row[1:] for row in TAMPERED], ids=[row[0] for row in TAMPERED])
def test_each_tampering_loses_exactly_its_named_check(templates, stubbed, tmp_path, change, lost, words):
    run_dir = _tampered(templates, tmp_path, change)
    report = _grade(run_dir)
    assert set(_lost(report)) == {lost}, _lost(report)
    assert words in _lost(report)[lost], _lost(report)[lost]
    assert report["score"] == FULL_SCORE["grpo"] - 1 and report["max_score"] == FULL_SCORE["grpo"]
    russian = _by_name(_grade(run_dir, "ru"))[lost]["message"]
    assert CYRILLIC.search(russian) and russian != _lost(report)[lost]
    assert _grade(_copy(templates, tmp_path, name="untouched"))["score"] == FULL_SCORE["grpo"]


def test_every_difference_is_named_key_found_expected(templates):
    passport = _load(templates["grpo"])
    passport["trainer_args"].update(weight_decay=0.2, warmup_steps=5, seed_extra=1)
    del passport["trainer_args"]["optim"]
    points, said = _claims(passport)["claims.trainer_args"]
    assert points == 0 and said.startswith("4 trainer_args differ from the GRPOConfig")
    for words in ("weight_decay: found 0.2, expected 0.0", "warmup_steps: found 5, expected 0",
                  "seed_extra: found 1, expected <missing>", "optim: found <missing>, expected "):
        assert words in said, said


# ----------------------------------------------------------------------------- versions: the rules
def test_the_ranges_are_the_installed_kits_and_pyprojects():
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {Requirement(line).name: SpecifierSet(str(Requirement(line).specifier))
                for line in [*project["dependencies"], *project["optional-dependencies"]["capstone"]]}
    ranges = supported_ranges()
    assert {name: SpecifierSet(spec) for name, spec in ranges.items() if name != "python"} == declared
    assert ranges["python"] == project["requires-python"]
    assert all(name in ranges for name in ("python", *LIBRARIES))  # every recorded library has a range


def test_another_major_version_of_a_forward_library_fails_a_minor_one_is_named(templates):
    passport = _load(templates["grpo"])
    grader = {**library_versions(), "transformers": "6.0.1"}
    passed, said = check_versions(passport, installed=grader)
    mine = passport["versions"]["transformers"]
    assert not passed and f"versions.transformers {mine} is another major version than the grader's 6.0.1" in said
    minor = re.sub(r"^(\d+)\.(\d+)", lambda m: f"{m[1]}.{int(m[2]) + 1}", mine)
    passed, said = check_versions(passport, installed={**library_versions(), "transformers": minor})
    assert passed and f"transformers {mine} (the grader has {minor})" in said, said
    passed, said = check_versions(passport)
    assert passed and "the same as the grader's" in said
    other = {**library_versions(), "datasets": "99.0.0"}  # not a forward library: named, not failed
    passed, said = check_versions(passport, installed=other)
    assert passed and "(the grader has 99.0.0)" in said


# ----------------------------------------------------------------------------- trainer arguments: the rules
def test_bookkeeping_keys_do_not_count(templates):
    passport = _load(templates["grpo"])
    passport["trainer_args"].update(output_dir="/elsewhere/trainer", disable_tqdm=not passport["trainer_args"]
                                    ["disable_tqdm"], run_name="mine", local_rank=0)
    passport["trainer_args"].pop("logging_dir", None)
    assert set(BOOKKEEPING) >= {"output_dir", "disable_tqdm", "run_name"} and len(BOOKKEEPING) <= 6
    assert _claims(passport)["claims.trainer_args"][0] == 1.0


def test_dry_run_keys_are_the_run_options_overrides():
    from graders.capstone.run.run import RunOptions

    assert set(RunOptions("grpo", "tiny", Path("x"), max_steps=1, max_completion_length=1,
                          max_length=1).overrides) == set(DRY_RUN_KEYS)


def test_a_dry_runs_overrides_are_not_counted_twice(templates, stubbed, tmp_path):
    """check_trainer_args applies a dry run's overrides; the grade scores the claims 0 as inconsistent."""
    passport = _load(templates["grpo"])
    passport["overrides"] = {"max_steps": 3}
    passport["trainer_args"]["max_steps"] = 3
    assert check_trainer_args(passport)[0]
    passport["overrides"] = {"max_steps": 3, "weight_decay": 0.5}  # not a dry-run key: no excuse
    passport["trainer_args"]["weight_decay"] = 0.5
    passed, said = check_trainer_args(passport)
    assert not passed and "weight_decay: found 0.5, expected 0.0" in said
    run_dir = _tampered(templates, tmp_path, _set("overrides", {"max_steps": 3}))
    graded = _by_name(_grade(run_dir))
    assert graded["consistency"]["points"] == 0
    assert all(graded[name]["points"] == 0 and "not consistent" in graded[name]["message"] for name in CLAIM_NAMES)


def test_a_cuda_run_is_rebuilt_with_its_precision(templates):
    from graders.capstone.run.passport import json_safe
    from graders.capstone.run.profiles import PROFILES
    from graders.capstone.run.run import trainer_arguments

    passport = _load(templates["grpo"])
    fp16 = json_safe(trainer_arguments(PROFILES[("grpo", "tiny")], Path("x"), seed=42, progress=False,
                                       precision={"use_cpu": False, "bf16": False, "fp16": True}).to_dict())
    passport.update(device="cuda: NVIDIA H200", trainer_args=fp16)
    assert check_trainer_args(passport)[0]
    passport["trainer_args"] = {**fp16, "bf16": True, "fp16": False}
    assert check_trainer_args(passport)[0]
    passport["trainer_args"] = {**fp16, "fp16": False}  # float32 on a GPU: not what the run chooses
    passed, said = check_trainer_args(passport)
    assert not passed and "fp16: found False, expected True" in said
    passport["device"] = "cpu"  # a GPU's config claimed for a CPU run
    passed, said = check_trainer_args(passport)
    assert not passed and "use_cpu: found False, expected True" in said


def test_the_generation_batch_follows_the_processes(templates):
    passport = _load(templates["grpo"])
    passport["processes"] = {"num_processes": 2, "distributed_type": "DistributedType.MULTI_CPU"}
    passed, said = check_trainer_args(passport)
    single = passport["trainer_args"]["generation_batch_size"]
    assert not passed and f"generation_batch_size: found {single}, expected {2 * single}" in said
    passport["trainer_args"]["generation_batch_size"] = 2 * single
    assert check_trainer_args(passport)[0]


def test_another_trl_release_compares_only_what_the_kit_sets(templates):
    passport = _load(templates["grpo"])
    passport["versions"]["trl"] = "1.9.2"  # the notebook's pin: its defaults are not the grader's
    passport["trainer_args"]["router_aux_loss_coef"] = 0.001  # trl 1.9.2 / transformers 5.14.1's default
    passed, said = check_trainer_args(passport)
    assert passed and "trl 1.9.2 / transformers" in said and "only the" in said, said
    passport["trainer_args"]["learning_rate"] = 0.1
    passport["trainer_args"]["save_strategy"] = "steps"
    passed, said = check_trainer_args(passport)
    assert not passed and "learning_rate: found 0.1, expected 0.005" in said and "save_strategy" in said


# ----------------------------------------------------------------------------- wrong kinds: never a crash
WRONG = [None, "x", [], [1, 2], 3, True, {"a": None}]


@pytest.mark.parametrize("field", ["versions", "trainer_args", "wall_time_s", "seeds", "log_history", "device",
                                   "overrides", "processes", "algorithm"])
@pytest.mark.parametrize("value", WRONG, ids=[repr(value) for value in WRONG])
def test_a_field_of_the_wrong_kind_fails_its_check_never_raises(templates, field, value):
    passport = _load(templates["grpo"])
    passport[field] = copy.deepcopy(value)
    claims = _claims(passport)
    assert set(claims) == set(CLAIM_NAMES)
    touched = {"versions": "claims.versions", "trainer_args": "claims.trainer_args", "wall_time_s": "claims.wall_time",
               "seeds": "claims.trainer_args", "log_history": "claims.wall_time"}
    if field in touched:
        points, said = claims[touched[field]]
        assert points == 0 and (field in said or "train_runtime" in said), said
    _claims(passport, "ru")


@pytest.mark.parametrize("path, value", [("versions.trl", None), ("versions.trl", 3), ("versions.trl", ["1.16"]),
                                         ("wall_time_s.train", "1.5"), ("wall_time_s.train", None),
                                         ("wall_time_s.total", [2.5]), ("trainer_args.weight_decay", [0.0]),
                                         ("trainer_args.chat_template_kwargs", "off"), ("seeds.seed", "42")])
def test_a_nested_field_of_the_wrong_kind_fails_and_the_grade_does_not_crash(templates, stubbed, tmp_path, path,
                                                                             value):
    passport = _load(templates["grpo"])
    _set(path, value)(passport)
    points = {name: points for name, (points, _) in _claims(passport).items()}
    assert points[{"versions": "claims.versions", "wall_time_s": "claims.wall_time"}.get(
        path.split(".")[0], "claims.trainer_args")] == 0
    report = _grade(_tampered(templates, tmp_path, _set(path, value)))  # never raises
    lost = _lost(report)
    if "passport.passport" in lost:  # the structure check calls it malformed: unusable, the claims not checked
        assert set(CLAIM_NAMES) <= set(lost) and "unusable" in lost["claims.versions"]
    else:
        assert set(lost) - {"passport.trainer_args"} == {"claims.trainer_args"}, lost  # a prescribed key: both
        assert path.split(".")[1] in lost["claims.trainer_args"]


def test_an_unusable_passport_scores_the_claims_zero_saying_why(templates, stubbed, tmp_path):
    run_dir = _tampered(templates, tmp_path, _set("log_history", [None, None]))
    graded = _by_name(_grade(run_dir))
    assert all(graded[name]["points"] == 0 and "unusable" in graded[name]["message"] for name in CLAIM_NAMES)
    assert [name for name in graded if name.startswith("claims.")] == list(CLAIM_NAMES)


def test_the_wall_time_alone(templates):
    passport = _load(templates["grpo"])
    assert check_wall_time(passport)[0]
    passport["wall_time_s"]["train"] = 1.5 * 1.5 + 10.0  # the upper edge, kept
    passport["wall_time_s"]["total"] = 20.0
    assert check_wall_time(passport)[0]
    passport["log_history"][-1]["train_runtime"] = None  # write_passport's NaN
    passed, said = check_wall_time(passport)
    assert not passed and "no train_runtime" in said
