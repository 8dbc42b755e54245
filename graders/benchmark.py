"""Wall-clock benchmarks the README quotes. Not a test: timings depend on the machine.

    python -m graders.benchmark                 # everything (several minutes)
    python -m graders.benchmark m9-smoke m8-smoke learner-tests grade-one

Each measurement runs in a fresh interpreter (so imports are counted, as a
user would see them) and prints one line; ``--json FILE`` also saves them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from graders.paths import REPO_ROOT, SOLUTIONS_DIR

PY = sys.executable


def _timed(command: list[str], env: dict | None = None, cwd: Path = REPO_ROOT) -> float:
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-2000:]}")
    return elapsed


def _experiment(module: str, profile: str) -> list[str]:
    folder, call = {
        "m9": ("module_09", f"import module_9_training as m; m.run_toy_grpo_experiment(profile={profile!r})"),
        "m8": ("module_08", f"import module_8_training as m; m.run_toy_dpo_experiment(profile={profile!r})"),
    }[module]
    return [PY, "-c", f"import sys; sys.path.insert(0, {str(SOLUTIONS_DIR / folder)!r}); {call}"]


def _complete_submission(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(SOLUTIONS_DIR.glob("module_*/module_*.py")):
        shutil.copy(path, target / path.name)
    return target


def bench_grade(count: int, jobs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        subs = [_complete_submission(Path(tmp) / f"student_{i:02d}") for i in range(count)]
        command = [PY, "-m", "graders.cli", "grade", *map(str, subs), "--out", str(Path(tmp) / "out"),
                   "--jobs", str(jobs)]
        return _timed(command)


def bench_sandbox_cost(count: int = 6, rounds: int = 2) -> float:
    """Seconds the kernel sandbox adds per submission: ``count`` module-9 reference submissions graded
    with every layer and with namespaces and Landlock switched off, the best of ``rounds`` each."""
    off = {"RL4LLM_NO_NAMESPACES": "1", "RL4LLM_NO_LANDLOCK": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        subs = []
        for i in range(count):
            folder = Path(tmp) / f"student_{i:02d}"
            folder.mkdir()
            shutil.copy(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", folder)
            subs.append(folder)
        command = [PY, "-m", "graders.cli", "grade", *map(str, subs), "--out", str(Path(tmp) / "out"),
                   "--module", "9", "--quiet"]
        with_sandbox, without = [], []
        for _ in range(rounds):
            with_sandbox.append(_timed(command))
            without.append(_timed(command, env=off))
    per_submission = (min(with_sandbox) - min(without)) / count
    print(f"  sandbox on: {min(with_sandbox):.2f} s, off: {min(without):.2f} s for {count} submissions", flush=True)
    return per_submission


MEGABYTE = 1_000_000


def megabyte_responses() -> dict[str, str]:
    """Adversarial model responses of about a megabyte: what a verifier must read in linear time."""
    return {
        "digits": "1" * MEGABYTE,
        "tiny_decimal": "0." + "0" * MEGABYTE + "1",
        "long_decimal": "1." + "3" * MEGABYTE,
        "open_boxes": "\\boxed{" * (MEGABYTE // 7),
        "box_then_open_braces": "\\boxed{" + "{" * MEGABYTE,
        "box_then_brace_pairs": "\\boxed{" + "{}" * (MEGABYTE // 2),
        "deep_box": "\\boxed{" + "{" * (MEGABYTE // 2) + "7" + "}" * (MEGABYTE // 2 + 1),
        "braces_no_box": "{}" * (MEGABYTE // 2),
        "comma_ones": "1," * (MEGABYTE // 2),
        "thousands": "1" + ",234" * (MEGABYTE // 4),
        "bad_thousands": "1,23" * (MEGABYTE // 4),
        "dots": "1." * (MEGABYTE // 2),
        "exponents": "1e" * (MEGABYTE // 2),
        "slashes": "1/" * (MEGABYTE // 2),
        "signs": "-+" * (MEGABYTE // 2),
        "backslashes": "\\" * MEGABYTE,
        "boxed_without_backslash": "boxed{" * (MEGABYTE // 6),
        "huge_exponent": "1e" + "9" * MEGABYTE,
        "control_characters": "\x00\x1b\x07" * (MEGABYTE // 3) + " 7",
    }


def bench_verify_megabyte() -> float:
    """The slowest of :func:`megabyte_responses` through the reference ``verify_detailed`` (in this process)."""
    from graders.loader import load_module

    verifier = load_module(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", "_bench_module_9_reference")
    slowest, worst = 0.0, ""
    for name, text in megabyte_responses().items():
        start = time.perf_counter()
        verifier.verify_detailed(text, 7)
        elapsed = time.perf_counter() - start
        if elapsed > slowest:
            slowest, worst = elapsed, name
    print(f"  slowest: {worst} ({slowest:.3f} s); the verifier should stay well under 1 s", flush=True)
    return slowest


MEASUREMENTS = {
    "m9-smoke": ("toy GRPO experiment, smoke profile", lambda: _timed(_experiment("m9", "smoke"))),
    "m9-full": ("toy GRPO experiment, full profile", lambda: _timed(_experiment("m9", "full"))),
    "m8-smoke": ("toy DPO experiment, smoke profile", lambda: _timed(_experiment("m8", "smoke"))),
    "m8-full": ("toy DPO experiment, full profile", lambda: _timed(_experiment("m8", "full"))),
    "learner-tests": ("pytest starter/module_09 on a complete implementation",
                      lambda: _timed([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "starter/module_09"],
                                     env={"RL4LLM_IMPL_ROOT": str(SOLUTIONS_DIR)})),
    "grade-one": ("grade one complete submission (both modules)", lambda: bench_grade(1, 1)),
    "grade-50": ("grade 50 complete submissions, --jobs 2", lambda: bench_grade(50, 2)),
    "verify-megabyte": ("the slowest megabyte-long adversarial response through verify_detailed",
                        bench_verify_megabyte),
    "sandbox-cost": ("what the kernel sandbox adds per submission (namespaces, tmpfs, Landlock)",
                     bench_sandbox_cost),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.benchmark")
    parser.add_argument("names", nargs="*", help=f"any of {', '.join(MEASUREMENTS)} (default: all)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    names = args.names or list(MEASUREMENTS)
    unknown = [name for name in names if name not in MEASUREMENTS]
    if unknown:
        parser.error(f"unknown measurement(s) {unknown}; choose from {list(MEASUREMENTS)}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    results = {}
    for name in names:
        label, run = MEASUREMENTS[name]
        seconds = run()
        results[name] = round(seconds, 2)
        print(f"{name:14s} {seconds:8.2f} s  {label}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
