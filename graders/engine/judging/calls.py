"""Calling an exercise function on one case: the same code in the worker and in the grader.

The worker calls the learner's function; the grading process calls the
reference's (and catalogued misconceptions) through the very same
:func:`call_case`, so both sides compute exactly the same kind of value.
A call mode is a plain dict (it travels in the job file):

- ``{"kind": "returns"}``: the return value;
- ``{"kind": "loss_and_grads", "output": None | int}``: ``{"value": return,
  "grad": {name: d loss / d input}}`` for every ``requires_grad`` tensor input;
- ``{"kind": "answered", "names": [...]}``: the return value, the named
  dependencies answering this case's own calls from its sealed answer table
  (:mod:`graders.engine.judging.answers`);
- ``{"kind": "harness", "name": ..., "source": ...}``: the harness function
  (source text, exec'd once per process) called as
  ``harness(fn, module, starter, *args, **kwargs)``; with ``"trusted": {"name", "source", "given"}``
  and ``"trusted_check"``, the cases whose ``check`` keyword is ``trusted_check`` call
  ``trusted(fn, starter, *args, **kwargs)`` instead (:func:`is_trusted`). A worker never runs those in
  the learner's child: it serves the learner's function to a trusted process
  (:mod:`graders.engine.worker.served`), and the child's copy of the call mode has no ``trusted`` part
  (:func:`learner_call`).
"""

from __future__ import annotations

import copy
import sys

import numpy as np

from graders.engine.judging.answers import answering
from graders.engine.values import codec, shared_inputs
from graders.engine.values.codec import torch_module

_HARNESS_CACHE: dict[str, object] = {}


def harness_function(call: dict):
    """The harness callable of a call mode (compiled from its source text once)."""
    source = call["source"]
    if source not in _HARNESS_CACHE:
        namespace = {"__name__": f"_rl4llm_harness_{call['name']}"}
        exec(compile(source, f"<harness {call['name']}>", "exec"), namespace)  # noqa: S102 - kit code
        _HARNESS_CACHE[source] = namespace[call["name"]]
    return _HARNESS_CACHE[source]


def is_trusted(call: dict, kwargs) -> bool:
    """Whether a case (its decoded ``kwargs``) is one of its harness's trusted cases (encoded: :func:`trusted_positions`)."""
    check = call.get("trusted_check")
    return bool(check) and isinstance(kwargs, dict) and kwargs.get("check") == check


def encoded_check(kwargs) -> str | None:
    """The ``check`` keyword of a case's kwargs as :class:`graders.engine.values.codec.Encoder` wrote them
    (``{"__dict__": [[key, value], ...]}``; a string encodes as itself), without decoding anything else."""
    pairs = kwargs.get("__dict__") if isinstance(kwargs, dict) else None
    if not isinstance(pairs, list):
        return None
    return next((pair[1] for pair in pairs if isinstance(pair, list) and len(pair) == 2 and pair[0] == "check"
                 and isinstance(pair[1], str)), None)


def trusted_positions(entry: dict) -> list[int]:
    """The positions of a job entry's trusted cases: their ``check`` keyword is the harness's ``trusted_check``."""
    check = entry["call"].get("trusted_check")
    return [i for i, case in enumerate(entry["cases"]) if check and encoded_check(case["kwargs"]) == check]


def learner_call(call: dict) -> dict:
    """A call mode as the learner's child gets it: without its trusted part (see the module's docstring)."""
    return {key: value for key, value in call.items() if key != "trusted"}


def _tensor_inputs(args: tuple, kwargs: dict) -> dict[str, object]:
    torch = torch_module()
    if torch is None:
        return {}
    named = {f"arg{i}": value for i, value in enumerate(args)}
    named.update(kwargs)
    return {name: value for name, value in named.items()
            if isinstance(value, torch.Tensor) and value.requires_grad}


def call_case(call: dict, function, module, starter, args: tuple, kwargs: dict, answers: dict | None = None):
    """Run ``function`` on one case under call mode ``call``; return its raw result.

    ``answers``: the case's sealed answer table (call mode ``answered``, in the worker only)."""
    kind = call["kind"]
    if kind == "returns":
        return function(*args, **kwargs)
    if kind == "answered":
        with answering(module, call["names"], answers):
            return function(*args, **kwargs)
    if kind == "loss_and_grads":
        tensors = _tensor_inputs(args, kwargs)
        value = function(*args, **kwargs)
        loss = value if call.get("output") is None else value[call["output"]]
        grads: dict[str, object] = dict.fromkeys(tensors)
        torch = torch_module()
        if (torch is not None and tensors and isinstance(loss, torch.Tensor) and loss.requires_grad
                and loss.numel() == 1 and loss.is_floating_point()):
            computed = torch.autograd.grad(loss.reshape(()), list(tensors.values()), allow_unused=True)
            grads = dict(zip(tensors, computed))
        return {"value": value, "grad": grads}
    if kind == "harness":
        if is_trusted(call, kwargs) and "trusted" in call:
            return harness_function(call["trusted"])(function, starter, *args, **kwargs)
        return harness_function(call)(function, module, starter, *args, **kwargs)
    raise ValueError(f"unknown call mode {kind!r}")


# ---------------------------------------------------------------------------
# Inputs must come back unchanged
# ---------------------------------------------------------------------------
def snapshot(value):
    """A deep copy of a case's inputs that later mutation cannot reach."""
    torch = torch_module()
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        items = [snapshot(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {key: snapshot(item) for key, item in value.items()}
    return copy.deepcopy(value)


_DTYPE_ALIASES = {"long": "int64", "int": "int32", "short": "int16", "float": "float32", "double": "float64",
                  "half": "float16", "cfloat": "complex64", "cdouble": "complex128"}


def _dtype_name(name: str) -> str:
    """A torch dtype name in its canonical spelling (``long`` and ``int64`` are one dtype)."""
    name = str(name).removeprefix("torch.")
    return _DTYPE_ALIASES.get(name, name)


def _same(before, after) -> bool:
    from graders.engine.values.codec import TensorSpec

    if isinstance(before, TensorSpec):
        if not isinstance(after, TensorSpec) or _dtype_name(after.dtype) != _dtype_name(before.dtype):
            return False
        after_data = np.asarray(after.data)
        try:
            before_data = np.asarray(before.data, dtype=after_data.dtype)
        except (TypeError, ValueError):
            return False
        return before_data.shape == after_data.shape and bool(
            np.array_equal(before_data, after_data, equal_nan=after_data.dtype.kind in "fc"))
    torch = torch_module()
    if torch is not None and isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or after.shape != before.shape or after.dtype != before.dtype:
            return False
        after = after.detach()
        return bool(torch.equal(before, after) or
                    (before.is_floating_point() and torch.equal(torch.isnan(before), torch.isnan(after))
                     and torch.equal(torch.nan_to_num(before), torch.nan_to_num(after))))
    if isinstance(before, np.ndarray):
        return (isinstance(after, np.ndarray) and after.shape == before.shape and after.dtype == before.dtype
                and np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"))
    if isinstance(before, (list, tuple)):
        return (type(after) is type(before) and len(after) == len(before)
                and all(_same(b, a) for b, a in zip(before, after)))
    if isinstance(before, dict):
        return (isinstance(after, dict) and before.keys() == after.keys()
                and all(_same(before[k], after[k]) for k in before))
    try:
        return bool(before == after) or (before != before and after != after)
    except Exception:  # noqa: BLE001 - exotic objects: assume unchanged
        return True


def changed_inputs(case, after) -> list[int | str]:
    """In the grader: the inputs (positions, keywords) of a case that the worker reports changed by the call.

    ``after`` is the worker's ``inputs_after`` decoded (tensors as
    :class:`graders.engine.values.codec.TensorSpec`), or ``None`` when it could not
    be encoded (then every input counts as changed).
    """
    args, kwargs = tuple(case.args), dict(case.kwargs)
    if (not isinstance(after, (list, tuple)) or len(after) != 2 or not isinstance(after[0], (list, tuple))
            or not isinstance(after[1], dict) or len(after[0]) != len(args) or set(after[1]) != set(kwargs)):
        return [*range(len(args)), *kwargs]
    return modified_inputs(args, kwargs, tuple(after[0]), after[1])


def modified_inputs(before_args, before_kwargs, args, kwargs) -> list[int | str]:
    """The inputs that differ from their snapshot: positions of arguments, names of keywords."""
    changed: list[int | str] = [i for i, (b, a) in enumerate(zip(before_args, args)) if not _same(b, a)]
    changed += [key for key in before_kwargs if not _same(before_kwargs[key], kwargs[key])]
    return changed


def judge_inputs(exercise, run) -> None:
    """Turn each ``ok`` case whose inputs the call changed into ``modified_input`` (decided here, not in the worker);
    ``exercise``: the grader's (:class:`graders.engine.routes.grading.Exercise`), ``run``: its
    :class:`graders.engine.values.protocol.ExerciseRun` or None.

    An input changed if the worker's parent read its array inputs back changed (``run.inputs_changed``: array
    nodes, mapped to inputs through this process's own encoding of the case), or if the child says so
    (:func:`graders.engine.judging.changed_inputs`: lists, scalars, strings, and anything the child
    did to an input object). Learner code can only add to what the child says, never take from the parent's.
    """
    if run is None or run.status != "done" or not isinstance(run.payload, dict):
        return
    cases = exercise.spec.cases()
    observed = run.inputs_changed if isinstance(run.inputs_changed, list) else []
    for index, outcome in enumerate(run.payload.get("cases", [])):
        if not isinstance(outcome, dict) or outcome.get("outcome") != "ok" or index >= len(cases):
            continue
        try:
            after = codec.decode(outcome.get("inputs_after"), run.arrays)
            changed = changed_inputs(cases[index], after)
        except (ValueError, KeyError, TypeError, RecursionError):
            changed = changed_inputs(cases[index], None)
        if index < len(observed) and observed[index]:
            changed = observed_inputs(cases[index], observed[index], changed)
        if changed:
            run.payload["cases"][index] = {"outcome": "modified_input", "changed": changed,
                                           "output": outcome.get("output", "")}


def observed_inputs(case, nodes: list[int], changed: list[int | str]) -> list[int | str]:
    """``changed`` and the inputs of ``case`` that hold array nodes ``nodes`` (the worker parent's reading),
    in the case's order (positions, then keywords)."""
    encoder = codec.Encoder()
    tops = [top for top, *_ in shared_inputs.case_slots(
        {"args": encoder.encode(tuple(case.args)), "kwargs": encoder.encode(dict(case.kwargs))})]
    found = set(changed) | {tops[node] for node in nodes if 0 <= node < len(tops)}
    return [top for top in (*range(len(case.args)), *case.kwargs) if top in found]
