"""The capstone grader: checks a run passport (RUN_DIR/passport.json) against the kit's profiles.

    report = check_passport("runs/grpo", language="ru")    # {"score", "max_score", "passed", "checks": [...]}

Every check is worth one point and says what it expected and what it found,
in the language asked for (the texts: :mod:`graders.capstone.run.texts`;
check names are ids, the same in every language). A missing or garbled
passport never raises: it is a report in which every check failed, with the
reason. A malformed passport (a field of the wrong JSON kind, NaN outside the
metrics, nesting past ``MAX_DEPTH``, ...: :func:`graders.capstone.run.passport_check.passport_problems`,
the one structure check ``rl4llm capstone grade`` relies on too) fails the
"passport" check, naming each field and its problem, and every other check is
not run. Imports no ML library (fast, runs anywhere) and nothing of the
reference solutions: the learner bundle's ``rl4llm capstone check`` runs it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from graders.capstone.run.data import TINY_ROWS, canonical_hash
from graders.capstone.run.passport import CURVE_KEYS, FIGURE_NAME, LIBRARIES, PASSPORT_NAME
from graders.capstone.run.passport_check import describe_problems, passport_problems, read_passport
from graders.capstone.run.profiles import (ALGORITHMS, PASSPORT_SCHEMA, PROFILE_NAMES, PROFILES, VERIFIER_VERSION)
from graders.capstone.run.texts import text

REPORT_NAME = "capstone_report.json"
REQUIRED_FIELDS = ("schema", "algorithm", "profile", "seeds", "versions", "model", "trainer_class",
                   "trainer_args", "lora", "verifier", "data", "metrics", "reward_curve", "wall_time_s")
METRIC_KEYS = {"grpo": ("greedy_accuracy",), "dpo": ("pair_accuracy", "mean_margin")}
# DPO trains with the learner's loss: TRL's DPOTrainer with compute_loss replaced (graders/capstone/run/learner_loss.py)
TRAINER_CLASSES = {"grpo": "GRPOTrainer", "dpo": "LearnerLossDPOTrainer"}
SHA256 = re.compile(r"[0-9a-f]{64}")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class GradeCheck:
    """One part of the grade: points earned of ``max_points``, and what was expected and found."""

    name: str
    points: float
    max_points: float
    message: str


def kit_verifier_version() -> str:
    """The VERIFIER_VERSION a GRPO run's reward must report (the installed kit's profiles)."""
    return VERIFIER_VERSION


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _same(found, expected) -> bool:
    if isinstance(expected, float) and _finite(found):
        return math.isclose(found, expected, rel_tol=1e-9, abs_tol=1e-12)
    return found == expected


# Each check: (passport, run dir, language) -> (passed, text key, values); only a list of differences
# is written in ``language`` by the check itself. ``profile`` is known once "fields" passed.
def _check_fields(passport: dict, run_dir: Path, language: str):
    missing = [name for name in REQUIRED_FIELDS if name not in passport]
    if missing:
        return False, "passport_fields_missing", {"fields": ", ".join(missing)}
    if passport["schema"] != PASSPORT_SCHEMA:
        return False, "passport_schema", {"found": passport["schema"], "expected": PASSPORT_SCHEMA}
    if passport["algorithm"] not in ALGORITHMS or passport["profile"] not in PROFILE_NAMES:
        return False, "passport_unknown_profile", {"algorithm": passport["algorithm"], "profile": passport["profile"],
                                                   "algorithms": ALGORITHMS, "profiles": PROFILE_NAMES}
    return True, "passport_fields_ok", {"count": len(REQUIRED_FIELDS), "algorithm": passport["algorithm"],
                                        "profile": passport["profile"]}


def _check_versions(passport: dict, run_dir: Path, language: str):
    versions = passport["versions"]
    bad = [name for name in ("python", *LIBRARIES)
           if not isinstance(versions.get(name), str) or versions.get(name) in ("", "not installed")]
    if bad:
        return False, "passport_versions_missing", {"names": ", ".join(bad)}
    return True, "passport_versions_ok", {"versions": ", ".join(f"{name} {versions[name]}"
                                                                for name in ("python", *LIBRARIES))}


def _check_seeds(passport: dict, run_dir: Path, language: str):
    seed = passport["seeds"].get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return False, "passport_seed_type", {"found": seed}
    if passport["trainer_args"].get("seed") != seed:
        return False, "passport_seed_differs", {"found": passport["trainer_args"].get("seed"), "seed": seed}
    return True, "passport_seed_ok", {"seed": seed}


def _check_verifier(passport: dict, run_dir: Path, language: str):
    """GRPO: the verifier that gave the reward (its version and hash); DPO: the learner's loss file (its hash)."""
    if passport["algorithm"] == "dpo":
        loss = passport.get("loss")
        if not isinstance(loss, dict) or not isinstance(loss.get("sha256"), str) or not SHA256.fullmatch(loss["sha256"]):
            return False, "passport_loss_shape", {"found": loss}
        return True, "passport_loss_ok", {"sha": loss["sha256"][:12], "path": loss.get("path")}
    verifier = passport["verifier"]
    if not isinstance(verifier, dict):
        return False, "passport_verifier_shape", {"found": verifier}
    expected = kit_verifier_version()
    if verifier.get("version") != expected:
        return False, "passport_verifier_version", {"found": verifier.get("version"), "expected": expected}
    if not isinstance(verifier.get("sha256"), str) or not SHA256.fullmatch(verifier["sha256"]):
        return False, "passport_verifier_sha", {"found": verifier.get("sha256")}
    return True, "passport_verifier_ok", {"version": expected, "sha": verifier["sha256"][:12],
                                          "path": verifier.get("path")}


def _check_data(passport: dict, run_dir: Path, language: str):
    profile = PROFILES[(passport["algorithm"], passport["profile"])]
    data = passport["data"]
    if data.get("dataset") != profile.data.dataset or data.get("train_split") != profile.data.train_split:
        return False, "passport_data_set", {"dataset": data.get("dataset"), "split": data.get("train_split"),
                                            "expected": profile.data.dataset,
                                            "expected_split": profile.data.train_split}
    for key in ("train_sha256", "eval_sha256"):
        if not isinstance(data.get(key), str) or not SHA256.fullmatch(data[key]):
            return False, "passport_data_hash_shape", {"key": key, "found": data.get(key)}
    if profile.data.dataset in TINY_ROWS:
        train_rows, eval_rows = TINY_ROWS[profile.data.dataset]
        for key, rows in (("train_sha256", train_rows), ("eval_sha256", eval_rows)):
            expected = canonical_hash(rows())
            if data[key] != expected:
                return False, "passport_data_hash_other", {"key": key, "found": data[key][:12],
                                                           "dataset": profile.data.dataset, "expected": expected[:12]}
        return True, "passport_data_tiny_ok", {"dataset": profile.data.dataset}
    return True, "passport_data_ok", {"dataset": profile.data.dataset, "split": profile.data.train_split,
                                      "sha": data["train_sha256"][:12]}


def _differences(found: dict, prescribed: dict, language: str, missing=None) -> list[str]:
    """One "key=found (expected ...)" per prescribed setting ``found`` does not match."""
    return [text(language, "passport_expected_item", key=key, found=found.get(key, missing), expected=expected)
            for key, expected in prescribed.items() if not _same(found.get(key), expected)]


def _check_trainer_args(passport: dict, run_dir: Path, language: str):
    algorithm, profile = passport["algorithm"], PROFILES[(passport["algorithm"], passport["profile"])]
    if passport["trainer_class"] != TRAINER_CLASSES[algorithm]:
        return False, "passport_trainer_class", {"found": passport["trainer_class"],
                                                 "expected": TRAINER_CLASSES[algorithm]}
    wrong = _differences(passport["trainer_args"], profile.trainer_settings, language, missing="<missing>")
    if wrong:
        return False, "passport_trainer_args_differ", {"differences": "; ".join(wrong)}
    return True, "passport_trainer_args_ok", {"count": len(profile.trainer_settings),
                                              "trainer": TRAINER_CLASSES[algorithm]}


def _check_lora(passport: dict, run_dir: Path, language: str):
    profile, lora = PROFILES[(passport["algorithm"], passport["profile"])], passport["lora"]
    if lora.get("used") is not True:
        return False, "passport_lora_unused", {}
    wrong = _differences(lora, profile.lora, language)
    if wrong:
        return False, "passport_lora_differs", {"differences": "; ".join(wrong)}
    return True, "passport_lora_ok", {"r": lora["r"], "alpha": lora["lora_alpha"],
                                      "trainable": lora.get("trainable_parameters")}


def _check_metrics(passport: dict, run_dir: Path, language: str):
    metrics, keys = passport["metrics"], METRIC_KEYS[passport["algorithm"]]
    for when in ("before", "after"):
        found = metrics.get(when)
        if not isinstance(found, dict):
            return False, "passport_metrics_missing", {"when": when}
        bad = [key for key in keys if not _finite(found.get(key))]
        if bad:
            return False, "passport_metrics_not_finite", {"when": when, "keys": ", ".join(bad),
                                                          "found": [found.get(k) for k in bad]}
    summary = "; ".join(f"{key}: {metrics['before'][key]:.4g} -> {metrics['after'][key]:.4g}" for key in keys)
    return True, "passport_metrics_ok", {"summary": summary}


def _check_reward_curve(passport: dict, run_dir: Path, language: str):
    curve, key = passport["reward_curve"], CURVE_KEYS[passport["algorithm"]]
    steps, values = curve.get("steps"), curve.get("values")
    if curve.get("metric") != key:
        return False, "passport_curve_metric", {"found": curve.get("metric"), "expected": key}
    if not isinstance(steps, list) or not isinstance(values, list) or len(steps) != len(values) or not values:
        return False, "passport_curve_empty", {}
    if not all(_finite(value) for value in values):
        return False, "passport_curve_not_finite", {"values": values}
    return True, "passport_curve_ok", {"count": len(values), "key": key, "last": values[-1], "step": steps[-1]}


def _check_wall_time(passport: dict, run_dir: Path, language: str):
    total = passport["wall_time_s"].get("total")
    if not _finite(total) or total <= 0:
        return False, "passport_wall_time_bad", {"found": total}
    return True, "passport_wall_time_ok", {"total": total}


def _check_figure(passport: dict, run_dir: Path, language: str):
    path = run_dir / FIGURE_NAME
    if not path.is_file():
        return False, "passport_figure_missing", {"name": FIGURE_NAME}
    with path.open("rb") as handle:
        signature = handle.read(len(PNG_SIGNATURE))
    if signature != PNG_SIGNATURE:
        return False, "passport_figure_not_png", {"name": FIGURE_NAME}
    return True, "passport_figure_ok", {"name": FIGURE_NAME, "size": path.stat().st_size}


CHECKS = (("fields", _check_fields), ("versions", _check_versions), ("seeds", _check_seeds),
          ("verifier", _check_verifier), ("data", _check_data), ("trainer_args", _check_trainer_args),
          ("lora", _check_lora), ("metrics", _check_metrics), ("reward_curve", _check_reward_curve),
          ("wall_time", _check_wall_time), ("figure", _check_figure))


def check_passport(run_dir, language: str = "en") -> dict:
    """Grade RUN_DIR: {"run_dir", "score", "max_score", "passed", "checks": [{name, passed, message}]},
    the messages in ``language``. The "passport" check fails for a passport that cannot be read or is
    malformed (every problem named); then no other check runs."""
    run_dir = Path(run_dir)
    passport, key, values = read_passport(run_dir / PASSPORT_NAME)
    message = unusable = text(language, key, **values)  # unusable: why the other checks do not run
    if passport is not None:
        problems = passport_problems(passport)
        if problems:
            message = text(language, "passport_malformed_fields", name=PASSPORT_NAME,
                           problems=describe_problems(problems, language))
            unusable = text(language, "passport_is_malformed", name=PASSPORT_NAME)
            passport = None
    checks = [{"name": "passport", "passed": passport is not None, "message": message}]
    usable = passport is not None
    for name, check in CHECKS:
        if not usable:
            reason = unusable if passport is None else text(language, "passport_fields_unusable")
            passed, said = False, text(language, "passport_not_checked", reason=reason)
        else:
            try:
                passed, key, values = check(passport, run_dir, language)
                said = text(language, key, **values)
            except (AttributeError, KeyError, TypeError, ValueError, ArithmeticError) as error:  # kept, in case
                passed, said = False, text(language, "passport_malformed", error=f"{type(error).__name__}: {error}")
        checks.append({"name": name, "passed": bool(passed), "message": said})
        if name == "fields" and not passed:
            usable = False  # without the fields (and a known profile) the other checks have nothing to read
    score = sum(check["passed"] for check in checks)
    return {"run_dir": str(run_dir), "score": score, "max_score": len(checks),
            "passed": score == len(checks), "checks": checks}


def format_report(report: dict, language: str = "en") -> str:
    """The report as lines a student reads: one per check (its name, an id, then the verdict and the
    message, as ``check_passport`` wrote it), then the score."""
    lines = [text(language, "check_title", run_dir=report["run_dir"])]
    lines += [f"  [{text(language, 'check_pass' if c['passed'] else 'check_fail')}] {c['name']}: {c['message']}"
              for c in report["checks"]]
    lines.append(text(language, "check_score", score=report["score"], max_score=report["max_score"]))
    return "\n".join(lines) + "\n"


def write_report(run_dir, report: dict) -> Path:
    path = Path(run_dir) / REPORT_NAME
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path
