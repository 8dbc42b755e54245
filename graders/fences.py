"""Fences: the regions of a solution file that are the learner's work.

Every region of a solution file between a line ``### BEGIN SOLUTION`` and a
line ``### END SOLUTION`` is the learner's work; an exercise is a public
top-level function that holds a fence. The build (stubs, notebooks) and the
course registry (which exercises exist) both read fences from here, so
grading never imports the build tool.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from graders.loader import parse

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"


class FenceError(ValueError):
    """A solution file whose fences are malformed (unclosed, nested, outside a function)."""


@dataclass(frozen=True)
class Fence:
    """One fenced region: 0-based line indices of its BEGIN and END lines."""

    begin: int
    end: int
    function: str  # qualified name of the enclosing function, e.g. "grpo_loss"
    pointer: str  # first docstring line of that function


def _enclosing_functions(tree: ast.AST) -> list[tuple[int, int, str, str]]:
    """(first line, last line, qualified name, first docstring line) per function, 1-based."""
    found: list[tuple[int, int, str, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                doc = (ast.get_docstring(child) or "").strip().splitlines()
                found.append((child.lineno, child.end_lineno or child.lineno, name, doc[0] if doc else ""))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def find_fences(source: str, filename: str = "<source>") -> list[Fence]:
    """Locate every fenced region of ``source``; raise ``FenceError`` when malformed.

    A pure function of its arguments, kept per process by them: a batch asks for every solution file's
    exercises many times (an ``nbgrader autograde`` of 14 notebooks, one batch each, parsed the solution
    files 350 times: 4.4 of its 60 profiled seconds). Each call returns a list of its own."""
    return list(_fences(source, filename))


@lru_cache(maxsize=64)
def _fences(source: str, filename: str) -> tuple[Fence, ...]:
    lines = source.splitlines()
    functions = _enclosing_functions(parse(source, filename=filename))
    fences: list[Fence] = []
    begin: int | None = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(BEGIN_SOLUTION):
            if begin is not None:
                raise FenceError(f"{filename}:{index + 1}: nested {BEGIN_SOLUTION}")
            begin = index
        elif stripped.startswith(END_SOLUTION):
            if begin is None:
                raise FenceError(f"{filename}:{index + 1}: {END_SOLUTION} without {BEGIN_SOLUTION}")
            # the BEGIN line lies in the body; END may follow the last statement (a comment is not in the AST)
            enclosing = [f for f in functions if f[0] <= begin + 1 <= f[1]]
            if not enclosing:
                raise FenceError(f"{filename}:{begin + 1}: a fence must sit inside a function body")
            innermost = max(enclosing, key=lambda f: f[0])
            fences.append(Fence(begin, index, innermost[2], innermost[3]))
            begin = None
    if begin is not None:
        raise FenceError(f"{filename}:{begin + 1}: {BEGIN_SOLUTION} is never closed")
    return tuple(fences)


def exercises_in(path: Path) -> list[str]:
    """Exercise ids ``<file stem>.<function>`` of a solution file: public top-level fenced functions."""
    fences = find_fences(path.read_text(encoding="utf-8"), str(path))
    names = dict.fromkeys(f.function.split(".")[0] for f in fences)
    return [f"{path.stem}.{name}" for name in names if not name.startswith("_")]


def positional_parameters(path: Path, function: str) -> list[str]:
    """The positional parameter names of the top-level ``def function`` in ``path``, read without running it."""
    found = _top_level_parameters(Path(path).read_text(encoding="utf-8"), str(path))
    if function not in found:
        raise AttributeError(f"{path} defines no function {function}")
    return list(found[function])


@lru_cache(maxsize=64)
def _top_level_parameters(text: str, filename: str) -> dict[str, tuple[str, ...]]:
    """Per top-level function of ``text`` (the first of a name), its positional parameter names: a file is
    parsed once per text in a process, not once per exercise it holds."""
    found: dict[str, tuple[str, ...]] = {}
    for node in parse(text, filename=filename).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, tuple(argument.arg for argument in (*node.args.posonlyargs, *node.args.args)))
    return found
