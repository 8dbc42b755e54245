"""Green public tests mean full marks: a mistake that loses hidden points fails a public test of its function.

For every catalogue entry (each loses hidden points on its exercise: tests/test_catalogue.py), every
wrong-type variant and every mistake outside the catalogue of tests/learner_variants.py (each loses points
on its exercise: tests/test_judge_truth.py), the learner's public
tests are run on a learner file with exactly that one mistake (``RL4LLM_IMPL_ROOT`` points them at it),
selected with ``-k <function>``; at least one failing test must be a test OF that function (named
``test_<function>_...``; a test of another function that happens to call it does not count). So a learner
whose public tests of a function are green cannot hold any of these mistakes in it.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile

import pytest

from graders import course
from graders.build import exercises_in
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import all_catalogue_files, exercise_of, mutant_source, read_entries
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, run_many
from learner_variants import OUTSIDE_MISTAKES, TYPE_VARIANTS, variant_source

pytestmark = pytest.mark.slow  # one public-test run per catalogue entry: a few minutes

PYCACHE = tempfile.mkdtemp(prefix="rl4llm-pycache-")  # this run's bytecode, outside the tree
atexit.register(shutil.rmtree, PYCACHE, True)
FAILED = re.compile(r"^FAILED \S+::(test_\w+)", re.MULTILINE)
STEMS = [f.stem for f in DEFAULT_KIT.files() if DEFAULT_KIT.solution_path(f.stem).exists()]


def _mistakes(stem: str) -> list[tuple[str, str, str]]:
    """(exercise id, name, learner file text) of every catalogued and wrong-type mistake of ``stem``."""
    found = [(exercise_of(path), entry.name, mutant_source(exercise_of(path), entry.name))
             for path in all_catalogue_files() if path.parent.name == stem for entry in read_entries(path)]
    found += [(v.exercise, v.name, variant_source(v)) for v in (*TYPE_VARIANTS, *OUTSIDE_MISTAKES) if v.stem == stem]
    return found


def owner(test_name: str, functions: list[str]) -> str | None:
    """The function a public test is a test of: the longest ``f`` with ``test_name`` = ``test_<f>[_...]``."""
    names = [f for f in functions if test_name == f"test_{f}" or test_name.startswith(f"test_{f}_")]
    return max(names, key=len) if names else None


def test_a_test_is_owned_by_the_longest_function_name_it_starts_with():
    functions = ["dpo_loss", "dpo_loss_from_margin", "ipo_loss"]
    assert owner("test_dpo_loss_from_margin_rows", functions) == "dpo_loss_from_margin"
    assert owner("test_dpo_loss_rewards_detached", functions) == "dpo_loss"
    assert owner("test_ipo_loss", functions) == "ipo_loss" and owner("test_simpo_rows", functions) is None


def _job(tmp_root, number: int, stem: str, exercise: str, name: str, text: str) -> Job:
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


@pytest.mark.exhaustive
@pytest.mark.parametrize("stem", STEMS)
def test_every_mistake_that_loses_hidden_points_fails_a_public_test_of_its_function(tmp_path, stem):
    mistakes = _mistakes(stem)
    assert mistakes, f"no catalogued mistake for {stem}"
    functions = [e.split(".", 1)[1] for e in exercises_in(DEFAULT_KIT.solution_path(stem))]
    runs = run_many([_job(tmp_path, number, stem, *mistake) for number, mistake in enumerate(mistakes)], workers=2)
    slipped = []
    for (exercise, name, _), run in zip(mistakes, runs):
        function = exercise.split(".", 1)[1]
        failed = {test for test in FAILED.findall(run.stdout) if owner(test, functions) == function}
        if not failed:
            slipped.append(f"{exercise} {name}: every public test of {function} passes "
                           f"(exit {run.returncode})\n{run.stdout[-600:]}")
    assert not slipped, f"{len(slipped)} of {len(mistakes)} mistakes pass the public tests:\n\n" + "\n\n".join(slipped)
