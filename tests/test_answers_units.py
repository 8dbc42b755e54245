"""Units of graders/engine/judging/answers.py: keys, sealing, the lookups a dependent's child gets, the gate's rule."""

from __future__ import annotations

import json
import types
from dataclasses import dataclass

import numpy as np
import pytest

from graders.engine.judging import answers
from graders.engine.values.protocol import ExerciseReport, Status


def reference_dependency(rewards, scale=True, *, eps=1e-6):
    r = np.asarray(rewards, dtype=float)
    if r.size == 0:
        raise ValueError("empty")
    centred = r - r.mean()
    return centred / (r.std() + eps) if scale else centred


def reference_dependent(rewards):
    return float(reference_dependency(rewards, eps=1e-6).max())


def _table(rewards) -> dict:
    module = types.ModuleType("ref")
    module.reference_dependency, module.reference_dependent = reference_dependency, reference_dependent
    table = answers._recorded(module, "reference_dependent", ("reference_dependency",), (rewards,), {})
    return {"signatures": {"reference_dependency": answers.signature_spec(reference_dependency)}, "table": table}


def test_keys_round_below_ten_digits_and_tell_real_differences_apart():
    a = answers.canon({"x": np.array([0.1, 0.2]), "n": 3})
    assert a == answers.canon({"x": [0.1 * (1 + 1e-13), 0.2], "n": 3.0})
    assert a != answers.canon({"x": [0.1 * (1 + 1e-6), 0.2], "n": 3})
    assert answers.canon(-0.0) == answers.canon(0.0)
    assert answers.canon("1") != answers.canon(1)


def test_a_lookup_answers_the_recorded_call_only_and_sends_the_rest_to_the_learners_own():
    data = _table([1.0, 0.0, 0.0])
    calls = []

    def own(rewards, scale=True, *, eps=1e-6):
        calls.append(list(rewards))
        return np.zeros(len(rewards))

    learner = types.ModuleType("learner")
    learner.reference_dependency = own
    with answers.answering(learner, ["reference_dependency"], data):
        got = learner.reference_dependency(np.array([1.0, 0.0, 0.0]))  # positional, eps by default: the same call
        assert np.allclose(got, reference_dependency([1.0, 0.0, 0.0]))
        assert calls == []
        other = learner.reference_dependency([0.0, 1.0])
        assert np.all(other == 0) and calls == [[0.0, 1.0]]
    assert learner.reference_dependency is own  # restored


def test_a_missing_own_function_raises_for_other_calls_and_a_refusal_comes_back_as_its_type():
    learner = types.ModuleType("learner")
    with answers.answering(learner, ["reference_dependency"], _table([])):
        with pytest.raises(ValueError, match="refuses these arguments") as refused:
            learner.reference_dependency([])
        assert "empty" not in str(refused.value)  # the reference's wording stays in the grader
        with pytest.raises(NameError):
            learner.reference_dependency([1.0])
    assert not hasattr(learner, "reference_dependency")


def test_the_table_holds_no_value_in_the_clear():
    data = _table([3.0, 1.0])
    text = json.dumps(data)
    value = reference_dependency([3.0, 1.0])
    assert repr(float(value[0]))[:8] not in text and '"ok"' not in text
    (sealed,) = data["table"].values()
    call = answers.call_text("reference_dependency", answers._signature(data["signatures"]["reference_dependency"]),
                             ([3.0, 1.0],), {})
    assert json.loads(answers.unseal(call, sealed))["ok"]["k"] == "a"


def test_results_travel_with_their_types():
    @dataclass(frozen=True)
    class Result:
        reward: float
        accuracy: int
        status: str

    module = types.SimpleNamespace(Result=Result)
    for value in (1.5, 2, "x", None, np.arange(3, dtype=np.int32), np.float32(2.5), [1, (2.0,)], {"a": 1.0},
                  Result(1.0, 1, "correct")):
        back = answers.from_wire(json.loads(json.dumps(answers.to_wire(value))), module)
        assert type(back) is type(value) and repr(back) == repr(value)
    gone = answers.from_wire(answers.to_wire(Result(0.0, 0, "wrong")), types.SimpleNamespace())
    assert (gone.reward, gone.accuracy, gone.status) == (0.0, 0, "wrong")


@pytest.mark.parametrize("report, cases, gated", [
    (dict(points=0.0, status=Status.ERROR, not_implemented=True), [], True),  # the stub
    (dict(points=0.0, status=Status.MISSING), None, True),  # no function
    (dict(points=0.0, status=Status.FAILED), [{"outcome": "ok", "type": "none"}], True),  # `pass`
    (dict(points=0.0, status=Status.FAILED), [{"outcome": "ok", "type": {"array": "float32", "ndim": 1}}], False),
    (dict(points=0.5, status=Status.FAILED), [{"outcome": "raised"}], False),
])
def test_the_gate_zeroes_a_dependent_of_an_unimplemented_dependency_only(report, cases, gated):
    @dataclass
    class Exercise:
        id: str
        stem: str
        spec: object
        index: int

    @dataclass
    class Run:
        status: str
        payload: dict

    call = types.SimpleNamespace(answers=("dep",))
    exercises = [Exercise("f.dep", "f", types.SimpleNamespace(call=None), 0),
                 Exercise("f.top", "f", types.SimpleNamespace(call=call), 1)]
    reports = (ExerciseReport("f.dep", max_points=2.0, feedback="", **report),
               ExerciseReport("f.top", Status.PASSED, 3.0, 3.0, "all passed"))
    runs = {} if cases is None else {0: Run("done", {"cases": cases})}
    out = answers.gate(reports, exercises, runs, "ru")
    assert out[0] == reports[0]
    assert (out[1].points, out[1].status) == ((0.0, Status.FAILED) if gated else (3.0, Status.PASSED))
    if gated:
        assert "не реализована" in out[1].feedback
