"""Arrays across the process boundary, never pickled: a worker's result blobs, a job's files, a given module's kept state.

:func:`pack_blob` / :func:`unpack_blob` carry a result's arrays over the pipe as raw bytes with an
index (booleans, integers, floats, strings only; size-capped); :func:`write_bundle` /
:func:`read_bundle` write and read JSON beside an arrays file (:func:`pack_file`: the same index and raw bytes);
:func:`encode_kept_state` / :func:`fill_kept_state` move a given module's kept state
(``grpo_toy.WARMED_UP``) from the grader to the store, the job and the worker. The values themselves
are :mod:`graders.engine.values.codec`'s.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path

import numpy as np


# ---------------------------------------------------------------------------
# Arrays across the pipe
# ---------------------------------------------------------------------------
BLOB_KINDS = "biufUS"  # booleans, integers, floats, strings: never objects, never structured
MAX_BLOB_ARRAYS = 100_000  # arrays in one blob


def pack_raw(arrays: dict[str, np.ndarray]) -> tuple[list, bytes]:
    """Arrays as an index ``[[name, dtype, shape], ...]`` and their raw bytes, one after another."""
    index, parts = [], []
    for name, array in arrays.items():
        array = np.asarray(array, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        if array.dtype.kind not in BLOB_KINDS or array.dtype.fields is not None:
            raise TypeError(f"cannot send an array of dtype {array.dtype}")
        index.append([str(name), array.dtype.str, [int(n) for n in array.shape]])
        parts.append(array.tobytes())
    return index, b"".join(parts)


def pack_blob(arrays: dict[str, np.ndarray]) -> dict:
    """Arrays as ``{"index": [[name, dtype, shape], ...], "data": base64}``: their raw bytes, one after another.

    What a worker sends back (thousands of small arrays per submission): unlike an ``.npz``, reading it
    parses no header (NumPy parses ``.npy`` headers with ``ast.literal_eval``).
    """
    index, data = pack_raw(arrays)
    return {"index": index, "data": base64.b64encode(data).decode("ascii")}


def unpack_blob(packed, limit: int) -> dict[str, np.ndarray]:
    """Inverse of :func:`pack_blob`, for data from an untrusted process: every entry is checked (its dtype
    a plain one of :data:`BLOB_KINDS` of at least one byte an item, its shape, its name unique and short,
    its bytes inside the data, nothing left over) before an array is built, and nothing beyond ``limit``
    bytes is decoded: each byte sent is one array's, once. Raises ``ValueError``."""

    if not isinstance(packed, dict) or not isinstance(packed.get("index"), list) \
            or not isinstance(packed.get("data"), str):
        raise ValueError("malformed arrays")
    if len(packed["data"]) > limit * 4 // 3 + 4:
        raise ValueError(f"arrays larger than {limit} bytes")
    try:
        data = base64.b64decode(packed["data"], validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"unreadable arrays ({error})") from error
    return unpack_raw(packed["index"], data, limit)


def unpack_raw(index, data: bytes, limit: int) -> dict[str, np.ndarray]:
    """Inverse of :func:`pack_raw`, with :func:`unpack_blob`'s checks. Raises ``ValueError``."""
    if not isinstance(index, list) or not isinstance(data, bytes):
        raise ValueError("malformed arrays")
    if len(data) > limit:
        raise ValueError(f"arrays larger than {limit} bytes")
    arrays: dict[str, np.ndarray] = {}
    offset = 0
    if len(index) > MAX_BLOB_ARRAYS:
        raise ValueError(f"more than {MAX_BLOB_ARRAYS} arrays")
    for entry in index:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str) and len(entry[0]) <= 64
                and isinstance(entry[1], str) and len(entry[1]) <= 16 and isinstance(entry[2], list)
                and len(entry[2]) <= 32
                and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 1 << 40 for n in entry[2])):
            raise ValueError("malformed array entry")
        name, dtype_text, shape = entry
        if name in arrays:
            raise ValueError("two arrays of one name")
        # the form packing writes (``array.dtype.str``: '<f8', '|b1'), checked literally before NumPy parses it:
        # np.dtype reads other strings as field lists and raises SyntaxError on some (',', found by the fuzz)
        if not (isinstance(dtype_text, str) and 2 <= len(dtype_text) <= 4 and dtype_text[0] in "<>|="
                and dtype_text[1:].isascii() and dtype_text[1:].isalnum()):
            raise ValueError(f"unknown dtype {str(dtype_text)[:40]!r}")
        try:
            dtype = np.dtype(dtype_text)
        except (TypeError, ValueError, SyntaxError) as error:
            raise ValueError(f"unknown dtype {dtype_text[:40]!r}") from error
        if dtype.kind not in BLOB_KINDS or dtype.fields is not None or dtype.subdtype is not None \
                or dtype.itemsize == 0:
            raise ValueError(f"arrays of dtype {dtype} are not accepted")
        count = 1
        for n in shape:
            count *= n
        size = count * dtype.itemsize
        if offset + size > len(data):
            raise ValueError("an array claims more data than was sent")
        arrays[name] = (np.frombuffer(data, dtype, count=count, offset=offset).reshape(tuple(shape)).copy()
                        if count else np.zeros(tuple(shape), dtype))
        offset += size
    if offset != len(data):
        raise ValueError("data left over after the last array")
    return arrays


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------
ARRAYS_SUFFIX = ".arrays"  # a file of arrays (:func:`pack_file`): a job's inputs, a reference record
FILE_LIMIT = 1 << 32  # bytes of arrays in one file: the grader's own files, written by the grader


def pack_file(arrays: dict[str, np.ndarray]) -> bytes:
    """Arrays as one file's bytes: :func:`pack_raw`'s index as a line of JSON, then the raw bytes.

    A job's inputs and the reference store's records: thousands of small arrays a batch reads per
    submission. Unlike an ``.npz`` (a zip member and a ``.npy`` header parsed with ``ast.literal_eval`` per
    array, under one lock for every thread), reading one is a JSON line and slices: about 4 ms for Module 9's
    780 input arrays where ``np.load`` took 100 ms."""
    index, data = pack_raw(arrays)
    return json.dumps(index, separators=(",", ":")).encode("ascii") + b"\n" + data


def unpack_file(blob: bytes, limit: int = FILE_LIMIT) -> dict[str, np.ndarray]:
    """Inverse of :func:`pack_file`, with :func:`unpack_raw`'s checks. Raises ``ValueError``."""
    head, newline, data = bytes(blob).partition(b"\n")
    if not newline:
        raise ValueError("malformed arrays file: no index line")
    try:
        index = json.loads(head)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"malformed arrays file ({type(error).__name__})") from error
    return unpack_raw(index, data, limit)


def write_bundle(path_stem: Path, payload: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write ``<stem>.json`` and, when there are arrays, ``<stem>.arrays`` (:func:`pack_file`)."""
    path_stem = Path(path_stem)
    if arrays:
        path_stem.with_suffix(ARRAYS_SUFFIX).write_bytes(pack_file(arrays))
    text = json.dumps(payload, sort_keys=True, allow_nan=False)
    tmp = path_stem.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path_stem.with_suffix(".json"))


def read_bundle(path_stem: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """Read what :func:`write_bundle` wrote (the arrays by :func:`unpack_file`, never unpickled)."""
    path_stem = Path(path_stem)
    payload = json.loads(path_stem.with_suffix(".json").read_text(encoding="utf-8"))
    arrays_path = path_stem.with_suffix(ARRAYS_SUFFIX)
    arrays = unpack_file(arrays_path.read_bytes()) if arrays_path.exists() else {}
    return payload, arrays


# ---------------------------------------------------------------------------
# A given module's kept state (grpo_toy.WARMED_UP): grader -> store -> job -> worker
# ---------------------------------------------------------------------------
KEPT_STATE = "WARMED_UP"  # the given module's attribute: key -> {parameter name: tensor}


def encode_kept_state(module) -> tuple[dict, dict[str, np.ndarray]] | None:
    """``module.WARMED_UP`` as ``(payload, arrays)`` (each entry: its key and its tensors' names, in order),
    or ``None`` when the module keeps nothing."""
    kept = getattr(module, KEPT_STATE, None)
    if not isinstance(kept, dict) or not kept:
        return None
    entries, arrays = [], {}
    for i, (key, state) in enumerate(sorted(kept.items())):
        entries.append({"key": key, "names": list(state)})
        for j, tensor in enumerate(state.values()):
            arrays[f"s{i}_{j}"] = tensor.detach().cpu().numpy()
    return {"entries": entries}, arrays


def fill_kept_state(module, payload: dict, arrays: dict[str, np.ndarray]) -> None:
    """Fill ``module.WARMED_UP`` with what :func:`encode_kept_state` wrote: the same tensors, so a run that
    starts from them is bit-identical to one that computes them."""
    import torch

    kept = getattr(module, KEPT_STATE, None)
    if not isinstance(kept, dict):
        return
    for i, entry in enumerate(payload.get("entries", [])):
        kept[entry["key"]] = {name: torch.from_numpy(arrays[f"s{i}_{j}"]) for j, name in enumerate(entry["names"])}
