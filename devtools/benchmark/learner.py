"""``learner-m8``, ``learner-m9``: ``pytest starter/module_0X`` as a learner runs it all day.

Three states of the learner's files -- untouched stubs, half done (:func:`half_done_implementation`),
complete -- each timed in a fresh interpreter with its bytecode and pytest cache kept between runs,
as a learner's own folder keeps them (:func:`bench_learner`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from graders import course
from devtools.benchmark.grading import PY, Result, _timed
from graders.paths import REPO_ROOT, SOLUTIONS_DIR


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
