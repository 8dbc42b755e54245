"""``rl4llm capstone grade SUBMISSION``: a capstone submission graded by what the grader measures itself.

A submission is a folder (or a .zip of one) holding the run folder that
``rl4llm capstone run --out DIR`` wrote, plus the student's verifier::

    SUBMISSION/
      passport.json                 the run's claim (graders/capstone/run/passport.py)
      adapter/                      adapter_config.json + adapter_model.safetensors (PEFT)
      reward_curve.png, training_curves.png, accuracy_before_after.png
      module_9_reference.py         the verifier the run used as its reward (GRPO)
      module_8_training.py          the loss the run trained with (DPO: sequence_logprobs, dpo_loss)

Every expectation comes from the installed kit (``graders.capstone.run.profiles``,
the kit's own verifier), never from the submission. The parts, in points:

- ``verifier`` (GRPO: the engine's points of ``verify_numeric_answer``) or ``loss``
  (DPO: of ``sequence_logprobs`` and ``dpo_loss``): the student's file graded by the
  engine's hidden checks in its sandboxed workers
  (:func:`graders.engine.routes.batch.grade_sources`); a constant or absent verifier, a
  sign-flipped or absent loss scores 0 here.
- the passport checks of :func:`graders.capstone.passport.check_passport` (1 point each);
- ``consistency``: the passport's curve is its own log history's, the log
  reaches the profile's ``max_steps``, no dry-run overrides, the device is the
  profile's (tiny: CPU; smoke/full: CUDA), the verifier (or loss) file hashes to the
  passport's sha256, the adapter files hash to the passport's;
- ``figures``: every figure decodes as a PNG of at least 200 x 150 pixels;
- ``claims.versions``, ``claims.trainer_args``, ``claims.wall_time`` (:mod:`graders.capstone.claims`): the
  self-reported fields against the installed kit's ranges and libraries, the grader's rebuild of the
  profile's config and the Trainer's own ``train_runtime`` (a consistent passport only);
- ``reevaluation`` and ``improvement`` (:mod:`graders.capstone.reeval`): the
  grader measures the base model and the base model with the submitted
  adapter itself; the claim must equal the measurement, and the measured gain
  must reach the profile's minimum.

The grade is the sum; the passport's numbers count only through the checks
that compare them with what was measured.

A folder or a .zip is read by the one reader (:mod:`graders.engine.intake.reader`: a link, a
special file or an unsafe name refuses it, files and bytes counted while reading) with
the capstone's caps (``CAPSTONE_CAPS``: ``ZIP_MAX_MEMBER_BYTES`` for an adapter,
``ZIP_MAX_TOTAL_BYTES``) and copied into a temporary folder that every check reads; a
refused submission is a report of zeros that says why.
The passport's structure is checked once, by :func:`graders.capstone.passport.check_passport`
(:func:`graders.capstone.run.passport_check.passport_problems`): a passport the check
calls malformed is unusable here too.
"""

from __future__ import annotations

import json
import struct
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

from graders.capstone.passport import CHECKS, GradeCheck, check_passport
from graders.capstone.claims import CLAIM_NAMES, check_claims, unchecked_claims
from graders.capstone.reeval import ADAPTER_FILES, check_reevaluation, reevaluate
from graders.capstone.run.passport import (ACCURACY_FIGURE_NAME, CURVES_FIGURE_NAME, FIGURE_NAME, PASSPORT_NAME,
                                         reward_curve)
from graders.capstone.run.learner_loss import LOSS_FILE
from graders.capstone.run.passport_check import read_passport, shown_value
from graders.capstone.run.models import sha256_file
from graders.capstone.run.profiles import PROFILES, CapstoneError
from graders.capstone.run.texts import text
from graders.engine.intake.reader import Caps

VERIFIER_FILE = "module_9_reference.py"
VERIFIER_EXERCISE = "module_9_reference.verify_numeric_answer"


class LearnerCode(NamedTuple):
    """The learner's code a run of one algorithm is built on, and how the grade finds and checks it."""

    check: str  # the grade check's name
    file: str  # the file the run used, beside the run folder
    module: str  # the engine's module of its exercises
    exercises: tuple[str, ...]  # the exercises graded
    passport_field: str  # the passport's entry recording the file's sha256
    hash_text: str  # the consistency problem when the file does not hash to it


LEARNER_CODE = {"grpo": LearnerCode("verifier", VERIFIER_FILE, "9", (VERIFIER_EXERCISE,), "verifier",
                                    "consistency_verifier_hash"),
                "dpo": LearnerCode("loss", LOSS_FILE, "8", ("module_8_training.sequence_logprobs",
                                                            "module_8_training.dpo_loss"), "loss",
                                   "consistency_loss_hash")}
FIGURES = (FIGURE_NAME, CURVES_FIGURE_NAME, ACCURACY_FIGURE_NAME)
MIN_FIGURE_SIZE = (200, 150)  # width, height in pixels
MAX_FIGURE_SIZE = (4096, 4096)  # the run's figures are 650-700 x 400-1100; larger is not decoded (memory)
# The capstone's zip caps (graders.engine.intake.submission.read_zip): a LoRA adapter of Qwen3-0.6B is ~5 MB in
# float32 (r=8 on PEFT's default targets), the figures and the passport under 1 MB.
ZIP_MAX_MEMBERS = 2000
ZIP_MAX_MEMBER_BYTES = 64 << 20
ZIP_MAX_TOTAL_BYTES = 256 << 20
CAPSTONE_CAPS = Caps(files=ZIP_MAX_MEMBERS, file_bytes=ZIP_MAX_MEMBER_BYTES, total_bytes=ZIP_MAX_TOTAL_BYTES)
REPORT_NAME = "capstone_grade.json"


# ----------------------------------------------------------------------------- the learner's code, by the engine
def grade_verifiers(sources: dict[str, str | None], language: str = "en") -> dict[str, GradeCheck]:
    """{name: the "verifier" check} for many GRPO verifier files at once (:func:`grade_learner_code`)."""
    return grade_learner_code(sources, "grpo", language)


def grade_learner_code(sources: dict[str, str | None], algorithm: str = "grpo",
                       language: str = "en") -> dict[str, GradeCheck]:
    """{name: the learner-code check} for many files at once (one engine batch, sandboxed workers).

    ``sources[name]`` is the text of a student's module_9_reference.py (GRPO: the "verifier" check) or
    module_8_training.py (DPO: the "loss" check, its sequence_logprobs and dpo_loss), or None when the
    submission has none. The messages (and the engine's feedback in them) are in ``language``.
    """
    from graders.engine.routes.batch import grade_sources
    from graders.engine.routes.grading import GradeOptions

    check, file, module, exercises = LEARNER_CODE[algorithm][:4]
    present = {name: {file: source} for name, source in sources.items() if source is not None}
    reports = grade_sources(present, GradeOptions(modules=(module,), lang=language), jobs=2) if present else {}
    checks = {}
    for name in sources:
        entries = {e["id"]: e for e in reports.get(name, {}).get("exercises", []) if e["id"] in exercises}
        if len(entries) != len(exercises):
            checks[name] = GradeCheck(check, 0.0, learner_code_points(algorithm),
                                      text(language, "grade_no_verifier", file=file))
            continue
        said = []
        for exercise in exercises:
            entry = entries[exercise]
            feedback = " ".join(entry["feedback"].split())[:300]
            said.append(text(language, "grade_verifier" if entry["status"] == "passed" else "grade_verifier_feedback",
                             exercise=exercise, status=entry["status"], points=entry["points"],
                             max_points=entry["max_points"], feedback=feedback))
        checks[name] = GradeCheck(check, float(sum(e["points"] for e in entries.values())),
                                  float(sum(e["max_points"] for e in entries.values())), "; ".join(said))
    return checks


def learner_code_points(algorithm: str = "grpo") -> float:
    """The engine's points of the exercises a run of ``algorithm`` is built on (GRPO 3, DPO 7)."""
    from graders.checks import spec_for

    return float(sum(spec_for(exercise).points for exercise in LEARNER_CODE[algorithm].exercises))


# ----------------------------------------------------------------------------- the passport against itself
def check_consistency(passport: dict, submission: Path, language: str = "en") -> GradeCheck:
    """Curve vs log history, steps vs max_steps, overrides, device vs profile, recomputed hashes."""
    problems = []
    algorithm, profile_name = passport.get("algorithm"), passport.get("profile")
    profile = PROFILES.get((algorithm, profile_name))
    if profile is None:
        return GradeCheck("consistency", 0.0, 1.0,
                          text(language, "grade_unknown_profile", algorithm=algorithm, profile=profile_name))
    history = passport.get("log_history") or []
    if not history:
        problems.append(text(language, "consistency_log_empty"))
    elif passport.get("reward_curve") != reward_curve(history, algorithm):
        problems.append(text(language, "consistency_curve"))
    steps = max((int(e.get("step", 0)) for e in history if isinstance(e, dict)), default=0)
    if steps != profile.trainer_settings["max_steps"]:
        problems.append(text(language, "consistency_steps", steps=steps,
                             max_steps=profile.trainer_settings["max_steps"]))
    if passport.get("overrides"):
        problems.append(text(language, "consistency_dry_run", overrides=shown_value(passport["overrides"], 200)))
    device = str(passport.get("device", ""))
    wanted = "cpu" if not profile.needs_gpu else "cuda"
    if not device.startswith(wanted):
        problems.append(text(language, "consistency_device", device=device, profile=profile_name, wanted=wanted))
    code = LEARNER_CODE[algorithm]  # a known profile: "grpo" or "dpo"
    learner_file = submission / code.file
    recorded = (passport.get(code.passport_field) or {}).get("sha256")
    if not learner_file.is_file() or sha256_file(learner_file) != recorded:
        problems.append(text(language, code.hash_text, file=code.file))
    recorded_files = (passport.get("adapter") or {}).get("files") or {}
    adapter = submission / "adapter"
    for name in ADAPTER_FILES:
        path = adapter / name
        if not path.is_file() or recorded_files.get(name) != sha256_file(path):
            problems.append(text(language, "consistency_adapter_hash", name=name))
    if problems:
        return GradeCheck("consistency", 0.0, 1.0, "; ".join(problems))
    return GradeCheck("consistency", 1.0, 1.0, text(language, "consistency_ok", steps=steps))


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of a PNG whose header and image data decode (matplotlib reads it), else None; a
    header larger than MAX_FIGURE_SIZE is not decoded."""
    with path.open("rb") as handle:
        data = handle.read(33)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 33 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    if width > MAX_FIGURE_SIZE[0] or height > MAX_FIGURE_SIZE[1]:
        return width, height
    try:
        import matplotlib.image

        image = matplotlib.image.imread(path, format="png")
    except Exception:  # noqa: BLE001 - any decoding failure means "not a PNG figure"
        return None
    return (width, height) if image.shape[:2] == (height, width) else None


def check_figures(submission: Path, language: str = "en") -> GradeCheck:
    """Every figure of FIGURES is a decodable PNG of at least MIN_FIGURE_SIZE."""
    problems = []
    for name in FIGURES:
        path = submission / name
        size = png_size(path) if path.is_file() else None
        if size is None:
            problems.append(text(language, "figures_not_png", name=name))
        elif size[0] < MIN_FIGURE_SIZE[0] or size[1] < MIN_FIGURE_SIZE[1]:
            problems.append(text(language, "figures_small", name=name, width=size[0], height=size[1],
                                 minimum=MIN_FIGURE_SIZE))
        elif size[0] > MAX_FIGURE_SIZE[0] or size[1] > MAX_FIGURE_SIZE[1]:
            problems.append(text(language, "figures_large", name=name, width=size[0], height=size[1],
                                 maximum=MAX_FIGURE_SIZE))
    if problems:
        return GradeCheck("figures", 0.0, 1.0, "; ".join(problems))
    return GradeCheck("figures", 1.0, 1.0, text(language, "figures_ok", count=len(FIGURES)))


# ----------------------------------------------------------------------------- the whole submission
def _unpacked(submission: Path, temp: Path) -> Path:
    """The submission folder, copied into ``temp`` through the one reader (:mod:`graders.engine.intake.reader`: a
    folder walked by descriptors or a .zip, no link or special file, the capstone's caps); every later read is
    of these regular files. Raises UnsafeSubmission (the reason) for a submission that is refused."""
    from graders.engine.intake.reader import UnsafeSubmission, read_submission

    files = read_submission(submission, CAPSTONE_CAPS, keep=None) if submission.is_dir() or \
        submission.suffix.lower() == ".zip" else None
    if files is None:
        raise UnsafeSubmission(f"{submission.name} is neither a folder nor a .zip")
    for relative, data in files.items():
        target = temp.joinpath(*relative.split("/"))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as error:  # "a" and "a/b" both members, a name too long, ...
            raise UnsafeSubmission(f"the member {relative!r} cannot be unpacked ({error})") from error
    passports = sorted(temp.rglob(PASSPORT_NAME))
    return passports[0].parent if passports else temp


def grade_submission(submission, model: str | None = None, data_dir=None, language: str = "en",
                     verifier_check: GradeCheck | None = None) -> dict:
    """The grade of one submission: {"submission", "score", "max_score", "checks": [GradeCheck as dict]},
    the messages in ``language``.

    ``verifier_check`` lets a batch pass the engine's verdict on the learner's code (GRPO's verifier, DPO's
    loss) computed for many submissions at once (:func:`grade_learner_code`). Never raises for a submission's
    fault: a part that cannot be checked scores 0.
    """
    from graders.engine.intake.submission import UnsafeSubmission

    submission = Path(submission)
    with tempfile.TemporaryDirectory(prefix="rl4llm-capstone-") as temp:
        try:
            root = _unpacked(submission, Path(temp))
        except UnsafeSubmission as error:
            return _refused(submission, str(error), language, verifier_check)
        read = read_passport(root / PASSPORT_NAME)[0]
        algorithm = _algorithm(root, read)
        if verifier_check is None:
            path = root / LEARNER_CODE[algorithm].file
            source = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
            verifier_check = grade_learner_code({"submission": source}, algorithm, language)["submission"]
        checks = [verifier_check]
        passport_report = check_passport(root, language)
        checks += [GradeCheck(f"passport.{c['name']}", float(c["passed"]), 1.0, c["message"])
                   for c in passport_report["checks"]]
        # the passport is usable when check_passport read it, found its structure sound and its fields present
        usable = passport_report["checks"][0]["passed"] and passport_report["checks"][1]["passed"]
        passport = read if usable else None
        if passport is None:
            unusable = text(language, "grade_unusable")
            checks += [GradeCheck(name, 0.0, 1.0, unusable) for name in ("consistency", "figures")]
            checks += unchecked_claims(unusable)
            checks += [GradeCheck(name, 0.0, 1.0, unusable) for name in ("reevaluation", "improvement")]
        else:
            consistency = check_consistency(passport, root, language)
            checks += [consistency, check_figures(root, language)]
            checks += (check_claims(passport, language) if consistency.points
                       else unchecked_claims(text(language, "claims_inconsistent")))
            if not consistency.points:  # nothing to re-evaluate against: do not spend a GPU on it
                checks += [GradeCheck(name, 0.0, 1.0, text(language, "grade_inconsistent"))
                           for name in ("reevaluation", "improvement")]
                return _total(submission, checks)
            try:
                checks += check_reevaluation(passport, reevaluate(passport, root, model, data_dir), language)
            except Exception as error:  # noqa: BLE001 - a broken adapter is the submission's fault
                reason = error.text(language) if isinstance(error, CapstoneError) else str(error)
                checks += [GradeCheck("reevaluation", 0.0, 1.0, text(language, "grade_reeval_failed",
                                                                     error=f"{type(error).__name__}: {reason}")),
                           GradeCheck("improvement", 0.0, 1.0, text(language, "grade_not_measured"))]
    return _total(submission, checks)


def _algorithm(root: Path, passport: dict | None) -> str:
    """The submission's algorithm: its passport's (as read), when it says "grpo" or "dpo"; else "dpo" when only a
    loss file is there; else "grpo" (the learner-code check is then the verifier's)."""
    claimed = passport.get("algorithm") if isinstance(passport, dict) else None
    if isinstance(claimed, str) and claimed in LEARNER_CODE:
        return claimed
    return "dpo" if (root / LOSS_FILE).is_file() and not (root / VERIFIER_FILE).is_file() else "grpo"


def _total(submission: Path, checks: list[GradeCheck]) -> dict:
    return {"submission": str(submission), "score": round(sum(check.points for check in checks), 4),
            "max_score": round(sum(check.max_points for check in checks), 4),
            "checks": [asdict(check) for check in checks]}


def _refused(submission: Path, reason: str, language: str, verifier_check: GradeCheck | None) -> dict:
    """The grade of a submission whose zip was refused: every part 0, saying why."""
    said = text(language, "grade_zip_refused", submission=submission.name, reason=reason)
    verifier_points = verifier_check.max_points if verifier_check is not None else learner_code_points()
    names = [f"passport.{name}" for name in ("passport", *(name for name, _ in CHECKS))]
    names += ["consistency", "figures", *CLAIM_NAMES, "reevaluation", "improvement"]
    return _total(submission, [GradeCheck("verifier", 0.0, verifier_points, said),
                               *(GradeCheck(name, 0.0, 1.0, said) for name in names)])


def format_grade(report: dict, language: str = "en") -> str:
    """One line per check (points/max, its name -- an id -- and message), then the score."""
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
