"""The shipped "likely mistake" tables: ``starter/module_0X/_hints.json``.

A learner's failing public test names the likely mistake when one of their
functions returned, on a public test's fixed input, what a catalogued
misconception (``graders/misconceptions``) returns there. Only those wrong
OUTPUT VALUES and the HINT text ship -- never the catalogue's code.

Generation (part of ``rl4llm build``):

1. run the public tests against ``solutions/`` in a subprocess with
   ``RL4LLM_RECORD_CALLS`` set, so ``starter/conftest.py``'s recorder dumps
   every call made by a non-Hypothesis test (function, exact tagged inputs);
2. per distinct (function, input key), rebuild the inputs and run the reference
   and every catalogue entry of that exercise on a fresh copy;
3. list the reference's own output under the name ``conftest.REFERENCE``, with
   the exercise's tolerances (``"rtol"``, ``"atol"``: the grader's, so the
   learner side tells right from wrong as the grader does, and knows where
   exactly 0 is expected), then each entry whose output the engine's comparator
   (:func:`graders.engine.values.compare.mismatch`, rtol 1e-6, atol 1e-9) tells from
   the reference's -- with ``"value": null`` where that output cannot ship
   (``"raises": true`` besides where the entry raises: it then contradicts no
   right answer there, as in the grader; a value too large never agrees); where
   the output holds tensors, each carries ``"grad"``, which of them require a
   gradient (``conftest.grad_signature``), and an entry whose signature differs
   from the reference's is listed even where its values agree (a missing
   ``.detach()``: what the grader's gradient checks see), the reference's with
   ``"grad_inputs"``, which input tensors required a gradient (an input key
   leaves that out; the signatures hold for those inputs only);
4. write sorted-key JSON: function id -> input key -> [{"name", "hint", "value"}], the hint
   in every language of the course, ``{"en": ..., "ru": ...}`` (the catalogue's docstring).

The conftest names a mistake only when it is the one entry that explains every
input of the function the learner's run recorded, by the grader's own rule
(:mod:`graders.engine.judging.naming`, shipped in ``_kit_compare.py``;
:func:`conftest.fitting_entries`).

The notebooks name mistakes by the same rule (:mod:`graders.build.notebooks.diagnosis`),
from ``_hints.json`` beside them in ``assignments/source/<assignment>/``: the
same table, limited to the inputs of the notebooks' visible checks
(:func:`visible_calls`: each check's call against the reference, the calls
it makes inside included), whose calls join the public tests' in step 1.

The tagged form, the input key and the tolerances are the conftest's own, and
the learner side compares with the same comparator (``starter/_kit_compare.py``,
generated from the engine), so the table and the lookup cannot drift apart.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np

from graders import course
from graders.build.committed import same_output
from graders.checks import spec_for
from graders.checks.cases import observed_signature
from graders.engine.values.codec import normalise
from graders.engine.values.compare import mismatch
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import load_misconceptions
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

HINTS_NAME = "_hints.json"
MAX_VALUE_CHARS = 10_000  # a wrong value longer than this as JSON is left out (keeps the tables small)


def starter_conftest() -> ModuleType:
    """starter/conftest.py as a module (its sys.path / import-hook side effects undone)."""
    saved_path, saved_meta = list(sys.path), list(sys.meta_path)
    try:
        return load_module(STARTER_DIR / "conftest.py", "_rl4llm_starter_conftest")
    finally:
        sys.path[:], sys.meta_path[:] = saved_path, saved_meta


def record_public_calls() -> list[dict]:
    """Every (function, args, kwargs) the non-Hypothesis public tests make against solutions/; a call that
    raised carries ``"raises"`` (the exception's type name)."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "calls.json"
        env = {**os.environ, "RL4LLM_IMPL_ROOT": str(SOLUTIONS_DIR), "RL4LLM_RECORD_CALLS": str(dump),
               "MPLBACKEND": "Agg"}
        folders = [str(STARTER_DIR / folder) for folder in course.FOLDERS]
        completed = subprocess.run(
            [sys.executable, "-m", "pytest", *folders, "-q", "-p", "no:cacheprovider"],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
        if completed.returncode != 0 or not dump.exists():
            raise RuntimeError("the public tests fail against solutions/:\n" + completed.stdout[-3000:])
        return json.loads(dump.read_text(encoding="utf-8"))


_RAISED = object()  # what ``_run`` returns when the function raises


def _run(function, call: dict, module: ModuleType, conftest: ModuleType):
    """``function``'s output on fresh inputs rebuilt from the call, or ``_RAISED``."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return function(*conftest.untagged(call["args"], module), **conftest.untagged(call["kwargs"], module))
    except Exception:
        return _RAISED


def _shippable(value, conftest: ModuleType):
    """The tagged form of an output, or None where it cannot ship (unsupported, or too large)."""
    try:
        tagged = conftest.tagged(value)
    except conftest.Unsupported:
        return None
    return tagged if len(json.dumps(tagged)) <= MAX_VALUE_CHARS else None


def _wrong_values(function_id: str, call: dict, catalogue: list, conftest: ModuleType) -> list[dict]:
    """The reference's output on this call, then the catalogue entries whose output differs from it."""
    stem, name = function_id.split(".", 1)
    reference = DEFAULT_KIT.reference_module(stem)
    raw = _run(getattr(reference, name), call, reference, conftest)
    if raw is _RAISED or raw is None:
        return []
    shipped = _shippable(raw, conftest)
    if shipped is None:  # without the reference's value the learner side cannot tell right from wrong here
        return []
    expected = normalise(raw)
    spec = spec_for(function_id)
    rtol, atol = (spec.rtol, spec.atol) if spec is not None else (conftest.RTOL, conftest.ATOL)
    call_mode = spec.call if spec is not None else None
    # which returned tensors carry a gradient, where the grader sees it (None: nowhere)
    grad = observed_signature(conftest.grad_signature(raw), call_mode)
    entries = [{"name": conftest.REFERENCE, "hint": "", "value": shipped, "rtol": rtol, "atol": atol,
                **({"grad": grad, "grad_inputs": conftest.input_grads(call["args"], call["kwargs"])}
                   if grad is not None else {})}]
    for entry in catalogue:
        output = _run(entry.function, call, entry.module, conftest)
        output_grad = None if output is _RAISED else observed_signature(conftest.grad_signature(output), call_mode)
        if output is not _RAISED and output_grad == grad and mismatch(expected, normalise(output), rtol=conftest.RTOL,
                                                                      atol=conftest.ATOL) is None:
            continue
        value = None if output is _RAISED else _shippable(output, conftest)
        listed = {"name": entry.name, "value": value,  # the hint read through its accessor, per language
                  "hint": {language: entry.hint.in_(language) for language in course.LANGUAGES},
                  **({"grad": output_grad} if output_grad is not None else {})}
        entries.append({**listed, "raises": True} if output is _RAISED else listed)
    return sorted(entries, key=lambda e: e["name"])


def hint_tables(calls: list[dict] | None = None) -> dict[str, dict]:
    """module folder -> {function id: {input key: [{"name", "hint": {language: text}, "value"}, ...]}}."""
    conftest = starter_conftest()
    calls = record_public_calls() if calls is None else calls
    calls = [call for call in calls if "raises" not in call]  # the hints are about wrong values
    exercises = set(DEFAULT_KIT.exercises())
    tables: dict[str, dict] = {folder: {} for folder in course.FOLDERS}
    catalogue: dict[str, list] = {}
    seen: set = set()
    for call in calls:
        function_id = call["function"]
        if function_id not in exercises:
            continue
        key = conftest.key_of(call["args"], call["kwargs"])
        if (function_id, key) in seen:
            continue
        seen.add((function_id, key))
        if function_id not in catalogue:
            catalogue[function_id] = load_misconceptions(function_id)
        entries = _wrong_values(function_id, call, catalogue[function_id], conftest) if catalogue[function_id] else []
        if entries:
            stem = function_id.split(".", 1)[0]
            tables[course.module_of(stem).folder].setdefault(function_id, {})[key] = entries
    return tables


def visible_calls(conftest: ModuleType | None = None) -> list[dict]:
    """Every call the notebooks' visible checks make against the reference, the calls it makes inside
    included (function, args, kwargs, tagged as the conftest's recorder tags them)."""
    import torch  # the rendered calls may build tensors

    from graders.build.notebooks.checks import visible_checks

    conftest = conftest or starter_conftest()
    recorder, found = conftest.RECORDER, {}
    for learner_file in course.learner_files():
        stem = learner_file.stem
        module = DEFAULT_KIT.reference_module(stem)
        originals = {name: value for name, value in vars(module).items() if not name.startswith("_")
                     and inspect.isfunction(value) and value.__module__ == module.__name__}
        try:  # the module's own functions recorded, inner calls included (restored below)
            for name, value in originals.items():
                setattr(module, name, conftest._wrap(f"{stem}.{name}", value))
            for exercise_id in [e for e in DEFAULT_KIT.exercises() if e.startswith(f"{stem}.")]:
                name = exercise_id.split(".", 1)[1]
                for check in visible_checks(exercise_id, originals[name]):
                    recorder.calls, recorder.active = [], True
                    try:
                        with warnings.catch_warnings(), np.errstate(all="ignore"):
                            warnings.simplefilter("ignore")
                            eval(check.call, {"np": np, "torch": torch, name: getattr(module, name)})  # noqa: S307
                    except Exception:  # noqa: BLE001 - a check_raises row: about refusals, not values
                        pass
                    finally:
                        recorder.active = False
                    for function, (args, kwargs), *_ in recorder.calls:
                        entry = {"function": function, "args": args, "kwargs": kwargs}
                        found[json.dumps(entry, sort_keys=True)] = entry
        finally:
            for name, value in originals.items():
                setattr(module, name, value)
    return [found[key] for key in sorted(found)]


def _dump(table: dict) -> str:
    return json.dumps(table, sort_keys=True, indent=1, allow_nan=False, ensure_ascii=False) + "\n"


RECORD = REPO_ROOT / "graders" / "build" / "hints_record.json"  # the inputs the committed tables were built from
INPUT_FOLDERS = ("graders", "solutions", "starter")
# The records the recipe's own commands write (graders/build/scaffold.py's RECORDS) that lie in the input folders:
# no table is computed from them, and counting one would make its command (`rl4llm mutate --write-floors`) leave
# this record stale. Spelled out here (scaffold imports the build's stages); tests/test_hints_record.py checks
# that it is exactly those records.
NOT_INPUTS = frozenset({"graders/mutation/floors.json"})


def inputs_digest(root: Path = REPO_ROOT) -> str:
    """SHA-256 of every file the tables are computed from: everything under graders/, solutions/ and starter/
    (names and bytes; caches, hidden folders, the tables themselves, this record and :data:`NOT_INPUTS` left out).
    Over-inclusive on purpose: any other change there is a rebuild. The libraries' versions are not in it, so the
    record means the same on every machine: the slow test (tests/test_hints_record.py) computes the tables afresh
    with the installed ones and compares."""
    digest = hashlib.sha256()
    for folder in INPUT_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root)
            if (not path.is_file() or path.name in (HINTS_NAME, RECORD.name) or path.suffix == ".pyc"
                    or relative.as_posix() in NOT_INPUTS
                    or any(part.startswith(".") or part == "__pycache__" for part in relative.parts)):
                continue
            digest.update(relative.as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _recorded_outputs(digest: str) -> dict[Path, str] | None:
    """The committed tables when the record says they were built from these very inputs and every table still
    holds the bytes the record names; None otherwise (then they are computed)."""
    try:
        record = json.loads(RECORD.read_text(encoding="utf-8"))
        if record.get("inputs") != digest:
            return None
        outputs = {REPO_ROOT / name: (REPO_ROOT / name).read_text(encoding="utf-8") for name in record["outputs"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if any(_sha(text) != record["outputs"][path.relative_to(REPO_ROOT).as_posix()] for path, text in outputs.items()):
        return None
    return outputs


def _kept(path: Path, text: str) -> str:
    """The committed bytes where they agree with ``text`` (the build keeps them: graders/build/committed.py),
    else ``text``: what the file will hold, which the record's digest names."""
    if path.exists() and same_output(path, text, committed := path.read_text(encoding="utf-8")):
        return committed
    return text


def _record(digest: str, outputs: dict[Path, str]) -> str:
    """The record's text: the inputs' digest and each table's SHA-256 (as the build writes it)."""
    tables = {path.relative_to(REPO_ROOT).as_posix(): _sha(text) for path, text in sorted(outputs.items())}
    return json.dumps({"inputs": digest, "outputs": tables}, sort_keys=True, indent=1) + "\n"


def build_outputs(calls: list[dict] | None = None, use_record: bool = True) -> dict[Path, str]:
    """The tables (:func:`computed_outputs`) and the record of the inputs they were built from
    (``graders/build/hints_record.json``). When the record matches the inputs' digest and the committed tables,
    those are the outputs, unrecomputed: the same inputs give the same tables (``use_record=False`` computes
    them anyway; ``tests/test_hints.py`` checks that the two agree)."""
    digest = inputs_digest()
    outputs = _recorded_outputs(digest) if use_record and calls is None else None
    if outputs is None:
        outputs = {path: _kept(path, text) for path, text in computed_outputs(calls).items()}
    return {**outputs, RECORD: _record(digest, outputs)}


def computed_outputs(calls: list[dict] | None = None) -> dict[Path, str]:
    """Every starter/module_0X/_hints.json and every notebook assignment's _hints.json (the inputs of its
    visible checks only), with their expected content (byte-deterministic)."""
    from graders.build.notebooks import SOURCE_DIR, assignment_name

    conftest = starter_conftest()
    visible = visible_calls(conftest)
    tables = hint_tables((record_public_calls() if calls is None else calls) + visible)
    outputs = {STARTER_DIR / folder / HINTS_NAME: _dump(table) for folder, table in tables.items()}
    keys = {(call["function"], conftest.key_of(call["args"], call["kwargs"])) for call in visible}
    for folder, table in tables.items():
        shown: dict = {}
        for function, key in sorted(keys):
            if key in table.get(function, {}):
                shown.setdefault(function, {})[key] = table[function][key]
        for language in course.LANGUAGES:
            outputs[SOURCE_DIR / assignment_name(folder, language) / HINTS_NAME] = _dump(shown)
    return outputs
