"""Comparing a normalised answer with the expected one, and describing values briefly.

Both sides are already normalised (:func:`graders.engine.codec.normalise`):
numbers are ``float``, arrays float64, sequences that do not stack are lists,
mappings are dicts. Numbers and arrays match when, elementwise,
``|got - expected| <= atol + rtol * |expected|`` (NumPy's ``allclose`` rule;
NaN matches NaN, an infinity matches the same infinity and nothing else). Shapes must match
exactly. A dict matches when every expected key is present and matches (extra
keys are ignored). An :class:`Opaque` expected value matches anything.
"""

from __future__ import annotations

import numpy as np

from graders.engine.codec import Opaque

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


class Said(str):
    """A text in every language at once (a comparison's reason, an engine particular): the English text
    itself, and ``translations`` (language -> text), which ``graders.engine.texts.translated`` returns
    instead of parsing the English back."""

    translations: dict


def spoken(translations: dict[str, str]) -> Said:
    """``translations`` (language -> text, English included) as one :class:`Said`."""
    text = Said(translations["en"])
    text.translations = dict(translations)
    return text
