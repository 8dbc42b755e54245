"""The learner's route to one exercise: ``pytest starter/module_0X -k <function>`` runs every public
test that checks ``<function>``, its value tests included.

``-k`` is a case-insensitive substring match on the test's name, so the rule is a naming rule:
a public test that calls an exercise carries that exercise's full name (a test of several
functions carries all their names, or is split). Over-selecting is harmless (``-k dpo_loss``
also runs the ``conservative_dpo_loss`` tests); under-selecting is the bug this file guards
against: a wrong formula that ``-k`` reports as "1 passed" because only an argument check was
selected, or "no tests ran" because its value test is named after another function.

- the naming rule, read from the test files' AST (instant);
- what pytest itself collects, once for both modules (a few seconds: torch is imported);
- slow, with teeth: for every exercise, an implementation folder where ONLY that function returns
  a wrong value (its argument checks unchanged) makes ``pytest starter/module_0X -k <function>``
  select at least one test and fail.
"""

from __future__ import annotations

import ast
import atexit
import inspect
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from graders import course
from graders.engine.judging.kit import DEFAULT_KIT
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, Result, run_many

EXERCISES = DEFAULT_KIT.exercises()  # "<file stem>.<function>"


PYCACHE = tempfile.mkdtemp(prefix="rl4llm-pycache-")  # this run's bytecode, outside the tree
atexit.register(shutil.rmtree, PYCACHE, True)

def _folder(exercise: str) -> str:
    return course.module_of(exercise.split(".", 1)[0]).folder


def _function(exercise: str) -> str:
    return exercise.split(".", 1)[1]


def _exercises_of(folder: str) -> list[str]:
    return [exercise for exercise in EXERCISES if _folder(exercise) == folder]


FOLDERS = sorted({_folder(exercise) for exercise in EXERCISES})
PUBLIC_TEST_FILES = sorted(STARTER_DIR.glob("module_*/test_*.py"))


def _env(impl_root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_RECORD_CALLS", "PYTHONDONTWRITEBYTECODE")}
    # bytecode (pytest's rewritten asserts included) cached outside the tree, shared by the runs of this session
    return {**env, "RL4LLM_IMPL_ROOT": str(impl_root), "MPLBACKEND": "Agg", "PYTHONPYCACHEPREFIX": PYCACHE}


def _job(args: list[str], impl_root: Path) -> Job:
    """pytest run from the kit's root, as a learner runs it, against the implementations in ``impl_root``."""
    return Job(args=[*args, "-q", "-p", "no:cacheprovider"], env=_env(impl_root), cwd=str(REPO_ROOT))


def _pytest(args: list[str], impl_root: Path) -> Result:
    [result] = run_many([_job(args, impl_root)], workers=1)
    return result


# ----------------------------------------------------------------------------- the naming rule
def _names(node: ast.AST) -> set[str]:
    return ({n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)})


def called_exercises(path: Path, functions: set[str]) -> dict[str, set[str]]:
    """test name -> the exercise functions its body, its decorators (parametrize rows) and the test
    file's module-level helpers and constants it uses (transitively) name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in _names(target):
                    top[name] = node

    def references(node: ast.AST, seen: set[str]) -> set[str]:
        found = set()
        for name in _names(node):
            if name in functions:
                found.add(name)
            elif name in top and name not in seen:
                seen.add(name)
                found |= references(top[name], seen)
        return found

    return {node.name: references(node, {node.name}) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")}


@pytest.mark.parametrize("test_file", PUBLIC_TEST_FILES, ids=lambda p: p.stem)
def test_a_public_test_carries_the_name_of_every_exercise_it_calls(test_file):
    functions = {_function(exercise) for exercise in _exercises_of(test_file.parent.name)}
    tests = called_exercises(test_file, functions)
    assert tests, test_file
    unnamed = {test: sorted(f for f in called if f not in test) for test, called in tests.items()}
    unnamed = {test: missing for test, missing in unnamed.items() if missing}
    assert not unnamed, (f"{test_file.name}: `-k <function>` misses these tests, which call a function their "
                         f"name does not carry (rename or split): {unnamed}")


@pytest.mark.parametrize("test_file", PUBLIC_TEST_FILES, ids=lambda p: p.stem)
def test_a_public_test_is_named_test_function_what(test_file):
    stem = test_file.stem.removeprefix("test_")
    functions = [_function(exercise) for exercise in EXERCISES if exercise.split(".", 1)[0] == stem]
    assert functions, f"{test_file.name} tests no learner file"
    tests = called_exercises(test_file, set(functions))
    for test, called in tests.items():
        assert any(test.startswith(f"test_{f}_") for f in functions), f"{test}: not test_<function>_<what>"
    for function in functions:
        assert any(function in called and function in test for test, called in tests.items()), (
            f"{stem}.{function}: no public test in {test_file.name} calls it and carries its name")


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_every_exercise_selects_a_collected_test_that_carries_its_name():
    run = _pytest(["--collect-only", *(f"starter/{folder}" for folder in FOLDERS)], SOLUTIONS_DIR)
    assert run.returncode == 0, run.stdout[-3000:]
    ids = [line.strip() for line in run.stdout.splitlines() if "::" in line]
    assert ids, run.stdout[-3000:]
    unselected = []
    for exercise in EXERCISES:
        folder, function = _folder(exercise), _function(exercise)
        names = [i.split("::", 1)[1].split("[", 1)[0] for i in ids if i.startswith(f"starter/{folder}/")]
        if not any(function in name for name in names):
            unselected.append(f"pytest starter/{folder} -k {function}")
    assert not unselected, f"these select no test named after their function: {unselected}"


# ----------------------------------------------------------------------------- with teeth
def _wrong_value(value):
    """A value that differs from ``value`` in every leaf: numbers + 0.5 (arrays and tensors keep their
    dtype, device and graph), booleans flipped, strings extended; containers and dataclasses rebuilt."""
    import dataclasses
    import sys

    import numpy as np

    torch = sys.modules.get("torch")  # a tensor exists only once torch is imported
    if value is None:
        return 0.5
    if isinstance(value, (bool, np.bool_)):
        return not value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return value + 1 if isinstance(value, (int, np.integer)) else value + 0.5
    if isinstance(value, str):
        return value + "?"
    if isinstance(value, np.ndarray):
        return ~value if value.dtype == bool else value + (1 if value.dtype.kind in "iu" else 0.5)
    if torch is not None and isinstance(value, torch.Tensor):
        return ~value if value.dtype == torch.bool else value + (1 if not value.is_floating_point() else 0.5)
    if isinstance(value, (list, tuple)):
        items = [_wrong_value(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {key: _wrong_value(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        copy = dataclasses.replace(value)
        for field in dataclasses.fields(value):
            object.__setattr__(copy, field.name, _wrong_value(getattr(value, field.name)))
        return copy
    raise TypeError(f"_wrong_value: no wrong value for a {type(value).__name__}")


def wrong_source(exercise: str) -> str:
    """The reference learner file with ONLY ``exercise`` wrong: it returns ``_wrong_value`` of the right
    answer, after the right function's own argument checks (a ValueError stays a ValueError)."""
    stem, function = exercise.split(".", 1)
    text = (SOLUTIONS_DIR / _folder(exercise) / f"{stem}.py").read_text(encoding="utf-8")
    return (f"{text}\n\n# --- tests/test_public_selection.py: only {function} is wrong\n"
            f"import functools as _functools\n\n\n{inspect.getsource(_wrong_value)}\n\n"
            f"_right_{function} = {function}\n\n\n"
            f"@_functools.wraps(_right_{function})\n"
            f"def {function}(*args, **kwargs):\n"
            f"    return _wrong_value(_right_{function}(*args, **kwargs))\n")


def _impl_root(tmp_path: Path, folder: str, exercise: str | None = None) -> Path:
    """A folder laid out like solutions/: ``folder`` copied whole (its given modules too), then the
    learner file of ``exercise`` (if any) replaced by its one-wrong-function version."""
    root = tmp_path / (exercise or "reference")
    shutil.copytree(SOLUTIONS_DIR / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    if exercise is not None:
        stem = exercise.split(".", 1)[0]
        (root / folder / f"{stem}.py").write_text(wrong_source(exercise), encoding="utf-8")
    return root


def _route_job(tmp_path: Path, folder: str, exercise: str) -> Job:
    """``pytest starter/<folder> -k <function>`` on a folder where only ``exercise`` is wrong."""
    return _job([f"starter/{folder}", "-k", _function(exercise)], _impl_root(tmp_path, folder, exercise))


def _route_problem(folder: str, exercise: str, run: Result) -> str | None:
    """What is wrong with that run; None: nothing."""
    function = _function(exercise)
    if run.returncode == 1 and re.search(r"\b\d+ failed\b", run.stdout):
        return None
    summary = (run.stdout.strip().splitlines() or [""])[-1]
    return (f"{exercise}: with only {function} wrong, `pytest starter/{folder} -k {function}` exits "
            f"{run.returncode} ({summary!r}), not 1 with a failure:\n{run.stdout[-2000:]}")


# A sweep (one pytest per exercise, about 56 s of CPU for the two folders): the exhaustive tier. The README's
# suite holds its guarantee for every exercise by cheaper means: the naming rule (AST, above) and the collected
# names (test_every_exercise_selects_a_collected_test_that_carries_its_name), and tests/test_sweep_record.py,
# which runs `-k <function>` with each catalogued mistake of every changed exercise (the record for the rest);
# the reference passing every public test is tests/test_public_tests.py.
@pytest.mark.slow
@pytest.mark.exhaustive
@pytest.mark.parametrize("folder", FOLDERS)
def test_one_wrong_function_fails_its_k_route(tmp_path, folder):
    exercises = _exercises_of(folder)
    assert exercises
    control, *runs = run_many([_job([f"starter/{folder}"], _impl_root(tmp_path, folder)),  # the layout passes
                               *(_route_job(tmp_path, folder, e) for e in exercises)], workers=2)
    assert control.returncode == 0, control.stdout[-3000:]
    problems = [p for e, run in zip(exercises, runs) if (p := _route_problem(folder, e, run))]
    assert not problems, "\n\n".join(problems)
