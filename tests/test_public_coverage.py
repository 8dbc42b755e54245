"""Green public tests mean full marks: every kind of check the grader makes, a public test makes too.

The kind of a check is what the reference does on its inputs: return a value, or raise at one
particular ``raise`` of the learner file (exception type and line: "beta must be > 0" and "the
shapes differ" are two kinds even though both raise ValueError). The public tests' calls are
recorded by the learner's own conftest (``RL4LLM_RECORD_CALLS``, the recorder the hint tables are
built from, which also notes the calls that raised).

- every kind of check a hidden case of an exercise makes, some recorded public call of that exercise
  makes too (a function that passes the public tests cannot lose points to an argument check it never
  saw);
- every toy training run the grader makes through a harness (``check="toy experiment"``: short GRPO /
  DPO runs of the given toys' "check" profile with the learner's function) a public test makes too,
  selected by ``-k <function>``, comparing with the reference outcomes ``rl4llm build`` writes to
  ``starter/module_0X/_toy_reference.json`` by the same harness (that the public test and the harness
  run the same experiment shows when the public tests pass on the reference: tests/test_public_tests.py);
- a case whose label says "public" is a call a public test makes: the same arguments, bound to the
  function's parameters. (Cases shown from the seed notebook, ``hidden=False`` and labelled "seed ...",
  are the notebook's, not the tests'.)
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from collections import defaultdict
from functools import cache

import pytest

from graders import course
from graders.build.hints import record_public_calls, starter_conftest
from graders.build.recipe import outcome_kind
from graders.build.toys import TOY_CHECK, TOY_NAME
from graders.checks import spec_for
from graders.engine.judging import calls
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.references import fresh_inputs
from graders.paths import SOLUTIONS_DIR, STARTER_DIR

pytestmark = pytest.mark.slow  # the public tests run once, recorded (about 10 s)

EXERCISES = DEFAULT_KIT.exercises()


@cache
def recorded() -> dict[str, list[dict]]:
    """exercise id -> the public tests' calls of it (``"raises"`` on those that raised)."""
    found = defaultdict(list)
    for call in record_public_calls():
        found[call["function"]].append(call)
    return dict(found)


@cache
def conftest():
    return starter_conftest()


def reference(exercise: str):
    """The reference module and function (solutions/ on sys.path, as the seeds import them)."""
    stem, function = exercise.split(".", 1)
    folder = str(SOLUTIONS_DIR / course.module_of(stem).folder)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module = importlib.import_module(stem)
    expected = SOLUTIONS_DIR / course.module_of(stem).folder / f"{stem}.py"
    if getattr(module, "__file__", None) != str(expected):  # another test's module under this plain name
        raise AssertionError(f"sys.modules[{stem!r}] is {module!r}, not {expected}: a test left it there")
    return module, getattr(module, function)


def public_call(module, call: dict) -> tuple[tuple, dict]:
    return tuple(conftest().untagged(call["args"], module)), conftest().untagged(call["kwargs"], module)


def hidden_kinds(exercise: str) -> dict[str, str]:
    """kind -> the label of the first hidden case of that kind (harness cases left out)."""
    module, function = reference(exercise)
    spec = spec_for(exercise)
    mode = spec.call.describe()
    if mode["kind"] == "harness":
        return {}
    found: dict[str, str] = {}
    for case in spec.cases():
        args, kwargs = fresh_inputs(case)
        found.setdefault(outcome_kind(module, lambda: calls.call_case(mode, function, module, module, args, kwargs)),
                         case.label)
    return found


def public_kinds(exercise: str) -> set[str]:
    module, function = reference(exercise)
    kinds = set()
    for call in recorded().get(exercise, []):
        args, kwargs = public_call(module, call)
        kinds.add(outcome_kind(module, lambda: function(*args, **kwargs)))
    return kinds


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_kind_of_hidden_check_has_a_public_test_of_that_kind(exercise):
    missing = {k: label for k, label in hidden_kinds(exercise).items() if k not in public_kinds(exercise)}
    assert not missing, (f"{exercise}: hidden checks of kinds no public test makes (kind: a hidden case's label): "
                         f"{missing}; make a raises= case of that kind public (hidden=False) in its checks: `rl4llm build` "
                         f"ships it to _refused.json, which the public test file reads (tests/test_recipe.py, fast, "
                         f"checks the refusals)")


def _bound(function, args: tuple, kwargs: dict) -> str:
    """The arguments bound to ``function``'s parameters (defaults applied), normalised exactly."""
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    normalise = conftest().kit_compare.normalise
    return json.dumps({name: conftest().tagged(normalise(value), None) for name, value in bound.arguments.items()},
                      sort_keys=True)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_a_case_labelled_public_is_a_call_a_public_test_makes(exercise):
    module, function = reference(exercise)
    spec = spec_for(exercise)
    harness = spec.call.describe()["kind"] == "harness"
    made = {_bound(function, *public_call(module, call)) for call in recorded().get(exercise, [])}
    labelled = [case for case in spec.cases() if "public" in case.label.lower()]
    assert all(not case.hidden for case in labelled), f"{exercise}: a hidden case is labelled public"
    unmade = [case.label for case in labelled if _bound(function, *_function_call(function, case, harness)) not in made]
    assert not unmade, f"{exercise}: cases labelled public that no public test makes: {unmade}"


def _function_call(function, case, harness: bool) -> tuple[tuple, dict]:
    """The call of ``function`` a case makes: a harness's own options (``check=...``) are not its arguments."""
    args, kwargs = fresh_inputs(case)
    if harness:
        parameters = inspect.signature(function).parameters
        kwargs = {key: value for key, value in kwargs.items() if key in parameters}
    return args, kwargs


# the exercises whose checks make toy runs (the test below computes them: the cases are not built at collection,
# where both pytest-xdist workers would build every exercise's cases)
TOY_EXERCISES = ["module_8_training.sequence_logprobs", "module_8_training.dpo_loss", "module_9_training.grpo_loss"]


def test_the_grader_makes_toy_runs():
    assert [e for e in EXERCISES if any(c.kwargs.get("check") == TOY_CHECK for c in spec_for(e).cases())] \
        == TOY_EXERCISES


@pytest.mark.parametrize("exercise", TOY_EXERCISES)
def test_a_toy_run_the_grader_makes_a_public_test_makes_too(exercise):
    stem, function = exercise.split(".")
    folder = course.module_of(stem).folder
    shipped = json.loads((STARTER_DIR / folder / TOY_NAME).read_text(encoding="utf-8"))
    runs = [case.kwargs for case in spec_for(exercise).cases() if case.kwargs.get("check") == TOY_CHECK]
    assert [dict(run["kwargs"], check=TOY_CHECK) for run in shipped[exercise]["runs"]] == runs
    source = (STARTER_DIR / folder / f"test_{stem}.py").read_text(encoding="utf-8")
    toy_tests = re.findall(r"^@pytest\.mark\.toy_run\n(?:@.*\n)*def (test_\w+)\(", source, re.M)
    assert any(name.startswith(f"test_{function}_") or f"_{function}_" in name for name in toy_tests), (
        f"no public test of {function} runs the toy (@pytest.mark.toy_run, named test_..._{function}_...): "
        f"{toy_tests}")
    assert f'"{exercise}"' in source, f"the public toy test does not read {exercise}'s reference outcomes"
