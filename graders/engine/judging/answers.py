"""A dependent exercise's dependencies answered as sealed data, one case at a time; and the gate on them.

A dependent exercise (``verify_numeric_answer`` calls ``verify_detailed``) is graded on its own logic:
a mistake in the dependency costs points on the dependency only. No reference code, and no reference
value the learner's code could read without the case's own inputs, goes to the worker for that:

- **In the grader** (:func:`attach`, when the job is written): the reference dependent runs on each
  case with its dependencies wrapped by recorders. Each call the reference made becomes one entry of
  the case's *answer table*: its key is a digest of the call's bound arguments (rounded to 10
  significant digits, :func:`canon`), its value the dependency's result (or the exception it raised),
  serialised by :func:`to_wire` and sealed by XOR with a keystream drawn from the same arguments
  under another label (:func:`seal`). Nothing else is in the table: no code, no signature beyond
  parameter names and defaults, no result for any input the reference did not pass.
- **In the child** (:func:`answering`, during that case only): each named dependency of the learner's
  module is replaced by a lookup. A call whose bound arguments are those of a recorded call gets the
  recorded result, opened with those arguments; any other call goes to the learner's own function
  (so a learner who calls the dependency differently is still graded on their own code). Reading the
  table gives digests and sealed bytes: without the case's inputs, nothing.
- **Back in the grader** (:func:`gate`): a dependent earns nothing while one of its dependencies is
  unimplemented (missing, the stub, no value returned on any check): a function that only delegates to
  an unimplemented one gets no points for the code it did not write. The decision uses the grader's own
  reports and what came back for the dependency.

The in-process route (no answers) calls the dependent with the learner's own dependencies.
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import hashlib
import inspect
import json
import threading
import types
from contextlib import contextmanager

import numpy as np

from graders.text import Text

DIGITS = 10  # significant digits of a number in a call's key (rounding noise below it is not a new call)
_RECORD_LOCK = threading.Lock()


# ---------------------------------------------------------------------------
# Keys: a call's bound arguments, canonical and rounded
# ---------------------------------------------------------------------------
def _number(value: float) -> str:
    return format(float(value) + 0.0, f".{DIGITS - 1}e")  # + 0.0: -0.0 and 0.0 are one key


def canon(value) -> str:
    """A canonical text of a value: numbers (Python, NumPy, in lists or arrays) rounded to DIGITS significant
    digits, lists, tuples and arrays of numbers alike, dicts by sorted key; anything else by its type name."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return f"b{value!r}" if value is None else f"b{bool(value)}"
    if isinstance(value, str):
        return "s" + json.dumps(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "n" + _number(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            array = np.asarray(value)
        except (ValueError, TypeError):
            array = None
        if array is not None and array.dtype.kind in "biuf":
            flat = ",".join(_number(x) for x in array.astype(np.float64).ravel())
            return f"a{list(array.shape)}[{flat}]"
        return "l[" + ",".join(canon(item) for item in value) + "]"
    if isinstance(value, dict):
        return "d{" + ",".join(f"{json.dumps(str(k))}:{canon(value[k])}" for k in sorted(value, key=str)) + "}"
    return "o" + type(value).__name__


def signature_spec(function) -> list:
    """The parameter names, kinds and (JSON) defaults of ``function``: what a lookup binds a call with."""
    spec = []
    for parameter in inspect.signature(function).parameters.values():
        default = parameter.default
        plain = default is not inspect.Parameter.empty and (default is None or isinstance(default, (bool, int, float, str)))
        spec.append([parameter.name, int(parameter.kind), plain, default if plain else None])
    return spec


def _signature(spec: list) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(name, inspect._ParameterKind(kind),
                                                default=default if plain else inspect.Parameter.empty)
                              for name, kind, plain, default in spec])


def call_text(name: str, signature: inspect.Signature, args: tuple, kwargs: dict) -> str:
    """The canonical text of one call of dependency ``name`` (its arguments bound, defaults applied)."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return name + "\0" + canon(dict(bound.arguments))


def _find(text: str) -> str:
    return hashlib.sha256(b"find\0" + text.encode("utf-8", "surrogatepass")).hexdigest()


def seal(text: str, payload: bytes) -> str:
    """``payload`` XOR a keystream drawn from the call's text (SHAKE-256): opened only by the same call."""
    stream = hashlib.shake_256(b"open\0" + text.encode("utf-8", "surrogatepass")).digest(len(payload))
    mixed = int.from_bytes(payload, "little") ^ int.from_bytes(stream, "little")
    return base64.b64encode(mixed.to_bytes(len(payload), "little")).decode("ascii")


def unseal(text: str, sealed: str) -> bytes:
    raw = base64.b64decode(sealed)
    stream = hashlib.shake_256(b"open\0" + text.encode("utf-8", "surrogatepass")).digest(len(raw))
    return (int.from_bytes(raw, "little") ^ int.from_bytes(stream, "little")).to_bytes(len(raw), "little")


# ---------------------------------------------------------------------------
# Results as data
# ---------------------------------------------------------------------------
def to_wire(value):
    """A dependency's result as JSON data (types kept: int, float, str, arrays with dtype, dataclasses by
    class name and fields). Raises TypeError for anything else."""
    if value is None or isinstance(value, (bool, str)):
        return {"k": "v", "x": value}
    if isinstance(value, int):
        return {"k": "i", "x": value}
    if isinstance(value, float):
        return {"k": "f", "x": value}
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf":
        return {"k": "a", "dtype": value.dtype.str, "shape": list(np.shape(value)), "scalar": np.ndim(value) == 0
                and isinstance(value, np.generic), "x": base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()}
    if isinstance(value, (list, tuple)):
        return {"k": "l" if isinstance(value, list) else "t", "x": [to_wire(item) for item in value]}
    if isinstance(value, dict):
        return {"k": "d", "x": [[str(key), to_wire(item)] for key, item in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"k": "c", "name": type(value).__name__,
                "x": [[f.name, to_wire(getattr(value, f.name))] for f in dataclasses.fields(value)]}
    raise TypeError(f"a dependency's result of type {type(value).__name__} cannot travel as data")


def from_wire(data: dict, module):
    """The value :func:`to_wire` described, built in the child (a dataclass through the learner module's class of
    that name, or a namespace with its fields when there is none or it refuses them)."""
    kind, x = data["k"], data["x"]
    if kind in ("v", "i", "f"):
        return {"v": lambda v: v, "i": int, "f": float}[kind](x)
    if kind == "a":
        array = np.frombuffer(base64.b64decode(x), dtype=np.dtype(data["dtype"])).reshape(data["shape"]).copy()
        return array[()] if data["scalar"] else array
    if kind in ("l", "t"):
        items = [from_wire(item, module) for item in x]
        return items if kind == "l" else tuple(items)
    if kind == "d":
        return {key: from_wire(item, module) for key, item in x}
    if kind == "c":
        fields = {key: from_wire(item, module) for key, item in x}
        cls = getattr(module, data["name"], None)
        if isinstance(cls, type):
            try:
                return cls(**fields)
            except Exception:  # noqa: BLE001 - the learner's class: fall back to plain fields
                pass
        return types.SimpleNamespace(**fields)
    raise ValueError(f"unknown answer data {kind!r}")


# ---------------------------------------------------------------------------
# In the grader: the answer table of each case
# ---------------------------------------------------------------------------
def _recorded(reference_module, function_name: str, names: tuple[str, ...], args: tuple, kwargs: dict) -> dict:
    """Run the reference dependent once with its dependencies recorded; the sealed table of the calls."""
    original = getattr(reference_module, function_name)
    namespace = dict(vars(reference_module))
    table: dict[str, str] = {}
    signatures = {name: _signature(signature_spec(getattr(reference_module, name))) for name in names}

    def recorder(name, real):
        def record(*call_args, **call_kwargs):
            text = call_text(name, signatures[name], call_args, call_kwargs)
            try:
                result = real(*call_args, **call_kwargs)
                entry = {"ok": to_wire(result)}
            except Exception as error:  # noqa: BLE001 - a refusal is an answer too
                entry = {"raised": type(error).__name__}  # its type only: the reference's wording stays here
                table[_find(text)] = seal(text, json.dumps(entry).encode())
                raise
            table[_find(text)] = seal(text, json.dumps(entry).encode())
            return result
        return record

    for name in names:
        namespace[name] = recorder(name, getattr(reference_module, name))
    function = types.FunctionType(original.__code__, namespace, original.__name__, original.__defaults__,
                                  original.__closure__)
    function.__kwdefaults__ = original.__kwdefaults__
    try:
        with np.errstate(all="ignore"):
            function(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a case the reference refuses: the calls made so far still count
        pass
    return table


def attach(kit, spec, cases, encoded: list[dict], store=None, arrays: dict | None = None) -> None:
    """Put each case's answer table into its job entry (``encoded[i]["answers"]``), for an exercise whose call
    mode answers dependencies (:class:`graders.checks.cases.Answered`); nothing for any other. With a
    reference ``store``, the tables are read from it when kept there, else computed and kept."""
    names = getattr(spec.call, "answers", ())
    if not names:
        return
    from graders.engine.judging import refcache
    from graders.engine.values.codec import fresh_inputs

    key = None
    if store is not None:
        digest = refcache.cases_digest({"id": spec.exercise_id, "call": spec.call.describe(), "cases": encoded},
                                       arrays or {})
        key = refcache.answers_key(store, kit, spec.exercise_id, digest)
        found = store.read(key)
        if found is not None and len(found[0].get("tables", ())) == len(encoded):
            for entry, table in zip(encoded, found[0]["tables"]):
                entry["answers"] = table
            return
    module = kit.reference_module(spec.stem)
    signatures = {name: signature_spec(getattr(module, name)) for name in names}
    with _RECORD_LOCK:
        for case, entry in zip(cases, encoded):
            args, kwargs = fresh_inputs(case)
            entry["answers"] = {"signatures": signatures,
                                "table": _recorded(module, spec.function, names, args, kwargs)}
    if key is not None:
        store.write(key, {"tables": [entry["answers"] for entry in encoded]}, {})


# ---------------------------------------------------------------------------
# In the child: the lookups, for one case
# ---------------------------------------------------------------------------
def _lookup(name: str, signature: inspect.Signature, table: dict, own, module):
    def dependency(*args, **kwargs):
        try:
            text = call_text(name, signature, args, kwargs)
        except TypeError:
            text = None
        sealed = table.get(_find(text)) if text is not None else None
        if sealed is None:  # not a call of this case's: the learner's own function answers it
            if not callable(own):
                raise NameError(f"name {name!r} is not defined")
            return own(*args, **kwargs)
        entry = json.loads(unseal(text, sealed))
        if "ok" in entry:
            return from_wire(entry["ok"], module)
        kind = getattr(builtins, entry["raised"], None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = ValueError
        raise kind(f"{name}: the reference refuses these arguments ({entry['raised']})")
    dependency.__name__ = dependency.__qualname__ = name
    return dependency


@contextmanager
def answering(module, names, answers: dict | None):
    """While the block runs, ``module``'s dependencies ``names`` answer this case's recorded calls from
    ``answers`` (its job entry); without answers (the grader, the in-process route) nothing changes."""
    if not answers or module is None:
        yield
        return
    lookups = {name: _lookup(name, _signature(answers["signatures"][name]), answers["table"], vars(module).get(name),
                             module) for name in names}
    with trusted(module, lookups):  # the swap and its undoing, as the in-process route makes them
        yield


@contextmanager
def trusted(module, functions: dict):
    """While the block runs, ``module``'s names ``functions`` are those functions: the in-process route's way
    (a trusted process, never a score: :mod:`graders.engine.routes.inline`) of answering a dependent's dependencies
    with the reference's own, as the worker answers them from the sealed table."""
    missing = object()
    saved = {name: vars(module).get(name, missing) for name in functions}
    for name, function in functions.items():
        setattr(module, name, function)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                vars(module).pop(name, None)
            else:
                setattr(module, name, value)


# ---------------------------------------------------------------------------
# Back in the grader: no points on top of a dependency that earns none
# ---------------------------------------------------------------------------
_GATED = Text("0 points: it depends on {names}, which is not implemented yet (a function graded with its "
              "dependencies answered for it earns points once they are written).",
              "0 баллов: функция зависит от {names}, которая ещё не реализована (функция, проверяемая с готовыми "
              "ответами зависимостей, получает баллы, когда они написаны).")


def unimplemented(report, run) -> bool:
    """Whether a dependency's exercise is unimplemented -- not written: missing, the untouched stub
    (NotImplementedError), or a body that returns only ``None`` (``pass``). A dependency that was written
    is implemented however wrong it is -- it returns wrong values, raises, crashes, loops -- and its
    mistakes are charged on it alone (one hostile or broken function costs only itself)."""
    if report.points > 0:
        return False
    if report.not_implemented or report.status.value == "missing":
        return True
    payload = getattr(run, "payload", None)
    if getattr(run, "status", None) != "done" or not isinstance(payload, dict):
        return False  # it ran, and crashed or ran out of time: written
    if payload.get("missing"):
        return True
    returned = [c for c in payload.get("cases") or [] if isinstance(c, dict)
                and c.get("outcome") in ("ok", "modified_input")]
    return bool(returned) and all(c.get("type") == "none" for c in returned)


def gate(reports: tuple, exercises, runs: dict, language: str = "en") -> tuple:
    """``reports`` with every dependent exercise whose dependency (same file) is :func:`unimplemented` set to
    0 points: a function that only delegates to an unimplemented one earns nothing."""
    by_id = {exercise.id: (report, exercise) for report, exercise in zip(reports, exercises)}
    out = []
    for report, exercise in zip(reports, exercises):
        names = getattr(getattr(exercise.spec, "call", None), "answers", ()) if exercise.spec else ()
        empty = [name for name in names if f"{exercise.stem}.{name}" in by_id
                 and unimplemented(by_id[f"{exercise.stem}.{name}"][0],
                                   runs.get(by_id[f"{exercise.stem}.{name}"][1].index))]
        if empty and report.points > 0:
            note = _GATED.in_(language).format(names=", ".join(empty))
            status = report.status if report.status.value != "passed" else type(report.status)("failed")
            report = dataclasses.replace(report, points=0.0, status=status,
                                         feedback=f"{note}\n{report.feedback}".strip())
        out.append(report)
    return tuple(out)
