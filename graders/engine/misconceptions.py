"""The misconception catalogue: known wrong implementations, used to name a learner's mistake.

A catalogue entry is a real Python file
``graders/misconceptions/<file stem>/<name>.py`` with three module-level
constants and one function definition::

    EXERCISE = "module_9_reference.group_relative_advantages"
    NAME = "sample_std"
    HINT = "looks like sample std (ddof=1); the lecture uses population std"

    def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
        ...  # the WRONG formula

The file is written to run *in the namespace of the learner module*: it may
use that file's imports and helpers (``np``, ``math``, ``torch``, private
``_helpers``) without importing them. Two ways to run it:

- :func:`load_misconceptions` (the grader): exec the entry into a *copy* of
  the reference module's namespace and return its function. Only that one
  function is wrong; the reference's other functions are untouched.
- :func:`mutant_source` (the kit's tests): the reference file's text with the
  entry appended -- a complete learner file whose later ``def`` overrides the
  right one -- to grade as a submission.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graders.engine.kit import DEFAULT_KIT, Kit
from graders.loader import parse

REQUIRED = ("EXERCISE", "NAME", "HINT")


@dataclass(frozen=True)
class Misconception:
    exercise: str
    name: str
    hint: str
    path: Path
    function: Callable
    module: types.ModuleType  # the reference namespace with this entry applied


def read_header(path: Path) -> dict[str, str]:
    """The EXERCISE/NAME/HINT constants of a catalogue file, read without running it."""
    tree = parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            key = node.targets[0].id
            if key in REQUIRED:
                value = ast.literal_eval(node.value)
                if not isinstance(value, str):
                    raise ValueError(f"{path}: {key} must be a string")
                found[key] = value
    missing = [key for key in REQUIRED if key not in found]
    if missing:
        raise ValueError(f"{path}: missing {', '.join(missing)}")
    return found


def catalogue_files(exercise_id: str, kit: Kit = DEFAULT_KIT) -> list[Path]:
    """The catalogue files of ``exercise_id``, sorted by file name."""
    stem = exercise_id.split(".", 1)[0]
    folder = kit.misconceptions_dir / stem
    if not folder.is_dir():
        return []
    return [path for path in sorted(folder.glob("*.py"))
            if not path.name.startswith("_") and read_header(path)["EXERCISE"] == exercise_id]


def all_catalogue_files(kit: Kit = DEFAULT_KIT) -> list[Path]:
    """Every catalogue entry of every exercise."""
    if not kit.misconceptions_dir.is_dir():
        return []
    return sorted(p for p in kit.misconceptions_dir.glob("*/*.py") if not p.name.startswith("_"))


def apply_entry(reference: types.ModuleType, path: Path) -> types.ModuleType:
    """A module whose namespace is a copy of ``reference``'s with the entry at ``path`` exec'd into it."""
    module = types.ModuleType(f"{reference.__name__}__misconception_{Path(path).stem}")
    module.__dict__.update({k: v for k, v in vars(reference).items() if k not in ("__name__", "__spec__")})
    module.__dict__["__name__"] = reference.__name__  # dataclasses and pickling-free helpers resolve through it
    source = Path(path).read_text(encoding="utf-8")
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - kit code, grader side only
    return module


def load_misconceptions(exercise_id: str, kit: Kit = DEFAULT_KIT) -> list[Misconception]:
    """Every catalogued misconception of ``exercise_id`` as a callable, in the grading process."""
    stem, function = exercise_id.split(".", 1)
    entries = []
    for path in catalogue_files(exercise_id, kit):
        header = read_header(path)
        module = apply_entry(kit.reference_module(stem), path)
        wrong = module.__dict__.get(function)
        if not callable(wrong):
            raise ValueError(f"{path}: defines no function {function}")
        entries.append(Misconception(exercise_id, header["NAME"], header["HINT"], path, wrong, module))
    names = [entry.name for entry in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{exercise_id}: duplicate misconception names {duplicates}")
    return entries


def mutant_source(exercise_id: str, name: str, kit: Kit = DEFAULT_KIT) -> str:
    """A complete learner file: the reference solution with catalogue entry ``name`` appended."""
    stem = exercise_id.split(".", 1)[0]
    for path in catalogue_files(exercise_id, kit):
        if read_header(path)["NAME"] == name:
            reference_text = kit.solution_path(stem).read_text(encoding="utf-8")
            return reference_text.rstrip("\n") + "\n\n" + path.read_text(encoding="utf-8")
    raise KeyError(f"no misconception {name!r} for {exercise_id}")
