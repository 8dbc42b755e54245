"""Reference values (and misconception outputs), computed in the grading process or read from disk.

The reference solution of every exercise runs here, never in a worker, on
fresh copies of each case's inputs built exactly as the worker builds them,
through the same :func:`graders.engine.judging.calls.call_case`. Exercises are worked
on side by side (one lock per exercise); computations that use torch take one
more lock (torch's random state is global) and one torch thread, like the
workers, so both sides compute the same numbers.

What is computed is kept, per exercise, in a
:class:`graders.engine.judging.refcache.ReferenceStore` under a key made of
everything it depends on: the next batch on an unchanged kit reads the
reference outcomes, the catalogue's names and hints and every wrong outcome
computed so far, and executes no reference code until it meets something
new (e.g. a learner's answer that only an uncomputed catalogue entry could
explain).
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graders import course
from graders.engine.judging import calls, refcache
from graders.engine.values import codec
from graders.engine.values.codec import fresh_inputs  # noqa: F401 - beside the codec it uses; read here too
from graders.engine.judging.kit import Kit
from graders.engine.judging.misconceptions import Misconception, catalogue_file, load_misconceptions
from graders.text import Text


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
    type: object = None  # what the value was before normalising (graders.engine.values.codec.type_of)
    # a harness with a grader-side score: the digest of the value it measured (codec.digest), so that a
    # learner's value equal to it bit for bit is known to measure as ``value`` without measuring it again
    measured_from: str | None = None


def _hints_of(hint: Text) -> dict[str, str]:
    """A hint as the record on disk keeps it: ``{language: hint}``, read back into a Text."""
    return {language: hint.in_(language) for language in course.LANGUAGES}


@dataclass(frozen=True)
class Listed:
    """A catalogue entry as a record on disk knows it: its name and hints (its formula is not loaded)."""

    name: str
    hint: Text  # the hint in every language (its value: the English one)


@dataclass
class _Record:
    """One exercise's reference record (see :mod:`graders.engine.judging.refcache`)."""

    key: str
    expected: list[Outcome] | None = None
    catalogue: list[Listed] | None = None
    wrong: dict[str, Outcome] = field(default_factory=dict)  # "<entry name>#<case index>" -> outcome
    dirty: bool = False

    def payload(self) -> tuple[dict, dict]:
        encoder = codec.Encoder("r")
        data = {"expected": None if self.expected is None else [refcache.encode_outcome(o, encoder)
                                                                  for o in self.expected],
                "catalogue": None if self.catalogue is None else [[e.name, str(e.hint), _hints_of(e.hint)]
                                                                   for e in self.catalogue],
                "wrong": {name: refcache.encode_outcome(o, encoder) for name, o in sorted(self.wrong.items())}}
        return data, encoder.arrays

    @classmethod
    def read(cls, key: str, data: dict, arrays: dict) -> "_Record":
        record = cls(key)
        if data.get("expected") is not None:
            record.expected = [refcache.decode_outcome(o, arrays, Outcome) for o in data["expected"]]
        if data.get("catalogue") is not None:
            try:  # each entry as [name, English hint, {language: hint}]; anything else is computed again
                record.catalogue = [Listed(str(name), Text(*(str(dict(*hints[:1])[language]) for language in course.LANGUAGES)))
                                    for name, _english, *hints in data["catalogue"]]
            except (KeyError, TypeError, ValueError):
                record.catalogue = None
        record.wrong = {str(name): refcache.decode_outcome(o, arrays, Outcome)
                        for name, o in (data.get("wrong") or {}).items()}
        return record


class ReferenceBook:
    """Reference outcomes per exercise and case, and the loaded catalogue, computed once (thread-safe).

    :meth:`of` gives the one book of a :class:`Kit` object, kept with the modules
    the kit has loaded, so every batch of a process (nbgrader grades notebook
    after notebook) shares the reference work. Outcomes are kept per spec
    object (a spec's cases depend on its seed alone), so a spec replaced in
    ``graders.checks.REGISTRY`` gets outcomes of its own.
    """

    _books = threading.Lock()  # one book per kit object

    def __init__(self, kit: Kit, store: refcache.ReferenceStore | None = None) -> None:
        self.kit = kit
        self.store = store
        self._expected: dict[tuple[str, int], tuple[object, list[Outcome]]] = {}  # (id, id(spec)) -> (spec, ...)
        self._misconceptions: dict[str, list[Misconception]] = {}
        self._wrong: dict[tuple[str, int, str, int], tuple[object, Outcome]] = {}
        self._records: dict[tuple[str, int], tuple[object, _Record | None]] = {}  # (id, id(spec)) -> record
        self._guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}  # one per exercise: its work is done once

    def _lock(self, exercise) -> threading.RLock:
        """The lock of one exercise's reference work (exercises proceed side by side; torch's global
        state has its own lock, :data:`TORCH_LOCK`)."""
        with self._guard:
            return self._locks.setdefault(exercise.id, threading.RLock())

    @classmethod
    def of(cls, kit: Kit) -> "ReferenceBook":
        """The book of ``kit`` (one per Kit object, like its loaded modules), with the default store."""
        with cls._books:
            book = kit._cache.get("reference_book")
            if book is None:
                book = kit._cache["reference_book"] = cls(kit, refcache.ReferenceStore.default())
            return book

    # -- the store ----------------------------------------------------------
    def _record(self, exercise) -> _Record | None:
        """The exercise's record (read from the store once), or ``None`` without a store or a digest."""
        key = (exercise.id, id(exercise.spec))
        if key not in self._records:
            record = None
            digest = getattr(exercise, "digest", None)
            if self.store is not None and digest:
                folder = course.module_of(exercise.stem).folder
                sources = [*(self.kit.solutions_dir / folder).glob("*.py"), *(self.kit.starter_dir / folder).glob("*.py")]
                score = getattr(exercise.spec.call, "score", None)
                if score is not None:  # what is stored is measured by it: its file is part of the key
                    sources.append(Path(inspect.getsourcefile(score)))
                disk_key = self.store.key(exercise.id, digest, refcache.files_digest(sources),
                                          refcache.files_digest([catalogue_file(exercise.id, self.kit)]))
                found = self.store.read(disk_key)
                record = _Record.read(disk_key, *found) if found else _Record(disk_key)
            self._records[key] = (exercise.spec, record)
        return self._records[key][1]

    def save(self) -> int:
        """Write every record that learned something to the store, and the kept state of the given modules
        the harnesses ran here (``refcache.save_given_state``); returns how many records were written."""
        with self._guard:
            written = 0
            for _, record in self._records.values():
                if record is not None and record.dirty and self.store is not None:
                    if self.store.write(record.key, *record.payload()):
                        written += 1
                    record.dirty = False
            for name, module in self.kit.loaded_given_modules().items():
                refcache.save_given_state(self.store, self.kit, name, module)
            return written

    def _call(self, exercise, function, module, case) -> Outcome:
        args, kwargs = fresh_inputs(case)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # the kit's own edge cases (inf, nan) are deliberate
                raw = calls.call_case(_wire(exercise.spec.call), function, module,
                                      self.kit.starter_module, args, kwargs)
                normal = codec.normalise(raw)
                value = scored(exercise.spec, normal, case, self.kit)  # as the learner's is
                measured = codec.digest(normal) if getattr(exercise.spec.call, "score", None) else None
            return Outcome(value=value, type=codec.type_of(raw), measured_from=measured)
        except Exception as error:  # noqa: BLE001 - recorded and compared
            return Outcome(raised=[c.__name__ for c in type(error).__mro__], message=f"{type(error).__name__}: {error}")

    def preload(self, exercises) -> None:
        """Load (execute) every file the grader may run for ``exercises`` -- reference solutions, given code,
        the misconception catalogue -- now, before any learner code runs, so that nothing a worker could
        have touched is executed by the grader later. (Needed where Landlock does not keep learner code
        away from the kit's files; see :func:`graders.engine.routes.batch.grade_paths`.)"""
        for exercise in exercises:
            if exercise.spec is None:
                continue
            self.kit.reference_module(exercise.stem)  # with the solutions' given modules
            for name in getattr(exercise.spec.call, "given", ()):  # a harness's given code (the starter's)
                self.kit.starter_module(name)
            with self._lock(exercise):
                self._loaded_misconceptions(exercise)

    def expected(self, exercise) -> list[Outcome]:
        key = (exercise.id, id(exercise.spec))  # the spec is kept in the value: its id is never reused
        with self._lock(exercise):
            if key not in self._expected:
                record = self._record(exercise)
                if record is not None and record.expected is not None:
                    outcomes = record.expected
                else:
                    with single_thread_torch(uses_torch(exercise)):
                        module = self.kit.reference_module(exercise.stem)
                        function = getattr(module, exercise.function)
                        outcomes = [self._call(exercise, function, module, case) for case in exercise.spec.cases()]
                    if record is not None:
                        record.expected, record.dirty = outcomes, True
                self._expected[key] = (exercise.spec, outcomes)
            return self._expected[key][1]

    def misconceptions(self, exercise) -> list[Misconception | Listed]:
        """The exercise's catalogue entries: loaded, or as the store lists them (name and hint)."""
        with self._lock(exercise):
            if exercise.id in self._misconceptions:
                return self._misconceptions[exercise.id]
            record = self._record(exercise)
            if record is not None and record.catalogue is not None:
                return record.catalogue
            return self._loaded_misconceptions(exercise)

    def _loaded_misconceptions(self, exercise) -> list[Misconception]:
        if exercise.id not in self._misconceptions:
            self._misconceptions[exercise.id] = load_misconceptions(exercise.id, self.kit)
            record = self._record(exercise)
            if record is not None and record.catalogue is None:
                record.catalogue = [Listed(e.name, e.hint) for e in self._misconceptions[exercise.id]]
                record.dirty = True
        return self._misconceptions[exercise.id]

    def wrong_outcome(self, exercise, entry: Misconception | Listed, case_index: int) -> Outcome:
        key = (exercise.id, id(exercise.spec), entry.name, case_index)
        with self._lock(exercise):
            if key not in self._wrong:
                record = self._record(exercise)
                stored = None if record is None else record.wrong.get(f"{entry.name}#{case_index}")
                if stored is None:
                    loaded = {e.name: e for e in self._loaded_misconceptions(exercise)}[entry.name]
                    with single_thread_torch(uses_torch(exercise)):
                        case = exercise.spec.cases()[case_index]
                        stored = self._call(exercise, loaded.function, loaded.module, case)
                    if record is not None:
                        record.wrong[f"{entry.name}#{case_index}"], record.dirty = stored, True
                self._wrong[key] = (exercise.spec, stored)
            return self._wrong[key][1]


def scored(spec, value, case, kit):
    """What is compared of ``value`` (one case's normalised result, the reference's or the learner's decoded):
    the harness's grader-side ``score`` of it (:class:`graders.checks.Harness`; the toy checks measure the
    parameters a run trained with the kit's own code), else ``value`` itself. Alone on torch (its RNG and
    thread count are global), on the same lock as the reference computations."""
    score = getattr(spec.call, "score", None)
    if score is None:
        return value
    with TORCH_LOCK:
        return score(value, case, kit)


@functools.cache
def _wire(call_mode) -> dict:
    """A call mode as :func:`graders.engine.judging.calls.call_case` reads it, described once (a harness's
    description holds its source, read with ``inspect``): call modes are frozen, so it never changes."""
    return call_mode.describe()


def uses_torch(exercise) -> bool:
    """Whether an exercise's calls involve torch (training files, torch call modes, tensor inputs)."""
    return (exercise.stem.endswith("_training") or exercise.spec.call.uses_torch
            or any(isinstance(v, codec.TensorSpec) for case in exercise.spec.cases() for v in leaves(case)))


TORCH_LOCK = threading.RLock()  # torch's random state and thread count are global to the process


class single_thread_torch:  # noqa: N801 - a context manager used like a function
    """A reference computation that uses torch: alone (torch's RNG is global) and on one torch thread,
    like the workers (same numerics). One that does not use torch takes no lock."""

    def __init__(self, needed: bool) -> None:
        self.needed = needed

    def __enter__(self):
        if not self.needed:
            return self
        TORCH_LOCK.acquire()
        import torch

        self.torch = torch
        self.saved = torch.get_num_threads()
        torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        if self.needed:
            self.torch.set_num_threads(self.saved)
            TORCH_LOCK.release()
        return False
