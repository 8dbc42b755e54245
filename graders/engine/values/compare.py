"""Comparing a normalised answer with the expected one, and describing values briefly.

Both sides are already normalised (:func:`graders.engine.values.codec.normalise`):
numbers are ``float``, arrays float64, sequences that do not stack are lists,
mappings are dicts. Numbers and arrays match when, elementwise,
``|got - expected| <= atol + rtol * |expected|`` (NumPy's ``allclose`` rule;
NaN matches NaN, an infinity matches the same infinity and nothing else). Shapes must match
exactly. A dict matches when every expected key is present and matches (extra
keys are ignored). An :class:`Opaque` expected value matches anything.
"""

from __future__ import annotations

import numpy as np

from graders.engine.values.codec import Opaque
from graders.engine.values.compare_texts import COMPARE, KINDS, TYPES
from graders.text import Particular, Text

DESCRIBE_LIMIT = 160

_KIT_FIELDS = ("where", "key", "rtol", "atol")  # the comparator's fields that are the kit's words


def _particular(particular: str, **fields) -> Particular:
    """One of the comparator's particulars (:data:`COMPARE`, :data:`KINDS`) as data."""
    table = COMPARE if particular in COMPARE else KINDS
    data = tuple(name for name, value in fields.items()  # a reference's kind keeps its own marks; the learner's side
                 if name not in _KIT_FIELDS and (name == "got" or not isinstance(value, Particular)))  # is data whole
    return Particular(particular, table[particular], data=data, **fields)


def kind(value) -> Particular:
    """A short noun phrase for the type and shape of a normalised value (a :class:`Particular` of :data:`KINDS`)."""
    if value is None:
        return _particular("none")
    if isinstance(value, float):
        return _particular("number")
    if isinstance(value, str):
        return _particular("string")
    if isinstance(value, np.ndarray):
        return _particular("array", shape=str(value.shape))
    if isinstance(value, list):
        return _particular("list", count=len(value))
    if isinstance(value, dict):
        return _particular("dict")
    if isinstance(value, Opaque):
        return _particular("object", type=value.type_name)
    return _particular("other", type=type(value).__name__)


def _number(value: float) -> str:
    if np.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def describe(value, limit: int = DESCRIBE_LIMIT) -> str:
    """A compact, deterministic one-line rendering of a value (truncated to ``limit``)."""
    text = _describe(value, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(value, limit: int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    if isinstance(value, str):
        return repr(value if len(value) <= limit else value[:limit] + "...")
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return f"[] (shape {value.shape})"
        if value.dtype.kind in "biuf":
            with np.printoptions(precision=6, threshold=12, edgeitems=3, linewidth=10_000, suppress=False):
                body = np.array2string(value, separator=", ")
            return " ".join(body.split()).replace("[ ", "[")
        return repr(value.tolist())[:limit]
    if isinstance(value, (list, tuple)):
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        parts, used = [], 0
        for item in value:
            part = _describe(item, limit)
            used += len(part) + 2
            if used > limit:
                parts.append("...")
                break
            parts.append(part)
        return open_ + ", ".join(parts) + ("," if isinstance(value, tuple) and len(value) == 1 else "") + close
    if isinstance(value, dict):
        parts, used = [], 0
        for key, item in value.items():
            part = f"{key!r}: {_describe(item, limit)}"
            used += len(part) + 2
            if used > limit:
                parts.append("...")
                break
            parts.append(part)
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, Opaque):
        return f"<{value.type_name}>"
    if value is None:
        return "None"
    type_name = type(value).__name__
    if type_name == "TensorSpec":
        return f"tensor({_describe(value.data, limit)}, dtype={value.dtype})"
    return f"<{type_name}>"


def _close(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        # an infinite expected value matches only itself: |got - inf| <= rtol * inf would accept any number
        ok = np.isfinite(expected) & (np.abs(got - expected) <= atol + rtol * np.abs(expected))
    both_nan = np.isnan(expected) & np.isnan(got)
    same_inf = np.isinf(expected) & (expected == got)
    return ok | both_nan | same_inf


def mismatch(expected, got, *, rtol: float, atol: float, where: str = "") -> Particular | None:
    """``None`` when ``got`` matches ``expected``; otherwise one line (a :class:`Particular` of :data:`COMPARE`)
    saying where and how it differs."""
    problem = _mismatch(expected, got, rtol, atol)
    if problem is None:
        return None
    at, reason = ("", problem) if isinstance(problem, Particular) else problem
    return _particular("compare_at", where=f"{where}{at}", reason=reason) if where or at else reason


def _mismatch(expected, got, rtol: float, atol: float):
    """None, a Particular (at the top), or ``(path, Particular)``: where inside ``expected`` the first difference is."""
    if isinstance(expected, Opaque):
        return None
    if isinstance(expected, float):
        if not isinstance(got, float):
            return _particular("compare_values", expected=_particular("number"), got=kind(got))
        if _close(np.array(expected), np.array(got), rtol, atol):
            return None
        return _particular("compare_close", expected=describe(expected), got=describe(got), rtol=f"{rtol:g}",
                     atol=f"{atol:g}")
    if isinstance(expected, np.ndarray):
        if not isinstance(got, np.ndarray):
            return _particular("compare_values", expected=kind(expected), got=kind(got))
        if got.shape != expected.shape:
            return _particular("compare_shape", shape=str(expected.shape), got_shape=str(got.shape))
        ok = _close(expected, got, rtol, atol)
        if ok.all():
            return None
        bad = np.argwhere(~ok)
        first = tuple(int(i) for i in bad[0])
        return _particular("compare_entries", count=len(bad), size=ok.size, index=str(list(first)),
                     expected=describe(float(expected[first])), got=describe(float(got[first])), rtol=f"{rtol:g}",
                     atol=f"{atol:g}")
    if isinstance(expected, str) or expected is None:
        if got == expected and type(got) is type(expected):
            return None
        return _particular("compare_values", expected=describe(expected), got=describe(got))
    if isinstance(expected, list):
        if not isinstance(got, list):
            return _particular("compare_values", expected=kind(expected), got=kind(got))
        if len(got) != len(expected):
            return _particular("compare_length", count=len(expected), got_count=len(got))
        for index, (want, have) in enumerate(zip(expected, got)):
            problem = _mismatch(want, have, rtol, atol)
            if problem is not None:
                return _deeper(f"[{index}]", problem)
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return _particular("compare_values", expected=kind(expected), got=kind(got))
        for key, want in expected.items():
            if key not in got:
                return _particular("compare_key", key=repr(key))
            problem = _mismatch(want, got[key], rtol, atol)
            if problem is not None:
                return _deeper(f"[{key!r}]", problem)
        return None
    return _particular("compare_kind", kind=kind(expected))


def _deeper(step: str, problem):
    """``problem`` (a Particular, or ``(path, Particular)``) found one ``step`` further down: its path begins there."""
    return (step, problem) if isinstance(problem, Particular) else (step + problem[0], problem[1])


def matches(expected, got, *, rtol: float, atol: float) -> bool:
    return mismatch(expected, got, rtol=rtol, atol=atol) is None


# ---------------------------------------------------------------------------
# Types: what the spec promises, checked before values are normalised
# ---------------------------------------------------------------------------


def _type_words(described, data: bool) -> Particular:
    """A :func:`graders.engine.values.codec.type_of` description as a noun phrase (a :class:`Particular` of
    :data:`TYPES`); ``data``: its dtype and name are data (the learner's result's), not the kit's words."""
    def one(particular: str, **fields) -> Particular:
        return Particular(particular, TYPES[particular], data=tuple(fields) if data else (), **fields)

    if isinstance(described, str) and described in ("none", "bool", "int", "float", "str"):
        return one(described)
    if isinstance(described, dict):
        for key in ("array", "scalar"):
            if key in described:
                return one(key, dtype=str(described[key])[:40])
        if "tensor" in described:
            return one("tensor_grad" if described.get("grad") else "tensor", dtype=str(described["tensor"])[:40])
        for key in ("list", "tuple", "dict"):
            if key in described:
                return one(key)
        if "dataclass" in described:
            return one("dataclass", name=str(described["dataclass"])[:60])
    name = str(described.get("object", "?"))[:60] if isinstance(described, dict) else "?"
    return one("object", name=name)


def _sequence_items(described):
    """The items of a described list or tuple, or None when it is neither."""
    if isinstance(described, dict):
        for key in ("list", "tuple"):
            if isinstance(described.get(key), list):
                return described[key]
    return None


def type_problem(expected, got, where: str = "") -> Particular | None:
    """``None`` when the learner's result has the type the reference's has; otherwise one line, in every
    language, saying where and what was expected.

    Both sides are :func:`graders.engine.values.codec.type_of` descriptions. The rule (the spec's "scalars as
    Python float/int, arrays as float64 ndarray"):

    - a float where the reference returns a float (an int counts as one, as in Python; a bool, a float32
      scalar and a 0-d array -- what ``np.where`` returns on scalars -- do not: the spec says Python float);
    - an int, not a bool, where it returns an int;
    - an array of the reference's dtype (float64, or bool); where the reference returns a 0-d float64
      array, a float is one too;
    - a tensor of its dtype that requires grad exactly when the reference's does (a loss: yes; detached
      rewards: no);
    - a list or tuple, dict or dataclass whose items have these types.

    Where the reference returns ``None``, a string, another NumPy scalar or an object, the value
    comparison alone decides."""
    def problem() -> Particular:  # the reference's type is the kit's; the learner's result's is data
        fields = {"want": _type_words(expected, data=False), "have": _type_words(got, data=True)}
        if where:
            return Particular("wrong_type_at", TYPES["wrong_type_at"], data=("have",), where=where, **fields)
        return Particular("wrong_type", TYPES["wrong_type"], data=("have",), **fields)

    if expected == "float":
        return None if got in ("float", "int") else problem()
    if expected in ("int", "bool"):
        return None if got == expected else problem()
    if not isinstance(expected, dict):
        return None
    if "array" in expected:
        same = isinstance(got, dict) and "array" in got and got["array"] == expected["array"]
        # a 0-d float64 array and a float are one value (NumPy returns either from elementwise code)
        scalar = expected["array"] == "float64" and expected.get("ndim") == 0 and got in ("float", "int")
        return None if same or scalar else problem()
    if "tensor" in expected:
        same = (isinstance(got, dict) and "tensor" in got and got["tensor"] == expected["tensor"]
                and bool(got.get("grad")) == bool(expected.get("grad")))
        return None if same else problem()
    items = _sequence_items(expected)
    if items is not None:
        have = _sequence_items(got)
        if have is None:
            return problem()
        for index, (want, item) in enumerate(zip(items, have)):
            found = type_problem(want, item, f"{where}[{index}]")
            if found:
                return found
        return None
    for key in ("dict", "fields"):
        if isinstance(expected.get(key), dict):
            have = got.get(key) if isinstance(got, dict) and ("dataclass" in got) == ("dataclass" in expected) else None
            if not isinstance(have, dict):
                return problem()
            for name, want in expected[key].items():
                if name in have:
                    found = type_problem(want, have[name], f"{where}[{name!r}]")
                    if found:
                        return found
            return None
    return None


# ---------------------------------------------------------------------------
# The floating-point trap: a wrong value that is not a mistake in the formula
# ---------------------------------------------------------------------------
def float_trap(expected, got, arrays, *, rtol: float, atol: float) -> float | None:
    """A value the learner returned where the reference returns EXACTLY 0, when floating point explains it:
    either tiny (0 < |x| <= atol: wrong only for an exact check), or finite on the rows of an all-equal group
    of an input of the same shape (``arrays``: the call's input arrays) whose mean is not exactly its value,
    while every other value is right: the mean of equal floats is not always exactly that float, so
    ``r - mean(r)`` is ~1e-16, and divided by a std of ~1e-16 it is of order 1. ``None`` when neither
    (normalised values). A group whose mean is exact (``[-1.0] * 6``) cannot fall into the trap."""
    try:
        e, g = np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if e.shape != g.shape or not e.size:
        return None
    with np.errstate(invalid="ignore"):
        off = (e == 0.0) & (g != 0.0)
        tiny = off & (np.abs(g) <= atol)
    if tiny.any():
        return float(np.abs(g[tiny]).max())
    if not off.any() or not np.isfinite(g[off]).all() or not e.ndim:
        return None
    right = ~off
    if right.any() and mismatch(e[right], g[right], rtol=rtol, atol=atol) is not None:
        return None
    for array in arrays:
        array = np.asarray(array)
        if array.shape == e.shape and array.dtype.kind in "biuf":
            array = array.astype(np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                all_equal = array.max(axis=-1, keepdims=True) == array.min(axis=-1, keepdims=True)
                # the trap needs a mean that misses the values: mean([0.7] * 3) does, mean([-1.0] * 6) does not
                inexact = (array - array.mean(axis=-1, keepdims=True) != 0).any(axis=-1, keepdims=True)
            if (np.broadcast_to(all_equal & inexact, e.shape) | ~off).all():
                return float(g[off][np.argmax(np.abs(g[off]))])
    return None
