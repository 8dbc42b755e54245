"""The engine's comparator as source text, for the learner side.

The learner's pytest (``starter/conftest.py``) and the notebooks' visible
checks cannot import ``graders``; they run the engine's own code instead.
This module copies, by name and verbatim, the definitions that normalise and
compare values -- ``normalise`` from :mod:`graders.engine.values.codec`, ``kind``,
``describe``, ``mismatch`` and ``float_trap`` from :mod:`graders.engine.values.compare`, with the
constants and helpers they use (the comparator's line is data: ``Text`` and ``Particular`` of
:mod:`graders.text` and the tables of :mod:`graders.engine.values.compare_texts` come along), and the rule that names a catalogued mistake
(``Raised``, ``explains``, ``explaining`` from :mod:`graders.engine.judging.naming`) -- below the imports they need, into one
self-contained program (standard library and NumPy only). A change to the
engine's comparator reaches the learner at the next ``rl4llm build``, and
``rl4llm build --check`` fails until it has.

The program is written twice: ``starter/_kit_compare.py`` (imported by the
conftest; :mod:`graders.build.support`) and, indented into a function, the
helper cell of every notebook (:mod:`graders.build.notebooks.helper`).
"""

from __future__ import annotations

import ast
import builtins
import functools
import symtable
from pathlib import Path

from graders.paths import REPO_ROOT

ENGINE_DIR = REPO_ROOT / "graders" / "engine"
PARTS = (  # (engine file, its top-level definitions copied, in file order)
    ("../text.py", ("LANGUAGES", "placeholders", "Text", "Particular", "_particular_again", "_fields_in")),
    ("values/codec.py", ("MAX_STRING", "MAX_DEPTH", "Opaque", "torch_module", "normalise", "_stack")),
    ("values/compare_texts.py", ("COMPARE", "KINDS")),
    ("values/compare.py", ("DESCRIBE_LIMIT", "_KIT_FIELDS", "_particular", "kind", "_number", "describe", "_describe",
                           "_close", "mismatch", "_mismatch", "_deeper", "float_trap")),
    ("judging/naming.py", ("Raised", "explains", "explaining")),
)
IMPORTS = """\
import dataclasses
import math
import string
from decimal import Decimal
from fractions import Fraction

import numpy as np
"""


def _defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
            and all(isinstance(target, ast.Name) for target in node.targets[0].elts):
        return ", ".join(target.id for target in node.targets[0].elts)  # ``RTOL, ATOL = ...``
    return None


def _definitions(path: Path, names: tuple[str, ...]) -> list[str]:
    """The source of each named top-level definition of ``path`` (decorators and trailing comment included;
    a tuple assignment is named by its targets, ``"RTOL, ATOL"``)."""
    return list(_definitions_in(path.read_text(encoding="utf-8"), tuple(names), str(path)))


@functools.lru_cache(maxsize=64)  # a function of the text: one build reads each file for every notebook
def _definitions_in(source: str, names: tuple[str, ...], path: str) -> tuple[str, ...]:
    """:func:`_definitions` of ``source``, the text of ``path``."""
    lines = source.splitlines()
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        name = _defined_name(node)
        if name in names:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            found[name] = "\n".join(lines[first - 1:node.end_lineno])
    missing = [name for name in names if name not in found]
    if missing:
        raise ValueError(f"{path} no longer defines {missing}: update the kit's copy of it (graders/build/)")
    return tuple(found[name] for name in names)


@functools.lru_cache(maxsize=16)  # a function of the text, as above
def _undefined_names(program: str) -> frozenset[str]:
    """Global names the program reads but neither defines, imports nor finds among the builtins."""
    table = symtable.symtable(program, "<kit comparator>", "exec")
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    used: set[str] = set()

    def visit(scope: symtable.SymbolTable) -> None:
        for symbol in scope.get_symbols():
            if symbol.is_referenced() and (symbol.is_global() or scope.get_type() == "module"):
                used.add(symbol.get_name())
        for child in scope.get_children():
            visit(child)

    visit(table)
    return frozenset(used - defined - set(dir(builtins)))


def comparator_program() -> str:
    """Imports, then the engine's definitions: a program that runs with the standard library and NumPy alone."""
    blocks = [IMPORTS.rstrip("\n"), "Text = Particular = str  # bound before the classes: their methods' annotations name "
              "them (evaluated at definition when the program runs inside a function)"]
    previous = ""
    for filename, names in PARTS:
        for name, text in zip(names, _definitions(ENGINE_DIR / filename, names)):
            if name.isupper() and previous.isupper():
                blocks[-1] += "\n" + text  # a run of constants stays one block
            else:
                blocks.append(text)
            previous = name
    program = "\n\n\n".join(blocks) + "\n"
    undefined = _undefined_names(program)
    if undefined:
        raise ValueError(f"the engine's comparator needs {sorted(undefined)}: add them to PARTS or IMPORTS")
    if "graders" in program:
        raise ValueError("the engine's comparator mentions `graders`, which the learner side does not have")
    return program
