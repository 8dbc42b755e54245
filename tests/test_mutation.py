"""Mutation testing of the kit's checks (graders/mutation/, `rl4llm mutate`): each operator, stable ids,
the equivalence rule, the public-test plugin, and the floors (one exercise fast, every exercise slow)."""

from __future__ import annotations

import textwrap

import pytest

from graders.mutation import operators, report, run
from graders.mutation.operators import Mutant, function_node, mutants

CHEAP = "module_9_reference.pass_at_k_unbiased"


def _changes(source: str, operator: str) -> list[str]:
    """The diff lines of every mutant ``operator`` makes of ``def f`` in ``source``."""
    node = function_node(textwrap.dedent(source), "f")
    return [m.diff for m in mutants(node, "x.f", operators=[operator])]


@pytest.mark.parametrize(("operator", "source", "expected"), [
    ("arithmetic", "def f(a, b, c):\n    return a + b * c\n",
     ["- return a + b * c  ->  + return a - b * c", "- return a + b * c  ->  + return a + b / c"]),
    ("arithmetic", "def f(a):\n    a += 1\n    return a\n", ["- a += 1  ->  + a -= 1"]),
    ("comparison", "def f(a, b):\n    return a < b\n",
     ["- return a < b  ->  + return a <= b", "- return a < b  ->  + return a >= b"]),
    ("comparison", "def f(a, b):\n    return a == b\n", ["- return a == b  ->  + return a != b"]),
    ("boolean", "def f(a, b):\n    return a and b\n",
     ["- return a and b  ->  + return a or b", "- return a and b  ->  + return a", "- return a and b  ->  + return b"]),
    ("unary", "def f(a):\n    return -a\n", ["- return -a  ->  + return a"]),
    ("unary", "def f(a):\n    return not a\n", ["- return not a  ->  + return a"]),
    ("constant", "def f(a):\n    return a + 2\n",
     ["- return a + 2  ->  + return a + 0", "- return a + 2  ->  + return a + 3", "- return a + 2  ->  + return a + 1",
      "- return a + 2  ->  + return a + -2"]),
    ("constant", "def f(a):\n    return g(a, flag=True)\n", ["- return g(a, flag=True)  ->  + return g(a, flag=False)"]),
    ("swap_name", "def f(a):\n    return np.max(a) + a.sum() + np.argmax(a) + np.maximum(a, 0) + sum(a)\n",
     ["- return np.max(a) + a.sum() + np.argmax(a) + np.maximum(a, 0) + sum(a)  ->  "
      "+ return np.min(a) + a.sum() + np.argmax(a) + np.maximum(a, 0) + sum(a)",
      "- return np.max(a) + a.sum() + np.argmax(a) + np.maximum(a, 0) + sum(a)  ->  "
      "+ return np.max(a) + a.mean() + np.argmax(a) + np.maximum(a, 0) + sum(a)",
      "- return np.max(a) + a.sum() + np.argmax(a) + np.maximum(a, 0) + sum(a)  ->  "
      "+ return np.max(a) + a.sum() + np.argmin(a) + np.maximum(a, 0) + sum(a)",
      "- return np.max(a) + a.sum() + np.argmax(a) + np.maximum(a, 0) + sum(a)  ->  "
      "+ return np.max(a) + a.sum() + np.argmax(a) + np.minimum(a, 0) + sum(a)"]),  # the builtin sum has no mean
    ("swap_name", "def f(a):\n    return np.sum(a)\n", ["- return np.sum(a)  ->  + return np.mean(a)"]),
    ("dtype", "def f(a):\n    return np.asarray(a, dtype=np.float64)\n",
     ["- return np.asarray(a, dtype=np.float64)  ->  + return np.asarray(a)",
      "- return np.asarray(a, dtype=np.float64)  ->  + return np.asarray(a, dtype=np.float32)"]),
    ("reduction", "def f(a):\n    return a.sum(axis=1, keepdims=True)\n",
     ["- return a.sum(axis=1, keepdims=True)  ->  + return a.sum(keepdims=True)",
      "- return a.sum(axis=1, keepdims=True)  ->  + return a.sum(axis=1 + 1, keepdims=True)",
      "- return a.sum(axis=1, keepdims=True)  ->  + return a.sum(axis=1 + -1, keepdims=True)",
      "- return a.sum(axis=1, keepdims=True)  ->  + return a.sum(axis=1)"]),
    ("reduction", "def f(a):\n    return np.std(a)\n", ["- return np.std(a)  ->  + return np.std(a, ddof=1)"]),
    ("swap_arguments", "def f(a, b):\n    return g(a, b) - a\n",
     ["- return g(a, b) - a  ->  + return a - g(a, b)", "- return g(a, b) - a  ->  + return g(b, a) - a"]),
    ("remove_call", "def f(x):\n    return x - x.max(axis=1)\n", ["- return x - x.max(axis=1)  ->  + return x"]),
    ("remove_call", "def f(x):\n    return np.clip(x, 0, 1)\n", ["- return np.clip(x, 0, 1)  ->  + return x"]),
    ("remove_call", "def f(x):\n    return torch.clamp(x, min=0)\n", ["- return torch.clamp(x, min=0)  ->  + return x"]),
    ("remove_call", "def f(x):\n    return x.detach()\n", ["- return x.detach()  ->  + return x"]),
    ("remove_call", "def f(x):\n    return float(x)\n", ["- return float(x)  ->  + return x"]),
    ("drop_guard", "def f(a):\n    if a < 0:\n        raise ValueError(f'{a} < 0')\n    return a\n",
     ["- if a < 0: / raise ValueError(f'{a} < 0')  ->  + pass"]),
    ("drop_statement", "def f(a):\n    a = a * 2\n    return a\n", ["- a = a * 2  ->  + pass"]),
    ("drop_statement", "def f(a, c):\n    return a if c else -a\n",
     ["- return a if c else -a  ->  + return a", "- return a if c else -a  ->  + return -a"]),
    ("slice_bound", "def f(a, n):\n    return a[1:n]\n",
     ["- return a[1:n]  ->  + return a[1 + 1:n]", "- return a[1:n]  ->  + return a[1 - 1:n]",
      "- return a[1:n]  ->  + return a[1:n + 1]", "- return a[1:n]  ->  + return a[1:n - 1]"]),
    ("drop_operand", "def f(a, b):\n    return a * b\n",
     ["- return a * b  ->  + return a", "- return a * b  ->  + return b"]),
    ("where_branch", "def f(c, a, b):\n    return np.where(c, a, b)\n",
     ["- return np.where(c, a, b)  ->  + return a", "- return np.where(c, a, b)  ->  + return b",
      "- return np.where(c, a, b)  ->  + return np.where(c, b, a)"]),
    ("compare_operands", "def f(a, b):\n    return a < b\n", ["- return a < b  ->  + return b < a"]),
    ("compare_operands", "def f(a, b):\n    return a == b\n", []),  # symmetric: no mutant
    ("drop_keyword", "def f(x):\n    return g(x, eps=1e-08, dim=1)\n", ["- return g(x, eps=1e-08, dim=1)  ->  + return g(x, dim=1)"]),
    ("assign_for_augment", "def f(a, b):\n    a += b\n    return a\n", ["- a += b  ->  + a = b"]),
    ("negate_result", "def f(a):\n    return a.mean()\n", ["- return a.mean()  ->  + return -a.mean()"]),
    ("negate_result", "def f(a):\n    return (a, 1)\n", []),  # a tuple's parts: the other operators
])
def test_each_operator_makes_the_expected_mutants(operator, source, expected):
    assert _changes(source, operator) == expected


def test_the_docstring_raise_messages_and_the_only_statement_are_left_alone():
    source = 'def f(a):\n    """Doc 1."""\n    if a < 0:\n        raise ValueError("a < 0: " + str(1))\n    return a\n'
    diffs = [m.diff for m in mutants(function_node(source, "f"), "x.f")]
    assert diffs and not [d for d in diffs if "Doc" in d], diffs
    assert [d for d in diffs if "raise" in d] == ["- if a < 0: / raise ValueError('a < 0: ' + str(1))  ->  + pass"]
    assert mutants(function_node("def f(a):\n    return g(a)\n", "f"), "x.f", operators=["drop_statement"]) == []


def test_ids_are_stable_unique_and_name_the_place():
    source = run.target(CHEAP).source
    first = mutants(function_node(source, "pass_at_k_unbiased"), CHEAP)
    again = mutants(function_node(source, "pass_at_k_unbiased"), CHEAP)
    assert [m.id for m in first] == [m.id for m in again]
    assert len({m.id for m in first}) == len(first) > 20
    for mutant in first:
        exercise, operator, line, col, index = mutant.id.rsplit(":", 4)
        assert (exercise, operator, int(line), int(col), int(index)) == (
            CHEAP, mutant.operator, mutant.line, mutant.col, mutant.index)
        assert operator in operators.OPERATORS and mutant.diff.startswith("- ")
    # nested nodes that start at the same place get different indexes, not the same id
    nested = mutants(function_node("def f(n, c):\n    return n - c + 1\n", "f"), "x.f", operators=["arithmetic"])
    assert [m.id for m in nested] == ["x.f:arithmetic:2:11:0", "x.f:arithmetic:2:11:1"]


def _handmade(body: str, name: str = "handmade") -> Mutant:
    """A mutant of pass_at_k_unbiased whose last line is ``body``."""
    source = run.target(CHEAP).source
    original = function_node(source, "pass_at_k_unbiased")
    import ast

    text = ast.unparse(original)
    last = text.splitlines()[-1]
    return Mutant(f"{CHEAP}:{name}:0:0:0", CHEAP, name, 0, 0, 0, f"- {last.strip()}  ->  + {body}",
                  text.replace(last, f"    {body}"))


def test_a_mutant_equal_everywhere_is_equivalent_and_one_equal_only_on_the_checks_survives():
    times_one = _handmade("return float(1.0 * (1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, "
                          "dtype=np.float64))))")
    assert run.judge(CHEAP, times_one)["status"] == "equivalent"
    # wrong only past n = 200000: every input of the checks is smaller, a draw (n = 10 n + 7) is not
    hidden_gap = _handmade("return 0.0 if n > 200000 else float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, "
                           "dtype=np.float64)))")
    verdict = run.judge(CHEAP, hidden_gap)
    assert verdict["status"] == "survived", verdict
    assert verdict["witness"]["from_checks"] is False and "1000007" in verdict["witness"]["input"], verdict
    wrong = _handmade("return 0.5")
    verdict = run.judge(CHEAP, wrong)
    assert verdict["status"] == "killed" and verdict["points"] < verdict["max_points"], verdict
    assert verdict["witness"] is not None


@pytest.mark.slow  # a learner's pytest run per mutant (about 3 s); mutant generation is tested fast above
def test_the_public_plugin_runs_the_tests_once_per_mutant_in_one_process():
    from graders.mutation.public import public_batch

    goal = run.target(CHEAP)
    wrong = next(m for m in goal.mutants if m.diff.endswith("+ return 0.0"))  # the n - c < k branch returns 0
    equivalent = _handmade("return float(1.0 * (1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, "
                           "dtype=np.float64))))")
    results = public_batch(CHEAP, [(wrong.id, wrong.source), (equivalent.id, equivalent.source)])
    assert results[wrong.id]["failed"] is True and results[wrong.id]["failures"], results
    assert results[equivalent.id]["failed"] is False, results


def test_the_floor_of_one_small_exercise_holds():
    """The fast guard: the whole pipeline (judging, no public tests) on one cheap exercise, against its floor."""
    from graders.mutation.campaign import campaign

    result = campaign([CHEAP], jobs=1, public=False, progress=lambda line: None)
    row = result["exercises"][0]
    floor = report.floors()[CHEAP]
    assert row["mutants"] == row["equivalent"] + row["killed"] + row["survived"] + row["invalid"]
    assert row["score"] >= floor, (row["score"], floor, row["survivors"])
    assert report.below_floor(result) == []
    assert "| `module_9_reference.pass_at_k_unbiased` |" in report.table(result)


def test_a_score_under_its_floor_is_reported(tmp_path):
    floors = tmp_path / "floors.json"
    floors.write_text('{"a.b": 0.9}', encoding="utf-8")
    low = {"exercises": [{"exercise": "a.b", "score": 0.85}]}
    assert report.below_floor(low, floors) == ["a.b: score 0.85 below its floor 0.9"]
    assert report.below_floor({"exercises": [{"exercise": "a.b", "score": 0.9}]}, floors) == []


def test_every_exercise_has_a_floor():
    from graders.engine.judging.kit import DEFAULT_KIT

    floors, exercises = set(report.floors()), set(DEFAULT_KIT.exercises())
    missing = sorted(exercises - floors)
    assert not missing, (f"no mutation floor for {missing}: run `.venv/bin/rl4llm mutate --exercise {missing[0]} "
                         "--write-floors` and commit graders/mutation/floors.json (docs/contributing.md)")
    assert not floors - exercises, f"floors of exercises the course does not have: {sorted(floors - exercises)}"


@pytest.mark.slow
@pytest.mark.exhaustive  # every exercise's mutants (about 1500, 4 minutes on 2 idle cores): outside CI's command,
# where the fast floor test above stands for it, and `rl4llm mutate` (docs/mutation.md) regenerates the table
def test_every_exercise_meets_its_floor():
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.mutation.campaign import campaign

    result = campaign(DEFAULT_KIT.exercises(), jobs=2, public=False, progress=lambda line: None)
    assert report.below_floor(result) == []


def test_the_plugin_rebinds_a_name_a_test_module_imported(monkeypatch):
    """``from module_9_training import grpo_loss`` binds the function at import: the plugin points that name at
    the mutant too (without it every grpo_loss mutant passed its public tests: 0 of 87 failed)."""
    import sys
    import types

    from graders.mutation.pytest_plugin import _rebind

    def original():
        return "reference"

    def mutant():
        return "mutant"

    tests = types.ModuleType("_rl4llm_fake_test_module")
    tests.grpo_loss = original
    monkeypatch.setitem(sys.modules, tests.__name__, tests)
    before, after = {"grpo_loss": original}, {"grpo_loss": mutant}
    rebound = _rebind(before, after)
    assert tests.grpo_loss is mutant and rebound == [(vars(tests), "grpo_loss", original)]


def test_merging_parts_summarises_their_mutants_again_in_course_order(tmp_path):
    """`rl4llm mutate --merge` (a SLURM array's parts): one report, every exercise's line computed from its
    mutants' verdicts, names compared between the grader and pytest."""
    import json

    from graders.mutation.campaign import summarise

    rows = {
        "module_9_reference.k3_kl": [
            {"id": "a", "diff": "- x  ->  + y", "status": "killed", "grader_names": ["reversed_difference"],
             "public": {"failed": True, "pytest_names": []}},
            {"id": "b", "diff": "- x  ->  + z", "status": "survived", "witness": {"input": "1.0"}},
            {"id": "c", "diff": "- x  ->  + w", "status": "equivalent"}],
        "module_8_reference.ipo_loss": [
            {"id": "d", "diff": "- x  ->  + v", "status": "killed", "grader_names": [],
             "public": {"failed": False, "pytest_names": []}}],
    }
    for index, (exercise, mutants_) in enumerate(rows.items()):
        part = {"jobs": 1, "public": True, "public_sample": None, "seconds": {"judging": 1.0, "total": 2.0},
                "exercises": [{"exercise": exercise}], "mutants": {exercise: mutants_}}
        (tmp_path / str(index)).mkdir()
        (tmp_path / str(index) / "mutation.json").write_text(json.dumps(part), encoding="utf-8")
    merged = report.merge([tmp_path / "0", tmp_path / "1"])
    assert [row["exercise"] for row in merged["exercises"]] == ["module_8_reference.ipo_loss", "module_9_reference.k3_kl"]
    k3 = merged["exercises"][1]
    assert k3 == summarise("module_9_reference.k3_kl", rows["module_9_reference.k3_kl"])
    assert (k3["killed"], k3["survived"], k3["equivalent"], k3["score"], k3["public_share"]) == (1, 1, 1, 0.5, 1.0)
    assert k3["names_differ"] == [{"id": "a", "diff": "- x  ->  + y", "grader": ["reversed_difference"], "pytest": []}]
    assert merged["exercises"][0]["public_green"][0]["id"] == "d" and merged["seconds"]["total"] == 4.0
    text = report.table(merged)
    assert "grader reversed_difference; pytest –" in text and "| **all** | 4 | 1 | 2 | 1 | 66.7 % | 1/2 (50.0 %)" in text


def _fake_tools(folder, log):
    """Stand-ins for `sbatch` and `rl4llm` that log their arguments (one call a line); `rl4llm mutate --list`
    prints three exercises, `sbatch --parsable` answers a job id."""
    import os
    import stat

    folder.mkdir()
    scripts = {
        "sbatch": f'#!/bin/bash\necho "sbatch $*" >> {log}\necho 4242\n',
        "rl4llm": f'#!/bin/bash\necho "rl4llm $*" >> {log}\nif [ "$2" = --list ]; then printf "a.x\\nb.y\\nc.z\\n"; fi\n',
    }
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
        (folder / name).chmod((folder / name).stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "RL4LLM": str(folder / "rl4llm")}


def test_the_slurm_array_runs_one_exercise_per_task_then_merges(tmp_path):
    import subprocess

    from graders.paths import REPO_ROOT

    script = REPO_ROOT / "examples" / "slurm" / "mutate_array.sbatch"
    log = tmp_path / "calls.log"
    env = _fake_tools(tmp_path / "bin", log)
    env.pop("SLURM_ARRAY_TASK_ID", None)
    subprocess.run(["bash", str(script), "--no-public"], cwd=tmp_path, env=env, check=True, capture_output=True)
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls[0] == "rl4llm mutate --list"
    assert calls[1].startswith("sbatch --parsable --array=1-3 ") and calls[1].endswith(f"{script} --no-public")
    assert "--dependency=afterok:4242" in calls[2]
    assert "mutate --merge mutation-parts/1 mutation-parts/2 mutation-parts/3 --out mutation" in calls[2]
    log.unlink()
    subprocess.run(["bash", str(script), "--no-public"], cwd=tmp_path, check=True, capture_output=True,
                   env={**env, "SLURM_ARRAY_TASK_ID": "2", "SLURM_CPUS_PER_TASK": "2"})
    assert log.read_text(encoding="utf-8").splitlines() == [
        "rl4llm mutate --list", "rl4llm mutate --exercise b.y --jobs 2 --out mutation-parts/2 --no-public"]


def test_the_audit_finds_a_mutant_the_run_called_equivalent_on_too_few_inputs(monkeypatch):
    """``rl4llm mutate --audit`` re-judges exactly the mutants the run calls equivalent, on every draw of every
    case with other seeds. With the run's own inputs, none differs on this exercise; with a run that saw only
    its first check (so mutants that differ elsewhere look "equivalent" to it), the audit finds each of them,
    with its witness, and grades it."""
    import dataclasses

    from graders.mutation import audit, run

    run.reset()
    honest = audit.audit_exercise(CHEAP)
    assert honest["mislabelled"] == [] and honest["equivalent"] > 0 and honest["audit_draws"] >= honest["draws"] > 0
    real = run.target(CHEAP)
    thin = dataclasses.replace(real, inputs=real.inputs[:1], expected=real.expected[:1])
    monkeypatch.setattr(run, "target", lambda exercise, kit=None: thin)
    try:
        blind = audit.audit_exercise(CHEAP)
    finally:
        run.reset()
    assert blind["equivalent"] > honest["equivalent"]
    assert len(blind["mislabelled"]) == blind["equivalent"] - honest["equivalent"]  # each one the draws separate
    assert all(m["status"] == "killed" and m["witness"]["difference"] for m in blind["mislabelled"])


def test_a_harness_is_drawn_from_on_its_own_cases_never_on_its_training_runs():
    """The training exercises get draws (issue 53, point 2): values, integers and shapes of the cases the harness's
    own function runs, a tensor's data cut and varied like an array's (its dtype and requires_grad kept); the
    cases of its trusted part (a training run each) get none."""
    import numpy as np

    from graders.checks import spec_for
    from graders.engine.values.codec import TensorSpec
    from graders.mutation.draws import drawable, extra_cases

    spec = spec_for("module_9_training.grpo_loss")
    cases = spec.cases()
    trusted = [case for case in cases if case.kwargs.get("check") == spec.call.trusted_check]
    assert trusted and not set(map(id, trusted)) & set(map(id, drawable(cases, spec.call)))
    draws = extra_cases(cases, spec.call)
    assert draws and all(draw.kwargs.get("check") != spec.call.trusted_check for draw in draws)
    kinds = {str(draw.label).rsplit("[", 1)[-1].rstrip("]") for draw in draws}
    assert {"batch_of_one", "empty_batch", "square", "random", "zeros"} <= kinds
    one = next(draw for draw in draws if str(draw.label).endswith("[batch_of_one]"))
    new, old, advantages, mask = one.args
    assert isinstance(new, TensorSpec) and new.requires_grad and not old.requires_grad
    assert np.shape(new.data)[0] == np.shape(mask.data)[0] == np.shape(advantages.data)[0] == 1
    assert extra_cases(cases, None) != [] and extra_cases(trusted, spec.call) == []  # the control: no harness, all
