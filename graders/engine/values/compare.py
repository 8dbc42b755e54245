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
from graders.text import Text

DESCRIBE_LIMIT = 160


def kind(value) -> str:
    """A short noun phrase for the type and shape of a normalised value."""
    if value is None:
        return "None"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        return "a dict"
    if isinstance(value, Opaque):
        return f"an object of type {value.type_name}"
    return f"a {type(value).__name__}"


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


def mismatch(expected, got, *, rtol: float, atol: float, where: str = "") -> str | None:
    """``None`` when ``got`` matches ``expected``; otherwise one line saying where and how it differs."""
    at = f"at {where}: " if where else ""
    if isinstance(expected, Opaque):
        return None
    if isinstance(expected, float):
        if not isinstance(got, float):
            return f"{at}expected a number, got {kind(got)}"
        if _close(np.array(expected), np.array(got), rtol, atol):
            return None
        return f"{at}expected {describe(expected)}, got {describe(got)} (rtol {rtol:g}, atol {atol:g})"
    if isinstance(expected, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"{at}expected {kind(expected)}, got {kind(got)}"
        if got.shape != expected.shape:
            return f"{at}expected an array of shape {expected.shape}, got shape {got.shape}"
        ok = _close(expected, got, rtol, atol)
        if ok.all():
            return None
        bad = np.argwhere(~ok)
        first = tuple(int(i) for i in bad[0])
        return (f"{at}{len(bad)} of {ok.size} entries differ; first at index {list(first)}: "
                f"expected {describe(float(expected[first]))}, got {describe(float(got[first]))} "
                f"(rtol {rtol:g}, atol {atol:g})")
    if isinstance(expected, str) or expected is None:
        if got == expected and type(got) is type(expected):
            return None
        return f"{at}expected {describe(expected)}, got {describe(got)}"
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{at}expected {kind(expected)}, got {kind(got)}"
        if len(got) != len(expected):
            return f"{at}expected {len(expected)} item(s), got {len(got)}"
        for index, (want, have) in enumerate(zip(expected, got)):
            problem = mismatch(want, have, rtol=rtol, atol=atol, where=f"{where}[{index}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{at}expected {kind(expected)}, got {kind(got)}"
        for key, want in expected.items():
            if key not in got:
                return f"{at}missing key {key!r}"
            problem = mismatch(want, got[key], rtol=rtol, atol=atol, where=f"{where}[{key!r}]")
            if problem:
                return problem
        return None
    return f"{at}cannot compare {kind(expected)}"


def matches(expected, got, *, rtol: float, atol: float) -> bool:
    return mismatch(expected, got, rtol=rtol, atol=atol) is None


# ---------------------------------------------------------------------------
# Types: what the spec promises, checked before values are normalised
# ---------------------------------------------------------------------------
def _type_words(described) -> Text:
    """A :func:`graders.engine.values.codec.type_of` description as a noun phrase, in every language."""
    simple = {"none": Text("None", "None"), "bool": Text("a bool", "bool"), "int": Text("a Python int", "целое число int"),
              "float": Text("a Python float", "число float"), "str": Text("a string", "строка")}
    if isinstance(described, str) and described in simple:
        return simple[described]
    elif isinstance(described, dict) and "array" in described:
        dtype = str(described["array"])[:40]
        en, ru = f"a NumPy array of dtype {dtype}", f"массив NumPy с dtype {dtype}"
    elif isinstance(described, dict) and "tensor" in described:
        dtype = str(described["tensor"])[:40]
        en, ru = ((f"a torch tensor of dtype {dtype} that requires grad",
                   f"тензор torch с dtype {dtype}, требующий градиента") if described.get("grad") else
                  (f"a torch tensor of dtype {dtype} without grad (detached)",
                   f"тензор torch с dtype {dtype} без градиента (отсоединённый)"))
    elif isinstance(described, dict) and "scalar" in described:
        dtype = str(described["scalar"])[:40]
        en, ru = f"a NumPy {dtype} scalar", f"скаляр NumPy {dtype}"
    elif isinstance(described, dict) and "list" in described:
        en, ru = "a list", "список"
    elif isinstance(described, dict) and "tuple" in described:
        en, ru = "a tuple", "кортеж"
    elif isinstance(described, dict) and "dict" in described:
        en, ru = "a dict", "словарь"
    elif isinstance(described, dict) and "dataclass" in described:
        name = str(described["dataclass"])[:60]
        en, ru = f"a {name} dataclass", f"датакласс {name}"
    else:
        name = str(described.get("object", "?"))[:60] if isinstance(described, dict) else "?"
        en, ru = f"an object of type {name}", f"объект типа {name}"
    return Text(en, ru)


def _sequence_items(described):
    """The items of a described list or tuple, or None when it is neither."""
    if isinstance(described, dict):
        for key in ("list", "tuple"):
            if isinstance(described.get(key), list):
                return described[key]
    return None


def type_problem(expected, got, where: str = "") -> Text | None:
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
    def problem() -> Text:
        want, have = _type_words(expected), _type_words(got)
        at_en, at_ru = (f" at {where}", f" в {where}") if where else ("", "")
        return Text(f"wrong type{at_en}: expected {want}, got {have}",
                    f"неверный тип{at_ru}: ожидалось: {want.in_('ru')}; получено: {have.in_('ru')}")

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
