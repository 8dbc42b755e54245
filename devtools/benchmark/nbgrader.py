"""``nbgrader-paired``: the same notebooks through the real ``nbgrader autograde`` and ``rl4llm grade``.

The course (:data:`PAIRED_NOTEBOOKS`) is built in a scratch folder with its own Jupyter folders
(:func:`build_paired_course`); both sides grade it with the same warm reference cache, and the two
sets of scores and times are compared (:func:`bench_nbgrader_paired`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from devtools.benchmark.grading import PY, Result, _cache_is_empty
from graders.paths import ASSIGNMENTS_DIR


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
    for name in ("RL4LLM_HIDE_HIDDEN_INPUTS", "RL4LLM_SHOW_HIDDEN_INPUTS", "RL4LLM_NBGRADER_VERBOSE",
                 "HYPOTHESIS_STORAGE_DIRECTORY"):
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
    from graders.engine.routes.batch import unique_names
    from graders.engine.intake.submission import submission_name

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
