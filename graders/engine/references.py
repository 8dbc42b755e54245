"""Reference values (and misconception outputs), computed in the grading process.

The reference solution of every exercise runs here, never in a worker, on
fresh copies of each case's inputs built exactly as the worker builds them,
through the same :func:`graders.engine.calls.call_case`. One lock serialises
every computation (torch's random state is global) and one torch thread is
used, like the workers, so both sides compute the same numbers.
"""

from __future__ import annotations

import functools
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from graders.engine import calls, codec
from graders.engine.kit import Kit
from graders.engine.misconceptions import Misconception, load_misconceptions


def leaves(case):
    """Every input value of a case, nested containers opened."""
    def walk(value):
        if isinstance(value, (list, tuple)):
            for item in value:
                yield from walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from walk(item)
        else:
            yield value
    yield from walk(tuple(case.args))
    yield from walk(dict(case.kwargs))



@dataclass
class Outcome:
    """A normalised result of one call: a value, or the exception it raised."""

    value: object = None
    raised: list[str] | None = None  # MRO class names
    message: str = ""


class ReferenceBook:
    """Reference outcomes per exercise and case, and the loaded catalogue, computed once (thread-safe).

    :meth:`of` gives the one book of a :class:`Kit` object, kept with the modules
    the kit has loaded, so every batch of a process (nbgrader grades notebook
    after notebook) shares the reference work. Outcomes are kept per spec
    object (a spec's cases depend on its seed alone), so a spec replaced in
    ``graders.checks.REGISTRY`` gets outcomes of its own.
    """

    _lock = threading.RLock()  # one lock for every reference computation: torch's RNG is global

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self._expected: dict[tuple[str, int], tuple[object, list[Outcome]]] = {}  # (id, id(spec)) -> (spec, ...)
        self._misconceptions: dict[str, list[Misconception]] = {}
        self._wrong: dict[tuple[str, int, str, int], tuple[object, Outcome]] = {}

    @classmethod
    def of(cls, kit: Kit) -> "ReferenceBook":
        """The book of ``kit`` (one per Kit object, like its loaded modules)."""
        with cls._lock:
            book = kit._cache.get("reference_book")
            if book is None:
                book = kit._cache["reference_book"] = cls(kit)
            return book

    def _call(self, exercise, function, module, case) -> Outcome:
        args, kwargs = fresh_inputs(case)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # the kit's own edge cases (inf, nan) are deliberate
                raw = calls.call_case(_wire(exercise.spec.call), function, module,
                                      self.kit.starter_module, args, kwargs)
            return Outcome(value=codec.normalise(raw))
        except Exception as error:  # noqa: BLE001 - recorded and compared
            return Outcome(raised=[c.__name__ for c in type(error).__mro__], message=f"{type(error).__name__}: {error}")

    def preload(self, exercises) -> None:
        """Load (execute) every file the grader will run for ``exercises`` -- reference solutions, given code,
        the misconception catalogue -- now, before any worker starts, so nothing a worker could have
        touched is executed by the grader later."""
        for exercise in exercises:
            if exercise.spec is None:
                continue
            self.kit.reference_module(exercise.stem)  # with the solutions' given modules
            for name in getattr(exercise.spec.call, "given", ()):  # a harness's given code (the starter's)
                self.kit.starter_module(name)
            self.misconceptions(exercise)

    def expected(self, exercise) -> list[Outcome]:
        key = (exercise.id, id(exercise.spec))  # the spec is kept in the value: its id is never reused
        with self._lock:
            if key not in self._expected:
                with _single_thread_torch(uses_torch(exercise)):
                    module = self.kit.reference_module(exercise.stem)
                    function = getattr(module, exercise.function)
                    self._expected[key] = (exercise.spec, [self._call(exercise, function, module, case)
                                                           for case in exercise.spec.cases()])
            return self._expected[key][1]

    def misconceptions(self, exercise) -> list[Misconception]:
        with self._lock:
            if exercise.id not in self._misconceptions:
                self._misconceptions[exercise.id] = load_misconceptions(exercise.id, self.kit)
            return self._misconceptions[exercise.id]

    def wrong_outcome(self, exercise, entry: Misconception, case_index: int) -> Outcome:
        key = (exercise.id, id(exercise.spec), entry.name, case_index)
        with self._lock:
            if key not in self._wrong:
                with _single_thread_torch(uses_torch(exercise)):
                    case = exercise.spec.cases()[case_index]
                    self._wrong[key] = (exercise.spec, self._call(exercise, entry.function, entry.module, case))
            return self._wrong[key][1]


@functools.cache
def _wire(call_mode) -> dict:
    """A call mode as :func:`graders.engine.calls.call_case` reads it, described once (a harness's
    description holds its source, read with ``inspect``): call modes are frozen, so it never changes."""
    return call_mode.describe()


def fresh_inputs(case) -> tuple[tuple, dict]:
    """A fresh copy of a case's inputs, built exactly as the worker builds them (JSON + arrays)."""
    encoder = codec.Encoder()
    data = encoder.encode((tuple(case.args), dict(case.kwargs)))
    arrays = {key: value.copy() for key, value in encoder.arrays.items()}
    args, kwargs = codec.decode(data, arrays, make_tensor=codec.make_torch_tensor)
    return tuple(args), kwargs


def uses_torch(exercise) -> bool:
    """Whether an exercise's calls involve torch (training files, torch call modes, tensor inputs)."""
    return (exercise.stem.endswith("_training") or exercise.spec.call.uses_torch
            or any(isinstance(v, codec.TensorSpec) for case in exercise.spec.cases() for v in leaves(case)))


class _single_thread_torch:  # noqa: N801 - a context manager used like a function
    """Reference computations use one torch thread, like the workers (same numerics)."""

    def __init__(self, needed: bool) -> None:
        self.needed = needed

    def __enter__(self):
        import sys

        if self.needed:
            import torch  # noqa: F401 - so that the thread count is set before the first use
        self.torch = sys.modules.get("torch")
        if self.torch is not None:
            self.saved = self.torch.get_num_threads()
            self.torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        if self.torch is not None:
            self.torch.set_num_threads(self.saved)
        return False

