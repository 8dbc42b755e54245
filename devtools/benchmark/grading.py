"""The grader's wall-clock measurements (``python -m devtools.benchmark``), and the helpers every measurement uses.

``grade-one`` (cold, then ``grade-one-warm``), ``grade-50``, ``sandbox-cost``, ``trusted-cost``; the toy experiments'
command lines; the run's own reference cache (``$RL4LLM_CACHE``); :class:`Result`, a measurement with
more to report than its seconds. The measurements' registry and the command line: :mod:`devtools.benchmark.cli`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders import settings
from graders.paths import REPO_ROOT, SOLUTIONS_DIR

PY = sys.executable
CACHE_ENV = "RL4LLM_CACHE"  # graders.engine.judging.refcache: the reference cache's folder, or "off"


def _cache_folder() -> Path | None:
    """The reference cache this run uses (set by :func:`main`), or ``None`` when it is off or not set."""
    chosen = settings.get(CACHE_ENV)
    return None if chosen.lower() in ("", "off", "0", "no", "false") else Path(chosen)


def _cache_is_empty() -> bool:
    folder = _cache_folder()
    return folder is not None and (not folder.is_dir() or not any(folder.iterdir()))


def _empty_cache() -> None:
    folder = _cache_folder()
    if folder is not None and folder.is_dir():
        for path in folder.iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


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


_GRADED_ONE = False  # whether this process has graded one complete submission (grade-one) yet


def bench_grade_one() -> float:
    """``grade-one``: one complete submission graded with the run's reference cache emptied first (cold)."""
    global _GRADED_ONE
    _empty_cache()
    seconds = bench_grade(1, 1)
    _GRADED_ONE = True
    return seconds


def bench_grade_one_warm() -> float:
    """``grade-one-warm``: the same grade again right after ``grade-one``, so that whatever the kit keeps
    between runs (a reference cache, the OS's file cache) is warm. Run on its own, it first grades once
    untimed."""
    global _GRADED_ONE
    if not _GRADED_ONE:
        print("  (grade-one did not run before: one untimed grade first, to warm up)", flush=True)
        bench_grade(1, 1)
        _GRADED_ONE = True
    return bench_grade(1, 1)


def bench_sandbox_cost(count: int = 6, rounds: int = 2) -> float:
    """Seconds the kernel sandbox adds per submission: ``count`` module-9 reference submissions graded
    with every layer and with every switchable layer off (namespaces, Landlock, the system-call filter, the
    closed root, cgroups, the CPU budget: ``graders.engine.sandbox.layers.SWITCHES``), the best of ``rounds`` each."""
    from graders.engine.sandbox.layers import SWITCHES

    off = {name: "1" for name in SWITCHES}
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


def bench_trusted_cost(rounds: int = 10) -> float:
    """Wall seconds the trusted process adds per submission with both training files: the reference's
    ``module_8_training.py`` and ``module_9_training.py`` graded with the toy runs in the trusted process and
    with the kit's switch off (``grading.TRUSTED_APART = False``: in the learner's child), ``rounds`` rounds
    interleaved, the medians compared; the CPU time of the grader and every process it waited for
    (``RUSAGE_CHILDREN``) is printed beside it."""
    import resource
    import statistics

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "student"
        folder.mkdir()
        for module, stem in (("module_08", "module_8_training"), ("module_09", "module_9_training")):
            shutil.copy(SOLUTIONS_DIR / module / f"{stem}.py", folder)
        measured: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(rounds):
            for apart in (True, False):
                code = ("import sys; from graders.engine.routes import grading; "
                        f"grading.TRUSTED_APART = {apart}; from graders.cli import main; "
                        f"sys.exit(main(['grade', {str(folder)!r}, '--out', {str(Path(tmp) / 'out')!r}, "
                        "'--quiet', '--no-class-report']))")
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                wall = _timed([PY, "-c", code])
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                measured[apart].append((cpu, wall))
    median = {apart: (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
              for apart, runs in measured.items()}
    print(f"  trusted process: {median[True][1]:.2f} s wall, {median[True][0]:.2f} s CPU; in the child: "
          f"{median[False][1]:.2f} s wall, {median[False][0]:.2f} s CPU (medians of {rounds}); "
          f"+{median[True][0] - median[False][0]:.2f} s CPU", flush=True)
    return median[True][1] - median[False][1]


def bench_hide_cost(rounds: int = 6) -> float:
    """Wall seconds hide mode adds to one complete submission (both modules): graded with and without
    ``--hide-hidden-inputs`` (hidden checks in children of their own: :mod:`graders.engine.judging.parts`),
    ``rounds`` rounds interleaved, medians compared; CPU (the grader and every process it waited for) beside."""
    import resource
    import statistics

    with tempfile.TemporaryDirectory() as tmp:
        folder = _complete_submission(Path(tmp) / "student")
        measured: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(rounds):
            for hide in (True, False):
                command = [PY, "-m", "graders.cli", "grade", str(folder), "--out", str(Path(tmp) / "out"),
                           "--quiet", "--no-class-report", *(["--hide-hidden-inputs"] if hide else [])]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                wall = _timed(command)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                measured[hide].append(((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall))
    median = {hide: (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
              for hide, runs in measured.items()}
    print(f"  hide mode: {median[True][1]:.2f} s wall, {median[True][0]:.2f} s CPU; shown: {median[False][1]:.2f} s "
          f"wall, {median[False][0]:.2f} s CPU (medians of {rounds}); +{median[True][0] - median[False][0]:.2f} s CPU",
          flush=True)
    return median[True][1] - median[False][1]


def bench_against(rounds: int = 5, count: int = 1, jobs: int = 1) -> float:
    """Wall seconds this tree's grading of ``count`` complete submissions (both modules, warm, shown, ``--jobs
    jobs``) adds over another commit's: ``$RL4LLM_BENCH_AGAINST`` (default: the last commit when the tree has
    changes, else the one before), checked out in a worktree of its own with its bytecode compiled (as this
    tree's is, :func:`devtools.benchmark.cli._keep_bytecode`), the two graded alternately ``rounds`` times after
    one untimed grade each; prints both medians and every round (issue 55: each change priced against the
    commit before it, in one run)."""
    import statistics

    against = settings.get("RL4LLM_BENCH_AGAINST") or (
        "HEAD" if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                                 capture_output=True, text=True).stdout.strip() else "HEAD~1")
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "other"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(other), against], cwd=REPO_ROOT, check=True)
        subprocess.run([PY, "-c", "import compileall, sys; sys.pycache_prefix = None; [compileall.compile_dir("
                        "folder, quiet=2) for folder in ('graders', 'solutions', 'starter')]"], cwd=other, check=True)
        try:
            folders = [str(_complete_submission(Path(tmp) / f"student_{i:02d}")) for i in range(count)]
            trees = {"this tree": REPO_ROOT, against: other}
            measured: dict[str, list[float]] = {name: [] for name in trees}
            for round_ in range(rounds + 1):
                for name, tree in trees.items():
                    command = [PY, "-m", "graders.cli", "grade", *folders, "--out", str(Path(tmp) / "out"),
                               "--quiet", "--no-class-report", "--jobs", str(jobs)]
                    seconds = _timed(command, cwd=tree)
                    if round_:  # the first round warms each tree's reference store up, untimed
                        measured[name].append(seconds)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=REPO_ROOT, check=False)
    median = {name: statistics.median(runs) for name, runs in measured.items()}
    for name, runs in measured.items():
        print(f"  {name}: median {median[name]:.2f} s ({', '.join(f'{r:.2f}' for r in runs)})", flush=True)
    return median["this tree"] - median[against]


STAGES = (  # (label, the function whose cumulative time is the stage), in the order a grade runs them
    ("the whole command (graders/cli.py run as a module)", "graders/cli.py", "<module>"),
    ("the batch, in all", "graders/engine/routes/batch.py", "_grade_paths"),
    ("fingerprint the kit (twice: the tripwire)", "graders/engine/routes/batch.py", "kit_fingerprint"),
    ("prepare the job (cases, bundles, given code)", "graders/engine/routes/grading.py", "prepare_job"),
    ("  of which: load a given module (torch)", "graders/engine/judging/kit.py", "starter_module"),
    ("  of which: the check cases from the store", "graders/engine/judging/refcache.py", "kept_cases"),
    ("wait for the workers (their start, the learner's code, the trusted runs)",
     "concurrent/futures/_base.py", "as_completed"),
    ("write grades.csv", "graders/engine/routes/batch.py", "_write_csv"),
)


def bench_profile() -> float:
    """``profile``: one complete submission graded (warm) under ``cProfile``, its main thread's time by stage
    (issue 55, point 1); the submission's own thread (judging, its reports) and the workers show as the wait. Prints each stage's cumulative seconds."""
    import pstats

    with tempfile.TemporaryDirectory() as tmp:
        folder = _complete_submission(Path(tmp) / "student")
        command = [PY, "-m", "cProfile", "-o", str(Path(tmp) / "grade.prof"), "-m", "graders.cli", "grade",
                   str(folder), "--out", str(Path(tmp) / "out"), "--quiet", "--no-class-report"]
        _timed(command[:3] + command[5:])  # once to warm the reference store up, untimed
        seconds = _timed(command)
        stats = pstats.Stats(str(Path(tmp) / "grade.prof")).stats
    for label, file, function in STAGES:
        found = [cumulative for (path, _, name), (_, _, _, cumulative, _) in stats.items()
                 if path.endswith(file) and name == function]
        print(f"  {label}: {max(found):.2f} s" if found else f"  {label}: (not reached)", flush=True)
    return seconds


@dataclass
class Result:
    """A measurement with more to report than its seconds (printed as ``line``, saved as ``data``)."""

    seconds: float
    line: str
    data: dict = field(default_factory=dict)
