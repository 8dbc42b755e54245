"""Edge classes: the kinds of edge input an exercise's checks and public tests must both hold.

Each exercise declares, on its ``@exercise(..., edges=declare(...))``, the classes of :data:`CLASSES`
that apply to it, and for every other class a short reason why not: nothing is left out silently.
A declared class needs at least one fixed hidden case tagged with it (``Case(..., edge="extremes")``)
and at least one public test row tagged with it (``pytest.mark.edge("extremes")`` on a test, or on a
``pytest.param`` row); ``tests/test_edge_classes.py`` checks both, and the mutation campaign's draws
(:mod:`graders.mutation.draws`) vary the tagged cases first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CLASSES: dict[str, str] = {
    "extremes": "inputs near the dtype's overflow or underflow (logits +-1000, margins +-800)",
    "zeros_and_empties": "zero inputs, zero advantages, empty responses or groups where the spec allows them",
    "ties_and_near_ties": "exact ties and near-ties (1e-9 apart)",
    "boundaries": "domain boundaries, those of combinatorial formulas included (k = 0, k = n, eps edges)",
    "large_padding": "padding that holds large or infinite values where the docstring allows any padding",
    "dtypes": "each input dtype the spec allows (float32 in, float64 out; integer lists)",
    "number_formats": "every answer format the verifier promises (fractions, separators, exponents, signs)",
    "shapes": ("the structures the spec admits beyond the usual rows: (N, T) with (N,) or (N, 1) operands "
               "(broadcasting), N = T (where a transposed reduction agrees), a batch of one (1, K), an empty "
               "batch (0, K) where allowed, a group or a distribution of one"),
    "python_types": ("the Python types the spec admits beyond the usual rows: int lists, NumPy scalars, ndarrays "
                     "where the rows pass lists (an in-place change is seen) and lists where they pass arrays"),
}

# The structure classes (issue 53, point 1): what the checks vary besides values. ``dtypes`` (float32 and
# integer inputs) belongs with them; the mutation draws realise them with :func:`as_lists`,
# :func:`as_arrays`, :func:`as_float32` and :func:`as_numpy_scalars` (graders/mutation/draws.py).
STRUCTURE_CLASSES = ("shapes", "python_types", "dtypes")

# Reasons shared by many exercises (each exercise still names them, class by class).
NO_TEXT = "takes numbers, never answer text"
NO_PADDING = "has no padded positions"
SCALAR_FLOATS = "reads Python floats/ints (or converts any input to float64 on entry): one dtype path"
NO_EXTREMES = "bounded inputs (probabilities, counts, small lengths): no overflow or underflow to reach"
NO_TIES = "no comparison, sort or max between inputs: ties change nothing"
HARNESS = "a training run per case: its edge inputs are covered by the exercise it trains with"
SCALARS_ONLY = "takes scalars (numbers and counts) only: no array, batch or group to shape"
TENSORS_ONLY = "takes torch tensors of the dtypes the spec fixes: no list or NumPy scalar is a legal input"


@dataclass(frozen=True)
class Edges:
    """An exercise's declaration: the classes that apply, and why each other class does not."""

    applies: tuple[str, ...]
    absent: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [name for name in (*self.applies, *self.absent) if name not in CLASSES]
        if unknown:
            raise ValueError(f"unknown edge classes {unknown}: the vocabulary is {list(CLASSES)}")

    def problems(self) -> list[str]:
        """What the declaration lacks: a class neither declared nor excused, declared twice, or a blank reason."""
        found = [f"{name}: neither declared nor given a reason" for name in CLASSES
                 if name not in self.applies and name not in self.absent]
        found += [f"{name}: both declared and excused" for name in self.applies if name in self.absent]
        found += [f"{name}: the reason is blank" for name, why in self.absent.items()
                  if not isinstance(why, str) or not why.strip()]
        return found


def declare(*applies: str, **absent: str) -> Edges:
    """``declare("extremes", "boundaries", dtypes="why not", ...)``: the edge classes of one exercise."""
    return Edges(tuple(applies), dict(absent))


def edge_tags(value) -> tuple[str, ...]:
    """A case's ``edge=`` as a tuple of known class names (a single name may be given as a string)."""
    tags = (value,) if isinstance(value, str) else tuple(value or ())
    unknown = [tag for tag in tags if tag not in CLASSES]
    if unknown:
        raise ValueError(f"unknown edge classes {unknown}: the vocabulary is {list(CLASSES)}")
    return tags


# ---------------------------------------------------------------------------
# The structure classes' transformations: the same values in another Python type or dtype
# ---------------------------------------------------------------------------
def _map(value, leaf):
    """``value`` with ``leaf`` applied to every number and array in it (tuples, lists and dicts walked)."""
    if isinstance(value, dict):
        return {key: _map(item, leaf) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_map(item, leaf) for item in value)
    if isinstance(value, list) and not _numbers(value):
        return [_map(item, leaf) for item in value]
    return leaf(value)


def _numbers(value) -> bool:
    """A (nested) list of Python numbers: a row a learner would write as a literal."""
    if not isinstance(value, list):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return bool(value) and all(_numbers(item) for item in value)


def as_lists(value):
    """Every float ndarray of ``value`` as a nested Python list (bool and integer arrays kept: masks, ids)."""
    import numpy as np

    def leaf(item):
        return item.tolist() if isinstance(item, np.ndarray) and item.dtype.kind == "f" and item.ndim else item
    return _map(value, leaf)


def as_arrays(value):
    """Every (nested) list of Python numbers in ``value`` as a float64 ndarray (an in-place change is then
    seen by the caller); a ragged list is kept."""
    import numpy as np

    def leaf(item):
        if _numbers(item) and isinstance(item, list):
            try:
                return np.array(item, dtype=np.float64)
            except ValueError:
                return item
        return item
    return _map(value, leaf)


def as_float32(value):
    """Every float64 ndarray of ``value`` as float32, and every float64 tensor (a :class:`TensorSpec`) as a float32
    one with the same data and ``requires_grad`` (other dtypes kept)."""
    import numpy as np

    from graders.engine.values.codec import TensorSpec

    def leaf(item):
        if isinstance(item, TensorSpec) and item.dtype == "float64":
            return TensorSpec(np.asarray(item.data, dtype=np.float32), "float32", item.requires_grad)
        return item.astype(np.float32) if isinstance(item, np.ndarray) and item.dtype == np.float64 else item
    return _map(value, leaf)


def as_numpy_scalars(value):
    """Every Python float of ``value`` as ``np.float64`` and every Python int (not a bool) as ``np.int64``."""
    import numpy as np

    def leaf(item):
        if isinstance(item, bool):
            return item
        if isinstance(item, int):
            return np.int64(item)
        if isinstance(item, float):
            return np.float64(item)
        return item
    return _map(value, leaf)
