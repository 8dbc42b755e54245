"""Wall-clock benchmarks the README quotes. Not a test: timings depend on the machine.

    python -m devtools.benchmark                 # everything, in a fixed order (several minutes)
    python -m devtools.benchmark paired          # learner-tests, grade-one, grade-one-warm, grade-50,
                                                # nbgrader-paired, one after another, then a summary table
    python -m devtools.benchmark m9-smoke m8-smoke learner-tests grade-one
    python -m devtools.benchmark paired --json timings.json
    python -m devtools.benchmark learner             # learner-m8 learner-m9: a learner's pytest, three states

Each measurement runs its commands in fresh interpreters (so imports are
counted, as a user would see them) and prints one line as soon as it
finishes; a summary table closes the run, and ``--json FILE`` also saves
every result (``nbgrader-paired`` as an object with both sides and the ratio).

``nbgrader-paired`` grades the same notebooks (:data:`PAIRED_NOTEBOOKS`) with
the real ``nbgrader autograde`` (through the course's ``EngineScores``) and
with ``rl4llm grade <the .ipynb files>``, and compares the two.

The reference cache (``$RL4LLM_CACHE``, :mod:`graders.engine.judging.refcache`): the
run uses a fresh folder of its own (never the user's cache), shared by every
measurement and deleted at the end. ``grade-one`` empties it first (cold),
``grade-one-warm`` grades again right after (warm); later measurements find
it as the earlier ones left it (``paired``: ``grade-50`` and
``nbgrader-paired`` warm). ``nbgrader-paired`` warms it, untimed, when it
is still empty, so that both sides grade with the same warm cache.
``RL4LLM_CACHE=off`` in the environment runs everything without it.

The measurements live by job: :mod:`devtools.benchmark.grading` (grading, the sandbox's cost, the shared
helpers), :mod:`devtools.benchmark.nbgrader` (``nbgrader-paired``), :mod:`devtools.benchmark.learner`
(the learner's pytest); this module holds the two big-input measurements, the registry and the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from graders import settings
from devtools.benchmark.grading import (CACHE_ENV, PY, Result, bench_grade, bench_grade_one, bench_grade_one_warm,
                                       bench_against, bench_hide_cost, bench_profile, bench_sandbox_cost, bench_trusted_cost, _cache_folder,
                                       _experiment, _timed)
from devtools.benchmark.learner import LEARNER_KINDS, bench_learner
from devtools.benchmark.nbgrader import bench_nbgrader_paired
from graders.paths import SOLUTIONS_DIR


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


def bench_class_report_500() -> float:
    """``class-report-500``: ``rl4llm report`` on 500 submissions' reports (made, untimed, by grading the
    demo's three examples -- complete, untouched starter, typical mistakes -- then copied 500 times)."""
    import random

    from graders.engine.routes.demo import assemble_examples

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        seeds = assemble_examples(tmp / "examples")  # complete, untouched starter, typical mistakes
        _timed([PY, "-m", "graders.cli", "grade", *map(str, seeds), "--out", str(tmp / "seed"), "--jobs", "2",
                "--quiet"])
        reports = [json.loads((tmp / "seed" / seed.name / "report.json").read_text(encoding="utf-8"))
                   for seed in seeds]
        batch = tmp / "batch"
        generator = random.Random(0)
        for index in range(500):
            report = dict(generator.choice(reports), submission=f"student_{index:03d}")
            (batch / report["submission"]).mkdir(parents=True)
            (batch / report["submission"] / "report.json").write_text(json.dumps(report), encoding="utf-8")
        return _timed([PY, "-m", "graders.cli", "report", str(batch)])


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


MEASUREMENTS = {  # the default run: all of them, in this order
    "m9-smoke": ("toy GRPO experiment, smoke profile", lambda: _timed(_experiment("m9", "smoke"))),
    "m9-full": ("toy GRPO experiment, full profile", lambda: _timed(_experiment("m9", "full"))),
    "m8-smoke": ("toy DPO experiment, smoke profile", lambda: _timed(_experiment("m8", "smoke"))),
    "m8-full": ("toy DPO experiment, full profile", lambda: _timed(_experiment("m8", "full"))),
    "learner-tests": ("pytest starter/module_09 on a complete implementation",
                      lambda: _timed([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "starter/module_09"],
                                     env={"RL4LLM_IMPL_ROOT": str(SOLUTIONS_DIR)})),
    "learner-m8": ("pytest starter/module_08: untouched, half-done, complete", lambda: bench_learner("module_08")),
    "learner-m9": ("pytest starter/module_09: untouched, half-done, complete", lambda: bench_learner("module_09")),
    "grade-one": ("grade one complete submission (both modules), cold", bench_grade_one),
    "grade-one-warm": ("grade one complete submission (both modules), warm: again right after grade-one",
                       bench_grade_one_warm),
    "grade-50": ("grade 50 complete submissions, --jobs 2", lambda: bench_grade(50, 2)),
    "nbgrader-paired": ("the same notebooks: nbgrader autograde vs rl4llm grade", bench_nbgrader_paired),
    "verify-megabyte": ("the slowest megabyte-long adversarial response through verify_detailed",
                        bench_verify_megabyte),
    "class-report-500": ("rl4llm report on 500 submissions (HTML, CSV, three PNG figures)",
                         bench_class_report_500),
    "sandbox-cost": ("what the kernel sandbox adds per submission (every layer)",
                     bench_sandbox_cost),
    "trusted-cost": ("what the toy runs' trusted process adds per submission with both training files (wall)",
                     bench_trusted_cost),
    "hide-cost": ("what hide mode's separate hidden-check children add to one complete submission (wall)",
                  bench_hide_cost),
    "against": ("one complete submission, warm: this tree minus another commit's ($RL4LLM_BENCH_AGAINST), "
                "interleaved", bench_against),
    "against-50": ("50 complete submissions, --jobs 2, warm: this tree minus another commit's "
                   "($RL4LLM_BENCH_AGAINST), two rounds interleaved", lambda: bench_against(rounds=2, count=50, jobs=2)),
    "profile": ("one complete submission, warm, under cProfile: the grader's main thread by stage", bench_profile),
}
GROUPS = {  # a name on the command line that stands for several measurements, run in this order
    "paired": ("learner-tests", "grade-one", "grade-one-warm", "grade-50", "nbgrader-paired"),
    "learner": ("learner-m8", "learner-m9"),
}
WIDTH = max(map(len, MEASUREMENTS))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.benchmark",
        description="Wall-clock timings, each command in a fresh interpreter; one line per measurement.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"measurements: {', '.join(MEASUREMENTS)}; groups: "
                             + ", ".join(f"{g} (= {' '.join(m)})" for g, m in GROUPS.items())
                             + " (default: every measurement)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="also save the results here")
    return parser


def resolve(parser: argparse.ArgumentParser, names: list[str]) -> list[str]:
    """The measurements ``names`` ask for, groups expanded, each once, in the order given."""
    if not names:
        return list(MEASUREMENTS)
    unknown = [name for name in names if name not in MEASUREMENTS and name not in GROUPS]
    if unknown:
        parser.error(f"unknown measurement(s) {unknown}; choose from {list(MEASUREMENTS)} "
                     f"or the groups {list(GROUPS)}")
    expanded = [member for name in names for member in GROUPS.get(name, (name,))]
    return list(dict.fromkeys(expanded))


def _show(seconds: float) -> str:
    return f"{seconds:.2f} s"


def summary(results: dict, labels: dict[str, str]) -> str:
    """The closing table (Markdown, as the README's): one row per measurement, nbgrader-paired in three."""
    rows = ["| measurement | wall time |", "|---|---|"]
    for name, value in results.items():
        if isinstance(value, dict) and "learner" in value:  # learner-m8, learner-m9
            rows.append(f"| `pytest starter/{value['learner']}` (`{name}`), min of {value['rounds']} | "
                        + ", ".join(f"{kind} {_show(value['min_s'][kind])}" for kind in LEARNER_KINDS) + " |")
        elif isinstance(value, dict):  # nbgrader-paired
            count = value["notebooks"]
            rows.append(f"| `nbgrader autograde`, {count} notebooks (`{name}`) | "
                        f"{_show(value['nbgrader_autograde_s'])} ({_show(value['nbgrader_per_notebook_s'])} "
                        "per notebook) |")
            rows.append(f"| `rl4llm grade`, the same {count} notebooks (`{name}`) | "
                        f"{_show(value['rl4llm_grade_s'])} ({_show(value['rl4llm_per_notebook_s'])} per notebook) |")
            rows.append(f"| ratio nbgrader / rl4llm (`{name}`) | {value['ratio']:.2f} x |")
        else:
            rows.append(f"| {labels[name]} (`{name}`) | {_show(value)} |")
    return "\n".join(rows)


def _keep_bytecode() -> str:
    """The kit's bytecode kept in its own ``__pycache__`` folders, as an instructor's first ``rl4llm grade`` keeps
    it (``Kit.keep_bytecode``), whatever this shell's ``PYTHONDONTWRITEBYTECODE``: the measured commands then
    run as they do on an instructor's machine from the second batch on."""
    from graders.engine.judging.kit import DEFAULT_KIT

    DEFAULT_KIT.keep_bytecode(whatever_the_environment=True)
    return "kept in graders/, solutions/ and starter/ (Kit.keep_bytecode, as `rl4llm grade` keeps it)"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    names = resolve(parser, args.names)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"machine: {machine}", flush=True)
    print(f"measurements: {' '.join(names)}", flush=True)
    print(f"the kit's bytecode: {_keep_bytecode()}", flush=True)
    results: dict = {}
    saved = settings.raw(CACHE_ENV)
    off = saved is not None and _cache_folder() is None and saved != ""
    with tempfile.TemporaryDirectory(prefix="rl4llm-bench-cache-") as cache:
        if not off:
            os.environ[CACHE_ENV] = cache  # every grading subprocess inherits it
        print(f"reference cache: {'off' if off else f'a fresh folder for this run ({CACHE_ENV}={cache})'}",
              flush=True)
        try:
            for name in names:
                label, run = MEASUREMENTS[name]
                value = run()
                if isinstance(value, Result):
                    results[name] = {"seconds": round(value.seconds, 2), **value.data}
                    print(f"{name:{WIDTH}s}  {value.line}", flush=True)
                else:
                    results[name] = round(value, 2)
                    print(f"{name:{WIDTH}s}  {value:8.2f} s  {label}", flush=True)
        finally:
            if saved is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = saved
    print(f"\nsummary ({machine}):\n" + summary(results, {name: MEASUREMENTS[name][0] for name in results}),
          flush=True)
    if args.json:
        args.json.write_text(json.dumps({**results, "machine": machine}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
