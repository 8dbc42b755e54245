"""Values across the process boundary: JSON plus raw arrays with a checked index, never pickle.

Two directions, two jobs:

- **Inputs** (grader -> worker) keep their exact types: ``int`` stays ``int``,
  a NumPy array keeps its dtype, a tuple stays a tuple, and a
  :class:`graders.checks.Tensor` marker becomes a ``torch.Tensor`` on arrival.
- **Outputs** (worker -> grader, and reference values inside the grader) are
  first *normalised* to a small canonical vocabulary so that a correct
  implementation returning float32, a list, a tuple, a NumPy scalar or a
  torch tensor compares equal to the float64 reference:

  ======================================  ==================================
  returned                                 normalised
  ======================================  ==================================
  bool / int / float / NumPy scalar /      ``float``
  0-d array or tensor, Fraction, Decimal
  ``str`` / ``np.str_``                    ``str`` (long strings truncated)
  ``None``                                 ``None``
  ndarray / tensor of numbers or bools     float64 ``np.ndarray``
  list / tuple of numbers or equal-shape   float64 ``np.ndarray`` (stacked)
  arrays
  any other list / tuple                   ``list`` of normalised items
  dict / dataclass instance                ``dict`` (str keys, sorted)
  anything else                            :class:`Opaque` (its type name)
  ======================================  ==================================

JSON carries the structure; the arrays travel as raw bytes with an index, never pickled: a job's in
array files, a worker's results in blobs (both in :mod:`graders.engine.values.bundles`).
Everything this module needs is imported at its top: a worker child imports
nothing once its audit hook is armed.
"""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

MAX_STRING = 4000  # characters of a returned string kept
MAX_DEPTH = 40

ARRAY_TAG, SCALAR_TAG, TUPLE_TAG, DICT_TAG, FLOAT_TAG, OPAQUE_TAG, TENSOR_TAG = (
    "__ndarray__", "__npscalar__", "__tuple__", "__dict__", "__float__", "__opaque__", "__tensor__")


@dataclasses.dataclass(frozen=True)
class Opaque:
    """A returned object the grader cannot compare by value (only its type name travels)."""

    type_name: str


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """A torch tensor described without torch: data, dtype name, ``requires_grad``."""

    data: np.ndarray
    dtype: str = "float64"
    requires_grad: bool = False


# ---------------------------------------------------------------------------
# Normalising returned values
# ---------------------------------------------------------------------------
def torch_module():
    """torch once it is imported; None before, and while a thread is still importing it (a partially
    initialised torch may lack ``Tensor``, and no tensor exists before its import has finished)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or getattr(getattr(torch, "__spec__", None), "_initializing", False):
        return None
    return torch


def normalise(value, _depth: int = 0):
    """The canonical form of a returned value (see the module docstring)."""
    if _depth > MAX_DEPTH:
        return Opaque("too deeply nested")
    torch = torch_module()
    if value is None or isinstance(value, str):
        return value if value is None or len(value) <= MAX_STRING else value[:MAX_STRING] + "...[truncated]"
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating, Fraction, Decimal)):
        try:
            return float(value)
        except (OverflowError, ValueError):
            return math.inf if value > 0 else -math.inf
    if isinstance(value, np.str_):
        return normalise(str(value), _depth)
    if torch is not None and isinstance(value, torch.Tensor):
        try:
            value = value.detach().cpu()
            if value.is_complex():
                return Opaque("complex tensor")
            value = value.to(torch.float64).numpy()
        except Exception:  # noqa: BLE001 - sparse, meta or otherwise odd tensors
            return Opaque(type(value).__name__)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            array = np.array(value, dtype=np.float64)
            return float(array) if array.ndim == 0 else array
        if value.dtype.kind in "OUS" and value.ndim > 0:
            return normalise(value.tolist(), _depth + 1)
        if value.ndim == 0 and value.dtype.kind in "OUS":
            return normalise(value.item(), _depth + 1)
        return Opaque(f"ndarray of {value.dtype}")
    if isinstance(value, (list, tuple)):
        items = [normalise(item, _depth + 1) for item in value]
        return _stack(items)
    if isinstance(value, dict):
        return {str(key): normalise(item, _depth + 1) for key, item in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return normalise({f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}, _depth + 1)
    return Opaque(type(value).__name__)


def _stack(items: list):
    """A list of numbers, or of equal-shape arrays, becomes one float64 array."""
    if not items:
        return np.zeros(0)
    if all(isinstance(item, float) for item in items):
        return np.array(items, dtype=np.float64)
    if all(isinstance(item, np.ndarray) for item in items):
        if len({item.shape for item in items}) == 1:
            return np.stack(items).astype(np.float64)
    return items


# ---------------------------------------------------------------------------
# The type of a returned value (checked before values are normalised)
# ---------------------------------------------------------------------------
TYPE_ITEMS = 64  # items of a list, tuple or dict described (the rest are left out)


def type_of(value, _depth: int = 0):
    """What a returned value IS, before :func:`normalise` makes every number a float: a JSON-able
    description that :func:`graders.engine.values.compare.type_problem` compares with the reference's.

    ``"none"``, ``"bool"``, ``"int"``, ``"float"`` (a Python float; ``np.float64`` is one), ``"str"``;
    ``{"scalar": dtype}`` (another NumPy scalar), ``{"array": dtype, "ndim": n}``,
    ``{"tensor": dtype, "grad": requires_grad, "ndim": n}``, ``{"list": [...]}``, ``{"tuple": [...]}``,
    ``{"dict": {key: ...}}``, ``{"dataclass": class name, "fields": {...}}``, ``{"object": type name}``.
    Never raises (it runs on learner objects)."""
    try:
        return _type_of(value, _depth)
    except Exception:  # noqa: BLE001 - an object whose attributes raise
        return {"object": "unreadable"}


def _type_of(value, depth: int):
    kind = type(value)
    if value is None:
        return "none"
    if kind is bool or kind is np.bool_:
        return "bool"
    if kind is int:
        return "int"
    if isinstance(value, float) and not isinstance(value, np.generic) or kind is np.float64:
        return "float"
    if kind is str:
        return "str"
    if isinstance(value, np.generic):
        return {"scalar": str(value.dtype)}
    if isinstance(value, np.ndarray):
        return {"array": str(value.dtype), "ndim": int(value.ndim)}
    torch = torch_module()
    if torch is not None and isinstance(value, torch.Tensor):
        return {"tensor": str(value.dtype).removeprefix("torch."), "grad": bool(value.requires_grad),
                "ndim": int(value.dim())}
    if depth >= MAX_DEPTH:
        return {"object": "too deeply nested"}
    if isinstance(value, (list, tuple)):
        items = [_type_of(item, depth + 1) for item in list(value)[:TYPE_ITEMS]]
        return {"list" if isinstance(value, list) else "tuple": items}
    if isinstance(value, dict):
        return {"dict": {str(key): _type_of(item, depth + 1) for key, item in list(value.items())[:TYPE_ITEMS]}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"dataclass": kind.__name__,
                "fields": {f.name: _type_of(getattr(value, f.name, None), depth + 1)
                           for f in dataclasses.fields(value)[:TYPE_ITEMS]}}
    return {"object": kind.__name__}


# ---------------------------------------------------------------------------
# Encoding to JSON + arrays
# ---------------------------------------------------------------------------
class Encoder:
    """Turns a value into JSON-able data; arrays are collected in ``self.arrays``."""

    def __init__(self, prefix: str = "a") -> None:
        self.prefix = prefix
        self.arrays: dict[str, np.ndarray] = {}

    def _store(self, array: np.ndarray) -> str:
        key = f"{self.prefix}{len(self.arrays)}"
        self.arrays[key] = array
        return key

    def encode(self, value, _depth: int = 0):
        if _depth > MAX_DEPTH:
            raise TypeError("value is nested too deeply to encode")
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, np.integer):
            return value
        if isinstance(value, float) and not isinstance(value, np.generic):  # np.float64 is a float subclass: it
            return value if math.isfinite(value) else {FLOAT_TAG: repr(value)}  # stays a NumPy scalar (below)
        if isinstance(value, np.generic):
            if value.dtype.kind not in "biufUS":
                raise TypeError(f"cannot encode a NumPy scalar of dtype {value.dtype}")
            return {SCALAR_TAG: self._store(np.asarray(value))}
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufUS":
                raise TypeError(f"cannot encode an array of dtype {value.dtype}")
            return {ARRAY_TAG: self._store(np.ascontiguousarray(value))}
        if isinstance(value, TensorSpec):
            return {TENSOR_TAG: self._store(np.asarray(value.data)), "dtype": value.dtype,
                    "requires_grad": bool(value.requires_grad)}
        if isinstance(value, Opaque):
            return {OPAQUE_TAG: value.type_name}
        if isinstance(value, tuple):
            return {TUPLE_TAG: [self.encode(item, _depth + 1) for item in value]}
        if isinstance(value, list):
            return [self.encode(item, _depth + 1) for item in value]
        if isinstance(value, dict):
            if not all(isinstance(key, str) for key in value):
                raise TypeError("only dicts with string keys can be encoded")
            return {DICT_TAG: [[key, self.encode(item, _depth + 1)] for key, item in value.items()]}
        raise TypeError(f"cannot encode a value of type {type(value).__name__}")


def digest(value) -> str:
    """The fingerprint of a normalised value exactly as :class:`Encoder` writes it: ``LAYOUT.CONTENT``, where
    LAYOUT is the first 16 hex digits of the SHA-256 of its JSON and each array's dtype and shape, and CONTENT
    the SHA-256 of those and each array's bytes. Equal digests: equal values, bit for bit (a value decoded
    from a worker's result and the same value normalised in the grader digest alike). Raises ``TypeError``
    where :class:`Encoder` would. :func:`has_digest` compares the layout before it reads any array's bytes."""
    layout, arrays = _layout(value)
    return f"{layout.hexdigest()[:16]}.{_content(layout, arrays)}"


def has_digest(value, found: str) -> bool:
    """Whether :func:`digest` of ``value`` is ``found``; a value of another structure, dtype or shape is told
    apart from its layout alone, before any array's bytes are hashed (a learner's oversized reply of the
    wrong shape costs the grader no hashing). Raises ``TypeError`` where :class:`Encoder` would."""
    layout, arrays = _layout(value)
    head, _, tail = found.partition(".")
    return layout.hexdigest()[:16] == head and _content(layout, arrays) == tail


def _layout(value):
    """The SHA-256 object of a value's JSON and its arrays' dtypes and shapes, and the arrays in order."""
    import hashlib
    import json

    encoder = Encoder()
    found = hashlib.sha256(json.dumps(encoder.encode(value), allow_nan=False).encode("utf-8"))
    for array in encoder.arrays.values():
        found.update(f"\n{array.dtype.str} {array.shape}".encode("ascii"))
    return found, list(encoder.arrays.values())


def _content(layout, arrays) -> str:
    """The layout's SHA-256 continued with each array's bytes, in hex."""
    found = layout.copy()
    for array in arrays:
        found.update(_array_bytes(array))
    return found.hexdigest()


def _array_bytes(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()


def decode(data, arrays, *, make_tensor=None, given=None, _depth: int = 0):
    """Inverse of :meth:`Encoder.encode`; ``make_tensor(TensorSpec)`` builds tensors (default: keep specs).

    ``given``: an iterator with one item per array or tensor node, in this order; an item that is not None
    is that node's value as is (a view of the worker parent's shared inputs:
    :mod:`graders.engine.values.shared_inputs`), None decodes the node from ``arrays``."""
    if _depth > MAX_DEPTH:
        raise ValueError("encoded value is nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(item, arrays, make_tensor=make_tensor, given=given, _depth=_depth + 1) for item in data]
    if not isinstance(data, dict) or len(data) == 0:
        raise ValueError(f"malformed encoded value: {type(data).__name__}")
    if ARRAY_TAG in data:
        shared = next(given) if given is not None else None
        return shared if shared is not None else np.array(arrays[data[ARRAY_TAG]])
    if SCALAR_TAG in data:
        return np.array(arrays[data[SCALAR_TAG]])[()]
    if FLOAT_TAG in data:
        return float(data[FLOAT_TAG])
    if OPAQUE_TAG in data:
        return Opaque(str(data[OPAQUE_TAG]))
    if TENSOR_TAG in data:
        shared = next(given) if given is not None else None
        if shared is not None:
            return shared
        spec = TensorSpec(np.array(arrays[data[TENSOR_TAG]]), str(data["dtype"]), bool(data["requires_grad"]))
        return make_tensor(spec) if make_tensor is not None else spec
    if TUPLE_TAG in data:
        return tuple(decode(item, arrays, make_tensor=make_tensor, given=given, _depth=_depth + 1)
                     for item in data[TUPLE_TAG])
    if DICT_TAG in data:
        return {str(key): decode(item, arrays, make_tensor=make_tensor, given=given, _depth=_depth + 1)
                for key, item in data[DICT_TAG]}
    raise ValueError(f"malformed encoded value with keys {sorted(data)}")


def as_input_specs(value, _depth: int = 0):
    """A case's inputs with every ``torch.Tensor`` replaced by its :class:`TensorSpec` (encodable as an input)."""
    if _depth > MAX_DEPTH:
        raise TypeError("value is nested too deeply to encode")
    torch = torch_module()
    if torch is not None and isinstance(value, torch.Tensor):
        return TensorSpec(value.detach().cpu().numpy().copy(), str(value.dtype).removeprefix("torch."),
                          bool(value.requires_grad))
    if isinstance(value, tuple):
        return tuple(as_input_specs(item, _depth + 1) for item in value)
    if isinstance(value, list):
        return [as_input_specs(item, _depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: as_input_specs(item, _depth + 1) for key, item in value.items()}
    return value


def make_torch_tensor(spec: TensorSpec):
    """Build the ``torch.Tensor`` a :class:`TensorSpec` describes (imports torch)."""
    import torch

    dtype = getattr(torch, spec.dtype)
    tensor = torch.tensor(np.array(spec.data), dtype=dtype)
    if spec.requires_grad:
        tensor.requires_grad_(True)
    return tensor


def fresh_inputs(case) -> tuple[tuple, dict]:
    """A fresh copy of a case's inputs, built exactly as the worker builds them (JSON + arrays)."""
    encoder = Encoder()
    data = encoder.encode((tuple(case.args), dict(case.kwargs)))
    arrays = {key: value.copy() for key, value in encoder.arrays.items()}
    args, kwargs = decode(data, arrays, make_tensor=make_torch_tensor)
    return tuple(args), kwargs
