"""The "modified its inputs" verdict for array inputs comes from memory the worker's parent reads back.

The worker's parent maps one shared region before it forks a child, copies every array input of the
child's cases into it, and the child hands the learner views of it
(:mod:`graders.engine.values.shared_inputs`); after each result the parent reads the region back and
reports, in its own ``inputs_changed`` field, which array inputs the call changed.

- every kit case's inputs built as views are the inputs built as before: same types, dtypes, shapes,
  flags that matter, bytes, ``requires_grad`` (modules 8 and 9);
- a tensor or an array changed through its view is seen by the parent; one copied first is not;
- a hostile file whose ``k3_kl`` writes its answer into its input and whose module, at load, makes the
  child report its inputs unchanged (``codec.as_input_specs`` replaced) gets the "modified its inputs"
  verdict on those cases; a correct file beside it keeps full marks; control: with the parent's reading
  switched off (``grading.SHARED_INPUTS = False``) the same file escapes the verdict;
- a correct file's grade is bit-identical with and without the parent's reading (both modules).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.routes import grading
from graders.engine.routes.batch import grade_sources
from graders.engine.routes.grading import GradeOptions, prepare_job
from graders.engine.values import codec, shared_inputs
from graders.engine.worker.child import _shared_tensor, read_exercise
from graders.engine.worker.parent import Shared

STEM = "module_9_reference"
TARGET = "k3_kl"
# the answer written into the first input, and the child made to report the inputs as they were
IN_PLACE = '''

import copy as _copy
import sys as _sys

_codec = _sys.modules["graders.engine.values.codec"]
_as_input_specs = _codec.as_input_specs
_BEFORE = []


def _unchanged_inputs(value, _depth=0):
    """The child's report of the inputs after the call: the inputs before it."""
    return _as_input_specs(_BEFORE.pop() if _BEFORE else value, _depth)


_codec.as_input_specs = _unchanged_inputs
_correct_k3_kl = k3_kl


def k3_kl(logprobs, ref_logprobs):
    answer = _correct_k3_kl(logprobs, ref_logprobs)
    _BEFORE[:] = [((_copy.deepcopy(logprobs), _copy.deepcopy(ref_logprobs)), {})]
    if isinstance(logprobs, np.ndarray) and logprobs.dtype == np.float64 and logprobs.shape == answer.shape:
        logprobs[...] = answer  # the answer computed in place, in the grader's input
        return logprobs
    return answer
'''


def _job(tmp_path, modules=("8", "9")):
    return prepare_job(DEFAULT_KIT, GradeOptions(modules=modules), tmp_path)


def test_views_are_the_inputs_built_as_before(tmp_path):
    job = _job(tmp_path)
    shared_slots = 0
    for exercise in job.exercises:
        if exercise.index is None:
            continue
        shared = Shared(tmp_path, [exercise.index], True)
        entry, arrays = read_exercise(tmp_path, exercise.index)
        make = codec.make_torch_tensor if entry.get("torch") else None
        for position, case in enumerate(entry["cases"]):
            slots = shared.layout[0][position]
            shared_slots += len(slots)
            nodes = len(shared_inputs.case_slots(case))
            given = iter(shared_inputs.views(shared.region, slots, nodes,
                                             _shared_tensor if entry.get("torch") else lambda a, s: None))
            for part in ("args", "kwargs"):
                before = codec.decode(case[part], arrays, make_tensor=make)
                now = codec.decode(case[part], arrays, make_tensor=make, given=given)
                _assert_same(before, now)
    assert shared_slots > 1000  # nearly every array input of the two modules is shared


def _assert_same(before, now):
    assert type(before) is type(now)
    if isinstance(before, torch.Tensor):
        assert (before.dtype, before.shape, before.stride(), before.requires_grad, before.is_leaf) == \
            (now.dtype, now.shape, now.stride(), now.requires_grad, now.is_leaf)
        assert before.detach().numpy().tobytes() == now.detach().numpy().tobytes()
    elif isinstance(before, np.ndarray):
        assert (before.dtype, before.shape, before.flags.c_contiguous, before.flags.writeable,
                before.flags.aligned) == (now.dtype, now.shape, now.flags.c_contiguous, now.flags.writeable,
                                          now.flags.aligned)
        assert before.tobytes() == now.tobytes()
    elif isinstance(before, (list, tuple)):
        assert len(before) == len(now)
        for b, n in zip(before, now):
            _assert_same(b, n)
    elif isinstance(before, dict):
        assert list(before) == list(now)
        for key in before:
            _assert_same(before[key], now[key])
    else:
        assert before == now or (before != before and now != now)


def test_the_parent_sees_what_a_view_changed_and_not_a_copy(tmp_path):
    job = _job(tmp_path, modules=("8",))
    index = next(e.index for e in job.exercises if e.id == "module_8_training.dpo_loss")
    shared = Shared(tmp_path, [index], True)
    entry, _ = read_exercise(tmp_path, index)
    assert shared.changed(0) == [[] for _ in entry["cases"]]
    case = entry["cases"][0]
    slots = shared.layout[0][0]
    given = shared_inputs.views(shared.region, slots, len(shared_inputs.case_slots(case)), _shared_tensor)
    tensors = [value for value in given if isinstance(value, torch.Tensor) and not value.requires_grad]
    tensors[0].clone().add_(1.0)  # a copy: the grader's input is untouched
    assert shared.changed(0)[0] == []
    with torch.no_grad():
        tensors[0].add_(1.0)  # in place: the parent sees it
    assert shared.changed(0)[0] == [next(s.node for s in slots if s.tensor and not s.grad)]
    given[next(s.node for s in slots if s.grad)].data.mul_(-1.0)  # through .data, still the same memory
    assert len(shared.changed(0)[0]) == 2


def test_the_region_is_capped_and_garbage_in_it_counts_as_a_change():
    entry = {"cases": [{"args": {"__tuple__": [{"__ndarray__": "i0"}, [{"__tensor__": "i1", "dtype": "float32",
                                                                         "requires_grad": True}], 3]},
                        "kwargs": {"__dict__": [["labels", {"__ndarray__": "i2"}]]}}]}
    arrays = {"i0": np.zeros((4, 4)), "i1": np.ones(3), "i2": np.array(["a", "bc"])}
    layout, size = shared_inputs.lay_out([(entry, arrays)])
    assert [(s.top, s.node, s.tensor, s.dtype) for s in layout[0][0]] == [
        (0, 0, None, "<f8"), (1, 1, "float32", "<f4"), ("labels", 2, None, "<U2")]
    with pytest.raises(ValueError):
        shared_inputs.lay_out([(entry, arrays)], limit=size - 1)
    region = shared_inputs.new_region(size)
    shared_inputs.fill(region, layout, [(entry, arrays)])
    assert shared_inputs.changed(region, layout[0], arrays) == [[]]
    shared_inputs.view(region, layout[0][0][0])[0, 0] = -0.0  # the same value: unchanged
    assert shared_inputs.changed(region, layout[0], arrays) == [[]]
    slot = layout[0][0][2]
    region[slot.offset:slot.offset + slot.nbytes] = b"\xff" * slot.nbytes  # not even a character
    assert shared_inputs.changed(region, layout[0], arrays) == [[2]]


def _k3(report: dict) -> dict:
    return next(e for e in report["exercises"] if e["id"] == f"{STEM}.{TARGET}")


def _modified(entry: dict) -> bool:
    return "modified input" in entry.get("failing", [])


@pytest.mark.slow
def test_an_in_place_answer_hidden_from_the_child_gets_the_verdict(monkeypatch):
    reference = DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")
    submissions = {"correct": {f"{STEM}.py": reference}, "in_place": {f"{STEM}.py": reference + IN_PLACE}}
    options = GradeOptions(modules=("9",), timeout=20.0, memory_mb=768, load_timeout=30.0)
    reports = grade_sources(submissions, options, jobs=1)
    correct, hostile = _k3(reports["correct"]), _k3(reports["in_place"])
    assert all(e["points"] == e["max_points"] for e in reports["correct"]["exercises"] if e["id"].startswith(STEM))
    assert correct["points"] == correct["max_points"] and not _modified(correct)
    assert _modified(hostile) and hostile["points"] < hostile["max_points"]
    # every other exercise of the hostile file is the reference's: full marks there
    others = [e for e in reports["in_place"]["exercises"] if e["id"].startswith(STEM) and e is not hostile]
    assert all(e["points"] == e["max_points"] for e in others)

    # control: without the parent's reading, only the child speaks, and the attack escapes the verdict
    monkeypatch.setattr(grading, "SHARED_INPUTS", False)
    escaped = _k3(grade_sources({"in_place": submissions["in_place"]}, options, jobs=1)["in_place"])
    assert not _modified(escaped) and escaped["points"] == escaped["max_points"]


@pytest.mark.slow
def test_a_correct_grade_is_the_same_with_and_without_the_parents_reading(monkeypatch):
    files = {f"{stem}.py": DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
             for stem in ("module_8_reference", "module_8_training", "module_9_reference", "module_9_training")}
    options = GradeOptions(modules=("8", "9"))
    shared = grade_sources({"correct": files}, options, jobs=1)["correct"]
    monkeypatch.setattr(grading, "SHARED_INPUTS", False)
    alone = grade_sources({"correct": files}, options, jobs=1)["correct"]
    assert shared["score"] == shared["max_score"]
    assert json.dumps(shared["exercises"], sort_keys=True) == json.dumps(alone["exercises"], sort_keys=True)
