"""Python literals for the visible checks: a case's inputs exactly, expected values rounded.

Inputs are rendered exactly (``repr`` floats, dtypes kept, tensors as
``torch.tensor(...)``) so a learner's call sees the autograder's input.
Expected values are the engine's normalised form (:func:`graders.engine.values.codec.normalise`)
with floats at 12 significant digits, stable across machines whose last-ulp
results differ. A value without a compact literal renders as ``None``: that
case is left to the hidden checks.
"""

from __future__ import annotations

import ast

import numpy as np

from graders.engine.values.codec import TensorSpec

MAX_EXPECTED_VALUES = 12  # a longer 1-D expected array is checked at 5 evenly spaced indices
MAX_EXPECTED_ARRAY = 30  # entries of a multi-dimensional expected array, at most


def _float_exact(value: float) -> str:
    if value != value:
        return 'float("nan")'
    if value in (float("inf"), float("-inf")):
        return 'float("inf")' if value > 0 else '-float("inf")'
    return repr(value)


def _float_rounded(value: float) -> str:
    """12 significant digits: stable across machines whose last-ulp results differ."""
    if value != value or value in (float("inf"), float("-inf")):
        return _float_exact(value)
    if abs(value) < 1e-15:
        return "0.0"
    text = format(value, ".12g")
    return text if any(c in text for c in ".en") else text + ".0"


def _string(value: str) -> str:
    """A raw literal for text with backslashes (``r'\\boxed{3}'`` reads as the notebook's LaTeX), else repr."""
    if "\\" in value and value.isprintable() and not value.endswith("\\"):
        for quote in ("'", '"'):
            literal = f"r{quote}{value}{quote}"
            if quote not in value and ast.literal_eval(literal) == value:
                return literal
    return repr(value)


def render_input(value) -> str | None:
    """Exact Python source for a case input (None when it has no compact literal form)."""
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, np.integer):
        return repr(value)
    if isinstance(value, float):
        return _float_exact(value)
    if isinstance(value, np.generic):
        if value.dtype.kind not in "biuf":
            return None
        item = render_input(value.item())
        return None if item is None else f"np.{value.dtype.name}({item})"
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            return None
        if (value.ndim == 1 and value.dtype == np.float64 and value.size > 8
                and np.array_equal(value, np.linspace(value[0], value[-1], value.size))):
            return f"np.linspace({_float_exact(float(value[0]))}, {_float_exact(float(value[-1]))}, {value.size})"
        body = render_input(value.tolist())
        if body is None:
            return None
        if value.dtype == np.float64 and value.size > 0:
            return f"np.array({body})"
        dtype = "bool" if value.dtype.kind == "b" else f"np.{value.dtype.name}"
        return f"np.array({body}, dtype={dtype})"
    if isinstance(value, TensorSpec):
        body = render_input(np.asarray(value.data).tolist())
        if body is None:
            return None
        grad = ", requires_grad=True" if value.requires_grad else ""
        return f"torch.tensor({body}, dtype=torch.{value.dtype}{grad})"
    if isinstance(value, (list, tuple)):
        items = [render_input(item) for item in value]
        if any(item is None for item in items):
            return None
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return None
        items = [(repr(key), render_input(item)) for key, item in value.items()]
        if any(item is None for _, item in items):
            return None
        return "{" + ", ".join(f"{key}: {item}" for key, item in items) + "}"
    return None


def render_expected(value) -> str | None:
    """Source for a normalised expected value, floats rounded to 12 significant digits.

    A 1-D array longer than MAX_EXPECTED_VALUES becomes ``sampled(length, at, values)``
    (five evenly spaced entries); a larger multi-dimensional array has no rendering.
    """
    if value is None or isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return _float_rounded(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _float_rounded(float(value))
        if value.ndim == 1 and value.size > MAX_EXPECTED_VALUES:
            at = sorted({int(i) for i in np.linspace(0, value.size - 1, 5).round()})
            return f"sampled({value.size}, {at}, {render_expected(value[at])})"
        if value.size > MAX_EXPECTED_ARRAY:
            return None
        return render_expected(list(value)) if value.ndim > 1 else \
            "[" + ", ".join(_float_rounded(float(x)) for x in value) + "]"
    if isinstance(value, list):
        items = [render_expected(item) for item in value]
        return None if any(item is None for item in items) else "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        items = [(repr(key), render_expected(item)) for key, item in value.items()]
        if any(item is None for _, item in items):
            return None
        return "{" + ", ".join(f"{key}: {item}" for key, item in items) + "}"
    return None  # an Opaque object: nothing to compare
