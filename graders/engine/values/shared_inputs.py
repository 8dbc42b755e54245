"""A case's array inputs in memory the worker's parent owns: laid out by it, viewed by the child, read back by it.

Whether a learner's function changed its inputs is decided from memory learner code cannot
replace. The worker's parent (trusted: it never runs learner code) maps one shared anonymous
region (``mmap``, ``MAP_SHARED``) before it forks a child, and copies into it every array input
of every case of the child's exercises, each case its own copy (:func:`lay_out`, :func:`fill`). The
child builds those inputs as views of the region (:func:`views`: ``np.frombuffer``, and
``torch.from_numpy`` for tensors), so the learner's function gets arrays whose memory the parent
reads back once the child reports the exercise (:func:`changed`). A child that copies an input,
unmaps or remaps the region leaves the parent's copy as it was: what a correct function does.

A *slot* is one ``__ndarray__`` or ``__tensor__`` node of a case's encoded ``args`` then ``kwargs``,
in the order :func:`graders.engine.values.codec.decode` visits them (:func:`case_slots`); each knows
the top-level input it belongs to (a position or a keyword). A tensor gets a slot only if NumPy
holds its dtype; its bytes are the spec's data cast as ``torch.tensor(data, dtype=...)`` casts them
(float to float, or from integers and booleans). Any other input (lists, scalars, strings, a tensor
of another dtype) is decoded as before, and only the child reports on it.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass

import numpy as np

from graders.engine.values.codec import ARRAY_TAG, DICT_TAG, TENSOR_TAG, TUPLE_TAG  # the encoding's tags, spelt once

ALIGN = 64  # each slot starts on a 64-byte boundary (NumPy and torch want aligned data)
MAX_SHARED_BYTES = 512 << 20  # one child's region, at most (the kit's inputs are a few MiB)
# torch dtype names (as a TensorSpec spells them) that NumPy holds byte for byte
TORCH_DTYPES = {"float64": "float64", "double": "float64", "float32": "float32", "float": "float32",
                "float16": "float16", "half": "float16", "int64": "int64", "long": "int64", "int32": "int32",
                "int": "int32", "int16": "int16", "short": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}


@dataclass(frozen=True)
class Slot:
    """One array input of one case: where it lies in the region and what it is."""

    top: int | str  # the input it belongs to: a position in ``args`` or a keyword
    key: str  # its array in the job's ``.arrays`` file
    node: int  # its place among the case's array nodes (:func:`case_slots`)
    tensor: str | None  # the tensor's dtype name; None: a NumPy array
    grad: bool  # a tensor that requires grad
    dtype: str  # NumPy's ``dtype.str`` of its bytes in the region
    shape: tuple[int, ...]
    offset: int
    nbytes: int


def _nodes(data, top, found: list, depth: int = 0) -> None:
    if depth > 64 or not isinstance(data, (list, dict)):
        return
    if isinstance(data, list):
        for item in data:
            _nodes(item, top, found, depth + 1)
    elif ARRAY_TAG in data:
        found.append((top, data[ARRAY_TAG], None, False))
    elif TENSOR_TAG in data:
        found.append((top, data[TENSOR_TAG], str(data.get("dtype")), bool(data.get("requires_grad"))))
    elif TUPLE_TAG in data:
        for item in data[TUPLE_TAG]:
            _nodes(item, top, found, depth + 1)
    elif DICT_TAG in data:
        for _, item in data[DICT_TAG]:
            _nodes(item, top, found, depth + 1)


def case_slots(case: dict) -> list[tuple[int | str, str, str | None, bool]]:
    """``(top-level input, array key, tensor dtype or None, requires grad)`` for each array node of an encoded case
    (``{"args": ..., "kwargs": ...}``), in :func:`graders.engine.values.codec.decode`'s order."""
    found: list = []
    for position, item in enumerate(case["args"].get(TUPLE_TAG, []) if isinstance(case["args"], dict) else []):
        _nodes(item, position, found)
    for name, item in case["kwargs"].get(DICT_TAG, []) if isinstance(case["kwargs"], dict) else []:
        _nodes(item, name, found)
    return found


def region_bytes(source: np.ndarray, tensor_dtype: str | None) -> np.ndarray | None:
    """The array a slot holds: ``source`` itself, or for a tensor its data cast to the tensor's dtype (None:
    a dtype NumPy does not hold, or a cast torch might do differently: that input is not shared)."""
    source = np.asarray(source)
    if source.dtype.kind not in "biufUS" or source.dtype.fields is not None:
        return None
    if tensor_dtype is None:
        return np.ascontiguousarray(source)
    target = TORCH_DTYPES.get(tensor_dtype.removeprefix("torch."))
    if target is None or source.dtype.kind not in "biuf":
        return None
    target = np.dtype(target)
    if source.dtype != target and not (target.kind == "f" or source.dtype.kind in "bi" and target.kind in "iu"):
        return None
    return np.ascontiguousarray(source.astype(target))


def lay_out(exercises: list[tuple[dict, dict]], limit: int = MAX_SHARED_BYTES) -> tuple[list[list[list[Slot]]], int]:
    """Each exercise's cases' slots (``[exercise][case][slot]``) and the region's size in bytes.

    ``exercises``: ``(entry, arrays)`` as the job's ``ex_<i>.json`` and ``.arrays`` hold them. Raises
    ``ValueError`` past ``limit`` bytes (at most :data:`MAX_SHARED_BYTES`: the kit's own cases are too
    large, a problem of the kit, never of a submission)."""
    offset = 0
    layout = []
    for entry, arrays in exercises:
        per_case = []
        for case in entry["cases"]:
            slots = []
            for node, (top, key, tensor_dtype, grad) in enumerate(case_slots(case)):
                data = region_bytes(arrays[key], tensor_dtype)
                if data is None:
                    continue
                slots.append(Slot(top, key, node, tensor_dtype, grad, data.dtype.str, tuple(data.shape),
                                  offset, int(data.nbytes)))
                offset += -(-max(int(data.nbytes), 1) // ALIGN) * ALIGN
            per_case.append(slots)
        layout.append(per_case)
    if offset > min(limit, MAX_SHARED_BYTES):
        raise ValueError(f"the cases' array inputs take {offset} bytes, more than {min(limit, MAX_SHARED_BYTES)}")
    return layout, offset


def fill(region, layout: list[list[list[Slot]]], exercises: list[tuple[dict, dict]]) -> None:
    """Copy every slot's bytes into ``region`` (a writable buffer of :func:`lay_out`'s size)."""
    for per_case, (_, arrays) in zip(layout, exercises):
        for slots in per_case:
            for slot in slots:
                region[slot.offset:slot.offset + slot.nbytes] = region_bytes(arrays[slot.key], slot.tensor).tobytes()


def view(region, slot: Slot) -> np.ndarray:
    """Slot ``slot`` of ``region`` as a writable C-contiguous array (no copy)."""
    return np.frombuffer(region, dtype=np.dtype(slot.dtype), count=int(np.prod(slot.shape, dtype=np.int64)),
                         offset=slot.offset).reshape(slot.shape)


def views(region, slots: list[Slot], nodes: int, torch_tensor) -> list:
    """One case's inputs to hand to :func:`graders.engine.values.codec.decode` (``given=``), one per array
    node of the case (``nodes`` of them) in its order: a view for a shared slot (``torch_tensor(array,
    slot)`` for a tensor), None where the node is decoded as before."""
    given: list = [None] * nodes
    for slot in slots:
        given[slot.node] = view(region, slot) if slot.tensor is None else torch_tensor(view(region, slot), slot)
    return given


def changed(region, per_case: list[list[Slot]], arrays: dict) -> list[list[int]]:
    """For each case, the nodes (:attr:`Slot.node`) of its slots whose values in ``region`` are no longer those of the job's
    arrays (``arrays``, the parent's own copy of the ``.arrays`` file).

    Bytes first, then values: a slot whose bytes differ but whose values are equal (``-0.0`` written over
    ``0.0``, another NaN) counts as unchanged, as the grader's comparison of values always did."""
    found = []
    for slots in per_case:
        numbers = []
        for slot in slots:
            before = region_bytes(arrays[slot.key], slot.tensor)
            now = view(region, slot)
            if before.tobytes() != now.tobytes() and not _equal(before, now):
                numbers.append(slot.node)
        found.append(numbers)
    return found


def _equal(before: np.ndarray, now: np.ndarray) -> bool:
    """Equal values (NaN equal to NaN), for bytes a learner wrote: anything that cannot be compared differs."""
    try:
        return bool(np.array_equal(before, now, equal_nan=before.dtype.kind in "fc"))
    except (TypeError, ValueError, UnicodeError):
        return False


def new_region(size: int):
    """A shared anonymous mapping of ``size`` bytes (``MAP_SHARED``: a forked child writes into the same pages)."""
    return mmap.mmap(-1, max(size, 1), flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS,
                     prot=mmap.PROT_READ | mmap.PROT_WRITE)
