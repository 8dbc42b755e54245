"""``rl4llm run`` says whether the values the seed prints match the module page (graders.walkthrough.values)."""

from __future__ import annotations

import json
import re
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from graders.walkthrough import run as walkthrough
from graders.paths import REPO_ROOT
from graders.walkthrough.values import PAGE_VALUES, PageValue, check_cell
from graders.text import Text

ALL = [(module, value) for module, values in PAGE_VALUES.items() for value in values]


@pytest.mark.parametrize("module,value", ALL, ids=[f"{m}:{v.name}" for m, v in ALL])
def test_each_value_is_written_so_on_both_module_pages(module, value):
    for page in ("README.md", "README.ru.md"):
        text = (REPO_ROOT / "starter" / module / page).read_text(encoding="utf-8")
        assert (value.context or value.page) in text, f"starter/{module}/{page} does not say {value.context or value.page!r}"
    assert value.page in (value.context or value.page)
    seed = (REPO_ROOT / "graders" / "seeds" / f"{module}_seed.txt").read_text(encoding="utf-8")
    assert value.cell in seed, f"no cell of the {module} seed holds {value.cell!r}"
    function = value.function.split(".")[1]
    assert re.search(rf"def {function}\(", (REPO_ROOT / "solutions" / module / f"{value.function.split('.')[0]}.py")
                     .read_text(encoding="utf-8"))


def test_the_page_numbers_are_read_with_their_decimals():
    value = PageValue(Text("x", "x"), "m.f", "cell", lambda ns, shown: 0, "(0, 0.03, −0.015, 2.015)")
    assert value.expected == [(0.0, 0), (0.03, 2), (-0.015, 3), (2.015, 3)]


def _records(namespace, shown=(), language="en", module="module_08", cell='lagrangian = constrained_lagrangian('):
    return check_cell(module, cell, namespace, list(shown), language)


def test_a_right_value_matches_and_a_wrong_one_names_the_function_in_both_languages():
    right, = _records({"lagrangian": 1.3350004})
    assert right["matches"] and right["line"] == "  ✓ the constrained Lagrangian: 1.335, as on the module page"
    wrong, = _records({"lagrangian": 1.4})
    assert not wrong["matches"]
    assert wrong["line"] == ("  ✗ the constrained Lagrangian: the module page gives 1.335, your code gives 1.40000; "
                             "look at `module_8_reference.constrained_lagrangian`")
    russian, = _records({"lagrangian": 1.4}, language="ru")
    assert russian["line"].startswith("  ✗ лагранжиан с ограничениями: на странице модуля 1.335, ваш код даёт 1.40000")
    assert _records({"lagrangian": 1.3356})[0]["matches"] is False  # rounds to 1.336, not to the page's 1.335


def test_a_whole_number_on_the_page_is_matched_exactly():
    cell = "shape_token_rewards("
    assert _records({"shaped": np.array([0.0, 0.03, -0.015, 2.015])}, cell=cell)[0]["matches"]
    assert not _records({"shaped": np.array([0.004, 0.03, -0.015, 2.015])}, cell=cell)[0]["matches"]


@pytest.mark.parametrize("namespace", [{}, {"lagrangian": "one"}, {"lagrangian": float("nan")},
                                       {"lagrangian": [1.335, 1.335]}, {"lagrangian": None}])
def test_a_malformed_or_missing_value_is_said_never_raised(namespace):
    record, = _records(namespace)
    assert record["matches"] is False
    assert "look at `module_8_reference.constrained_lagrangian`" in record["line"]


def test_a_value_read_from_a_table_the_cell_showed():
    cell = '"DPO": float(dpo_loss_from_margin('
    shown = [pd.DataFrame([{"DPO": 0.616344, "cDPO eps=0.1": 0.7, "IPO tau=0.5": 0.04}])]
    records = {record["function"]: record for record in _records({}, shown, cell=cell)}
    assert records["module_8_reference.dpo_loss_from_margin"]["matches"]
    assert not records["module_8_reference.conservative_dpo_loss"]["matches"]
    assert records["module_8_reference.ipo_loss"]["matches"]
    assert check_cell("module_08", "print('another cell')", {}, shown, "en") == []


# ----------------------------------------------------------------------------- whole runs (slow)
def _run(tmp_path, impl, module):
    out = tmp_path / f"out-{module}"
    completed = walkthrough.run_seed_subprocess(module, impl, out, readable=True, language="en", capture=True,
                                                stop_before=walkthrough.EXPERIMENT_MARKERS[module], timeout=300)
    summary = json.loads((out / walkthrough.SUMMARY_FILE).read_text(encoding="utf-8"))
    return completed, summary


@pytest.mark.slow
@pytest.mark.parametrize("module", ["module_08", "module_09"])
def test_the_reference_solutions_match_every_value_the_run_reaches(tmp_path, module):
    completed, summary = _run(tmp_path, REPO_ROOT / "solutions", module)
    seed = (REPO_ROOT / "graders" / "seeds" / f"{module}_seed.txt").read_text(encoding="utf-8")
    stop = seed.index(walkthrough.EXPERIMENT_MARKERS[module])
    reached = [value.function for value in PAGE_VALUES[module] if seed.index(value.cell) < stop]
    assert [record["function"] for record in summary["page_values"]] == reached, completed.stdout[-2000:]
    assert all(record["matches"] for record in summary["page_values"]), summary["page_values"]
    assert "✗" not in completed.stdout and completed.stdout.count("✓") == len(reached)


@pytest.mark.slow
def test_a_wrong_ipo_loss_is_named_and_the_other_values_still_match(tmp_path):
    learner = tmp_path / "learner" / "module_08"
    shutil.copytree(REPO_ROOT / "solutions" / "module_08", learner, ignore=shutil.ignore_patterns("__pycache__"))
    source = (learner / "module_8_reference.py").read_text(encoding="utf-8")
    body = re.search(r"def ipo_loss\(.*?\n(?=def |\Z)", source, re.S).group(0)
    mutated = body.replace("2.0 * tau", "tau") if "2.0 * tau" in body else None
    assert mutated and mutated != body, "the IPO reference no longer writes 1 / (2.0 * tau)"
    (learner / "module_8_reference.py").write_text(source.replace(body, mutated), encoding="utf-8")
    completed, summary = _run(tmp_path, learner, "module_08")
    wrong = [record for record in summary["page_values"] if not record["matches"]]
    assert [record["function"] for record in wrong] == ["module_8_reference.ipo_loss"], summary["page_values"]
    assert ("✗ the IPO loss (τ = 0.5): the module page gives 0.04, your code gives 1.4400;" in completed.stdout
            and "look at `module_8_reference.ipo_loss`" in completed.stdout)


# ----------------------------------------------------------------------------- the callee before its callers
def _learner_namespace(tmp_path, module_source: str) -> dict:
    """The namespace a seed sees after ``from module_9_reference import *`` of ``module_source``."""
    from graders.loader import load_module

    (tmp_path / "module_9_reference.py").write_text(module_source, encoding="utf-8")
    before = sys.modules.get("module_9_reference")
    module = load_module(tmp_path / "module_9_reference.py", "module_9_reference")
    if before is None:  # the name is the seed's, so the ids are; the module does not stay in sys.modules
        sys.modules.pop("module_9_reference", None)
    else:
        sys.modules["module_9_reference"] = before
    return dict(vars(module))


def test_a_wrong_value_points_at_the_callee_whose_own_value_differed(tmp_path):
    from graders.walkthrough.values import blamed

    namespace = _learner_namespace(tmp_path,
                                   "def group_relative_advantages(r):\n    return r\n\n"
                                   "def _helper(r):\n    return group_relative_advantages(r)\n\n"
                                   "def original_grpo_token_weights(r):\n    return _helper(r)\n")
    differing = {"module_9_reference.group_relative_advantages"}
    assert blamed("module_9_reference.original_grpo_token_weights", namespace, differing) == \
        "module_9_reference.group_relative_advantages"  # followed through a private helper
    assert blamed("module_9_reference.original_grpo_token_weights", namespace, differing) == \
        "module_9_reference.group_relative_advantages"
    assert blamed("module_9_reference.original_grpo_token_weights", namespace, set()) is None
    assert blamed("module_9_reference.clipped_surrogate_terms", {}, differing,
                  ("module_9_reference.group_relative_advantages",)) == "module_9_reference.group_relative_advantages"


def test_raw_values_are_told_from_prose():
    from graders.walkthrough.lines import is_dump

    assert is_dump(({"root": "/x"},)) and is_dump(('{\n  "chosen_ids": [1, 2]\n}',))
    assert not is_dump(("beta=1 optimum:", [0.1, 0.2])) and not is_dump(("teacher-forced KL: 0.2",))


def _learner_with(tmp_path, module: str, exercise: str, entry: str):
    """A copy of solutions/<module> whose ``exercise`` is the catalogue entry ``entry`` (the rest right)."""
    from graders.engine.judging.misconceptions import mutant_source

    learner = tmp_path / "learner" / module
    shutil.copytree(REPO_ROOT / "solutions" / module, learner, ignore=shutil.ignore_patterns("__pycache__"))
    stem = exercise.split(".")[0]
    (learner / f"{stem}.py").write_text(mutant_source(exercise, entry), encoding="utf-8")
    return learner


@pytest.mark.slow
def test_a_wrong_advantage_is_blamed_before_the_reductions_that_use_it(tmp_path):
    learner = _learner_with(tmp_path, "module_09", "module_9_reference.group_relative_advantages", "sample_std")
    completed, summary = _run(tmp_path, learner, "module_09")
    assert completed.returncode == 1, completed.stdout[-2000:]
    wrong = {record["function"]: record["blame"] for record in summary["page_values"] if not record["matches"]}
    advantages = "module_9_reference.group_relative_advantages"
    assert wrong == {advantages: advantages, "module_9_reference.clipped_surrogate_terms": advantages,
                     "module_9_reference.original_grpo_token_weights": advantages,
                     "module_9_reference.dapo_token_weights": advantages}
    last = completed.stdout.strip().splitlines()[-1]
    assert last == f"✗ 4 value(s) differ from the module page (the ✗ lines above); start with `{advantages}`."
    assert f"uses `{advantages}`, whose own value above differs: look at `{advantages}` first" in completed.stdout


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_dpo_loss_without_beta_is_flagged_by_the_toy_run_and_the_run_exits_1(tmp_path, capfd, language):
    learner = _learner_with(tmp_path, "module_08", "module_8_training.dpo_loss", "beta_missing")
    code = walkthrough.run_notebook("8", learner, tmp_path / "out", language=language)
    out, err = capfd.readouterr()
    assert code == 1
    summary = json.loads((tmp_path / "out" / walkthrough.SUMMARY_FILE).read_text(encoding="utf-8"))
    wrong = [record["function"] for record in summary["page_values"] if not record["matches"]]
    assert wrong == ["module_8_training.dpo_loss"] * 3, summary["page_values"]
    assert "'root':" not in out and '"chosen_ids"' not in out  # raw values hidden without --verbose
    assert ("3 value(s) differ" if language == "en" else "расходящихся со страницей модуля: 3") in out
    assert ("3 value(s) differ" if language == "en" else "расходится со страницей модуля значений: 3") in err
