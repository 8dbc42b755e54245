"""The "likely mistake" hints: a learner file carrying a catalogued mistake gets that mistake NAMED
in its failing public tests, from the shipped starter/module_0X/_hints.json (values + hint text only).

Each case copies the whole starter/ to a temp folder, overwrites one learner file with
a catalogue mutant (the reference solution + the wrong function appended) and runs that
function's public tests there, as a learner would (``pytest module_09 -k FUNCTION`` in their folder),
each run forked from one preloaded driver (``tests/learner_runs.py``).
"""

from __future__ import annotations

import inspect
import json
import os
import shutil

import numpy as np
import pytest

from graders.build.hints import starter_conftest
from graders.engine.values import codec, compare
from graders.engine.judging.misconceptions import load_misconceptions, mutant_source
from graders.paths import STARTER_DIR
from learner_runs import Job, run_many

MUTANTS = [
    ("module_09", "module_9_reference.group_relative_advantages", "sample_std"),
    ("module_09", "module_9_reference.verify_numeric_answer", "first_box"),
    ("module_08", "module_8_reference.dpo_loss_from_margin", "dpo_sign_flipped"),
    ("module_08", "module_8_reference.ipo_loss", "ipo_target_half_tau"),
    ("module_09", "module_9_training.grpo_loss", "no_mask"),
]


def _starter_with(root, folder, exercise, name, keep_hints=True):
    """A copy of starter/ whose learner file carries ``name`` (a catalogue mutant of ``exercise``)."""
    starter = root / "starter"
    shutil.copytree(STARTER_DIR, starter, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    stem = exercise.split(".", 1)[0]
    (starter / folder / f"{stem}.py").write_text(mutant_source(exercise, name), encoding="utf-8")
    if not keep_hints:
        (starter / folder / "_hints.json").unlink()
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_IMPL_ROOT", "RL4LLM_RECORD_CALLS")}
    function = exercise.split(".", 1)[1]
    # the tests of the mistaken function only, as a learner reruns them (`pytest -k`): the hint is theirs
    return Job(args=[f"{folder}/test_{stem}.py", "-q", "-p", "no:cacheprovider", "-k", function],
               env={**env, "MPLBACKEND": "Agg", "COLUMNS": "400"}, cwd=str(starter))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Every mutant's public test run, and one without the hint table, forked from one preloaded driver."""
    jobs = {name: _starter_with(tmp_path_factory.mktemp(name), folder, exercise, name)
            for folder, exercise, name in MUTANTS}
    jobs["no_hints"] = _starter_with(tmp_path_factory.mktemp("no_hints"), "module_09",
                                     "module_9_reference.group_relative_advantages", "sample_std", keep_hints=False)
    results = run_many(list(jobs.values()), workers=1)
    return dict(zip(jobs, results))


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
@pytest.mark.parametrize("folder, exercise, name", MUTANTS, ids=[m[2] for m in MUTANTS])
def test_a_catalogued_mistake_is_named_in_the_failure_output(runs, folder, exercise, name):
    hint = next(m.hint for m in load_misconceptions(exercise) if m.name == name)
    run = runs[name]
    assert run.returncode == 1, run.stdout[-3000:]
    function = exercise.split(".", 1)[1]
    line = f"likely mistake in {function}: {name} -- {hint}"
    assert line in run.stdout, run.stdout[-3000:]
    assert "rl4llm hint" in run.stdout  # the report section
    summary = run.stdout.split("short test summary info", 1)[1]
    assert "[likely mistake in" in summary  # ... and the -q short summary (where the line fits the width)
    assert "NOT IMPLEMENTED" not in run.stdout


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_missing_hint_table_changes_nothing_but_the_hint(runs):
    run = runs["no_hints"]
    assert run.returncode == 1 and " failed" in run.stdout, run.stdout[-3000:]
    assert "likely mistake in " not in run.stdout and "INTERNALERROR" not in run.stdout


def test_the_hint_tables_ship_values_and_hints_only():
    for folder in ("module_09", "module_08"):
        table = json.loads((STARTER_DIR / folder / "_hints.json").read_text(encoding="utf-8"))
        assert table, folder
        for function, by_key in table.items():
            assert function.startswith("module_") and by_key
            for key, entries in by_key.items():
                assert len(key) == 16 and entries
                for entry in entries:  # the reference's row carries the exercise's tolerances; a raising entry says so;
                    # an output with tensors its gradient signature (the reference's: for which inputs' gradients)
                    extra = ({"rtol", "atol", "grad", "grad_inputs"} if entry["name"] == "(reference)"
                             else {"raises", "grad"})
                    # a gradient flag is a bool, or None where the grader does not see it (Harness.observed_grads)
                    assert all(isinstance(flag, bool) or flag is None for flag in entry.get("grad", []))
                    assert any(isinstance(flag, bool) for flag in entry["grad"]) if "grad" in entry else True
                    assert all(isinstance(flag, bool) for flag in entry.get("grad_inputs", []))
                    assert {"name", "hint", "value"} <= set(entry) <= {"name", "hint", "value"} | extra, entry
                    assert entry.get("raises", True) is True and (entry["value"] is None or "raises" not in entry)
                    assert "def " not in json.dumps(entry["value"])


def test_the_conftest_compares_with_the_engines_comparator():
    conftest = starter_conftest()
    assert not hasattr(conftest, "normalise") and not hasattr(conftest, "same_value")  # one comparator, one name
    for name in ("normalise", "mismatch", "describe", "kind", "_close", "float_trap"):
        copied = getattr(conftest.kit_compare, name)
        assert inspect.getsource(copied) == inspect.getsource(getattr(codec if name == "normalise" else compare, name))
    result = conftest.kit_compare.normalise(np.array([0.5, 1.0], dtype=np.float32))
    assert conftest.matches_wrong_value(result, conftest.tagged([0.5, 1.0 + 1e-9]))
    assert not conftest.matches_wrong_value(result, conftest.tagged([0.5, 1.1]))


def test_the_tagged_form_round_trips():
    conftest = starter_conftest()
    value = {"a": np.arange(3, dtype=np.int32), "b": (1.5, "x", None, True), "c": [2 ** 60, float("inf")]}
    back = conftest.untagged(conftest.tagged(value, None))
    assert back["a"].dtype == np.int32 and back["a"].tolist() == [0, 1, 2]
    assert back["b"] == (1.5, "x", None, True) and back["c"] == [2 ** 60, float("inf")]
    assert conftest.key_of(conftest.tagged([value], None), {}) == conftest.key_of(conftest.tagged([back], None), {})


def test_the_tagged_form_has_one_decoder_on_the_learners_side():
    """Issue 54: the conftest, the public tests and the notebooks read the tagged form with one function,
    ``starter/_kit_values.py``'s ``untagged`` (it was written three times)."""
    import ast

    from graders.paths import STARTER_DIR

    defined = {}
    for path in [STARTER_DIR / "conftest.py", *STARTER_DIR.glob("module_0*/test_*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            strings = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
            if isinstance(node, ast.FunctionDef) and {"ndarray", "tuple", "dict", "float"} <= strings \
                    and any(isinstance(c, ast.Attribute) and c.attr == "asarray" for c in ast.walk(node)):
                defined.setdefault(node.name, []).append(path.name)
    assert not defined, f"a decoder of the tagged form besides _kit_values.untagged: {defined}"
    assert starter_conftest().untagged.__module__ == "_kit_values"
