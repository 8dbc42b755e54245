"""The capstone passport's self-reported fields against what the grader can know: three named checks.

    checks = check_claims(passport, language="ru")      # [claims.versions, claims.trainer_args, claims.wall_time]

Each is worth one point (:class:`graders.capstone.passport.GradeCheck`) and names every field it finds wrong,
found and expected. ``rl4llm capstone grade`` (:func:`graders.capstone.grade.grade_submission`) runs
them after the consistency check on a usable, consistent passport; on an unusable or inconsistent one
they score 0 saying why (:func:`unchecked_claims`), as re-evaluation does: a passport that does not
describe the submitted adapter has no claims worth comparing. A field of the wrong JSON kind is a
failed check naming it, never an exception.

``claims.versions`` -- every library ``library_versions()`` records (``python`` and ``LIBRARIES``):

- a PEP 440 version (``packaging.version``), inside the range the INSTALLED kit supports: its
  distribution metadata (``importlib.metadata.requires("rl4llm-kit")``, the core dependencies and the
  ``capstone`` extra; python: ``Requires-Python``), so pyproject.toml is the one truth; pre-releases inside
  the range count as inside;
- compared with the grader's own installed version, since the grader re-evaluates the adapter with
  ITS libraries: for the libraries that define the adapter format and the forward pass
  (``FORWARD_LIBRARIES``: torch, transformers, peft) another major version (the first release number)
  fails naming both versions; any other difference (a minor or patch, or any library's) passes and
  the message names it. Within the kit's ranges the major versions agree (torch 2, transformers 5,
  peft 0), so the major rule bites when the grader's environment left the ranges; it is kept so that
  a grader on transformers 6 says why its re-evaluation may differ instead of passing silently.

``claims.trainer_args`` -- the grader rebuilds the profile's config itself
(:func:`graders.capstone.run.run.trainer_arguments`, the passport's ``seeds.seed``, the precision its
``device`` implies, as :func:`graders.capstone.run.run.resolve_device` sets it: ``cpu`` -> CPU float32;
``cuda...`` -> bf16 when the passport's ``bf16`` is true, else fp16, the two a CUDA run can choose,
rebuilt with fp16 and the two flags swapped on a grader without bf16) and compares EVERY key of
``.to_dict()`` with the passport's ``trainer_args``: a changed value, a missing key and an extra key each
fail, every one named. Not compared: ``BOOKKEEPING`` (run bookkeeping that legitimately differs, each
justified there). ``generation_batch_size`` (GRPO) is expected times the passport's
``processes.num_processes`` (TRL multiplies it by the world size). A dry run's overrides
(``DRY_RUN_KEYS``, the passport's ``overrides``) are applied to the rebuild, so they are not counted
here a second time: the consistency check already refuses a dry run.
The rebuild is exact only with the run's own TRL and transformers (their defaults change between
releases: trl 1.9.2 / transformers 5.14.1 and trl 1.16.0 / transformers 5.24.0 differ in 6 keys and 2
defaults). When the passport's release of either differs from the grader's, only the arguments the kit
sets are compared (the profile's settings and every key whose rebuilt value is not the config class's
default) and the message says so; grading with the run's versions (``constraints/capstone.txt``)
compares every key.

``claims.wall_time`` -- ``wall_time_s.train`` and ``wall_time_s.total`` finite and > 0, ``total >= train``,
and ``train`` agrees with the Trainer's own ``train_runtime`` (the last log entry that has one; none
fails saying so): ``train_runtime - RUNTIME_ROUNDING <= train <= train_runtime * WALL_RATIO +
WALL_SLACK_S``. The run measures around ``trainer.train()``, which also holds what the Trainer does
before its clock starts (data loaders, the optimizer, ``accelerator.prepare``) and after it stops
(the end-of-train callbacks): a little more, never less (``train_runtime`` is rounded to 4 decimals).
"""

from __future__ import annotations

import math
from importlib import metadata
from pathlib import Path

from graders.capstone.passport import GradeCheck
from graders.capstone.run.passport import LIBRARIES, json_safe, library_versions
from graders.capstone.run.profiles import PROFILES
from graders.capstone.run.texts import text

CLAIM_NAMES = ("claims.versions", "claims.trainer_args", "claims.wall_time")
KIT_DISTRIBUTION = "rl4llm-kit"
KIT_EXTRA = "capstone"
FORWARD_LIBRARIES = ("torch", "transformers", "peft")  # the adapter's format and the forward pass it is measured by
CONFIG_LIBRARIES = ("trl", "transformers")  # define GRPOConfig / DPOConfig and their defaults
# Keys of the config's to_dict() not compared, and why each legitimately differs between two honest runs.
BOOKKEEPING = {
    "output_dir": "the run folder, the student's --out",
    "logging_dir": "derived from output_dir (transformers 5.14.1 has the key, 5.24.0 not)",
    "run_name": "derived from output_dir when unset, in some transformers releases",
    "disable_tqdm": "--quiet: a progress bar or not, no effect on training",
    "local_rank": "the process's rank under `accelerate launch` (-1 without a launcher)",
}
DRY_RUN_KEYS = ("max_steps", "max_completion_length", "max_length")  # RunOptions.overrides (tests check)
RUNTIME_ROUNDING = 0.01  # s: the Trainer rounds train_runtime to 4 decimals; a clock read twice may differ by less
# train_runtime excludes the Trainer's set-up: measured +0.5 s on 14.1 s (tiny GRPO), +0.8 s on 2.0 s (tiny DPO)
WALL_RATIO = 1.5
WALL_SLACK_S = 10.0  # s: a set-up that does not scale with the steps (accelerate.prepare, DeepSpeed's init)
MISSING = object()


def unchecked_claims(reason: str) -> list[GradeCheck]:
    """The three checks at 0, each saying ``reason`` (the passport is unusable or inconsistent)."""
    return [GradeCheck(name, 0.0, 1.0, reason) for name in CLAIM_NAMES]


def check_claims(passport: dict, language: str = "en") -> list[GradeCheck]:
    """[claims.versions, claims.trainer_args, claims.wall_time] of a passport (see the module docstring)."""
    checks = []
    for name, check in zip(CLAIM_NAMES, (check_versions, check_trainer_args, check_wall_time)):
        try:
            passed, message = check(passport, language)
        except (AttributeError, KeyError, TypeError, ValueError, ArithmeticError) as error:  # kept, in case
            passed, message = False, text(language, "claims_malformed", error=f"{type(error).__name__}: {error}")
        checks.append(GradeCheck(name, float(passed), 1.0, message))
    return checks


def _field(passport, key: str):
    value = passport.get(key) if isinstance(passport, dict) else None
    return value if isinstance(value, dict) else None


# ----------------------------------------------------------------------------- versions
def supported_ranges() -> dict[str, str]:
    """{canonical name: specifier} of the installed kit: its core dependencies and its capstone extra,
    and "python": Requires-Python. PackageNotFoundError when the kit is not installed."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    ranges: dict[str, str] = {}
    for line in metadata.requires(KIT_DISTRIBUTION) or ():
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": KIT_EXTRA}):
            continue
        name = canonicalize_name(requirement.name)
        if name != KIT_DISTRIBUTION:
            ranges[name] = ",".join(filter(None, (ranges.get(name), str(requirement.specifier))))
    ranges["python"] = metadata.metadata(KIT_DISTRIBUTION).get("Requires-Python") or ""
    return ranges


def check_versions(passport: dict, language: str = "en", installed: dict | None = None) -> tuple[bool, str]:
    """(passed, message): every recorded library a version inside the kit's range, not another major
    version than the grader's ``installed`` (default: :func:`library_versions`) for FORWARD_LIBRARIES."""
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    versions = passport.get("versions") if isinstance(passport, dict) else None
    if not isinstance(versions, dict):
        return False, text(language, "claims_not_object", field="versions", found=_shown(versions))
    try:
        ranges = supported_ranges()
    except metadata.PackageNotFoundError as error:
        return False, text(language, "claims_versions_kit_unknown", kit=KIT_DISTRIBUTION, error=error)
    installed = library_versions() if installed is None else installed
    problems, notes = [], []
    for name in ("python", *LIBRARIES):
        found, specifier = versions.get(name, MISSING), ranges.get(canonicalize_name(name), "")
        if found is MISSING:
            problems.append(text(language, "claims_version_missing", name=name))
            continue
        try:
            version = Version(found) if isinstance(found, str) else None
        except InvalidVersion:
            version = None
        if version is None:
            problems.append(text(language, "claims_version_malformed", name=name, found=_shown(found)))
            continue
        if not SpecifierSet(specifier).contains(version, prereleases=True):
            problems.append(text(language, "claims_version_outside", name=name, found=found,
                                 range=specifier or "?", kit=KIT_DISTRIBUTION))
            continue
        try:
            mine = Version(str(installed.get(name)))
        except InvalidVersion:  # the grader lacks it: nothing to compare with
            notes.append(text(language, "claims_version_grader_lacks", name=name, found=found))
            continue
        if name in FORWARD_LIBRARIES and version.major != mine.major:
            problems.append(text(language, "claims_version_major", name=name, found=found, installed=mine))
        elif version.public != mine.public:
            notes.append(text(language, "claims_version_differs", name=name, found=found, installed=mine))
    if problems:
        return False, "; ".join(problems)
    said = ", ".join(f"{name} {versions[name]}" for name in ("python", *LIBRARIES))
    return True, text(language, "claims_versions_ok", versions=said,
                      differences="; ".join(notes) or text(language, "claims_versions_same"))


# ----------------------------------------------------------------------------- trainer arguments
def _shown(value, limit: int = 80) -> str:
    said = "<missing>" if value is MISSING else repr(value)
    return said if len(said) <= limit else said[:limit - 3] + "..."


def _equal(found, expected) -> bool:
    """JSON values equal: numbers (not booleans) within 1e-9 relative, objects and lists item by item."""
    if isinstance(expected, bool) or isinstance(found, bool):
        return found is expected
    if isinstance(expected, (int, float)) and isinstance(found, (int, float)):
        return math.isclose(found, expected, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, dict) and isinstance(found, dict):
        return found.keys() == expected.keys() and all(_equal(found[k], expected[k]) for k in expected)
    if isinstance(expected, list) and isinstance(found, list):
        return len(found) == len(expected) and all(_equal(a, b) for a, b in zip(found, expected))
    return type(found) is type(expected) and found == expected


def implied_precision(passport: dict) -> dict:
    """The precision settings resolve_device gives the passport's device: CPU float32, or on CUDA bf16
    when the passport's trainer_args say bf16, else fp16 (both are what a CUDA run may get)."""
    device = passport.get("device")
    if not (isinstance(device, str) and device.startswith("cuda")):
        return {"use_cpu": True, "bf16": False, "fp16": False}
    bf16 = (_field(passport, "trainer_args") or {}).get("bf16") is True
    return {"use_cpu": False, "bf16": bf16, "fp16": not bf16}


def rebuilt_arguments(passport: dict, seed: int) -> tuple[dict, dict]:
    """(rebuilt to_dict(), the class's defaults' to_dict()) of the passport's profile, JSON-safe."""
    from graders.capstone.run.run import trainer_arguments

    profile = PROFILES[(passport["algorithm"], passport["profile"])]
    overrides = {key: value for key, value in (_field(passport, "overrides") or {}).items() if key in DRY_RUN_KEYS}
    precision = implied_precision(passport)
    out_dir = Path("trainer-rebuilt")
    try:
        config = trainer_arguments(profile, out_dir, seed=seed, precision=precision, overrides=overrides)
        rebuilt = json_safe(config.to_dict())
    except ValueError:  # bf16 on a grader without a bf16 GPU: rebuilt as fp16, the two flags swapped
        config = trainer_arguments(profile, out_dir, seed=seed, overrides=overrides,
                                   precision={"use_cpu": False, "bf16": False, "fp16": True})
        rebuilt = {**json_safe(config.to_dict()), "bf16": precision["bf16"], "fp16": precision["fp16"]}
    defaults = json_safe(type(config)(output_dir=config.output_dir, use_cpu=True).to_dict())
    return rebuilt, defaults


def check_trainer_args(passport: dict, language: str = "en", installed: dict | None = None) -> tuple[bool, str]:
    """(passed, message): the passport's trainer_args against the grader's rebuild, key by key."""
    found_args, seeds = _field(passport, "trainer_args"), _field(passport, "seeds")
    if found_args is None:
        return False, text(language, "claims_not_object", field="trainer_args",
                           found=_shown(passport.get("trainer_args")))
    seed = (seeds or {}).get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return False, text(language, "claims_args_seed", found=_shown(seed))
    named = (passport.get("algorithm"), passport.get("profile"))
    profile = PROFILES.get(named) if all(isinstance(part, str) for part in named) else None
    if profile is None:
        return False, text(language, "grade_unknown_profile", algorithm=passport.get("algorithm"),
                           profile=passport.get("profile"))
    try:
        expected, defaults = rebuilt_arguments(passport, seed)
    except Exception as error:  # noqa: BLE001 - e.g. dry-run overrides of the wrong kind
        return False, text(language, "claims_args_rebuild_failed", error=f"{type(error).__name__}: {error}")
    processes = (_field(passport, "processes") or {}).get("num_processes")
    if "generation_batch_size" in expected and isinstance(processes, int) and processes > 1:
        expected["generation_batch_size"] *= processes
    installed = library_versions() if installed is None else installed
    versions = _field(passport, "versions") or {}
    same = all(_public(versions.get(name)) == _public(installed.get(name)) for name in CONFIG_LIBRARIES)
    keys = set(expected) | set(found_args)
    if not same:  # another release's defaults are not the grader's: compare what the kit sets
        keys = set(profile.trainer_settings) | {"use_cpu", "bf16", "fp16"} | {
            key for key in expected if not _equal(expected[key], defaults.get(key, MISSING))}
    keys -= set(BOOKKEEPING)
    wrong = [text(language, "claims_args_item", key=key, found=_shown(found_args.get(key, MISSING)),
                  expected=_shown(expected.get(key, MISSING)))
             for key in sorted(keys) if not _equal(found_args.get(key, MISSING), expected.get(key, MISSING))]
    scope = (text(language, "claims_args_every", count=len(keys)) if same else
             text(language, "claims_args_kit_set", count=len(keys), **{
                 f"{name}_found": versions.get(name) for name in CONFIG_LIBRARIES}, **{
                 f"{name}_grader": installed.get(name) for name in CONFIG_LIBRARIES}))
    values = {"config": type_name(profile.algorithm), "profile": profile.name, "scope": scope}
    if wrong:
        return False, text(language, "claims_args_differ", count=len(wrong), differences="; ".join(wrong), **values)
    return True, text(language, "claims_args_ok", **values)


def _public(version) -> str | None:
    return version.split("+", 1)[0] if isinstance(version, str) else None


def type_name(algorithm: str) -> str:
    return "GRPOConfig" if algorithm == "grpo" else "DPOConfig"


# ----------------------------------------------------------------------------- wall time
def train_runtime(log_history) -> float | None:
    """The Trainer's train_runtime: the last log entry that has a finite one, else None."""
    found = None
    for entry in log_history if isinstance(log_history, list) else ():
        value = entry.get("train_runtime") if isinstance(entry, dict) else None
        if _finite(value):
            found = float(value)
    return found


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_wall_time(passport: dict, language: str = "en") -> tuple[bool, str]:
    """(passed, message): wall_time_s finite, > 0, total >= train, train agrees with train_runtime."""
    wall = _field(passport, "wall_time_s")
    if wall is None:
        return False, text(language, "claims_not_object", field="wall_time_s",
                           found=_shown(passport.get("wall_time_s")))
    for key in ("train", "total"):
        if not _finite(wall.get(key)) or wall[key] <= 0:
            return False, text(language, "claims_wall_bad", key=key, found=_shown(wall.get(key, MISSING)))
    train, total = float(wall["train"]), float(wall["total"])
    if total < train:
        return False, text(language, "claims_wall_total", train=train, total=total)
    runtime = train_runtime(passport.get("log_history"))
    if runtime is None:
        return False, text(language, "claims_wall_no_runtime")
    low, high = runtime - RUNTIME_ROUNDING, runtime * WALL_RATIO + WALL_SLACK_S
    if not low <= train <= high:
        return False, text(language, "claims_wall_disagrees", train=train, runtime=runtime, low=max(low, 0.0),
                           high=high)
    return True, text(language, "claims_wall_ok", train=train, runtime=runtime, total=total)
