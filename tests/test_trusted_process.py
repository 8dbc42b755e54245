"""A harness's trusted cases (the toy experiments) run in a trusted process; the learner's function is served to it.

``module_8_training``'s two toy checks train with the other exercise's formula written in the harness (the
DPO loss for ``sequence_logprobs``, the masked log-likelihood for ``dpo_loss``). The worker runs them in a
process of their own that loads no learner file (:mod:`graders.engine.worker.trusted`); the learner's child
answers each call of the learner's function, gradients included (:mod:`graders.engine.worker.served`).

- what the learner's child reads has no trusted formula and no recorder; the trusted process's file has;
- the served run trains as the in-process run does (the same measured outcome, within float noise);
- hostile: a file whose functions search their process (every object the collector knows) for the trusted
  formulas and raise what they find finds nothing and keeps full marks; control: with the trusted part in
  the learner's child (``grading.TRUSTED_APART = False``) the same file finds them and shows them in its
  feedback;
- hostile: a file that writes garbage and forged messages on every descriptor it holds while it is served
  loses its own toy checks, never the batch: a correct file beside it keeps full marks;
- a forged trusted outcome in the child's own result is replaced by the trusted process's;
- fuzzed: the door's reader of the served reports, and the trusted process's reader of the child's
  answers, return a value or a refusal (``door.Refusal``, ``served.ServedError``) for any input.
"""

from __future__ import annotations

import json
import os

import msgspec
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.checks import spec_for
from graders.checks.toy_scores import TOY_CHECK
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.routes import grading
from graders.engine.routes.batch import grade_sources
from graders.engine.routes.grading import GradeOptions, prepare_job, write_settings
from graders.engine.values import door
from graders.engine.values.bundles import pack_raw
from graders.engine.sandbox.layers import merge_reported
from graders.engine.worker import runner, served
from graders.engine.worker.trusted import TrustedReports

STEM = "module_8_training"
EXERCISES = (f"{STEM}.sequence_logprobs", f"{STEM}.dpo_loss")
TRUSTED_TEXT = ("softplus", "cross_entropy", "dpo_toy_parameters")  # in the two trusted functions only

SEARCH = '''

import gc as _gc

_FOUND = []


def _search():
    """Every function this process holds whose code names a trusted formula's parts."""
    for item in _gc.get_objects():
        code = getattr(item, "__code__", None)
        if code is None or code.co_filename.endswith("module_8_training.py"):
            continue
        text = " ".join(map(str, (code.co_name, *code.co_names, *code.co_consts)))
        for word in ("softplus", "cross_entropy", "dpo_toy_parameters"):
            if word in text and code.co_name not in _FOUND:
                _FOUND.append(code.co_name)


_correct = {"sequence_logprobs": sequence_logprobs, "dpo_loss": dpo_loss}


def sequence_logprobs(*args, **kwargs):
    _search()
    if _FOUND:
        raise RuntimeError("FOUND " + ",".join(sorted(_FOUND)))
    return _correct["sequence_logprobs"](*args, **kwargs)


def dpo_loss(*args, **kwargs):
    _search()
    if _FOUND:
        raise RuntimeError("FOUND " + ",".join(sorted(_FOUND)))
    return _correct["dpo_loss"](*args, **kwargs)
'''

GARBAGE = '''

import os as _os

_correct = {"sequence_logprobs": sequence_logprobs, "dpo_loss": dpo_loss}
_CALLS = [0]


def _garbage(first_served):
    """On the third call of the toy run: junk, forged replies, a forged served outcome and a forged end on
    every descriptor (``first_served``: the calls before the toy run, one per value case)."""
    _CALLS[0] += 1
    if _CALLS[0] != first_served + 3:
        return
    lines = [b"\\x00" * 100 + b"\\n", b'{"value": 1, "arrays": 2, "grads": [true]}\\n', b'{"raised": 7}\\n',
             b'{"served": 0, "position": 0, "arrays": null}\\n', b'{"end": [0, 0]}\\n',
             b'{"ready": [0, 99]}\\n', b"[" * 5000 + b"\\n"]
    for fd in range(3, 64):
        for line in lines:
            try:
                _os.write(fd, line)
            except OSError:
                break


def sequence_logprobs(*args, **kwargs):
    _garbage({sequence_logprobs})
    return _correct["sequence_logprobs"](*args, **kwargs)


def dpo_loss(*args, **kwargs):
    _garbage({dpo_loss})
    return _correct["dpo_loss"](*args, **kwargs)
'''


FORGED_RESULT = '''

import json as _json
import sys as _sys

_child = _sys.modules["graders.engine.worker.child"]
_bundles = _sys.modules["graders.engine.values.bundles"]
_codec = _sys.modules["graders.engine.values.codec"]
_right = {"sequence_logprobs": sequence_logprobs, "dpo_loss": dpo_loss}


def sequence_logprobs(logits, input_ids, mask):  # the mean instead of the sum: the toy run shows it
    return _right["sequence_logprobs"](logits, input_ids, mask) / mask.sum(-1).clamp(min=1)


def _trained():
    """The parameters the toy's check run trains with the right functions (the harness's recorder, copied)."""
    import dpo_toy

    stages, train = {}, dpo_toy.train_dpo

    def recording(policy, *args, **kwargs):
        stages.setdefault("reference", {k: v.detach().clone() for k, v in policy.state_dict().items()})
        history = train(policy, *args, **kwargs)
        stages["stress" if "moderate" in stages else "moderate"] = {
            k: v.detach().clone() for k, v in policy.state_dict().items()}
        return history

    dpo_toy.train_dpo = recording
    try:
        dpo_toy.run_toy_dpo_experiment("check", seed=7, loss_fn=_right["dpo_loss"],
                                       logprob_fn=_right["sequence_logprobs"])
    finally:
        dpo_toy.train_dpo = train
    return stages


_report = _child.Child.report


def _forging(self, **event):
    """The toy case's value in this child's own result: the right run's parameters (the toy case is last)."""
    if "result" in event:
        result, arrays = _json.loads(event["result"]), _bundles.unpack_blob(event["arrays"], 1 << 30)
        if result["cases"]:
            encoder = _codec.Encoder("f")
            value = _codec.normalise(_trained())
            result["cases"][-1].update(outcome="ok", value=encoder.encode(value), type=_codec.type_of(value))
            arrays.update(encoder.arrays)
            event = {**event, "result": _json.dumps(result), "arrays": _bundles.pack_blob(arrays)}
    return _report(self, **event)


_child.Child.report = _forging
'''


def _solution() -> str:
    return DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")


def _entries(report: dict) -> dict:
    return {entry["id"]: entry for entry in report["exercises"] if entry["id"] in EXERCISES}


def _grade(files: dict[str, str]) -> dict:
    reports = grade_sources({name: {f"{STEM}.py": text} for name, text in files.items()},
                            GradeOptions(modules=("8",)), jobs=1)
    return {name: _entries(report) for name, report in reports.items()}


def _full(entries: dict) -> bool:
    return all(entry["points"] == entry["max_points"] for entry in entries.values())


def test_the_learners_child_reads_no_trusted_formula_and_the_trusted_process_does(tmp_path, monkeypatch):
    job = prepare_job(DEFAULT_KIT, GradeOptions(modules=("8",)), tmp_path / "job")
    write_settings(job, {})
    indices = {entry["id"]: index for index, entry in enumerate(job.entries)}
    for exercise in EXERCISES:
        child = (tmp_path / "job" / f"ex_{indices[exercise]}.json").read_text(encoding="utf-8")
        trusted = (tmp_path / "job" / f"trusted_{indices[exercise]}.json").read_text(encoding="utf-8")
        assert not [word for word in TRUSTED_TEXT if word in child], exercise
        assert [word for word in TRUSTED_TEXT if word in trusted], exercise
        assert json.loads(child)["call"]["trusted_check"] == TOY_CHECK
    job_json = (tmp_path / "job" / "job.json").read_text(encoding="utf-8")
    assert not [word for word in ("softplus", "dpo_toy_parameters") if word in job_json]
    # control: with the trusted part in the learner's child, its file holds the formulas
    monkeypatch.setattr(grading, "TRUSTED_APART", False)
    job = prepare_job(DEFAULT_KIT, GradeOptions(modules=("8",)), tmp_path / "control")
    child = (tmp_path / "control" / f"ex_{indices[EXERCISES[0]]}.json").read_text(encoding="utf-8")
    assert "softplus" in child and not list((tmp_path / "control").glob("trusted_*.json"))


# slow: a graded batch with both toy runs served (about 3 s of CPU); the fast tier keeps the serving itself
# (test_a_served_answer_trains_through_the_trusted_side) and what the child reads (the test above)
@pytest.mark.slow
def test_a_correct_file_keeps_full_marks_through_the_served_runs(monkeypatch):
    """The toy checks of a correct file, run in the trusted process with its functions served, land in the
    bands around the grader's own in-process reference run: full marks. The trusted process's sandbox layers
    reach the grader beside the child's (each sandbox report the runner merges, recorded)."""
    reported = []
    monkeypatch.setattr(runner, "merge_reported", lambda into, layers: (reported.append(dict(layers)),
                                                                        merge_reported(into, layers)))
    reports = _grade({"correct": _solution()})
    assert _full(reports["correct"]) and len(reports["correct"]) == 2, reports
    # the worker's first child, then one trusted process for each child with trusted cases (here: two)
    assert len(reported) == 3 and all(layers.keys() == reported[0].keys() for layers in reported), reported
    assert all(layers["syscall_filter"] == reported[0]["syscall_filter"] for layers in reported)


@pytest.mark.slow
def test_a_search_for_the_trusted_formulas_finds_nothing_and_the_control_finds_them(monkeypatch):
    reports = _grade({"correct": _solution(), "search": _solution() + SEARCH})
    assert _full(reports["correct"]) and _full(reports["search"]), reports["search"]
    assert not any("FOUND" in entry["feedback"] for entry in reports["search"].values())
    # control: the trusted part in the learner's child, where the same file finds and shows it
    monkeypatch.setattr(grading, "TRUSTED_APART", False)
    control = _grade({"search": _solution() + SEARCH})["search"]
    found = [entry for entry in control.values() if "FOUND" in entry["feedback"]]
    assert len(found) == 2, control
    assert all(entry["points"] < entry["max_points"] for entry in found)


@pytest.mark.slow
def test_garbage_on_every_descriptor_costs_only_the_files_own_exercises():
    """Junk on the child's own result pipe is a line outside the protocol: the worker's parent ends that child
    (the exercise crashes, naming why); the junk on the trusted pipes changes nothing; the correct file beside it
    keeps full marks."""
    before = {exercise.split(".")[1]: sum(1 for case in spec_for(exercise).cases()
                                          if case.kwargs.get("check") != TOY_CHECK) for exercise in EXERCISES}
    garbage = GARBAGE.replace("{{", "{").replace("}}", "}")
    for name, count in before.items():
        garbage = garbage.replace("{" + name + "}", str(count))
    reports = _grade({"correct": _solution(), "garbage": _solution() + garbage})
    assert _full(reports["correct"])
    for entry in reports["garbage"].values():
        assert entry["points"] == 0 and entry["status"] == "error", entry
        assert "outside the grading protocol" in entry["feedback"], entry


@pytest.mark.slow
def test_a_forged_toy_value_in_the_childs_own_result_is_replaced(monkeypatch):
    """The wrong file (a mean instead of the sum) with and without the forgery: the same points; control:
    with the toy case run in the learner's child, whose own result the grader then takes, the forgery
    earns the toy check."""
    exercise = f"{STEM}.sequence_logprobs"
    wrong = _solution() + FORGED_RESULT.split("_report = ")[0]  # the wrong function, no forgery
    reports = _grade({"correct": _solution(), "forged": _solution() + FORGED_RESULT, "wrong": wrong})
    assert _full(reports["correct"])
    assert reports["forged"][exercise]["points"] == reports["wrong"][exercise]["points"] < 3.0
    monkeypatch.setattr(grading, "TRUSTED_APART", False)
    control = _grade({"forged": _solution() + FORGED_RESULT, "wrong": wrong})
    assert control["forged"][exercise]["points"] > control["wrong"][exercise]["points"], control


# ----------------------------------------------------------------------------- fuzzing the two readers
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["value", "arrays", "grads", "raised", "ready", "index", "data", "__tensor__",
                         "dtype", "requires_grad", "__tuple__", "s0", "outcome", "cases", "position"])
        | st.text(max_size=4), inner, max_size=5),
    max_leaves=25)
FUZZ = settings(deadline=None, max_examples=120, suppress_health_check=list(HealthCheck))


@pytest.mark.slow  # a fuzz of served reports (about 1.5 s); the child's answers are fuzzed fast below
@FUZZ
@given(st.lists(st.tuples(st.integers(-1, 9), JSONISH, JSONISH), max_size=3))
def test_fuzz_served_reports_read_as_a_value_or_a_refusal(reports):
    items = []
    for position, result, arrays in reports:
        try:
            items.append(msgspec.json.decode(json.dumps({"position": position, "result": json.dumps(result),
                                                         "arrays": arrays}), type=door.ServedCase))
        except (msgspec.ValidationError, msgspec.DecodeError):  # read_event refuses those lines
            continue
    read = door.read_served(items, [2, 5])
    assert isinstance(read, door.Refusal) or (set(read[0]) <= {2, 5} and all(k.startswith("t") for k in read[1]))


def _frame(message: dict, arrays: dict) -> bytes:
    """A served message as the child writes it: its JSON line with the arrays' index, then their bytes."""
    index, raw = pack_raw(arrays)
    return json.dumps({**message, "arrays": index, "bytes": len(raw)}).encode() + b"\n" + raw


def _answer(reply: bytes):
    """The trusted side's call of a served function whose child answers ``reply``."""
    to_child, from_child = os.pipe(), os.pipe()
    try:
        os.write(from_child[1], reply)
        os.close(from_child[1])
        remote = served.Remote(served.Lines(from_child[0], to_child[1]))
        return remote(torch.zeros(2, 3, dtype=torch.float64, requires_grad=True), beta=0.5)
    finally:
        for fd in (to_child[0], to_child[1], from_child[0]):
            os.close(fd)


@FUZZ
@given(JSONISH, st.binary(max_size=64))
def test_fuzz_any_answer_from_the_child_is_a_value_or_a_served_error(value, tail):
    """Any line, any arrays index, any byte count and any bytes after it: a value or a ServedError."""
    for reply in (json.dumps(value).encode() + b"\n",
                  _frame({"value": value, "grads": [True]}, {"s0": np.zeros(3)}),
                  _frame({"value": {"__tensor__": "s0", "dtype": value, "requires_grad": True}, "grads": value},
                         {"s0": np.zeros(2)}),
                  json.dumps({"value": value, "arrays": value, "grads": [True], "bytes": len(tail)}).encode()
                  + b"\n" + tail,
                  json.dumps({"value": 1.0, "arrays": [], "grads": [], "bytes": value}).encode() + b"\n" + tail):
        try:
            _answer(reply)
        except served.ServedError:
            pass


def test_a_served_answer_trains_through_the_trusted_side():
    """The child's answer to a call, with its gradient flags, becomes part of the trusted side's graph."""
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    to_child, from_child = os.pipe(), os.pipe()
    value = {"__tensor__": "s0", "dtype": "float64", "requires_grad": True}
    os.write(from_child[1], _frame({"value": value, "grads": [True]}, {"s0": np.array([2.0, 4.0])}))
    os.write(from_child[1], _frame({"grads": [{"__tensor__": "s0", "dtype": "float64", "requires_grad": False}]},
                                   {"s0": np.array([3.0, 5.0])}))
    remote = served.Remote(served.Lines(from_child[0], to_child[1]))
    out = remote(x)
    out.sum().backward()
    assert torch.equal(out.detach(), torch.tensor([2.0, 4.0], dtype=torch.float64))
    assert torch.equal(x.grad, torch.tensor([3.0, 5.0], dtype=torch.float64))  # what the child answered
    sent = served.Lines(to_child[0], -1)
    assert [sorted(set(sent.read()) & {"call", "backward"}) for _ in range(2)] == [["call"], ["backward"]]
    for fd in (*to_child, *from_child):
        os.close(fd)


def test_a_served_function_trains_bit_for_bit_as_if_it_ran_in_the_trusted_process():
    """Both sides over real pipes (the child's side in a thread): a function with two differentiable outputs
    that share a graph gives the trusted side the same values and the same input gradients, bit for bit, as
    calling it there; the child's vector-Jacobian product is the gradient of sum(<output, upstream>)."""
    import threading

    def function(logits, weights):
        shared = torch.log_softmax(logits, dim=-1)
        return (shared * weights).sum(dim=-1), shared.exp().max(dim=-1).values

    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 3, 5, dtype=torch.float64, generator=generator)
    weights = torch.rand(4, 3, 5, dtype=torch.float64, generator=generator)
    upstream = torch.randn(4, 3, dtype=torch.float64, generator=generator)

    def run(fn):
        x = logits.clone().requires_grad_(True)
        first, second = fn(x, weights)
        ((first * upstream).sum() + second.pow(2).sum()).backward()
        return first.detach(), second.detach(), x.grad

    to_child, from_child = os.pipe(), os.pipe()
    child = threading.Thread(target=served.serve, args=(function, served.Lines(to_child[0], from_child[1]), [0, 0],
                                                       lambda exc: {"type": type(exc).__name__}))
    child.start()
    lines = served.Lines(from_child[0], to_child[1])
    assert lines.read() == {"ready": [0, 0]}
    remote = served.Remote(lines)
    got = run(remote)
    lines.write({"end": [0, 0]})
    child.join()
    for fd in (*to_child, *from_child):
        os.close(fd)
    assert remote.calls == 1
    for served_value, direct in zip(got, run(function), strict=True):
        assert torch.equal(served_value, direct)


def test_a_layer_counts_only_where_every_process_reported_it():
    """The grader's record of a submission's sandbox: its child's, its trusted process's and its other lane's
    reports together; one process without a layer makes it missing, and the first identity is kept."""
    layers: dict = {}
    merge_reported(layers, {"landlock_files": True, "syscall_filter": True, "identity": "uid 1000"})
    assert layers == {"landlock_files": True, "syscall_filter": True, "identity": "uid 1000"}
    merge_reported(layers, {"landlock_files": False, "syscall_filter": True, "identity": "forged"})
    assert layers == {"landlock_files": False, "syscall_filter": True, "identity": "uid 1000"}
    merge_reported(layers, {"landlock_files": True, "identity": "uid 1000"})  # a report without a layer: missing
    assert layers == {"landlock_files": False, "syscall_filter": False, "identity": "uid 1000"}


def test_the_parent_passes_on_the_trusted_processs_first_sandbox_report_once():
    """What the trusted process writes before its first case (its layers) is read beside its served cases;
    a second sandbox report is not read (the trusted process writes one)."""
    read_fd, write_fd = os.pipe()
    for event in ({"sandbox": {"landlock_files": True}, "identity": "x"}, {"served": 0, "position": 3,
                  "result": "{}", "arrays": None}, {"sandbox": {"landlock_files": False}}):
        os.write(write_fd, json.dumps(event).encode() + b"\n")
    reports = TrustedReports(read_fd)
    reports.read()
    assert reports.layers == {"landlock_files": True}
    assert reports.take(0) == [{"position": 3, "result": "{}", "arrays": None}]
    emitted = []
    parent = type("P", (), {"identity": "uid", "emit": lambda self, **event: emitted.append(event)})()
    from graders.engine.worker.parent import Parent
    Parent.pass_on_layers(parent, reports, True)
    Parent.pass_on_layers(parent, reports, True)
    assert emitted == [{"sandbox": {"landlock_files": True, "cpu_budget": True}, "identity": "uid"}]
    reports.close()
    os.close(write_fd)
