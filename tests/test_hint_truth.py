"""A "likely mistake" hint never names a mistake the code does not contain.

The learner's conftest (starter/conftest.py) names a catalogued mistake only when it is the one entry
that fits EVERY recorded input of the function in the run (the grader's rule, graders/engine/judging/naming.py;
tests/test_naming.py) -- the learner's outputs where they are wrong, the reference's where they are right; where several fit it lists them without picking one; where floating
point explains a wrong value (~1e-16 where exactly 0 is expected) it says so instead.

- the fast tests check that decision (``fitting_entries``, ``diagnosis``) and the two languages, and that a
  failing property test never points back to value tests that pass (``property_pointer``; a learner file whose
  wrong dpo_loss_from_margin fails conservative_dpo_loss's property test, run whole and with ``-k``);
- the slow test runs every catalogue entry of module_9_reference and module_8_reference, as a learner
  file with exactly that mistake (``mutant_source``), through its module's public tests and checks that
  every mistake the output names is that entry.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import string
import tempfile

import numpy as np
import pytest

from graders import course
from graders.build.hints import starter_conftest
from graders.engine.judging.misconceptions import all_catalogue_files, exercise_of, mutant_source, read_entries
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from graders.text import table_in
from learner_runs import Job, run_many

conftest = starter_conftest()
REFERENCE = conftest.REFERENCE


PYCACHE = tempfile.mkdtemp(prefix="rl4llm-pycache-")  # this run's bytecode, outside the tree
atexit.register(shutil.rmtree, PYCACHE, True)

def _observation(result, expected, wrong: dict, arrays=()):
    """One recorded input as the conftest sees it: normalised result and reference output, tagged wrong values."""
    norm = conftest.kit_compare.normalise
    return (norm(np.asarray(result, dtype=float)), norm(np.asarray(expected, dtype=float)),
            {name: None if value is None else conftest.tagged(np.asarray(value, dtype=float))
             for name, value in wrong.items()},
            [np.asarray(a, dtype=float) for a in arrays])


# ---------------------------------------------------------------------------
# The decision
# ---------------------------------------------------------------------------
def test_an_entry_must_fit_every_failing_input():
    first = _observation([2.0], [1.0], {"a": [2.0], "b": [2.0]})
    second = _observation([5.0], [3.0], {"a": [5.0], "b": [4.0]})
    assert conftest.fitting_entries([first]) == ["a", "b"]
    assert conftest.fitting_entries([first, second]) == ["a"]  # b fits the first input, not the second


def test_an_entry_must_leave_the_inputs_the_learner_gets_right():
    wrong = _observation([2.0], [1.0], {"a": [2.0], "b": [2.0]})
    right = _observation([3.0], [3.0], {"b": [7.0]})  # b would have changed this answer; the learner did not
    assert conftest.fitting_entries([wrong, right]) == ["a"]


def test_an_output_that_did_not_ship_never_fits_and_all_right_means_no_verdict():
    assert conftest.fitting_entries([_observation([2.0], [1.0], {"a": None})]) == []
    assert conftest.fitting_entries([_observation([1.0], [1.0], {"a": [2.0]})]) is None
    assert conftest.fitting_entries([_observation([9.0], [1.0], {"a": [2.0]})]) == []  # an unknown mistake


def _table(function, **hints):
    return {function: {"0" * 16: [{"name": REFERENCE, "hint": "", "value": None},
                                  *({"name": n, "hint": h, "value": None} for n, h in hints.items())]}}


def test_one_fitting_entry_is_named_several_are_listed_none_is_silent():
    f = "module_x.f"
    table = _table(f, a="hint a", b="hint b")
    one = {f: [_observation([2.0], [1.0], {"a": [2.0], "b": [3.0]})]}
    several = {f: [_observation([2.0], [1.0], {"a": [2.0], "b": [2.0]})]}
    none = {f: [_observation([9.0], [1.0], {"a": [2.0]})]}
    assert conftest.diagnosis(one, table, lang="en") == ["likely mistake in f: a -- hint a"]
    assert conftest.diagnosis(several, table, lang="en") == ["several known mistakes in f fit these inputs: a, b"]
    assert conftest.diagnosis(none, table, lang="en") == []
    assert conftest.diagnosis(one, table, lang="ru") == ["вероятная ошибка в f: a -- hint a"]


def test_the_float_trap_is_explained_instead_of_a_mistake():
    f = "module_x.group_relative_advantages"
    table = _table(f, no_eps="hint")
    rewards = [[0.7, 0.7, 0.7], [1.0, 0.0, 0.0]]
    expected = [[0.0, 0.0, 0.0], [1.41421, -0.707105, -0.707105]]
    tiny = [[1.1e-10] * 3, expected[1]]  # eps = 1e-6: right within tolerance, not exactly 0
    ones = [[1.0] * 3, expected[1]]  # eps = 0: ~1e-16 / ~1e-16
    tiny_obs = {f: [_observation(tiny, expected, {}, [rewards])]}
    ones_obs = {f: [_observation(ones, expected, {"no_eps": ones}, [rewards])]}
    [line] = conftest.diagnosis(tiny_obs, table, exact_check=True, lang="en")
    assert line.startswith("group_relative_advantages returned 1.1e-10 where exactly 0 is expected")
    assert "all-equal group" in line
    assert conftest.diagnosis(tiny_obs, table, exact_check=False, lang="en") == []  # a tolerant check passes it
    [line] = conftest.diagnosis(ones_obs, table, lang="en")  # no_eps fits too, but the trap explains it
    assert line.startswith("group_relative_advantages returned 1 where exactly 0 is expected")
    assert conftest.diagnosis(ones_obs, table, lang="ru")[0].startswith(
        "group_relative_advantages вернула 1 там, где ожидается ровно 0")
    # wrong where the input group is NOT all equal: no trap, the entry is judged as usual
    other = {f: [_observation(ones, expected, {"no_eps": ones}, [[[0.7, 0.7, 0.6], [1.0, 0.0, 0.0]]])]}
    assert conftest.diagnosis(other, table, lang="en") == ["likely mistake in group_relative_advantages: no_eps -- hint"]


def test_a_failing_property_test_points_to_the_value_tests_of_its_function():
    assert conftest._tested_function("test_dpo_loss_from_margin_is_softplus") == "dpo_loss_from_margin"  # not dpo_loss
    assert conftest._tested_function("test_group_relative_advantages_sum_to_zero_per_group") == \
        "group_relative_advantages"
    assert conftest._tested_function("test_something_else") is None
    line = conftest.message("property", "ru", function="k3_kl", folder="starter/module_09")
    assert line.endswith("pytest starter/module_09 -k k3_kl")


def test_a_property_pointer_never_sends_the_learner_back_to_value_tests_that_pass():
    folder = "starter/module_08"
    own, dep = "conservative_dpo_loss", "dpo_loss_from_margin"

    def pointer(statuses, called=(dep,), lang="en"):
        return conftest.property_pointer(own, list(called), statuses.get, folder, lang)

    # its own value tests fail, or did not run: they are where the likely mistake is named
    for statuses in ({own: False, dep: False}, {dep: False}):
        assert pointer(statuses).endswith(f"the value tests of {own} do: pytest {folder} -k {own}")
    # they pass: the failing value tests of a function the test called, never its own again
    line = pointer({own: True, dep: False}, called=(own, dep, own))
    assert line.endswith(f"the value tests of {own} pass, but this test also calls {dep}, whose value tests "
                         f"fail: pytest {folder} -k {dep}")
    assert pointer({own: True, dep: False}, lang="ru").endswith(
        f"тесты значений {own} проходят, но этот тест вызывает и {dep}, чьи тесты значений не проходят: "
        f"pytest {folder} -k {dep}")
    assert pointer({own: True, dep: False, "ipo_loss": False}, called=(dep, "ipo_loss")).endswith(
        f'calls {dep}, ipo_loss, whose value tests fail: pytest {folder} -k "{dep} or ipo_loss"')
    # a called function whose value tests pass, or did not run, is never pointed to
    for statuses in ({own: True, dep: True}, {own: True}):
        for lang in course.LANGUAGES:
            line = pointer(statuses, lang=lang)
            assert f"-k {own}" not in line and dep not in line, line
            assert line == conftest.message("property_uncovered", lang, function=own)


def _dpo_mistake_runs(tmp_path) -> dict:
    """pytest of module_8_reference's public tests on a learner file whose only mistake is dpo_loss_from_margin's
    sign: the whole file (en), ``-k conservative_dpo_loss`` (en, ru)."""
    root = tmp_path / "learner"
    shutil.copytree(SOLUTIONS_DIR / "module_08", root / "module_08", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "module_08" / "module_8_reference.py").write_text(
        mutant_source("module_8_reference.dpo_loss_from_margin", "dpo_sign_flipped"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_RECORD_CALLS", "PYTHONDONTWRITEBYTECODE")}
    env.update(RL4LLM_IMPL_ROOT=str(root), MPLBACKEND="Agg", COLUMNS="400", PYTHONPYCACHEPREFIX=PYCACHE)
    tests = str(STARTER_DIR / "module_08" / "test_module_8_reference.py")
    runs = {("en", ""): [tests], ("en", "-k"): [tests, "-k", "conservative_dpo_loss"],
            ("ru", "-k"): [tests, "-k", "conservative_dpo_loss"]}
    jobs = [Job(args=[*args, "-p", "no:cacheprovider"], env={**env, "RL4LLM_LANG": lang}, cwd=str(REPO_ROOT))
            for (lang, _), args in runs.items()]
    return dict(zip(runs, run_many(jobs, workers=2)))


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_property_test_failing_through_a_dependency_points_to_that_dependency(tmp_path):
    runs = _dpo_mistake_runs(tmp_path)
    property_line = re.compile(r"^(?:a property test draws|тест свойства берёт).*$", re.MULTILINE)
    cdpo_test = ("starter/module_08/test_module_8_reference.py::"
                 "test_conservative_dpo_loss_eps_zero_equals_dpo_loss_from_margin")
    pointer = {lang: conftest.message("property_dependency", lang, function="conservative_dpo_loss",
                                      dependencies="dpo_loss_from_margin", folder="starter/module_08",
                                      selection="dpo_loss_from_margin") for lang in course.LANGUAGES}
    for (lang, selection), run in runs.items():
        assert run.returncode == 1 and f"FAILED {cdpo_test}" in run.stdout, run.stdout[-3000:]
        lines = property_line.findall(run.stdout)
        assert pointer[lang] in lines, (lang, selection, lines, run.stdout[-3000:])
        # never back to conservative_dpo_loss, whose value tests pass
        assert not [line for line in lines if "-k conservative_dpo_loss" in line], (lang, selection, lines)
    # -k still runs and reports only what it selects: the value tests the pointer needed ran unreported
    for lang in course.LANGUAGES:
        summary = runs[lang, "-k"].stdout
        assert re.search(r"\b1 failed, \d+ passed, \d+ deselected\b", summary), summary[-2000:]


def test_the_language_follows_rl4llm_lang_then_the_locale():
    assert conftest.language({"RL4LLM_LANG": "ru_RU.UTF-8"}) == "ru"
    assert conftest.language({"RL4LLM_LANG": "en", "LANG": "ru_RU.UTF-8"}) == "en"
    assert conftest.language({"LC_ALL": "", "LC_MESSAGES": "ru_RU.UTF-8", "LANG": "en_US"}) == "ru"
    assert conftest.language({"LANG": "de_DE.UTF-8"}) == "en"
    assert conftest.language({}) == "en"


def test_every_message_exists_in_both_languages_with_the_same_placeholders():
    def fields(text):
        return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name)

    for key, text in conftest.MESSAGES.items():
        assert isinstance(text, conftest.Text), key
        for lang in course.LANGUAGES:
            assert fields(text.in_(lang)) == fields(text), (lang, key)


# ---------------------------------------------------------------------------
# Every catalogue entry, through the public tests
# ---------------------------------------------------------------------------
STEMS = ["module_9_reference", "module_8_reference"]
NAMED = re.compile(r"^likely mistake in (\w+): (\w+) -- ", re.MULTILINE)


def _entries(stem):
    files = [path for path in all_catalogue_files() if path.parent.name == stem]
    return [(exercise_of(path), entry.name) for path in files for entry in read_entries(path)]


def _job(tmp_root, stem, exercise, name) -> Job:
    """The public tests of ``stem`` run on a learner file with exactly that one catalogued mistake."""
    folder = course.module_of(stem).folder
    root = tmp_root / name / exercise.replace(".", "_")
    shutil.copytree(SOLUTIONS_DIR / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / folder / f"{stem}.py").write_text(mutant_source(exercise, name), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_RECORD_CALLS", "PYTHONDONTWRITEBYTECODE")}
    # bytecode (pytest's rewritten asserts included) cached outside the tree, shared by the runs
    env.update(RL4LLM_IMPL_ROOT=str(root), RL4LLM_LANG="en", MPLBACKEND="Agg", COLUMNS="400",
               PYTHONPYCACHEPREFIX=PYCACHE)
    return Job(args=[str(STARTER_DIR / folder / f"test_{stem}.py"), "-q", "-p", "no:cacheprovider",
                     "-m", "not hypothesis"],  # Hypothesis tests never get hints
               env=env, cwd=str(REPO_ROOT))


@pytest.mark.slow
@pytest.mark.exhaustive
@pytest.mark.parametrize("stem", STEMS)
def test_every_hint_a_catalogued_mistake_gets_is_its_own(tmp_path, stem):
    entries = _entries(stem)
    assert entries
    runs = run_many([_job(tmp_path, stem, *entry) for entry in entries], workers=2)
    false_claims, named_right = [], 0
    for (exercise, name), run in zip(entries, runs):
        named = set(NAMED.findall(run.stdout))
        function = exercise.split(".", 1)[1]
        others = sorted(pair for pair in named if pair != (function, name))
        if others:
            false_claims.append(f"{exercise} {name}: also named {others}\n{run.stdout[-1500:]}")
        named_right += (function, name) in named
    assert not false_claims, "\n\n".join(false_claims)
    assert named_right >= len(entries) // 2, f"only {named_right} of {len(entries)} entries named at all"
