"""Load a learner or reference file under a private module name.

Learner and reference files share file names (``module_9_reference.py``), so
each is imported by path under a name of its own and never through
``sys.path``, which keeps the two from ever replacing each other.

A learner file may import the given modules of its folder by their plain names
(``from grpo_toy import ...``). Loaded by path, it gets them through ``given``:
a module named there, or a fresh copy from the file named there, for this load
alone (a fresh copy stays in ``sys.modules`` as ``<name>__<given module>``,
never under the plain name). A given module's own neighbours come with it: a
plain name that ``given`` does not hold, of a ``.py`` file beside a given file
or module (``dpo_toy.py`` imports ``toy_optim``), loads a fresh copy of that
file too, unless its name is a learner file's (``module_*``, as every one in
graders/course.py); so a caller names the modules its file imports, not what
those import in turn.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType

AST_LOCK = threading.Lock()
LEARNER_PREFIX = "module_"  # every learner file of graders/course.py (module_9_reference, ...); never a neighbour
_GIVEN_LOCK = threading.RLock()  # one load with given modules at a time: they pass through sys.modules


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, one thread at a time in this process.

    CPython 3.11 keeps the AST conversion's recursion depth in interpreter-wide
    state, so parses running at once in a grader's threads (reading notebook
    submissions while the catalogue loads) fail with ``SystemError: AST
    constructor recursion depth mismatch``. Every parse in the grading process
    goes through here.
    """
    with AST_LOCK:
        return ast.parse(source, filename=filename)


def load_module(path: Path, name: str, *, given: dict[str, Path | ModuleType] | None = None) -> ModuleType:
    """Import the file at ``path`` as a fresh module called ``name``.

    ``given`` maps plain module names (``"grpo_toy"``) to modules or files:
    while the file runs, an import of one of those names (by the file, or by a
    given module itself) gets that module, or loads a fresh copy from that file,
    whatever ``sys.path`` or ``sys.modules`` hold; afterwards the plain names
    are as they were.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    if given:
        with _GIVEN_LOCK, _GivenImports(given, name):
            return _execute(spec)
    return _execute(spec)


def _execute(spec) -> ModuleType:
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    return module


class _GivenImports(importlib.abc.MetaPathFinder):
    """For one load: the plain names of given modules import those modules, or fresh copies of their files."""

    def __init__(self, given: dict[str, Path | ModuleType], owner: str) -> None:
        self.modules = {plain: value for plain, value in given.items() if isinstance(value, ModuleType)}
        self.files = {plain: Path(value) for plain, value in given.items() if plain not in self.modules}
        self.owner = owner

    def find_spec(self, fullname, path=None, target=None):  # noqa: ARG002 - the finder protocol
        file = self.files.get(fullname) or self.neighbour(fullname)
        return None if file is None else importlib.util.spec_from_file_location(fullname, file)

    def neighbour(self, fullname: str) -> Path | None:
        """The ``.py`` file named ``fullname`` beside a given file or module (not a learner file), now given for
        this load."""
        if "." in fullname or not fullname.isidentifier() or fullname.startswith(LEARNER_PREFIX):
            return None
        beside = [*self.files.values(), *(Path(m.__file__) for m in self.modules.values() if getattr(m, "__file__", 0))]
        folders = dict.fromkeys(file.parent for file in beside)
        found = next((folder / f"{fullname}.py" for folder in folders if (folder / f"{fullname}.py").is_file()), None)
        if found is not None:
            self.files[fullname] = found  # taken out of sys.modules with the given ones on exit
        return found

    def __enter__(self):
        plain_names = [*self.modules, *self.files]
        self.saved = {plain: sys.modules.pop(plain) for plain in plain_names if plain in sys.modules}
        sys.modules.update(self.modules)
        sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *exc):
        sys.meta_path.remove(self)
        for plain in self.modules:
            sys.modules.pop(plain, None)
        for plain in self.files:
            loaded = sys.modules.pop(plain, None)
            if loaded is not None:
                sys.modules[f"{self.owner}__{plain}"] = loaded
        sys.modules.update(self.saved)
        return False
