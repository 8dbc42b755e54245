"""Wall-clock benchmarks the README quotes. Not a test: timings depend on the machine.

    python -m graders.benchmark                 # everything, in a fixed order (several minutes)
    python -m graders.benchmark paired          # learner-tests, grade-one, grade-one-warm, grade-50,
                                                # nbgrader-paired, one after another, then a summary table
    python -m graders.benchmark m9-smoke m8-smoke learner-tests grade-one
    python -m graders.benchmark paired --json timings.json
    python -m graders.benchmark learner             # learner-m8 learner-m9: a learner's pytest, three states

Each measurement runs its commands in fresh interpreters (so imports are
counted, as a user would see them) and prints one line as soon as it
finishes; a summary table closes the run, and ``--json FILE`` also saves
every result (``nbgrader-paired`` as an object with both sides and the ratio).

``nbgrader-paired`` grades the same notebooks (:data:`PAIRED_NOTEBOOKS`) with
the real ``nbgrader autograde`` (through the course's ``EngineScores``) and
with ``rl4llm grade <the .ipynb files>``, and compares the two.

The reference cache (``$RL4LLM_CACHE``, :mod:`graders.engine.refcache`): the
run uses a fresh folder of its own (never the user's cache), shared by every
measurement and deleted at the end. ``grade-one`` empties it first (cold),
``grade-one-warm`` grades again right after (warm); later measurements find
it as the earlier ones left it (``paired``: ``grade-50`` and
``nbgrader-paired`` warm). ``nbgrader-paired`` warms it, untimed, when it
is still empty, so that both sides grade with the same warm cache.
``RL4LLM_CACHE=off`` in the environment runs everything without it.
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
from dataclasses import dataclass, field
from pathlib import Path

from graders import course, settings
from graders.paths import ASSIGNMENTS_DIR, REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

PY = sys.executable
CACHE_ENV = "RL4LLM_CACHE"  # graders.engine.refcache: the reference cache's folder, or "off"


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
    closed root, cgroups, the CPU budget: ``graders.engine.sandbox.SWITCHES``), the best of ``rounds`` each."""
    from graders.engine.sandbox import SWITCHES

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


# ---------------------------------------------------------------------------
# nbgrader-paired: the same notebooks through `nbgrader autograde` and `rl4llm grade`
# ---------------------------------------------------------------------------
COMPLETE, RELEASE = "complete", "release"
# (student, assignment, notebook stem, kind) of every notebook both sides grade. "complete" is the course's
# source notebook (every solution in: what tests/test_nbgrader.py's complete student submits), "release" the
# untouched notebook `nbgrader generate_assignment` hands out (stubs: 0 points).
PAIRED_NOTEBOOKS = (
    ("alice", "module_08", "module_8_reference", COMPLETE),
    ("alice", "module_09", "module_9_reference", COMPLETE),
    ("bob", "module_09", "module_9_reference", RELEASE),
)


@dataclass
class Result:
    """A measurement with more to report than its seconds (printed as ``line``, saved as ``data``)."""

    seconds: float
    line: str
    data: dict = field(default_factory=dict)


@dataclass
class PairedCourse:
    """An nbgrader course in a scratch folder, its assignments generated and the notebooks submitted."""

    root: Path  # the scratch folder: the course, Jupyter's folders, rl4llm's reports
    course: Path  # the nbgrader course directory (run nbgrader from here)
    env: dict[str, str]  # the environment both sides run in
    assignments: tuple[str, ...]  # in the order of PAIRED_NOTEBOOKS
    notebooks: list[tuple[tuple[str, str, str, str], Path]]  # (PAIRED_NOTEBOOKS entry, submitted .ipynb)


def nbgrader_environment(root: Path) -> dict[str, str]:
    """An environment whose only Jupyter kernel is this interpreter and with no user-level Jupyter config
    (as tests/test_nbgrader.py runs nbgrader); ``root`` holds Jupyter's folders."""
    kernels = root / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [PY, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (rl4llm)", "language": "python"}), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "IPYTHON"))}
    env.update({"JUPYTER_PATH": str(root / "jupyter"), "JUPYTER_DATA_DIR": str(root / "data"),
                "JUPYTER_CONFIG_DIR": str(root / "config"), "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
                "IPYTHONDIR": str(root / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
                # nbgrader runs `alembic` from PATH
                "PATH": str(Path(PY).parent) + os.pathsep + env.get("PATH", ""), "MPLBACKEND": "Agg",
                "PYTHONDONTWRITEBYTECODE": "1"})  # nothing written into the kit while it grades
    for name in ("RL4LLM_HIDE_HIDDEN_INPUTS", "HYPOTHESIS_STORAGE_DIRECTORY"):
        env.pop(name, None)
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(seconds, output) of a command in a fresh process with exactly ``env``; ``RuntimeError`` on failure."""
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        output = completed.stdout
        first = min((i for i in (output.find("[ERROR]"), output.find("| ERROR]"), output.find("Traceback"))
                     if i >= 0), default=max(0, len(output) - 6000))
        shown = output[output.rfind("\n", 0, first) + 1:][:6000]
        raise RuntimeError(f"{' '.join(command)} failed (exit {completed.returncode}):\n{shown}")
    return elapsed, completed.stdout


def _nbgrader(course: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    """``nbgrader ARGS`` run from the course folder, as a user runs it; an error in its log is a failure."""
    seconds, output = _run([PY, "-m", "nbgrader", *args], course, env)
    if "[ERROR]" in output or "| ERROR]" in output:
        first = min(i for i in (output.find("[ERROR]"), output.find("| ERROR]")) if i >= 0)
        shown = output[output.rfind("\n", 0, first) + 1:][:6000]
        raise RuntimeError(f"nbgrader {' '.join(args)} logged an error:\n{shown}")
    if "IPKernelApp" in output:
        raise RuntimeError(f"nbgrader {' '.join(args)} started a kernel: the course config was not used")
    return seconds, output


def build_paired_course(root: Path, notebooks=PAIRED_NOTEBOOKS) -> PairedCourse:
    """The kit's nbgrader course in ``root/course``: its config and the sources of the assignments
    ``notebooks`` name, ``nbgrader generate_assignment`` run for each (not timed), and every notebook
    submitted as ``submitted/<student>/<assignment>/<stem>.ipynb``."""
    course = root / "course"
    course.mkdir(parents=True)
    shutil.copy2(ASSIGNMENTS_DIR / "nbgrader_config.py", course / "nbgrader_config.py")
    assignments = tuple(dict.fromkeys(assignment for _, assignment, _, _ in notebooks))
    for assignment in assignments:
        shutil.copytree(ASSIGNMENTS_DIR / "source" / assignment, course / "source" / assignment,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = nbgrader_environment(root)
    for assignment in assignments:
        _nbgrader(course, env, "generate_assignment", assignment)
    submitted = []
    for entry in notebooks:
        student, assignment, stem, kind = entry
        folder = {COMPLETE: "source", RELEASE: "release"}[kind]
        target = course / "submitted" / student / assignment / f"{stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course / folder / assignment / f"{stem}.ipynb", target)
        submitted.append((entry, target))
    return PairedCourse(root, course, env, assignments, submitted)


def _nbgrader_scores(paired: PairedCourse) -> list[tuple[float, float]]:
    """(score, max score) of every submitted notebook in nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{paired.course / 'gradebook.db'}") as gradebook:
        return [(float(n.score), float(n.max_score))
                for n in (gradebook.find_submission_notebook(stem, assignment, student)
                          for (student, assignment, stem, _), _ in paired.notebooks)]


def _rl4llm_scores(paired: PairedCourse, out: Path) -> list[tuple[float, float]]:
    """(score, max score) of every submitted notebook's exercises in ``rl4llm grade``'s reports."""
    from graders.engine.batch import unique_names
    from graders.engine.submission import submission_name

    names = unique_names([submission_name(path) for _, path in paired.notebooks])
    scores = []
    for ((_, _, stem, _), _), name in zip(paired.notebooks, names):
        report = json.loads((out / name / "report.json").read_text(encoding="utf-8"))
        mine = [e for e in report["exercises"] if e["id"].startswith(f"{stem}.")]
        scores.append((sum(float(e["points"]) for e in mine), sum(float(e["max_points"]) for e in mine)))
    return scores


def bench_nbgrader_paired() -> Result:
    """The same notebooks graded by ``nbgrader autograde`` (one command per assignment, as nbgrader takes
    them) and by one ``rl4llm grade <the .ipynb files>``, each in fresh interpreters; only those commands are
    timed, both with the run's reference cache warm (warmed here, untimed, if still empty). rl4llm runs first,
    so that nothing it leaves warm can flatter it. Both sides' scores are compared notebook by notebook."""
    with tempfile.TemporaryDirectory(prefix="rl4llm-bench-nbgrader-") as tmp:
        paired = build_paired_course(Path(tmp))
        count = len(paired.notebooks)
        out = paired.root / "rl4llm-out"
        # nbgrader autograde writes no class report: neither does this side (the grading is what is compared)
        grade = [PY, "-m", "graders.cli", "grade", *(str(path) for _, path in paired.notebooks), "--quiet",
                 "--no-class-report"]
        if _cache_is_empty():  # the same warm cache for both sides, whatever ran before
            print("  (the reference cache is empty: one untimed rl4llm grade of the notebooks first)", flush=True)
            _run([*grade, "--out", str(paired.root / "warm-up")], paired.root, paired.env)
        rl4llm, _ = _run([*grade, "--out", str(out)], paired.root, paired.env)
        commands = {}
        for assignment in paired.assignments:
            commands[f"nbgrader autograde {assignment}"], _ = _nbgrader(paired.course, paired.env,
                                                                        "autograde", assignment)
        nbgrader = sum(commands.values())
        theirs, ours = _nbgrader_scores(paired), _rl4llm_scores(paired, out)
    scores = [{"notebook": f"{student}/{assignment}/{stem}.ipynb", "kind": kind,
               "nbgrader": f"{a:g}/{b:g}", "rl4llm": f"{c:g}/{d:g}"}
              for ((student, assignment, stem, kind), _), (a, b), (c, d) in zip(paired.notebooks, theirs, ours)]
    agree = all(abs(a - c) < 1e-6 and abs(b - d) < 1e-6 for (a, b), (c, d) in zip(theirs, ours))
    print("  " + ", ".join(f"{name}: {seconds:.2f} s" for name, seconds in commands.items())
          + f"; rl4llm grade ({count} .ipynb, one command): {rl4llm:.2f} s", flush=True)
    print("  scores (nbgrader = rl4llm): "
          + "; ".join(f"{s['notebook']} ({s['kind']}) {s['nbgrader']} = {s['rl4llm']}" for s in scores)
          + ("" if agree else "  <-- THE TWO SIDES DISAGREE"), flush=True)
    ratio = nbgrader / rl4llm
    line = (f"nbgrader autograde: {nbgrader:.2f} s, rl4llm grade: {rl4llm:.2f} s, per notebook: "
            f"{nbgrader / count:.2f} s vs {rl4llm / count:.2f} s, ratio: {ratio:.2f} x  ({count} notebooks)")
    data = {"notebooks": count, "nbgrader_autograde_s": round(nbgrader, 2), "rl4llm_grade_s": round(rl4llm, 2),
            "nbgrader_per_notebook_s": round(nbgrader / count, 2), "rl4llm_per_notebook_s": round(rl4llm / count, 2),
            "ratio": round(ratio, 2), "nbgrader_commands_s": {k: round(v, 2) for k, v in commands.items()},
            "scores": scores, "scores_agree": agree}
    return Result(nbgrader, line, data)


# ---------------------------------------------------------------------------
# learner-m8, learner-m9: `pytest starter/module_0X` as a learner runs it all day
# ---------------------------------------------------------------------------
UNTOUCHED, HALF_DONE, LEARNER_COMPLETE = "untouched", "half-done", "complete"
LEARNER_KINDS = (UNTOUCHED, HALF_DONE, LEARNER_COMPLETE)
LEARNER_ROUNDS = 3  # timed runs of each kind (after one untimed run that writes the bytecode)


def half_done_source(source: str, stem: str, relpath: str, stubbed: set[str]) -> str:
    """A solution file with the fences of the functions in ``stubbed`` replaced by the starter's stubs (the
    same ``raise NotImplementedError(...)`` line ``rl4llm build`` writes); every other function complete."""
    from graders.build.stubs import stub_message
    from graders.fences import find_fences

    lines = source.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0
    for fence in find_fences(source, relpath):
        if fence.function not in stubbed:
            continue
        out.extend(lines[cursor:fence.begin])
        indent = lines[fence.begin][: len(lines[fence.begin]) - len(lines[fence.begin].lstrip())]
        out.append(f"{indent}raise NotImplementedError({stub_message(stem, fence)!r})\n")
        cursor = fence.end + 1
    out.extend(lines[cursor:])
    return "".join(out)


def half_done_implementation(target: Path, folder: str) -> Path:
    """An implementation root for ``RL4LLM_IMPL_ROOT``: ``target/<folder>`` holds the module's solution files,
    every other exercise of the module (course order: the 2nd, 4th, ...) back to its stub. Deterministic."""
    module = course.module(folder)
    shutil.copytree(SOLUTIONS_DIR / module.folder, target / module.folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    exercises = course.exercises([module.folder])
    stubbed = {exercise for index, exercise in enumerate(exercises) if index % 2 == 1}
    for stem in module.files:
        path = target / module.folder / f"{stem}.py"
        names = {exercise.split(".", 1)[1] for exercise in stubbed if exercise.split(".", 1)[0] == stem}
        path.write_text(half_done_source(path.read_text(encoding="utf-8"), stem, f"{module.folder}/{stem}.py",
                                         names), encoding="utf-8")
    return target


def _learner_run(folder: str, impl_root: Path | None, pycache: Path | None = None) -> float:
    """Seconds of ``pytest starter/<folder>`` (as a learner types it, in a fresh interpreter) on the
    implementation in ``impl_root`` (``None``: the starter itself), bytecode (pytest's rewritten asserts
    included) kept in ``pycache`` as a learner's ``__pycache__`` keeps it, and pytest's cache beside it (the
    toy's warm-up, kept between runs as a learner's ``.pytest_cache`` keeps it), nothing written into the kit.
    Failing tests are expected (exit 1); anything else (an error collecting, a crash) is a ``RuntimeError``."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("RL4LLM_IMPL_ROOT", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if impl_root is not None:
        env["RL4LLM_IMPL_ROOT"] = str(impl_root)
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["MPLBACKEND"] = "Agg"
    # pytest's cache (the toy's warm-up kept between runs, as a learner's .pytest_cache keeps it) beside the
    # bytecode, never in the kit
    cache = ["-o", f"cache_dir={pycache.parent / 'pytest-cache'}"] if pycache is not None else ["-p", "no:cacheprovider"]
    command = [PY, "-m", "pytest", "-q", *cache, f"starter/{folder}"]
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    elapsed = time.perf_counter() - start
    if completed.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} (RL4LLM_IMPL_ROOT={impl_root}) failed with exit "
                           f"{completed.returncode}:\n{completed.stdout[-3000:]}")
    return elapsed


def bench_learner(folder: str, rounds: int = LEARNER_ROUNDS) -> Result:
    """``learner-m8``/``learner-m9``: ``pytest starter/module_0X`` on the untouched starter, on a half-done
    implementation (:func:`half_done_implementation`) and on a complete one (solutions/), each run once untimed
    (bytecode written to the run's own folder, as after a learner's first run) and then ``rounds`` times, the
    kinds interleaved; the line gives the minimum and the median of each kind, and the minimum of a fresh
    ``import numpy, torch`` as the machine's yardstick (the runs import both)."""
    import statistics

    with tempfile.TemporaryDirectory(prefix="rl4llm-bench-learner-") as tmp:
        pycache = Path(tmp) / "pycache"
        roots = {UNTOUCHED: None, HALF_DONE: half_done_implementation(Path(tmp) / "half-done", folder),
                 LEARNER_COMPLETE: SOLUTIONS_DIR}
        for root in roots.values():
            _learner_run(folder, root, pycache)
        times: dict[str, list[float]] = {kind: [] for kind in LEARNER_KINDS}
        for _ in range(rounds):
            for kind in LEARNER_KINDS:
                times[kind].append(_learner_run(folder, roots[kind], pycache))
        yardstick = min(_timed([PY, "-c", "import numpy, torch"]) for _ in range(rounds))
    best = {kind: min(values) for kind, values in times.items()}
    median = {kind: statistics.median(values) for kind, values in times.items()}
    line = (f"learner pytest {folder}: " + ", ".join(f"{kind} {best[kind]:.1f} s" for kind in LEARNER_KINDS)
            + f"  (min of {rounds}; median " + ", ".join(f"{median[kind]:.1f}" for kind in LEARNER_KINDS)
            + f" s; a fresh `import numpy, torch` here: {yardstick:.1f} s)")
    data = {"learner": folder, "rounds": rounds, "min_s": {k: round(v, 2) for k, v in best.items()},
            "median_s": {k: round(v, 2) for k, v in median.items()},
            "runs_s": {k: [round(v, 2) for v in values] for k, values in times.items()},
            "import_numpy_torch_s": round(yardstick, 2)}
    return Result(max(best.values()), line, data)


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

    from graders.engine.demo import assemble_examples

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
}
GROUPS = {  # a name on the command line that stands for several measurements, run in this order
    "paired": ("learner-tests", "grade-one", "grade-one-warm", "grade-50", "nbgrader-paired"),
    "learner": ("learner-m8", "learner-m9"),
}
WIDTH = max(map(len, MEASUREMENTS))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m graders.benchmark",
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    names = resolve(parser, args.names)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"machine: {machine}", flush=True)
    print(f"measurements: {' '.join(names)}", flush=True)
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
