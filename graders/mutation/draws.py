"""The inputs that decide whether a mutant is equivalent: the checks' own cases, then draws they lack.

"Equal on the checks' inputs" is exactly "survived", so the equivalence call
also uses inputs the checks do not contain: each value case's float inputs
(arrays, tensors, Python floats; integers, strings and flags are kept, since
they are counts, sizes and modes) replaced by

- ``zeros``: every float 0;
- ``ties``: every entry of an array equal to its first one (a scalar kept);
- ``near_ties``: ties plus 1e-9 noise;
- ``large``: scaled by 1e3 (an ``exp`` overflows past 709);
- ``tiny``: scaled by 1e-3;
- ``negated``: times -1;
- ``shifted``: plus 50;
- ``random``: standard normal draws of the same shape (seeded by the case's position);
- ``one_negated``, ``one_large``: only the first entry of each array negated, or times 1e3 (an input
  that breaks one constraint while others hold);
- ``moved``: ``|x0| + 0.5`` moved from the first entry to the second (the sum kept, the first entry
  negative: a negative probability in a row that still sums to 1);

and, one integer argument at a time (counts and sizes: ``n``, ``c``, ``k``,
a group size), that integer set to 0, 1, one less, one more and 10 times it
plus 7 (the boundaries of a combinatorial formula, an empty count, a large one).

and the structure classes (:data:`graders.checks.edges.STRUCTURE_CLASSES`), the same values in another
structure (:func:`structure_draws`):

- ``as_lists`` / ``as_arrays``: float arrays as nested lists, lists of numbers as float64 arrays (an in-place
  change is then seen); ``float32``: float64 arrays and float64 tensors as float32 (a harness's tensors too: a
  hard-coded ``.double()`` or a float64 constant that promotes the result is then seen); ``numpy_scalars``:
  Python floats and ints as NumPy scalars;
- ``batch_of_one`` / ``empty_batch``: every array sharing the batch axis (the first axis of the 2-D inputs,
  else of the 1-D ones) cut to its first row, or to none;
- ``square``: where a 2-D input is (N, T) with N != T, every axis of length N or T cut to min(N, T), so a
  reduction over the wrong axis keeps its shape.

An exercise whose checks hold answer formats (a case tagged ``number_formats``: the verifier) also gets
:data:`GRAMMAR_PER_FORM` draws of every construct, form and target of the answer grammar
(:mod:`graders.checks.grammar`, the generator its hidden checks draw from, with another seed:
``MUTATION_SEED``), since its inputs are strings, which the variants above keep as they are.

Draws are capped at :data:`MAX_DRAWS` per exercise, spread evenly over the cases; the grammar's draws and
the draws of the cases tagged with an edge class (``Case(edge=...)``, the classes each exercise declares)
come first and are never thinned. A draw is a :class:`graders.checks.Case` like the checks' (no ``raises``: the
reference's own outcome, value or exception, is the expectation). A harness (the training exercises) is drawn
from like any other exercise on the cases its own function runs (a loss, its gradient, the rewards' detachment
on small tensors; a tensor's data is varied and cut like an array's, its dtype and ``requires_grad`` kept, and
``float32`` retypes it); the
cases of its trusted part (a training run each) are run as the checks give them, no more.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from graders.checks import Case, Harness
from graders.checks.edges import as_arrays, as_float32, as_lists, as_numpy_scalars
from graders.engine.values.codec import TensorSpec
from graders.text import Text

VARIANTS = ("zeros", "ties", "near_ties", "large", "tiny", "negated", "shifted", "random", "one_negated", "one_large",
            "moved")
MAX_DRAWS = 400  # per exercise: enough variety, a bounded cost per mutant
GRAMMAR_CLASS = "number_formats"  # the edge class whose cases are answers of the verifier's grammar
GRAMMAR_PER_FORM = 4  # draws of each (construct, form, target) of graders.checks.grammar.combinations()


def _vary(array: np.ndarray, variant: str, rng: np.random.Generator) -> np.ndarray:
    """One variant of a float array (same shape and dtype)."""
    if array.size == 0:
        return array.copy()
    if variant == "zeros":
        out = np.zeros_like(array)
    elif variant in ("ties", "near_ties"):
        out = np.full_like(array, array.flat[0])
        if variant == "near_ties":
            out = out + rng.uniform(-1e-9, 1e-9, size=array.shape)
    elif variant == "large":
        out = array * 1e3
    elif variant == "tiny":
        out = array * 1e-3
    elif variant == "negated":
        out = -array
    elif variant == "shifted":
        out = array + 50.0
    elif variant in ("one_negated", "one_large"):
        out = array.copy()
        out.flat[0] = -out.flat[0] if variant == "one_negated" else out.flat[0] * 1e3
    elif variant == "moved":
        out = array.copy()
        if array.size >= 2:
            moved = abs(out.flat[0]) + 0.5
            out.flat[0] -= moved
            out.flat[1] += moved
    else:
        out = rng.standard_normal(array.shape)
    return np.asarray(out, dtype=array.dtype)


def _float_array(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def vary(value, variant: str, rng: np.random.Generator):
    """``value`` with every float in it varied (``variant``); anything else kept as it is."""
    if isinstance(value, TensorSpec):
        data = np.asarray(value.data)
        if data.dtype.kind == "f":
            return TensorSpec(_vary(data, variant, rng), value.dtype, value.requires_grad)
        return value
    if _float_array(value):
        return _vary(value, variant, rng)
    if isinstance(value, float) and not isinstance(value, bool):
        return float(_vary(np.array([value]), "random" if variant == "ties" else variant, rng)[0])
    if isinstance(value, list) and value and all(isinstance(v, float) for v in value):
        return [float(v) for v in _vary(np.array(value, dtype=float), variant, rng)]
    if isinstance(value, (list, tuple)):
        items = [vary(v, variant, rng) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: vary(v, variant, rng) for k, v in value.items()}
    return value


def _has_floats(case: Case) -> bool:
    rng = np.random.default_rng(0)
    probe = (case.args, case.kwargs)
    return _differs(probe, vary(probe, "shifted", rng))


def _differs(a, b) -> bool:
    if isinstance(a, TensorSpec):
        return not np.array_equal(np.asarray(a.data), np.asarray(b.data))
    if isinstance(a, np.ndarray):
        return a.shape != b.shape or not np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) != len(b) or any(_differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return any(_differs(a[k], b[k]) for k in a)
    return a is not b and a != b


INT_VARIANTS = ("0", "1", "minus_1", "plus_1", "large")


def _int_value(value: int, variant: str) -> int:
    return {"0": 0, "1": 1, "minus_1": value - 1, "plus_1": value + 1, "large": 10 * value + 7}[variant]


def _int_draws(case: Case, label: str) -> list[Case]:
    """``case`` with one integer argument (positional or keyword, not a bool) varied at a time."""
    found = []
    slots = [(i, v) for i, v in enumerate(case.args)] + list(case.kwargs.items())
    for slot, value in slots:
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        for variant in INT_VARIANTS:
            new = _int_value(value, variant)
            if new == value:
                continue
            args, kwargs = list(case.args), dict(case.kwargs)
            if isinstance(slot, int):
                args[slot] = new
            else:
                kwargs[slot] = new
            text = f"{label} [{slot} = {new}]"
            found.append(dataclasses.replace(case, args=tuple(args), kwargs=kwargs, raises=None,
                                             label=Text(text, text)))
    return found


STRUCTURE_VARIANTS = ("as_lists", "as_arrays", "float32", "numpy_scalars", "batch_of_one", "empty_batch", "square")
_RETYPE = {"as_lists": as_lists, "as_arrays": as_arrays, "float32": as_float32, "numpy_scalars": as_numpy_scalars}


def _arrays(value) -> list[np.ndarray]:
    """The ndarrays in a case's inputs, a tensor's data among them (tuples, lists and dicts walked)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, TensorSpec):
        return [np.asarray(value.data)]
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in _arrays(item)]
    if isinstance(value, dict):
        return [a for item in value.values() for a in _arrays(item)]
    return []


def _cut(value, cut):
    """``value`` with ``cut(array)`` applied to each ndarray and each tensor's data (its dtype and
    ``requires_grad`` kept; tuples, lists and dicts walked)."""
    if isinstance(value, np.ndarray):
        return cut(value)
    if isinstance(value, TensorSpec):
        return TensorSpec(cut(np.asarray(value.data)), value.dtype, value.requires_grad)
    if isinstance(value, (list, tuple)):
        items = [_cut(item, cut) for item in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {key: _cut(item, cut) for key, item in value.items()}
    return value


def _reshaped(probe, variant: str):
    """``probe`` (args, kwargs) in the shape of ``variant``, or None when it has no such shape to take."""
    arrays = _arrays(probe)
    two_d = [a for a in arrays if a.ndim == 2]
    if variant == "square":
        sizes = [a.shape for a in two_d if a.shape[0] != a.shape[1] and min(a.shape) > 0]
        if not sizes:
            return None
        rows, width = max(sizes, key=min)  # the widest square that every such input can give
        side = min(rows, width)
        return _cut(probe, lambda a: a[tuple(slice(0, side) if n in (rows, width) else slice(None) for n in a.shape)])
    batched = two_d or [a for a in arrays if a.ndim == 1 and a.shape[0] > 1]
    if not batched:
        return None
    size = batched[0].shape[0]
    keep = 1 if variant == "batch_of_one" else 0
    if size <= keep:
        return None
    return _cut(probe, lambda a: a[:keep] if a.ndim and a.shape[0] == size else a)


def structure_draws(case: Case, label: str) -> list[Case]:
    """``case``'s values in each structure of :data:`STRUCTURE_VARIANTS` that changes something (the
    structure classes: shapes, Python types and dtypes)."""
    probe = (tuple(case.args), dict(case.kwargs))
    found = []
    for variant in STRUCTURE_VARIANTS:
        try:
            changed = _RETYPE[variant](probe) if variant in _RETYPE else _reshaped(probe, variant)
        except OverflowError:  # a Python int beyond int64 (a verifier's reference) has no NumPy scalar form
            continue
        if changed is None or not _structure_differs(probe, changed):
            continue
        args, kwargs = changed
        found.append(dataclasses.replace(case, args=tuple(args), kwargs=kwargs, raises=None,
                                         label=Text(f"{label} [{variant}]", f"{label} [{variant}]")))
    return found


def _structure_differs(a, b) -> bool:
    """A change of type, dtype or shape anywhere (values alone are :func:`_differs`'s business)."""
    if type(a) is not type(b):
        return True
    if isinstance(a, TensorSpec):
        return a.dtype != b.dtype or np.shape(a.data) != np.shape(b.data)
    if isinstance(a, np.ndarray):
        return a.dtype != b.dtype or a.shape != b.shape
    if isinstance(a, (list, tuple)):
        return len(a) != len(b) or any(_structure_differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return any(_structure_differs(a[k], b[k]) for k in a)
    return False


def _draws_of(case: Case, position: int, salt: int = 0) -> list[Case]:
    """Every draw built from one value case: its integer variants, its structure variants, then (if it holds
    floats) its float ones (``salt``: another seed for the random ones, the audit's)."""
    label = str(case.label) or f"case {position}"
    found = _int_draws(case, label) + structure_draws(case, label)
    if not _has_floats(case):
        return found
    for variant in VARIANTS:
        rng = np.random.default_rng(10_007 * position + VARIANTS.index(variant) + 1_000_003 * salt)
        args, kwargs = vary((tuple(case.args), dict(case.kwargs)), variant, rng)
        found.append(dataclasses.replace(case, args=tuple(args), kwargs=kwargs, raises=None,
                                         label=Text(f"{label} [{variant}]", f"{label} [{variant}]")))
    return found


def grammar_draws(cases: list[Case]) -> list[Case]:
    """The answer grammar's draws (:mod:`graders.checks.grammar`, its mutation seed) when a case of the checks
    is tagged with :data:`GRAMMAR_CLASS`, else none; labelled ``<construct> (drawn case N) [grammar]``."""
    if not any(GRAMMAR_CLASS in case.edge for case in cases):
        return []
    from graders.checks.grammar import MUTATION_SEED, grammar_cases

    return [dataclasses.replace(case, label=Text(f"{case.label.in_('en')} [grammar]",
                                                 f"{case.label.in_('ru')} [грамматика]"))
            for case in grammar_cases(per_form=GRAMMAR_PER_FORM, seed=MUTATION_SEED)]


def drawable(cases: list[Case], call=None) -> list[Case]:
    """The cases draws are built from: all of them, or under a harness with a trusted part
    (``graders.checks.Harness``) those its own function runs (a loss and its gradient on small tensors), never
    those of the trusted part (a training run each: ``check`` equal to its ``trusted_check``)."""
    if not isinstance(call, Harness) or call.trusted is None:
        return list(cases)
    return [case for case in cases if case.kwargs.get("check") != call.trusted_check]


def extra_cases(cases: list[Case], harness=None, limit: int | None = MAX_DRAWS, salt: int = 0) -> list[Case]:
    """The draws the checks lack, built from their value cases (``harness``: the exercise's call mode, whose
    training runs get none when it is a ``graders.checks.Harness``: :func:`drawable`).

    The answer grammar's draws (:func:`grammar_draws`) come first; then the cases tagged with an edge class
    (``Case.edge``, :mod:`graders.checks.edges`) are drawn from and keep every draw: an exercise's declared extremes, ties, empties and boundaries are the inputs a mutant
    is likeliest to mishandle near. The draws of the other cases fill what is left of ``limit`` (if anything),
    spread over them: every variant of the first case, then of the next, ..., in a fixed order."""
    edge: list[Case] = grammar_draws(cases)
    rest: list[Case] = []
    for position, case in enumerate(drawable(cases, harness)):
        if case.raises is None:
            (edge if case.edge else rest).extend(_draws_of(case, position, salt))
    if limit is None:  # the audit's: every draw of every case
        return edge + rest
    room = max(limit - len(edge), 0)
    if len(rest) <= room:
        return edge + rest
    step = len(rest) / room if room else 0
    return edge + [rest[int(i * step)] for i in range(room)]
