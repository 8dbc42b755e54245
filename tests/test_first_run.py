"""A learner's first pytest run orients them: on stubs it ends with what is left to write, in the module page's
order, and where to start; a ``DID NOT RAISE`` failure shows the call that should have raised. In English and
Russian (``starter/conftest.py``)."""

from __future__ import annotations

import os
import shutil

import pytest

from graders import course
from graders.build.hints import starter_conftest
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, run_many

NO_CHECK = '''

_checked_informative_group_probability = informative_group_probability


def informative_group_probability(p, group_size):
    """The right formula with p clamped into [0, 1] instead of refused (a learner's skipped validation)."""
    return _checked_informative_group_probability(min(max(p, 0.0), 1.0), max(group_size, 1))
'''


def _env(language: str, impl) -> dict:
    return {**os.environ, "RL4LLM_LANG": language, "RL4LLM_IMPL_ROOT": str(impl), "MPLBACKEND": "Agg"}


def test_the_order_is_the_page_order():
    conftest = starter_conftest()
    exercises = course.exercises(["9"])
    assert conftest._page_order(reversed(exercises)) == exercises  # the registry lists the page's order
    lines = conftest.to_write_lines({exercises[3], exercises[1]}, "en")
    assert lines == [f"2 function(s) still to write, in the module page's order: {exercises[1]}, {exercises[3]}",
                     f"start with {exercises[1]}: pytest -k {exercises[1].split('.')[1]}"]
    assert conftest.to_write_lines(set(), "en") == []


def test_only_kit_stubs_are_counted():
    conftest = starter_conftest()
    assert conftest.stub_function(NotImplementedError(
        "module_9_reference.k3_kl is not implemented yet -- k3 = exp(d) - d - 1")) == "module_9_reference.k3_kl"
    assert conftest.stub_function(NotImplementedError("TODO")) is None
    assert conftest.stub_function(NotImplementedError("os.system is not implemented yet -- x")) is None


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The untouched starter of Module 9 in both languages, and a learner who skipped one validation."""
    learner = tmp_path_factory.mktemp("learner")
    shutil.copytree(SOLUTIONS_DIR / "module_09", learner / "module_09", ignore=shutil.ignore_patterns("__pycache__"))
    with open(learner / "module_09" / "module_9_reference.py", "a", encoding="utf-8") as file:
        file.write(NO_CHECK)
    folder = str(STARTER_DIR / "module_09")
    jobs = [Job([folder, "-q", "-p", "no:cacheprovider"], _env(language, STARTER_DIR), str(REPO_ROOT))
            for language in ("en", "ru")]
    jobs += [Job([folder, "-q", "-p", "no:cacheprovider", "-k", "informative_group_probability"],
                 _env(language, learner), str(REPO_ROOT)) for language in ("en", "ru")]
    return run_many(jobs)


@pytest.mark.parametrize("index, words", [
    (0, ("function(s) still to write, in the module page's order: module_9_reference.verify_detailed, ",
         "start with module_9_reference.verify_detailed: pytest -k verify_detailed")),
    (1, ("Осталось написать функций: ", "в порядке страницы модуля: module_9_reference.verify_detailed, ",
         "начните с module_9_reference.verify_detailed: pytest -k verify_detailed")),
])
# slow: four learner pytest runs in the module's fixture (about 12 s); the stubs' texts are built and checked fast by
# the tests above
@pytest.mark.slow
def test_stubs_end_with_what_is_left_and_where_to_start(runs, index, words):
    result = runs[index]
    assert result.returncode == 1
    tail = result.stdout.strip().splitlines()[-4:]  # the summary, then pytest's closing count
    count = len(course.exercises(["9"]))
    assert any(f"{count} function(s)" in line or f"функций: {count}," in line for line in tail), tail
    for word in words:
        assert any(word in line for line in tail), (word, tail)
    assert "failed" in tail[-1]


@pytest.mark.parametrize("index, words", [(2, "the call that should have raised: "),
                                          (3, "вызов, который должен был выбросить исключение: ")])
@pytest.mark.slow  # the same four learner pytest runs (about 12 s)
def test_did_not_raise_shows_the_call(runs, index, words):
    result = runs[index]
    assert result.returncode == 1, result.stdout[-2000:]
    assert "DID NOT RAISE" in result.stdout
    assert f"{words}m9.informative_group_probability(1.5, 4)" in result.stdout, result.stdout[-3000:]
    assert "still to write" not in result.stdout and "Осталось написать" not in result.stdout  # no stub met
