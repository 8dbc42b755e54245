"""Reference outcomes (and check cases) kept on disk by content, so that a batch on an unchanged kit
computes none.

The reference side of grading (every reference solution on every case, the
catalogue's wrong formulas on the cases a learner gets wrong, toy training
runs included) is the same for every batch until the kit changes. A
:class:`ReferenceStore` keeps it per exercise under a key that is the
SHA-256 of everything those outcomes depend on:

- the exercise's cases and call mode exactly as the worker receives them
  (the encoded job entry and its input arrays; a harness's source is in its
  call mode);
- the text of every ``.py`` of the exercise's module folder in the solutions
  (the reference file and its given modules) and in the starter (a harness's
  given code);
- the exercise's catalogue file;
- the file of its harness's grader-side ``score``, where it has one (the toy checks'
  :mod:`graders.checks.toy_scores`: what is kept is what it measured);
- the engine code that computes and normalises outcomes
  (:data:`ENGINE_FILES`) and the versions of Python, NumPy and torch.

The cases of an exercise registered by ``@exercise`` in a checks file (drawn
with Hypothesis, about a second for the whole course) are kept too, under
the digest of every file of ``graders/checks/``, the exercise id and the
versions of Python, NumPy and Hypothesis (:func:`kept_cases`).

A dependent exercise's answer tables are kept too (:func:`answers_key`), under its encoded cases and
call mode and the reference files of its module folder.

A given module's kept state is kept too: the warm-ups ``grpo_toy.WARMED_UP``
holds after the grader's own reference runs (the warm-up never sees the loss,
so every learner's run starts from the same weights), under the digest of the
starter's files of its module folder and the environment
(:func:`save_given_state`). The next batch hands them to its workers in the
job (``given_<name>.arrays``), and a harness's copy of the module starts with
them (so does the grader's own copy, when the toy checks' measurement loads it:
:mod:`graders.checks.toy_scores`, :meth:`graders.engine.judging.kit.Kit.keep_given_state`): about a quarter of a second less per submission, bit-identical to
warming up again. Only the grading process fills that copy (learner code
never runs there), and only it writes the store.

Change any of them and the key changes: nothing is ever invalidated by hand,
and a stale entry is simply never read again. One file per exercise
(``<key>.arrays``, :func:`graders.engine.values.bundles.pack_file`: never unpickled; its JSON part is
stored as an array), written atomically, so concurrent batches on one machine can
share the folder.

Where: ``$RL4LLM_CACHE``, else ``$XDG_CACHE_HOME/rl4llm``, else
``~/.cache/rl4llm`` (mode 700). ``RL4LLM_CACHE=off`` switches it off. The
folder is closed to grading workers (the audit hook refuses it, and Landlock
never opens it); only the grading process reads and writes it. Whoever can
write it can change grades, exactly like whoever can write ``solutions/``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from graders import settings
from graders.engine.values import bundles, codec
from graders.text import LANGUAGES, Text

FORMAT = 4  # 2: outcomes keep the type of the value (codec.type_of); 3: and what a score measured (digest);
#            4: that digest is LAYOUT.CONTENT (codec.has_digest reads no bytes of a value of another layout)
ENGINE_FILES = ("judging/calls.py", "values/codec.py", "values/bundles.py", "judging/references.py",
                "judging/misconceptions.py", "judging/refcache.py")  # inside graders/engine/
_JSON = "__json__"


def default_folder() -> Path | None:
    """The store's folder from the environment, or ``None`` when ``RL4LLM_CACHE=off`` (:func:`graders.settings.cache_folder`)."""
    return settings.cache_folder()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def environment_digest() -> str:
    """The engine's outcome code and the numeric stack: part of every key."""
    digest = hashlib.sha256(f"format {FORMAT}\n{sys.version}\n".encode())
    for package in ("numpy", "torch"):
        digest.update(f"{package} {_version(package)}\n".encode())
    engine = Path(__file__).resolve().parents[1]
    for name in ENGINE_FILES:
        digest.update((engine / name).read_bytes())
    digest.update((engine.parent / "loader.py").read_bytes())
    return digest.hexdigest()


def cases_digest(entry: dict, arrays: dict[str, np.ndarray]) -> str:
    """The SHA-256 of one exercise's job entry (cases, call mode) and its input arrays."""
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True, allow_nan=False).encode())
    for key in sorted(arrays):
        array = np.ascontiguousarray(arrays[key])
        digest.update(f"{key} {array.dtype.str} {array.shape}\n".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def files_digest(paths) -> str:
    """The SHA-256 of some files' names and contents (a missing file counts as missing)."""
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        digest.update(f"{path.name}\n".encode())
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
    return digest.hexdigest()


def encode_outcome(outcome, encoder: codec.Encoder) -> dict:
    return {"value": encoder.encode(outcome.value), "raised": outcome.raised, "message": outcome.message,
            "type": outcome.type, "measured_from": outcome.measured_from}


def decode_outcome(data: dict, arrays: dict, make):
    return make(value=codec.decode(data["value"], arrays), raised=data["raised"], message=data["message"],
                type=data.get("type"), measured_from=data.get("measured_from"))


class ReferenceStore:
    """A folder of per-exercise reference records (see the module docstring). Thread-safe."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._environment: str | None = None

    @classmethod
    def default(cls) -> "ReferenceStore | None":
        folder = default_folder()
        return None if folder is None else cls(folder)

    def key(self, *parts: str) -> str:
        """The key of one exercise's record: its parts and the environment digest."""
        with self._lock:
            if self._environment is None:
                self._environment = environment_digest()
        return hashlib.sha256("\n".join((self._environment, *parts)).encode()).hexdigest()

    def read(self, key: str) -> tuple[dict, dict] | None:
        """``(payload, arrays)`` of a record, or ``None`` (absent or unreadable: recomputed)."""
        path = self.folder / f"{key}{bundles.ARRAYS_SUFFIX}"
        try:
            arrays = bundles.unpack_file(path.read_bytes())
            payload = json.loads(arrays.pop(_JSON).tobytes().decode("utf-8"))
        except (OSError, ValueError, KeyError):
            return None
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            return None
        return payload, arrays

    def write(self, key: str, payload: dict, arrays: dict[str, np.ndarray]) -> bool:
        """Write a record atomically; ``False`` (and nothing written) when the folder cannot be written."""
        text = json.dumps({**payload, "format": FORMAT}, sort_keys=True, allow_nan=False).encode("utf-8")
        data = bundles.pack_file({**arrays, _JSON: np.frombuffer(text, dtype=np.uint8)})
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.folder, prefix=f".{key}.", suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, self.folder / f"{key}{bundles.ARRAYS_SUFFIX}")
        except OSError:
            return False
        return True


# ---------------------------------------------------------------------------
# Given modules' kept state
# ---------------------------------------------------------------------------


def given_state_key(store: ReferenceStore, kit, name: str) -> str:
    """The key of given module ``name``'s kept state: the starter's files of its module folder and the
    environment (the weights are what that code computes on that stack)."""
    folder = kit.given_modules()[name]
    return store.key("given state", name, files_digest((kit.starter_dir / folder).glob("*.py")))


def read_given_state(store: ReferenceStore | None, kit, name: str) -> tuple[dict, dict] | None:
    """``(payload, arrays)`` of given module ``name``'s kept state, or ``None``."""
    if store is None or name not in kit.given_modules():
        return None
    return store.read(given_state_key(store, kit, name))


def save_given_state(store: ReferenceStore | None, kit, name: str, module) -> bool:
    """Keep ``module.WARMED_UP`` (the grader's own copy of given module ``name``, after its reference runs)
    in the store (:func:`graders.engine.values.bundles.encode_kept_state`), unless it is empty or already there."""
    encoded = bundles.encode_kept_state(module)
    if store is None or encoded is None or read_given_state(store, kit, name) is not None:
        return False
    return store.write(given_state_key(store, kit, name), *encoded)


def answers_key(store: ReferenceStore, kit, exercise_id: str, digest: str) -> str:
    """The key of a dependent exercise's answer tables (:mod:`graders.engine.judging.answers`): its encoded cases and
    call mode (``digest``) and the reference files of its module folder."""
    stem = exercise_id.split(".", 1)[0]
    return store.key("answers", exercise_id, digest, files_digest(kit.solution_path(stem).parent.glob("*.py")))


# ---------------------------------------------------------------------------
# Check cases
# ---------------------------------------------------------------------------
def _checks_key(store: ReferenceStore, exercise_id: str) -> str:
    from graders import checks

    folder = Path(checks.__file__).resolve().parent
    return store.key("cases", exercise_id, f"hypothesis {_version('hypothesis')}",
                     files_digest(folder.rglob("*.py")))


def _label_written(label: str) -> list[str] | str:
    """A case's label as the store keeps it: ``[english, russian]`` for a Text (through its accessor), "" for none."""
    return [label.in_(language) for language in LANGUAGES] if isinstance(label, Text) else str(label)


def _label_read(kept) -> str:
    """:func:`_label_written` read back: a Text, or "" (a plain label is refused by ``Case`` itself)."""
    return Text(*kept) if isinstance(kept, list) else kept


def kept_cases(store: ReferenceStore | None, spec) -> None:
    """Give ``spec`` its cases from the store, or generate them and keep them there.

    Only for a spec that a checks file registered (``spec.registered``; one made
    elsewhere, e.g. by a test, is always generated), and only when every
    expected exception is a built-in one (cases store its name). A kept case keeps every field of a
    :class:`graders.checks.Case` (its edge classes too: before, they were dropped, and the edge-tagged draws of
    every later use of the spec in that process vanished).
    """
    import builtins

    from graders.checks import Case

    if store is None or not getattr(spec, "registered", False) or spec._cases is not None:
        spec.cases()
        return
    key = _checks_key(store, spec.exercise_id)
    found = store.read(key)
    if found is not None:
        data, arrays = found
        cases = []
        try:
            for row in data["cases"]:
                raises = getattr(builtins, row["raises"]) if row["raises"] else None
                args, kwargs = codec.decode(row["inputs"], arrays)
                cases.append(Case(tuple(args), kwargs, _label_read(row["label"]), row["hidden"], raises,
                                  row["weight"], row["rtol"], row["atol"], tuple(row["edge"])))
        except (TypeError, ValueError, KeyError):  # a label not kept in every language, or a case kept before
            # its edge classes were (the mutation draws and the edge-class tests read them): drawn again
            cases = None
        if cases is not None:
            spec._cases = cases
            return
    cases = spec.cases()
    if any(c.raises is not None and getattr(builtins, c.raises.__name__, None) is not c.raises for c in cases):
        return
    encoder = codec.Encoder("c")
    rows = [{"inputs": encoder.encode((tuple(c.args), dict(c.kwargs))), "label": _label_written(c.label),
             "hidden": c.hidden, "raises": c.raises.__name__ if c.raises else None, "weight": c.weight,
             "rtol": c.rtol, "atol": c.atol, "edge": list(c.edge)}
            for c in cases]
    store.write(key, {"cases": rows}, encoder.arrays)
