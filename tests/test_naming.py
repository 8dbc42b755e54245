"""One naming rule on both sides: the grader and the learner's pytest name a catalogued mistake alike.

- the rule (:mod:`graders.engine.judging.naming`) is one text: the grader imports it, the learner's
  ``_kit_compare.py`` holds it verbatim (the build copies it), and the conftest decides with it;
- the learner's side judges EVERY input of a function its run saw (passing tests included), at the
  exercise's tolerances, with a raising entry contradicting no right answer -- as the grader does;
- the careful forms (``ddof=1`` with the all-equal guard kept) are catalogue entries of their own;
- a missing ``.detach()`` is seen on both sides: the grader's gradient checks, the learner's gradient
  signature of each recorded value (``conftest.grad_signature``, shipped in the hint tables);
- the sweep (:mod:`graders.mutation.names`) puts every catalogue entry and every point-losing mutant
  through both sides: on one small exercise and on the careful forms in the slow tier, on every exercise in the
  exhaustive tier.
"""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import numpy as np
import pytest

from graders.build.hints import starter_conftest
from graders.engine.judging import naming
from graders.engine.judging.misconceptions import load_misconceptions
from graders.paths import STARTER_DIR

conftest = starter_conftest()
GRPO = "module_9_reference.group_relative_advantages"
CHEAP = "module_9_reference.pass_at_k_unbiased"


def _observation(result, expected, wrong: dict, tolerance=None):
    norm = conftest.kit_compare.normalise
    entries = {name: value if value in (None, conftest.RAISES) else conftest.tagged(np.asarray(value, dtype=float))
               for name, value in wrong.items()}
    observation = (norm(np.asarray(result, dtype=float)), norm(np.asarray(expected, dtype=float)), entries, [])
    return observation if tolerance is None else (*observation, tolerance)


def test_the_learner_side_runs_the_engines_rule_verbatim():
    shipped = (STARTER_DIR / "_kit_compare.py").read_text(encoding="utf-8")
    for function in (naming.Raised, naming.explains, naming.explaining):
        assert inspect.getsource(function) in shipped, function.__name__
    assert conftest.kit_compare.explaining.__code__.co_code == naming.explaining.__code__.co_code


def test_the_rule_names_one_lists_several_and_needs_a_wrong_check():
    outcomes = {("a", 0): 2.0, ("a", 1): 3.0, ("b", 0): 2.0, ("b", 1): 4.0, ("c", 0): naming.Raised,
                ("c", 1): 3.0}
    agrees = lambda value, answer, check: value == answer  # noqa: E731 - the comparison of a toy exercise
    outcome = lambda name, check: outcomes[(name, check)]  # noqa: E731
    assert naming.explaining("abc", outcome, {0: 2.0, 1: 3.0}, [0], agrees) == ("a", ())
    assert naming.explaining("abc", outcome, {0: 2.0, 1: 9.0}, [0, 1], agrees) == (None, ())
    assert naming.explaining("abc", outcome, {0: 5.0, 1: 3.0}, [], agrees) == (None, ())  # nothing wrong
    # c raised where the learner is right (check 0 not required): no contradiction, so c alone fits
    assert naming.explaining("abc", outcome, {0: 7.0, 1: 3.0}, [1], agrees) == ("c", ())
    assert naming.explaining("abc", outcome, {0: 7.0, 1: 3.0}, [0, 1], agrees) == (None, ())  # c cannot reproduce 0
    assert naming.explaining("ac", outcome, {1: 3.0}, [1], agrees) == (None, ("a", "c"))


def test_a_raising_entry_contradicts_no_right_answer_but_reproduces_no_wrong_one():
    wrong = _observation([2.0], [1.0], {"a": [2.0], "b": [2.0]})
    right_a_raises = _observation([3.0], [3.0], {"a": conftest.RAISES, "b": [4.0]})
    assert conftest.fitting_entries([wrong, right_a_raises]) == ["a"]
    wrong_a_raises = _observation([4.0], [3.0], {"a": conftest.RAISES, "b": [4.0]})
    assert conftest.fitting_entries([wrong, wrong_a_raises]) == ["b"]


def test_the_exercises_tolerance_decides_right_and_wrong():
    close = _observation([1.000004], [1.0], {"a": [1.000004]}, (1e-5, 1e-6))  # right at the grader's tolerance
    assert conftest.fitting_entries([close]) is None
    assert conftest.fitting_entries([close[:4]]) == ["a"]  # at the table's default (1e-6): wrong, and a fits


class _Report(SimpleNamespace):
    pass


def test_the_session_judges_every_input_of_the_function_the_run_saw(monkeypatch):
    """A failing test fits ``a`` on its own input; a passing test of the same function, run later, holds an input
    ``a`` would have got wrong: the line settled at the end names nothing. Without that test, ``a`` is named."""
    function = "module_x.f"
    inputs = {name: (conftest.tagged([float(x)], None), conftest.tagged({}, None)) for name, x in (("in1", 1), ("in2", 2))}
    keys = {name: conftest.key_of(*tagged) for name, tagged in inputs.items()}
    unknown = (conftest.tagged([9.0], None), conftest.tagged({}, None))
    table = {function: {keys["in1"]: [{"name": conftest.REFERENCE, "value": conftest.tagged(np.array([1.0]))},
                                      {"name": "a", "value": conftest.tagged(np.array([2.0])),
                                       "hint": {"en": "hint a", "ru": "подсказка a"}}],
                        keys["in2"]: [{"name": conftest.REFERENCE, "value": conftest.tagged(np.array([3.0]))},
                                      {"name": "a", "value": conftest.tagged(np.array([7.0])),
                                       "hint": {"en": "hint a", "ru": "подсказка a"}}]}}
    monkeypatch.setattr(conftest, "_HINTS", table)
    monkeypatch.setattr(conftest, "language", lambda: "en")
    norm = conftest.kit_compare.normalise

    def run(*tests):
        hints, reports = conftest._SessionHints(), []
        for key, result, failed in tests:
            report = _Report(sections=[], longrepr=None) if failed else None
            hints.note([(function, inputs.get(key, unknown), norm(np.array([result])), ())], report)
            reports += [report] if report else []
        hints.settle()
        return [text for report in reports for _, text in report.sections]

    assert run(("in1", 2.0, True)) == ["likely mistake in f: a -- hint a"]
    # a failing test whose own input the table does not hold still gets the line the run's inputs support
    assert run(("in1", 2.0, False), ("unknown", 5.0, True)) == ["likely mistake in f: a -- hint a"]
    assert run(("in1", 2.0, True), ("in2", 3.0, False)) == []  # the later passing test rules a out


def test_a_missing_detach_is_a_wrong_answer_named_by_its_gradient_signature():
    """Equal values, different ``requires_grad``: the gradient signature makes the answer wrong and names the one
    entry with the learner's signature (the grader sees the same in its "rewards detached" check)."""
    value = conftest.kit_compare.normalise([0.5, np.array([0.25, -0.25])])
    entries = {"not_detached": conftest.tagged([0.5, np.array([0.25, -0.25])]),
               "other": conftest.tagged([0.7, np.array([0.25, -0.25])])}
    grads = {conftest.REFERENCE: [True, False], "not_detached": [True, True], "other": [True, False]}
    observation = (value, value, entries, [], (1e-6, 1e-9))
    assert conftest.fitting_entries([(*observation, {**grads, "learner": [True, True]})]) == ["not_detached"]
    assert conftest.fitting_entries([(*observation, {**grads, "learner": [True, False]})]) is None  # right
    assert conftest.fitting_entries([observation]) is None  # control: values alone do not show it


def test_the_shipped_table_holds_the_gradient_signatures_of_dpo_loss():
    """The hint table lists rewards_not_detached, whose values are the reference's, on the public input whose
    policy log-probabilities carry a gradient: both rewards require a gradient there, the reference's rewards
    do not. The loss's place is None: the grader does not see whether the loss requires a gradient (its harness
    folds that into a gradient of 0), so the learner's side does not compare it (Harness.observed_grads)."""
    import json

    table = json.loads((STARTER_DIR / "module_08" / "_hints.json").read_text(encoding="utf-8"))
    rows = [{e["name"]: e for e in listed} for listed in table["module_8_training.dpo_loss"].values()]
    found = [row for row in rows if "rewards_not_detached" in row]
    assert found, "rewards_not_detached is listed nowhere"
    for row in found:
        assert row["rewards_not_detached"]["grad"] == [None, True, True], row["rewards_not_detached"]
        assert row[conftest.REFERENCE]["grad"] == [None, False, False], row[conftest.REFERENCE]
        # the policy's log-probabilities require a gradient, the reference model's do not
        assert row[conftest.REFERENCE]["grad_inputs"] == [True, True, False, False], row[conftest.REFERENCE]


def test_the_learner_side_compares_only_the_gradient_flags_the_grader_sees():
    """One rule for both sides (issue 53, point 4): a harness folds a returned loss without a gradient into a
    gradient of 0, so the grader names ``all_zero_loss`` (``sum() * 0``, which has one) for a loss of constant 0
    that has none; the hint tables hold only the places a harness declares it sees (``observed_grads``), and a
    None place is not compared."""
    import json

    from graders.checks import spec_for
    from graders.checks.cases import observed_signature

    grpo = spec_for("module_9_training.grpo_loss").call
    dpo = spec_for("module_8_training.dpo_loss").call
    assert observed_signature([True], grpo) is None and observed_signature([True, False, True], dpo) == [None, False, True]
    assert observed_signature([True], None) == [True]  # not a harness: the whole signature
    table = json.loads((STARTER_DIR / "module_09" / "_hints.json").read_text(encoding="utf-8"))
    assert not [e for listed in table["module_9_training.grpo_loss"].values() for e in listed if "grad" in e]
    value = conftest.kit_compare.normalise(0.0)
    entries = {"all_zero_loss": conftest.tagged(0.0)}
    observation = (value, conftest.kit_compare.normalise(-0.7), entries, [], (1e-6, 1e-9))
    grads = {conftest.REFERENCE: [None, False], "all_zero_loss": [None, False]}
    assert conftest.fitting_entries([(*observation, {**grads, "learner": [False, False]})]) == ["all_zero_loss"]
    assert conftest.fitting_entries([(*observation, {**grads, "learner": [True, False]})]) == ["all_zero_loss"]
    assert conftest.fitting_entries([(*observation, {**grads, "learner": [True, True]})]) == []  # a seen place


def test_a_gradient_signature_holds_only_for_inputs_that_require_a_gradient_alike():
    """An input key leaves ``requires_grad`` out: a call whose inputs require a gradient otherwise than the
    table's is judged on its value alone (else a right answer would be wrong there)."""
    import torch

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    args = conftest.tagged([x], None)
    kwargs = conftest.tagged({}, None)
    key = conftest.key_of(args, kwargs)
    reference = {"name": conftest.REFERENCE, "value": conftest.tagged(x.detach()), "grad": [True],
                 "grad_inputs": [True]}
    table = {"m.f": {key: [reference]}}
    value = conftest.kit_compare.normalise(x)
    without = (conftest.tagged([x.detach()], None), kwargs)
    assert conftest.input_grads(*without) == [False] and conftest.key_of(*without) == key
    assert conftest._observed([("m.f", (args, kwargs), value, (), [False])], table)["m.f"][key][5] is not None
    assert conftest._observed([("m.f", without, value, (), [False])], table)["m.f"][key][5] is None
    assert conftest.fitting_entries(conftest._observations([("m.f", without, value, (), [False])], table)["m.f"]) \
        is None  # right: its value is the reference's


def test_the_careful_forms_are_entries_of_their_own():
    entries = {entry.name: entry for entry in load_misconceptions(GRPO)}
    rewards = np.array([[0.7, 0.7, 0.7], [1.0, 0.0, 0.0]])
    right = entries["sample_std"].module.__dict__["_right"]
    for careless, careful in (("sample_std", "sample_std_guarded"), ("ddof_ignored", "ddof_ignored_guarded"),
                              ("divides_by_variance", "divides_by_variance_guarded")):
        guarded = entries[careful].function(rewards, eps=0.0)
        assert np.array_equal(guarded[0], np.zeros(3)), careful  # the guard kept: exact zeros
        assert not np.array_equal(entries[careless].function(rewards, eps=0.0)[0], np.zeros(3)), careless
        assert any(not np.allclose(entries[careful].function(rewards[1], ddof=ddof), right(rewards[1], ddof=ddof))
                   for ddof in (0, 1)), careful  # still a mistake
    for entry in ("sample_std_guarded", "ddof_ignored_guarded", "divides_by_variance_guarded"):
        assert entries[entry].hint.in_("ru") != entries[entry].hint.in_("en")


# slow: the grader and a learner pytest process over one exercise's catalogue and mutants (about 8 s of CPU); the
# fast tier keeps the rule itself on both sides (the tests above: verbatim, every input, the tolerances)
@pytest.mark.slow
def test_both_sides_name_alike_on_one_small_exercise():
    """Every catalogue entry of a cheap exercise is named by both sides with its own name; of its point-losing
    mutants, none is named differently by the two sides."""
    from graders.mutation.names import disagreements, sweep

    rows = sweep([CHEAP], jobs=1)[CHEAP]
    entries = [row for row in rows if row["id"].startswith("entry:")]
    assert entries and all(row["failed"] for row in entries), entries
    assert all(row["grader"] == row["pytest"] == [row["id"].split(":", 1)[1]] for row in entries), entries
    assert disagreements(rows) == [], disagreements(rows)


@pytest.mark.slow  # twelve entries graded and one pytest process: about 30 s
def test_the_careful_forms_are_named_alike_by_both_sides_and_lose_points():
    from graders.mutation.names import entry_rows

    rows = {row["id"].split(":", 1)[1]: row for row in entry_rows(GRPO)}
    for name in ("sample_std", "sample_std_guarded", "ddof_ignored_guarded", "divides_by_variance_guarded"):
        row = rows[name]
        assert row["grader"] == row["pytest"] == [name] and row["failed"], row
        assert row["points"] < row["max_points"], row


@pytest.mark.slow  # every exercise's entries and mutants through the grader and a pytest process: minutes
@pytest.mark.exhaustive
def test_every_entry_is_named_alike_by_both_sides():
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.mutation.names import disagreements, sweep

    exercises = [e for e in DEFAULT_KIT.exercises() if load_misconceptions(e)]
    found = sweep(exercises, jobs=2, mutants=False)
    differ = [(exercise, row) for exercise, rows in found.items() for row in disagreements(rows)]
    assert differ == [], differ
    # dpo_loss's rewards_not_detached too: the learner's side reads the gradient signature (a value cannot
    # show a missing .detach())
    row = next(row for row in found["module_8_training.dpo_loss"] if row["id"] == "entry:rewards_not_detached")
    assert row["failed"] and row["grader"] == row["pytest"] == ["rewards_not_detached"], row


@pytest.mark.slow  # every exercise's 1300-odd point-losing mutants judged and run through the public tests: 10+ min
@pytest.mark.exhaustive
def test_every_point_losing_mutant_is_named_alike_by_both_sides():
    """Every exercise, the harness ones included: each point-losing mutant gets the same name, or none, from the
    grader and the learner's pytest (measured 2026-12-02: 0 of them differ; 9 did before the public rows of
    commit "Public rows for the evidence the grader had and pytest lacked")."""
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.mutation.names import disagreements, sweep

    found = sweep(list(DEFAULT_KIT.exercises()), jobs=2)
    assert sum(len(rows) for rows in found.values()) > 1000  # the sweep ran: entries and mutants of every exercise
    differ = [(exercise, row) for exercise, rows in found.items() for row in disagreements(rows)]
    assert differ == [], differ
