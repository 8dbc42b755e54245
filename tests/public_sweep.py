"""The sweep "every catalogued mistake fails a public test of its own function", for any set of exercises, and
its record (``tests/sweep_record.json``): each exercise's input digest for which the sweep last passed.

The exhaustive tier runs the sweep over every exercise (tests/test_public_means_full.py); the fast tier runs it
for the exercises whose digest differs from the record's (tests/test_sweep_record.py), so a change cannot land
with green-but-wrong public tests for the exercises it touches. An exercise's digest covers everything its
sweep reads: the text of every mistake's learner file (the reference file with the mistake in it: catalogued,
wrong-type and outside-the-catalogue ones), the module's other solution files (its given modules), the checks
of its learner file, and the starter's module folder and top-level files (the public tests, the conftest and
what it reads; the hint tables, which change no verdict, left out, and so are the module pages (``*.md``: a
page's wording runs no test) and what a run of the starter's tests leaves there: bytecode and dot folders such as
.hypothesis/).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from graders import course
from graders.build import exercises_in
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import all_catalogue_files, exercise_of, mutant_source, read_entries
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, run_many
from learner_variants import OUTSIDE_MISTAKES, TYPE_VARIANTS, variant_source

RECORD = Path(__file__).with_name("sweep_record.json")
PYCACHE = tempfile.mkdtemp(prefix="rl4llm-pycache-")  # the runs' bytecode, outside the tree
atexit.register(shutil.rmtree, PYCACHE, True)
FAILED = re.compile(r"^FAILED \S+::(test_\w+)", re.MULTILINE)
STEMS = [f.stem for f in DEFAULT_KIT.files() if DEFAULT_KIT.solution_path(f.stem).exists()]


@functools.cache
def mistakes(stem: str) -> tuple[tuple[str, str, str], ...]:
    """(exercise id, name, learner file text) of every catalogued and wrong-type mistake of ``stem`` (read once
    a session: a test that changes the catalogue or the references does so in a copy, never in the tree)."""
    found = [(exercise_of(path), entry.name, mutant_source(exercise_of(path), entry.name))
             for path in all_catalogue_files() if path.parent.name == stem for entry in read_entries(path)]
    found += [(v.exercise, v.name, variant_source(v)) for v in (*TYPE_VARIANTS, *OUTSIDE_MISTAKES) if v.stem == stem]
    return tuple(found)


def owner(test_name: str, functions: list[str]) -> str | None:
    """The function a public test is a test of: the longest ``f`` with ``test_name`` = ``test_<f>[_...]``."""
    names = [f for f in functions if test_name == f"test_{f}" or test_name.startswith(f"test_{f}_")]
    return max(names, key=len) if names else None


def _job(tmp_root: Path, number: int, stem: str, exercise: str, name: str, text: str) -> Job:
    folder = course.module_of(stem).folder
    root = tmp_root / f"{number}-{re.sub(r'[^a-z0-9_]', '_', name)}"
    shutil.copytree(SOLUTIONS_DIR / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / folder / f"{stem}.py").write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_RECORD_CALLS", "PYTHONDONTWRITEBYTECODE")}
    env.update(RL4LLM_IMPL_ROOT=str(root), RL4LLM_LANG="en", MPLBACKEND="Agg", COLUMNS="400",
               PYTHONPYCACHEPREFIX=PYCACHE)
    function = exercise.split(".", 1)[1]
    return Job(args=[str(STARTER_DIR / folder / f"test_{stem}.py"), "-q", "-rf", "-p", "no:cacheprovider",
                     "-k", function], env=env, cwd=str(REPO_ROOT))


def own_failures(tmp_root: Path, stem: str, chosen: list[tuple[str, str, str]]) -> list[tuple[set[str], str]]:
    """For each mistake of ``chosen`` (all of learner file ``stem``): the public tests of its own function that
    failed, and the run's output; run two at a time, each a fork of one preloaded driver."""
    functions = [e.split(".", 1)[1] for e in exercises_in(DEFAULT_KIT.solution_path(stem))]
    runs = run_many([_job(tmp_root, number, stem, *mistake) for number, mistake in enumerate(chosen)], workers=2)
    return [({test for test in FAILED.findall(run.stdout) if owner(test, functions) == exercise.split(".", 1)[1]},
             f"(exit {run.returncode})\n{run.stdout}") for (exercise, _, _), run in zip(chosen, runs)]


def unfailed(chosen: list[tuple[str, str, str]], failures: list[tuple[set[str], str]]) -> list[str]:
    """The mistakes of ``chosen`` whose :func:`own_failures` entry names no failed test, each with the run's
    last lines."""
    return [f"{exercise} {name}: every public test of {exercise.split('.', 1)[1]} passes {output[-600:]}"
            for (exercise, name, _), (failed, output) in zip(chosen, failures) if not failed]


def slipped(tmp_root: Path, stem: str, chosen: list[tuple[str, str, str]]) -> list[str]:
    """The mistakes of ``chosen`` (all of learner file ``stem``) that fail no public test of their own
    function, each with the run's last lines."""
    return unfailed(chosen, own_failures(tmp_root, stem, chosen))


def _files_digest(paths) -> bytes:
    digest = hashlib.sha256()
    for path in sorted(paths):
        # what a run of the starter's tests leaves (bytecode, .hypothesis/, .pytest_cache/) is not an input, nor
        # are the module pages (README.md, README.ru.md: a page's wording runs no test)
        skipped = any(part == "__pycache__" or part.startswith(".") for part in path.relative_to(REPO_ROOT).parts)
        if path.is_file() and not skipped and path.name != "_hints.json" and path.suffix != ".md":
            digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.digest()


def digests(find=mistakes) -> dict[str, str]:
    """Exercise id -> the SHA-256 of everything its sweep reads (the module docstring lists it); ``find``
    gives a learner file's mistakes."""
    result = {}
    for stem in STEMS:
        folder = course.module_of(stem).folder
        checks = [REPO_ROOT / "graders" / "checks" / f"{stem}.py", *(REPO_ROOT / "graders" / "checks" / stem).glob("*.py")]
        shared = _files_digest([*checks, *(SOLUTIONS_DIR / folder).glob("*.py"),
                                *(STARTER_DIR / folder).rglob("*"), *STARTER_DIR.glob("*.py")])
        found = find(stem)
        for exercise in exercises_in(DEFAULT_KIT.solution_path(stem)):
            digest = hashlib.sha256(shared)
            for exercise_id, name, text in sorted(m for m in found if m[0] == exercise):
                digest.update(f"\0{name}\0{text}".encode())
            result[exercise] = digest.hexdigest()
    return result


def read_record(path: Path = RECORD) -> dict[str, str]:
    """The committed record (exercise id -> digest), empty when missing or unreadable."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def stale(record: dict[str, str], current: dict[str, str]) -> list[str]:
    """The exercises whose sweep the record does not vouch for (new or changed), sorted."""
    return sorted(exercise for exercise, digest in current.items() if record.get(exercise) != digest)


def write_record(current: dict[str, str], path: Path = RECORD) -> None:
    """Record ``current`` (every exercise's digest: call it only after their sweeps passed)."""
    path.write_text(json.dumps(current, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def sweep_changed(tmp_root: Path, record: dict[str, str], current: dict[str, str],
                  run=slipped) -> tuple[list[str], list[str]]:
    """Run the sweep for the exercises :func:`stale` names: (the mistakes that slipped, those exercises)."""
    changed = stale(record, current)
    missed: list[str] = []
    for stem in STEMS:
        chosen = [mistake for mistake in mistakes(stem) if mistake[0] in changed]
        if chosen:
            (tmp_root / stem).mkdir()
            missed += run(tmp_root / stem, stem, chosen)
    return missed, changed
