"""Splitting a solution file into notebook cells.

A solution file is split along its top-level statements (AST order): runs of
given statements become one read-only code cell, each fenced function its own
solution cell. Each segment is a contiguous slice of the file, so the
comments and blank lines above a statement go with it and a section banner
opens the cell it heads.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass

from graders.fences import BEGIN_SOLUTION, END_SOLUTION, find_fences
from graders.loader import parse


@dataclass
class Segment:
    """A run of top-level source: given code, or one fenced function."""

    kind: str  # "given" | "solution"
    text: str
    name: str = ""
    node: ast.AST | None = None
    public: bool = False  # a public fenced function: an exercise


def split_source(source: str, filename: str = "<source>") -> tuple[str, list[Segment]]:
    """(module docstring, segments in file order); ``ValueError`` when a cell would not hold whole fences."""
    tree = parse(source, filename=filename)
    lines = source.splitlines()
    fenced = {fence.function.split(".")[0] for fence in find_fences(source, filename)}
    body = list(tree.body)
    docstring = ""
    cursor = 0  # 0-based index of the first line not yet assigned
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        docstring = inspect.cleandoc(body[0].value.value)
        cursor = body[0].end_lineno
        body = body[1:]
    segments: list[Segment] = []
    run_start: int | None = None  # first line of the current run of given statements
    for index, node in enumerate(body):
        end = _end_of(node, lines) if index + 1 < len(body) else len(lines)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in fenced:
            if run_start is not None:
                segments.append(Segment("given", "\n".join(lines[run_start:cursor]).strip("\n")))
                run_start = None
            text = "\n".join(lines[cursor:end]).strip("\n")
            segments.append(Segment("solution", text, node.name, node, not node.name.startswith("_")))
        elif run_start is None:
            run_start = cursor
        cursor = end
    if run_start is not None:
        segments.append(Segment("given", "\n".join(lines[run_start:cursor]).strip("\n")))
    for segment in segments:
        begins = sum(line.strip().startswith(BEGIN_SOLUTION) for line in segment.text.splitlines())
        ends = sum(line.strip().startswith(END_SOLUTION) for line in segment.text.splitlines())
        if (segment.kind == "given" and begins + ends) or (segment.kind == "solution" and (begins != ends or not begins)):
            raise ValueError(f"{filename}: the cell of {segment.name or 'given code'} does not hold whole fences")
    return docstring, segments


def _end_of(node: ast.AST, lines: list[str]) -> int:
    """One past the node's last line, counting indented comment lines after its last statement
    (a function's closing ``### END SOLUTION`` is a comment: the AST ends before it)."""
    end = node.end_lineno
    probe = end
    while probe < len(lines) and (not lines[probe].strip() or lines[probe][:1] in " \t"):
        probe += 1
        if lines[probe - 1].strip():
            end = probe
    return end


def dependencies(node: ast.AST, exercises: set[str]) -> list[str]:
    """Other exercises of the same file that a function's body refers to, in order of appearance."""
    found: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in exercises and child.id != node.name and child.id not in found:
            found.append(child.id)
    return found
