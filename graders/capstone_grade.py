"""``rl4llm capstone grade SUBMISSION``: a capstone submission graded by what the grader measures itself.

A submission is a folder (or a .zip of one) holding the run folder that
``rl4llm capstone run --out DIR`` wrote, plus the student's verifier::

    SUBMISSION/
      passport.json                 the run's claim (solutions/capstone/passport.py)
      adapter/                      adapter_config.json + adapter_model.safetensors (PEFT)
      reward_curve.png, training_curves.png, accuracy_before_after.png
      module_9_reference.py         the verifier the run used as its reward (GRPO)

Every expectation comes from the installed kit (``solutions.capstone.profiles``,
the kit's own verifier), never from the submission. The parts, in points:

- ``verifier`` (the engine's points of ``verify_numeric_answer``): the student's
  file graded by the engine's hidden checks in its sandboxed workers
  (:func:`graders.engine.batch.grade_sources`); a constant or absent verifier
  scores 0 here.
- the passport checks of :func:`graders.capstone.check_passport` (1 point each);
- ``consistency``: the passport's curve is its own log history's, the log
  reaches the profile's ``max_steps``, no dry-run overrides, the device is the
  profile's (tiny: CPU; smoke/full: CUDA), the verifier file hashes to the
  passport's sha256, the adapter files hash to the passport's;
- ``figures``: every figure decodes as a PNG of at least 200 x 150 pixels;
- ``reevaluation`` and ``improvement`` (:mod:`graders.capstone_reeval`): the
  grader measures the base model and the base model with the submitted
  adapter itself; the claim must equal the measurement, and the measured gain
  must reach the profile's minimum.

The grade is the sum; the passport's numbers count only through the checks
that compare them with what was measured.
"""

from __future__ import annotations

import json
import struct
import tempfile
import zipfile
from dataclasses import asdict
from pathlib import Path

from graders.capstone import GradeCheck, check_passport
from graders.capstone_reeval import ADAPTER_FILES, check_reevaluation, reevaluate
from solutions.capstone.passport import (ACCURACY_FIGURE_NAME, CURVES_FIGURE_NAME, FIGURE_NAME, PASSPORT_NAME,
                                         reward_curve)
from solutions.capstone.models import sha256_file
from solutions.capstone.profiles import PROFILES

VERIFIER_FILE = "module_9_reference.py"
VERIFIER_EXERCISE = "module_9_reference.verify_numeric_answer"
FIGURES = (FIGURE_NAME, CURVES_FIGURE_NAME, ACCURACY_FIGURE_NAME)
MIN_FIGURE_SIZE = (200, 150)  # width, height in pixels
REPORT_NAME = "capstone_grade.json"


# ----------------------------------------------------------------------------- the verifier, by the engine
def grade_verifiers(sources: dict[str, str | None]) -> dict[str, GradeCheck]:
    """{name: the "verifier" check} for many verifier files at once (one engine batch, sandboxed workers).

    ``sources[name]`` is the text of a student's module_9_reference.py, or None when the submission has none.
    """
    from graders.engine.batch import grade_sources
    from graders.engine.grading import GradeOptions

    present = {name: {VERIFIER_FILE: text} for name, text in sources.items() if text is not None}
    reports = grade_sources(present, GradeOptions(modules=("9",)), jobs=2) if present else {}
    checks = {}
    for name in sources:
        entry = next((e for e in reports.get(name, {}).get("exercises", []) if e["id"] == VERIFIER_EXERCISE), None)
        if entry is None:
            checks[name] = GradeCheck("verifier", 0.0, _verifier_points(), f"no {VERIFIER_FILE} in the submission")
            continue
        feedback = " ".join(entry["feedback"].split())[:300]
        checks[name] = GradeCheck("verifier", float(entry["points"]), float(entry["max_points"]),
                                  f"{VERIFIER_EXERCISE}: {entry['status']} ({entry['points']}/{entry['max_points']})"
                                  + (f": {feedback}" if entry["status"] != "passed" else ""))
    return checks


def _verifier_points() -> float:
    from graders.checks import spec_for

    return float(spec_for(VERIFIER_EXERCISE).points)


# ----------------------------------------------------------------------------- the passport against itself
def check_consistency(passport: dict, submission: Path) -> GradeCheck:
    """Curve vs log history, steps vs max_steps, overrides, device vs profile, recomputed hashes."""
    problems = []
    algorithm, profile_name = passport.get("algorithm"), passport.get("profile")
    profile = PROFILES.get((algorithm, profile_name))
    if profile is None:
        return GradeCheck("consistency", 0.0, 1.0, f"unknown algorithm/profile {algorithm!r}/{profile_name!r}")
    history = passport.get("log_history") or []
    if not history:
        problems.append("log_history is empty")
    elif passport.get("reward_curve") != reward_curve(history, algorithm):
        problems.append("reward_curve is not the curve of its own log_history")
    steps = max((int(e.get("step", 0)) for e in history if isinstance(e, dict)), default=0)
    if steps != profile.trainer_settings["max_steps"]:
        problems.append(f"the log reaches step {steps}, the profile trains {profile.trainer_settings['max_steps']}")
    if passport.get("overrides"):
        problems.append(f"a dry run (overrides {passport['overrides']})")
    device = str(passport.get("device", ""))
    wanted = "cpu" if not profile.needs_gpu else "cuda"
    if not device.startswith(wanted):
        problems.append(f"device {device!r}, profile {profile_name!r} runs on {wanted}")
    if algorithm == "grpo":
        verifier = submission / VERIFIER_FILE
        recorded = (passport.get("verifier") or {}).get("sha256")
        if not verifier.is_file() or sha256_file(verifier) != recorded:
            problems.append(f"{VERIFIER_FILE} does not hash to the passport's verifier sha256")
    recorded_files = (passport.get("adapter") or {}).get("files") or {}
    adapter = submission / "adapter"
    for name in ADAPTER_FILES:
        path = adapter / name
        if not path.is_file() or recorded_files.get(name) != sha256_file(path):
            problems.append(f"adapter/{name} is missing or does not hash to the passport's")
    if problems:
        return GradeCheck("consistency", 0.0, 1.0, "; ".join(problems))
    return GradeCheck("consistency", 1.0, 1.0, f"{steps} logged steps, curve, device and hashes agree")


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of a PNG whose header and image data decode (matplotlib reads it), else None."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 33 or data[12:16] != b"IHDR":
        return None
    try:
        import matplotlib.image

        image = matplotlib.image.imread(path, format="png")
    except Exception:  # noqa: BLE001 - any decoding failure means "not a PNG figure"
        return None
    width, height = struct.unpack(">II", data[16:24])
    return (width, height) if image.shape[:2] == (height, width) else None


def check_figures(submission: Path) -> GradeCheck:
    """Every figure of FIGURES is a decodable PNG of at least MIN_FIGURE_SIZE."""
    problems = []
    for name in FIGURES:
        path = submission / name
        size = png_size(path) if path.is_file() else None
        if size is None:
            problems.append(f"{name} is missing or not a PNG image")
        elif size[0] < MIN_FIGURE_SIZE[0] or size[1] < MIN_FIGURE_SIZE[1]:
            problems.append(f"{name} is {size[0]}x{size[1]} pixels, at least {MIN_FIGURE_SIZE} expected")
    if problems:
        return GradeCheck("figures", 0.0, 1.0, "; ".join(problems))
    return GradeCheck("figures", 1.0, 1.0, f"{len(FIGURES)} figures decode as PNG")


# ----------------------------------------------------------------------------- the whole submission
def _unpacked(submission: Path, temp: Path) -> Path:
    """The submission folder: ``submission`` itself, or a .zip extracted (no path escapes) into ``temp``."""
    if submission.is_dir():
        root = submission
    else:
        with zipfile.ZipFile(submission) as archive:
            for member in archive.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise ValueError(f"{submission} has an entry outside the archive: {member!r}")
            archive.extractall(temp)
        root = temp
    passports = sorted(root.rglob(PASSPORT_NAME))
    return passports[0].parent if passports else root


def grade_submission(submission, model: str | None = None, data_dir=None, language: str = "en",
                     verifier_check: GradeCheck | None = None) -> dict:
    """The grade of one submission: {"submission", "score", "max_score", "checks": [GradeCheck as dict]}.

    ``verifier_check`` lets a batch pass the engine's verdict computed for many submissions at once
    (:func:`grade_verifiers`). Never raises for a submission's fault: a part that cannot be checked scores 0.
    """
    submission = Path(submission)
    with tempfile.TemporaryDirectory(prefix="rl4llm-capstone-") as temp:
        root = _unpacked(submission, Path(temp))
        verifier_path = root / VERIFIER_FILE
        if verifier_check is None:
            text = verifier_path.read_text(encoding="utf-8", errors="replace") if verifier_path.is_file() else None
            verifier_check = grade_verifiers({"submission": text})["submission"]
        checks = [verifier_check]
        passport_report = check_passport(root)
        checks += [GradeCheck(f"passport.{c['name']}", float(c["passed"]), 1.0, c["message"])
                   for c in passport_report["checks"]]
        passport = _read(root / PASSPORT_NAME)
        if passport is None or not passport_report["checks"][1]["passed"]:  # no passport, or its fields are missing
            checks += [GradeCheck(name, 0.0, 1.0, "not checked: the passport is unusable")
                       for name in ("consistency", "figures", "reevaluation", "improvement")]
        else:
            consistency = check_consistency(passport, root)
            checks += [consistency, check_figures(root)]
            if not consistency.points:  # nothing to re-evaluate against: do not spend a GPU on it
                checks += [GradeCheck(name, 0.0, 1.0, "not measured: the passport is not consistent")
                           for name in ("reevaluation", "improvement")]
                return _total(submission, checks)
            try:
                checks += check_reevaluation(passport, reevaluate(passport, root, model, data_dir))
            except Exception as error:  # noqa: BLE001 - a broken adapter is the submission's fault
                checks += [GradeCheck("reevaluation", 0.0, 1.0, f"the adapter could not be re-evaluated: "
                                                                f"{type(error).__name__}: {error}"),
                           GradeCheck("improvement", 0.0, 1.0, "not measured")]
    return _total(submission, checks)


def _total(submission: Path, checks: list[GradeCheck]) -> dict:
    return {"submission": str(submission), "score": round(sum(check.points for check in checks), 4),
            "max_score": round(sum(check.max_points for check in checks), 4),
            "checks": [asdict(check) for check in checks]}


def _read(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def format_grade(report: dict, language: str = "en") -> str:
    """One line per check (points/max and message), then the score."""
    from solutions.capstone.texts import text

    lines = [text(language, "grade_title", submission=report["submission"])]
    for check in report["checks"]:
        lines.append(f"  [{check['points']:g}/{check['max_points']:g}] {check['name']}: {check['message']}")
    lines.append(text(language, "grade_score", score=f"{report['score']:g}", max_score=f"{report['max_score']:g}"))
    return "\n".join(lines) + "\n"


def write_grade(out_dir, report: dict) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / REPORT_NAME
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path
