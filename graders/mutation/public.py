"""The public tests on a mutant: does ``pytest -k <function>`` on the starter's tests fail, and what does it name?

The starter's public tests (``starter/module_0X/test_<stem>.py``) run against a
copy of the reference module folder (``RL4LLM_IMPL_ROOT``, ``starter/conftest.py``),
in English, ``-k <function>``. A fresh process per mutant costs about 2 s of
CPU (pytest, NumPy, the conftest) for a run of about 0.5 s, so one pytest
process runs the tests for up to :data:`BATCH` mutants of one exercise
(:mod:`graders.mutation.pytest_plugin`: each mutant defined in the imported
learner module, as appending it to the file does, then put back), ``jobs``
processes at a time. pytest's "likely mistake in <function>: <name> -- <hint>"
lines are kept as the names pytest gave.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from graders import course
from graders.mutation.pytest_plugin import REFERENCE
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

LIKELY = re.compile(r"likely mistake in (\w+): (\w+) -- (.*)$", re.MULTILINE)
TIMEOUT = 300  # seconds of a pytest process, plus 30 per mutant
BATCH = 40


def _environment(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_RECORD_CALLS", "PYTEST_ADDOPTS")}
    env.update(RL4LLM_IMPL_ROOT=str(root), RL4LLM_LANG="en", MPLBACKEND="Agg", COLUMNS="400",
               OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def public_batch(exercise: str, mutants: list[tuple[str, str]]) -> dict[str, dict]:
    """Run ``pytest -k <function>`` on the public tests of ``exercise``'s file once per mutant
    (``(mutant id, mutated function source)``), in one pytest process (:mod:`graders.mutation.pytest_plugin`),
    against a copy of the reference module folder: ``{mutant id: {"failed": bool | None, "failures": [...],
    "pytest_names": [...], "hints": [...]}}`` (``failed`` None when the run broke or the reference itself failed)."""
    stem, function = exercise.split(".", 1)
    folder = course.module_of(stem).folder
    tests = STARTER_DIR / folder / f"test_{stem}.py"
    with tempfile.TemporaryDirectory(prefix="rl4llm-mutants-") as temporary:
        root = Path(temporary)
        shutil.copytree(SOLUTIONS_DIR / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
        listing, verdicts = root / "mutants.json", root / "verdicts.json"
        listing.write_text(json.dumps([{"id": i, "module": stem, "source": source} for i, source in mutants]),
                           encoding="utf-8")
        try:
            completed = subprocess.run(
                [sys.executable, "-m", "pytest", str(tests), "-k", function, "-q", "-p", "no:cacheprovider",
                 "-p", "graders.mutation.pytest_plugin", f"--mutants-in={listing}", f"--mutants-out={verdicts}",
                 "--tb=no", "--no-header", "-rN"],
                cwd=REPO_ROOT, env=_environment(root), capture_output=True, text=True, timeout=TIMEOUT + 30 * len(mutants))
            found = json.loads(verdicts.read_text(encoding="utf-8")) if verdicts.exists() else None
        except subprocess.TimeoutExpired:
            found, completed = None, None
    broken = found is None or found.get(REFERENCE, {}).get("failed")
    results = {}
    for mutant_id, _ in mutants:
        verdict = (found or {}).get(mutant_id)
        if broken or verdict is None:
            why = ("the reference fails these tests" if found else
                   f"pytest broke: {(completed.stdout + completed.stderr)[-300:] if completed else 'timed out'}")
            results[mutant_id] = {"failed": None, "failures": [], "pytest_names": [], "hints": [], "error": why}
            continue
        names = sorted({m[2] for line in verdict["hints"] for m in LIKELY.finditer(line)})
        results[mutant_id] = {"failed": bool(verdict["failed"]), "failures": verdict["failed"][:20],
                              "pytest_names": names, "hints": [h[:300] for h in verdict["hints"][:10]]}
    return results


def public_runs(tasks: list[tuple[str, str, str]], jobs: int = 2, progress=None, batch: int = BATCH) -> dict[str, dict]:
    """``{mutant id: verdict}`` for ``(mutant id, exercise, mutated function source)`` tasks: one pytest process
    per ``batch`` mutants of one exercise, ``jobs`` processes at a time; ``progress(done, total, exercise)``."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for mutant_id, exercise, source in tasks:
        groups.setdefault(exercise, []).append((mutant_id, source))
    batches = [(exercise, items[i:i + batch]) for exercise, items in groups.items()
               for i in range(0, len(items), batch)]
    results: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(public_batch, exercise, items): exercise for exercise, items in batches}
        for future in as_completed(futures):
            results.update(future.result())
            if progress:
                progress(len(results), len(tasks), futures[future])
    return results
