"""The capstone grader: checks a run passport (RUN_DIR/passport.json) against the kit's profiles.

    report = check_passport("runs/grpo")    # {"score", "max_score", "passed", "checks": [...]}

Every check is worth one point and says what it expected and what it found.
A missing or garbled passport never raises: it is a report in which every
check failed, with the reason. Imports no ML library (fast, runs anywhere).
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from graders.paths import SOLUTIONS_DIR
from solutions.capstone.data import TINY_ROWS, canonical_hash
from solutions.capstone.passport import CURVE_KEYS, FIGURE_NAME, LIBRARIES, PASSPORT_NAME
from solutions.capstone.profiles import ALGORITHMS, PASSPORT_SCHEMA, PROFILE_NAMES, PROFILES

REPORT_NAME = "capstone_report.json"
KIT_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
REQUIRED_FIELDS = ("schema", "algorithm", "profile", "seeds", "versions", "model", "trainer_class",
                   "trainer_args", "lora", "verifier", "data", "metrics", "reward_curve", "wall_time_s")
METRIC_KEYS = {"grpo": ("greedy_accuracy",), "dpo": ("pair_accuracy", "mean_margin")}
TRAINER_CLASSES = {"grpo": "GRPOTrainer", "dpo": "DPOTrainer"}
SHA256 = re.compile(r"[0-9a-f]{64}")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class GradeCheck:
    """One part of the grade: points earned of ``max_points``, and what was expected and found."""

    name: str
    points: float
    max_points: float
    message: str


def kit_verifier_version(path: Path = KIT_VERIFIER) -> str:
    """VERIFIER_VERSION of the kit's reference verifier, read without importing the file."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VERIFIER_VERSION" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(f"{path} defines no VERIFIER_VERSION")


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _same(found, expected) -> bool:
    if isinstance(expected, float) and _finite(found):
        return math.isclose(found, expected, rel_tol=1e-9, abs_tol=1e-12)
    return found == expected


# Each check: passport -> (passed, message). ``profile`` is known once "fields" passed.
def _check_fields(passport: dict, run_dir: Path):
    missing = [name for name in REQUIRED_FIELDS if name not in passport]
    if missing:
        return False, f"missing field(s): {', '.join(missing)}"
    if passport["schema"] != PASSPORT_SCHEMA:
        return False, f"schema is {passport['schema']!r}, expected {PASSPORT_SCHEMA!r}"
    if passport["algorithm"] not in ALGORITHMS or passport["profile"] not in PROFILE_NAMES:
        return False, (f"algorithm/profile {passport['algorithm']!r}/{passport['profile']!r} is not one of "
                       f"{ALGORITHMS} x {PROFILE_NAMES}")
    return True, f"all {len(REQUIRED_FIELDS)} fields present ({passport['algorithm']}, {passport['profile']})"


def _check_versions(passport: dict, run_dir: Path):
    versions = passport["versions"]
    bad = [name for name in ("python", *LIBRARIES)
           if not isinstance(versions.get(name), str) or versions.get(name) in ("", "not installed")]
    if bad:
        return False, f"library version(s) not recorded: {', '.join(bad)}"
    return True, ", ".join(f"{name} {versions[name]}" for name in ("python", *LIBRARIES))


def _check_seeds(passport: dict, run_dir: Path):
    seed = passport["seeds"].get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return False, f"seeds.seed must be an integer, found {seed!r}"
    if passport["trainer_args"].get("seed") != seed:
        return False, f"trainer_args.seed is {passport['trainer_args'].get('seed')!r} but seeds.seed is {seed}"
    return True, f"seed {seed} recorded and used by the trainer"


def _check_verifier(passport: dict, run_dir: Path):
    if passport["algorithm"] == "dpo":
        return True, "not applicable: DPO trains on preference pairs, no verifier"
    verifier = passport["verifier"]
    if not isinstance(verifier, dict):
        return False, f"verifier must be an object with path, version and sha256, found {verifier!r}"
    expected = kit_verifier_version()
    if verifier.get("version") != expected:
        return False, (f"verifier version is {verifier.get('version')!r}, the kit's VERIFIER_VERSION is "
                       f"{expected!r}: the reward came from a different verifier")
    if not isinstance(verifier.get("sha256"), str) or not SHA256.fullmatch(verifier["sha256"]):
        return False, f"verifier sha256 is not recorded as 64 hex digits: {verifier.get('sha256')!r}"
    return True, f"verifier {expected} ({verifier['sha256'][:12]}..., {verifier.get('path')})"


def _check_data(passport: dict, run_dir: Path):
    profile = PROFILES[(passport["algorithm"], passport["profile"])]
    data = passport["data"]
    if data.get("dataset") != profile.data.dataset or data.get("train_split") != profile.data.train_split:
        return False, (f"data set {data.get('dataset')!r} [{data.get('train_split')!r}], the profile prescribes "
                       f"{profile.data.dataset!r} [{profile.data.train_split!r}]")
    for key in ("train_sha256", "eval_sha256"):
        if not isinstance(data.get(key), str) or not SHA256.fullmatch(data[key]):
            return False, f"data.{key} is not a sha256 (64 hex digits): {data.get(key)!r}"
    if profile.data.dataset in TINY_ROWS:
        train_rows, eval_rows = TINY_ROWS[profile.data.dataset]
        for key, rows in (("train_sha256", train_rows), ("eval_sha256", eval_rows)):
            expected = canonical_hash(rows())
            if data[key] != expected:
                return False, (f"data.{key} is {data[key][:12]}..., the kit's {profile.data.dataset} hashes to "
                               f"{expected[:12]}...: the run trained or evaluated on other rows")
        return True, f"{profile.data.dataset}: train and eval hashes match the kit's rows"
    return True, f"{profile.data.dataset} [{profile.data.train_split}]: hash {data['train_sha256'][:12]}... recorded"


def _check_trainer_args(passport: dict, run_dir: Path):
    algorithm, profile = passport["algorithm"], PROFILES[(passport["algorithm"], passport["profile"])]
    if passport["trainer_class"] != TRAINER_CLASSES[algorithm]:
        return False, f"trainer is {passport['trainer_class']!r}, expected {TRAINER_CLASSES[algorithm]}"
    args = passport["trainer_args"]
    wrong = [f"{key}={args.get(key, '<missing>')!r} (expected {expected!r})"
             for key, expected in profile.trainer_settings.items() if not _same(args.get(key), expected)]
    if wrong:
        return False, "trainer arguments differ from the profile: " + "; ".join(wrong)
    return True, f"{len(profile.trainer_settings)} prescribed {TRAINER_CLASSES[algorithm]} settings match"


def _check_lora(passport: dict, run_dir: Path):
    profile, lora = PROFILES[(passport["algorithm"], passport["profile"])], passport["lora"]
    if lora.get("used") is not True:
        return False, "the trained model was not a PEFT LoRA model (lora.used is not true)"
    wrong = [f"{key}={lora.get(key)!r} (expected {expected!r})"
             for key, expected in profile.lora.items() if not _same(lora.get(key), expected)]
    if wrong:
        return False, "LoRA settings differ from the profile: " + "; ".join(wrong)
    return True, f"LoRA r={lora['r']}, alpha={lora['lora_alpha']}, {lora.get('trainable_parameters')} trainable"


def _check_metrics(passport: dict, run_dir: Path):
    metrics, keys = passport["metrics"], METRIC_KEYS[passport["algorithm"]]
    for when in ("before", "after"):
        found = metrics.get(when)
        if not isinstance(found, dict):
            return False, f"metrics.{when} is missing"
        bad = [key for key in keys if not _finite(found.get(key))]
        if bad:
            return False, f"metrics.{when} lacks a finite {', '.join(bad)} (found {[found.get(k) for k in bad]})"
    return True, "; ".join(f"{key}: {metrics['before'][key]:.4g} -> {metrics['after'][key]:.4g}" for key in keys)


def _check_reward_curve(passport: dict, run_dir: Path):
    curve, key = passport["reward_curve"], CURVE_KEYS[passport["algorithm"]]
    steps, values = curve.get("steps"), curve.get("values")
    if curve.get("metric") != key:
        return False, f"reward curve plots {curve.get('metric')!r}, expected {key!r}"
    if not isinstance(steps, list) or not isinstance(values, list) or len(steps) != len(values) or not values:
        return False, "the reward curve needs at least one (step, value) point"
    if not all(_finite(value) for value in values):
        return False, f"the reward curve has non-finite values: {values}"
    return True, f"{len(values)} point(s) of {key}, last {values[-1]:.4g} at step {steps[-1]}"


def _check_wall_time(passport: dict, run_dir: Path):
    total = passport["wall_time_s"].get("total")
    if not _finite(total) or total <= 0:
        return False, f"wall_time_s.total must be a positive number of seconds, found {total!r}"
    return True, f"{total:.1f} s"


def _check_figure(passport: dict, run_dir: Path):
    path = run_dir / FIGURE_NAME
    if not path.is_file():
        return False, f"{FIGURE_NAME} is missing from the run folder"
    if path.read_bytes()[:8] != PNG_SIGNATURE:
        return False, f"{FIGURE_NAME} is not a PNG file"
    return True, f"{FIGURE_NAME} ({path.stat().st_size} bytes)"


CHECKS = (("fields", _check_fields), ("versions", _check_versions), ("seeds", _check_seeds),
          ("verifier", _check_verifier), ("data", _check_data), ("trainer_args", _check_trainer_args),
          ("lora", _check_lora), ("metrics", _check_metrics), ("reward_curve", _check_reward_curve),
          ("wall_time", _check_wall_time), ("figure", _check_figure))


def _read_passport(run_dir: Path) -> tuple[dict | None, str]:
    path = run_dir / PASSPORT_NAME
    if not path.is_file():
        return None, f"no {PASSPORT_NAME} in {run_dir}"
    try:
        passport = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, f"{PASSPORT_NAME} is not valid JSON: {error}"
    if not isinstance(passport, dict):
        return None, f"{PASSPORT_NAME} must hold a JSON object, found {type(passport).__name__}"
    return passport, f"{PASSPORT_NAME} parsed"


def check_passport(run_dir) -> dict:
    """Grade RUN_DIR: {"run_dir", "score", "max_score", "passed", "checks": [{name, passed, message}]}."""
    run_dir = Path(run_dir)
    passport, message = _read_passport(run_dir)
    checks = [{"name": "passport", "passed": passport is not None, "message": message}]
    usable = passport is not None
    for name, check in CHECKS:
        if not usable:
            passed, text = False, "not checked: " + (message if passport is None else "required fields are missing")
        else:
            try:
                passed, text = check(passport, run_dir)
            except (AttributeError, KeyError, TypeError, ValueError) as error:  # a field of the wrong shape
                passed, text = False, f"could not check: malformed passport ({type(error).__name__}: {error})"
        checks.append({"name": name, "passed": bool(passed), "message": text})
        if name == "fields" and not passed:
            usable = False  # without the fields (and a known profile) the other checks have nothing to read
    score = sum(check["passed"] for check in checks)
    return {"run_dir": str(run_dir), "score": score, "max_score": len(checks),
            "passed": score == len(checks), "checks": checks}


def format_report(report: dict, language: str = "en") -> str:
    """The report as lines a student reads: one per check, then the score (title and score in ``language``;
    check names, PASS/FAIL and the checks' messages are the same in every language)."""
    from solutions.capstone.texts import text

    lines = [text(language, "check_title", run_dir=report["run_dir"])]
    lines += [f"  [{'PASS' if c['passed'] else 'FAIL'}] {c['name']}: {c['message']}" for c in report["checks"]]
    lines.append(text(language, "check_score", score=report["score"], max_score=report["max_score"]))
    return "\n".join(lines) + "\n"


def write_report(run_dir, report: dict) -> Path:
    path = Path(run_dir) / REPORT_NAME
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path
