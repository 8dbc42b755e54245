"""The door out of a worker: every message a worker sends is decoded here, once, by one strict typed schema.

What a worker sends is learner-controlled: learner code holds the pipe its child reports on, so it can
write any line there, and its parent relays the ``loaded`` error, the ``result`` text and the ``arrays``
of a ``done`` event as they came (a ``done`` event's ``inputs_changed`` is the parent's own, read from the
shared inputs: :mod:`graders.engine.values.shared_inputs`). Nothing else in the grader reads those bytes. :func:`read_event`
decodes one event line into an :class:`Event`; :func:`read_error` a ``loaded`` error into a dict with
the keys ``type``, ``mro``, ``message``, ``where``, ``sandbox``, ``output`` (``refusal``, ``kit``: typed); :func:`read_result`
a ``done`` event's result and arrays into ``(payload, arrays)``. Each either returns typed, bounded values
or a :class:`Refusal` that says why (the runner makes it that exercise's ``crashed``): no exception
leaves this module for any input (the fuzz tests in ``tests/test_worker_door.py`` check it).

The limits (all checked while or right after decoding, before anything else reads a value): the
sizes of a line, of a result's JSON and of its arrays; the number of cases (at most the exercise's),
of values' nodes and of arrays; every string's length; the nesting depth; the kinds of arrays (a
returned value's arrays are float64, the only kind :func:`graders.engine.values.codec.normalise` produces;
inputs echoed back are booleans, integers, floats or strings); and every array referenced at most once
(so :func:`graders.engine.values.codec.decode` copies each array's bytes once: a result that names one 1 MiB
array 300,000 times is refused, not copied 300,000 times).

The decoder is ``msgspec`` (0.22): it decodes bytes straight into typed structs, refuses unknown
fields, checks string and list lengths as it goes, and is a maintained C extension made for exactly
this. Measured on a typical ``done`` event (40 cases of 8x16 arrays, 121 kB): msgspec 0.08 ms, pydantic
2.14 0.28 ms, ``json.loads`` alone 0.31 ms; pydantic was the slower of the two and warns on the field
name ``mro``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from graders.engine.values import bundles, codec
from graders.engine.values.door_errors import (MAX_ITEMS, MAX_MESSAGE, MAX_NAME, MAX_OUTPUT, REFUSALS,  # noqa: F401
                                              KitReason, KitSaid, LearnerError, Name, Refused)
from graders.engine.values.learner_text import clean as clean_learner_text
from graders.engine.values.protocol import MAX_SUBMISSION_BYTES  # noqa: F401 - the door's limits, in one list

MAX_EVENT_BYTES = 64 << 20  # one event line (a result with its arrays, base64)
MAX_RESULT_JSON = 8 << 20  # the JSON part of one exercise's result
MAX_ARRAY_BYTES = 48 << 20  # one result's arrays, decoded
MAX_CASES = 10_000  # cases of one result (and never more than the exercise has)
MAX_NODES = 1_000_000  # values, lists, dicts and strings in one result's values and type descriptions
MAX_DEPTH = codec.MAX_DEPTH + 4  # nesting of a value or a type description
MAX_STRING = codec.MAX_STRING + 100  # a string inside a returned value (normalise keeps 4000 characters)
MAX_INT = 1 << 1024  # an integer echoed back (an input of the kit's: the verifier's references reach 2**200)

Index = Annotated[int, Meta(ge=0, le=1 << 20)]


class Refusal(str):
    """Why a message was refused (its text says so, in English; the runner wraps it in the bilingual
    ``result_unreadable`` feedback)."""


class ServedCase(Struct, forbid_unknown_fields=True):
    """A trusted case's outcome as the worker's trusted process reported it (its result JSON and arrays:
    read by :func:`read_served`)."""

    position: Index
    result: str
    arrays: msgspec.Raw = msgspec.Raw(b"null")


class Event(Struct, forbid_unknown_fields=True):
    """One event line of a worker: exactly one of the kind fields is set (:attr:`kind`)."""

    sandbox: Union[Annotated[dict[Name, Union[bool, int, None]], Meta(max_length=64)], UnsetType] = UNSET
    identity: Annotated[str, Meta(max_length=MAX_NAME)] = ""
    load: Union[Name, UnsetType] = UNSET
    loaded: Union[Name, UnsetType] = UNSET
    error: msgspec.Raw = msgspec.Raw(b"null")  # decoded by read_error: a bad one costs its file only
    start: Union[Index, UnsetType] = UNSET
    done: Union[Index, UnsetType] = UNSET
    result: Union[str, UnsetType] = UNSET  # decoded by read_result
    arrays: msgspec.Raw = msgspec.Raw(b"null")
    # the parent's own reading of the shared inputs after the child's result (never the child's: a child
    # writes only inside ``result`` and ``arrays``): per case, the array nodes whose values changed
    inputs_changed: Union[Annotated[list[Annotated[list[Index], Meta(max_length=MAX_ITEMS)]],
                                    Meta(max_length=MAX_CASES)], UnsetType] = UNSET
    # the trusted process's outcomes of the exercise's trusted cases (the parent attaches them; the child
    # holds no end of that process's pipe): the grader takes a trusted case's value only from here
    served: Union[Annotated[list[ServedCase], Meta(max_length=MAX_CASES)], UnsetType] = UNSET
    crashed: Union[Index, UnsetType] = UNSET
    stem: Name = ""
    during: Literal["load", "exercise", ""] = ""
    code: Union[Annotated[int, Meta(ge=-(1 << 16), le=1 << 16)], None] = None
    cpu_timeout: bool = False
    # why the worker's parent ended the child for what it wrote (the parent's own words, never the child's)
    breach: Annotated[str, Meta(max_length=200)] = ""
    finished: bool = False

    @property
    def kind(self) -> str:
        """``sandbox``, ``load``, ``loaded``, ``start``, ``done``, ``crashed`` or ``finished``."""
        return next((name for name in _KIND_FIELDS if getattr(self, name) is not UNSET), "finished")


_KIND_FIELDS = ("sandbox", "load", "loaded", "start", "done", "crashed")


class Case(Struct, forbid_unknown_fields=True):
    """One case's outcome: ``ok`` with its value, type and inputs after the call, or ``raised``."""

    outcome: Literal["ok", "raised"]
    output: Annotated[str, Meta(max_length=MAX_OUTPUT)] = ""
    value: Any = None
    type: Any = None
    inputs_after: Any = None
    exception: Union[LearnerError, None] = None


class Result(Struct, forbid_unknown_fields=True):
    """One exercise's result: its cases, or the missing function, and the sandbox's refusals."""

    cases: Annotated[list[Case], Meta(max_length=MAX_CASES)]
    # whether the learner's file lacks the function: one reading, a boolean (the grader words the message, and
    # takes a trusted case's outcome from the trusted process whatever this says)
    missing: bool = False
    violations: Annotated[list[Refused], Meta(max_length=MAX_ITEMS)] = []


_EVENT = msgspec.json.Decoder(Event)
_ERROR = msgspec.json.Decoder(Union[LearnerError, None])
_RESULT = msgspec.json.Decoder(Result)


def _why(error: BaseException) -> str:
    return str(error)[:200] or type(error).__name__


def read_event(line: bytes) -> Event | Refusal:
    """One event line as an :class:`Event`, or why it is refused (not JSON, unknown fields, more than one
    kind, a value out of its limits)."""
    if len(line) > MAX_EVENT_BYTES:
        return Refusal(f"an event larger than {MAX_EVENT_BYTES} bytes")
    try:
        event = _EVENT.decode(line)
    except (msgspec.DecodeError, RecursionError, ValueError, TypeError) as error:
        return Refusal(f"a malformed event ({_why(error)})")
    kinds = [name for name in _KIND_FIELDS if getattr(event, name) is not UNSET]
    if len(kinds) > 1 or (not kinds and not event.finished):
        return Refusal("an event of no single kind")
    if event.kind == "done" and event.result is UNSET:
        return Refusal("a done event without its result")
    return event


def read_error(raw: msgspec.Raw) -> dict | None | Refusal:
    """A ``loaded`` event's error: ``None`` (the file loaded), a dict with str ``type``, ``message``,
    ``where``, ``output``, list[str] ``mro`` and bool ``sandbox`` (and ``refusal`` or ``kit`` where the sandbox
    refused or the kit wrote the message), or why it is refused."""
    try:
        error = _ERROR.decode(raw)
    except (msgspec.DecodeError, RecursionError, ValueError, TypeError) as failure:
        return Refusal(f"a malformed load error ({_why(failure)})")
    if error is None:
        return None
    found = msgspec.structs.asdict(error)
    refused = found.pop("refusal")  # only a refused load has one: {"what", and its fields}
    if refused is not None:
        found["refusal"] = msgspec.structs.asdict(refused)
    said = found.pop("kit")  # only a message the kit wrote has one: {"key", its fields, a stop's "reason"}
    if said is not None:
        found["kit"] = msgspec.to_builtins(said)
    return clean_learner_text(found)


@dataclass
class _Walk:
    """What one result's values and type descriptions have used so far."""

    arrays: dict
    used: set
    nodes: int = 0


def read_result(text: str, packed: msgspec.Raw, cases: int) -> tuple[dict, dict] | Refusal:
    """A ``done`` event's result (JSON text) and arrays as ``(payload, arrays)``, or why they are refused.

    ``cases``: how many cases the exercise has (a result may hold no more). In the payload, every case
    is a dict with ``outcome``, ``output`` and, for ``ok``, ``value``, ``type``, ``inputs_after``, for
    ``raised``, ``exception`` (a dict as :func:`read_error` gives); each array key that a value names
    exists and is named once; learner text is cleaned (:mod:`graders.engine.values.learner_text`).
    """
    if len(text) > MAX_RESULT_JSON:
        return Refusal(f"result larger than {MAX_RESULT_JSON} bytes")
    try:
        result = _RESULT.decode(text.encode("utf-8", "surrogatepass"))
        arrays = bundles.unpack_blob(msgspec.json.decode(packed), MAX_ARRAY_BYTES)
    except (msgspec.DecodeError, RecursionError, ValueError, TypeError, OverflowError, MemoryError) as error:
        return Refusal(f"malformed result ({_why(error)})")
    if len(result.cases) > cases:
        return Refusal(f"{len(result.cases)} cases where the exercise has {cases}")
    walk = _Walk(arrays, set())
    try:
        for case in result.cases:
            if case.outcome == "ok":
                _value(case.value, walk, float_only=True)
                _value(case.inputs_after, walk, float_only=False)
                _described(case.type, walk)
            elif case.exception is None:
                raise ValueError("a raised case without its exception")
    except ValueError as error:
        return Refusal(f"malformed result ({_why(error)})")
    payload = msgspec.to_builtins(result)
    for case in payload["cases"]:  # each outcome with its own fields only
        for key in (("exception",) if case["outcome"] == "ok" else ("value", "type", "inputs_after")):
            del case[key]
    return clean_learner_text(payload), arrays


_TAGS = {"__ndarray__", "__npscalar__", "__float__", "__opaque__", "__tensor__", "__tuple__", "__dict__"}
_FLOATS = {"inf", "-inf", "nan"}


def _count(walk: _Walk, depth: int) -> None:
    walk.nodes += 1
    if walk.nodes > MAX_NODES:
        raise ValueError(f"more than {MAX_NODES} values")
    if depth > MAX_DEPTH:
        raise ValueError(f"values nested deeper than {MAX_DEPTH}")


_END = object()


class _Pending:
    """The values still to check, one iterator per level, depth first, without recursion: a list is taken item
    by item, so a refusal costs only what was checked before it (a 300,000-item forged list refused at its
    second item: no copy of it is made), and one that could only take the walk past :data:`MAX_NODES` is
    refused before any of its items (each item is counted when it is taken)."""

    def __init__(self, root, walk: _Walk) -> None:
        self.walk = walk
        self.stack = [(iter((root,)), 0)]

    def add(self, items, depth: int) -> None:
        if self.walk.nodes + len(items) > MAX_NODES:
            raise ValueError(f"more than {MAX_NODES} values")
        self.stack.append((iter(items), depth))

    def __iter__(self):
        while self.stack:
            items, depth = self.stack[-1]
            value = next(items, _END)
            if value is _END:
                self.stack.pop()
            else:
                yield value, depth


def _array(key, walk: _Walk, float_only: bool) -> None:
    """``key`` names an array that exists and no other value names (and, in a returned value, is float64)."""
    if not isinstance(key, str) or key not in walk.arrays:
        raise ValueError("a value names an array that was not sent")
    if key in walk.used:
        raise ValueError("an array named more than once")
    walk.used.add(key)
    if float_only and walk.arrays[key].dtype != "float64":
        raise ValueError(f"a returned array of dtype {walk.arrays[key].dtype}")


def _value(root, walk: _Walk, *, float_only: bool) -> None:
    """Check one encoded value (:class:`graders.engine.values.codec.Encoder`'s form) without recursion: only the
    shapes it writes, strings within :data:`MAX_STRING`, arrays named once. ``float_only``: a returned,
    normalised value (numbers are floats, arrays float64, no scalars or tensors)."""
    pending = _Pending(root, walk)
    for value, depth in pending:
        _count(walk, depth)
        if value is None or type(value) is float:
            continue
        if type(value) is str:  # (inputs echoed back are the kit's own; only the JSON's size bounds them)
            if float_only and len(value) > MAX_STRING:
                raise ValueError(f"a string longer than {MAX_STRING} characters")
        elif type(value) in (bool, int):
            if float_only:
                raise ValueError("a returned number that is not a float")
            if type(value) is int and abs(value) > MAX_INT:
                raise ValueError("an integer out of range")
        elif type(value) is list:
            pending.add(value, depth + 1)
        elif type(value) is dict and len(value) >= 1 and (set(value) & _TAGS):
            _tagged(value, depth, pending, walk, float_only)
        else:
            raise ValueError("a value of an unknown form")


def _tagged(value: dict, depth: int, pending: _Pending, walk: _Walk, float_only: bool) -> None:
    keys = set(value)
    if keys == {"__ndarray__"}:
        _array(value["__ndarray__"], walk, float_only)
    elif keys == {"__float__"} and value["__float__"] in _FLOATS:
        pass
    elif keys == {"__opaque__"} and type(value["__opaque__"]) is str and len(value["__opaque__"]) <= MAX_NAME:
        pass
    elif keys == {"__tuple__"} and type(value["__tuple__"]) is list:
        pending.add((value["__tuple__"],), depth + 1)
    elif keys == {"__dict__"} and type(value["__dict__"]) is list:
        for item in value["__dict__"]:
            if not (type(item) is list and len(item) == 2 and type(item[0]) is str
                    and (len(item[0]) <= MAX_STRING or not float_only)):
                raise ValueError("a malformed dict entry")
            _count(walk, depth + 1)
        pending.add([item[1] for item in value["__dict__"]], depth + 1)
    elif not float_only and keys == {"__npscalar__"}:
        _array(value["__npscalar__"], walk, False)
        if walk.arrays[value["__npscalar__"]].ndim != 0:
            raise ValueError("a scalar that is not 0-d")
    elif not float_only and keys == {"__tensor__", "dtype", "requires_grad"} and type(value["dtype"]) is str \
            and len(value["dtype"]) <= 40 and type(value["requires_grad"]) is bool:
        _array(value["__tensor__"], walk, False)
    else:
        raise ValueError("a malformed tagged value")


_SIMPLE_TYPES = {"none", "bool", "int", "float", "str"}
_TYPE_FORMS = {  # the keys of each form of a type description, and which of them hold nested descriptions
    frozenset({"scalar"}): (), frozenset({"array", "ndim"}): (), frozenset({"tensor", "grad", "ndim"}): (),
    frozenset({"object"}): (), frozenset({"list"}): ("list",), frozenset({"tuple"}): ("tuple",),
    frozenset({"dict"}): ("dict",), frozenset({"dataclass", "fields"}): ("fields",)}


def _described(root, walk: _Walk) -> None:
    """Check one :func:`graders.engine.values.codec.type_of` description without recursion: its forms only."""
    pending = _Pending(root, walk)
    for value, depth in pending:
        _count(walk, depth)
        if type(value) is str and value in _SIMPLE_TYPES:
            continue
        form = _TYPE_FORMS.get(frozenset(value)) if type(value) is dict else None
        if form is None:
            raise ValueError("a malformed type description")
        for key, item in value.items():
            if key in form:
                items = item.values() if type(item) is dict else item
                if type(item) not in (dict, list) or len(item) > codec.TYPE_ITEMS:
                    raise ValueError("a malformed type description")
                if type(item) is dict and any(len(k) > MAX_STRING for k in item):
                    raise ValueError("a malformed type description")
                pending.add(items, depth + 1)
            elif key in ("ndim",):
                if type(item) is not int or not 0 <= item <= 64:
                    raise ValueError("a malformed type description")
            elif key == "grad":
                if type(item) is not bool:
                    raise ValueError("a malformed type description")
            elif type(item) is not str or len(item) > MAX_NAME:
                raise ValueError("a malformed type description")


def read_served(served: list[ServedCase], positions: list[int], prefix: str = "t") -> tuple[dict, dict] | Refusal:
    """A ``done`` event's served cases as ``({position: case}, arrays)``, each case read as
    :func:`read_result` reads one (one case per report, at one of the exercise's trusted ``positions``,
    each position once; array names start with ``prefix``, which a child's never do), or why refused."""
    cases, arrays = {}, {}
    for item in served:
        if item.position not in positions or item.position in cases:
            return Refusal(f"a served case at position {item.position}")
        read = read_result(item.result, item.arrays, 1)
        if isinstance(read, Refusal):
            return read
        payload, found = read
        if len(payload["cases"]) != 1 or not all(name.startswith(prefix) for name in found) \
                or set(found) & set(arrays):
            return Refusal("a malformed served case")
        cases[item.position], arrays = payload["cases"][0], {**arrays, **found}
    return cases, arrays
