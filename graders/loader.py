"""Load a learner or reference file under a private module name.

Learner and reference files share file names (``module_9_reference.py``), so
each is imported by path under a name of its own and never through
``sys.path``, which keeps the two from ever replacing each other.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType

_AST_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, one thread at a time in this process.

    CPython 3.11 keeps the AST conversion's recursion depth in interpreter-wide
    state, so parses running at once in a grader's threads (reading notebook
    submissions while the catalogue loads) fail with ``SystemError: AST
    constructor recursion depth mismatch``. Every parse in the grading process
    goes through here.
    """
    with _AST_LOCK:
        return ast.parse(source, filename=filename)


def load_module(path: Path, name: str) -> ModuleType:
    """Import the file at ``path`` as a fresh module called ``name``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module through sys.modules
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
