"""What the mutation operators share about Python's syntax: the arithmetic swaps, a call's name, a call without
one keyword (:mod:`graders.mutation.operators`, :mod:`graders.mutation.flow_operators`)."""

from __future__ import annotations

import ast
import copy

# a + b -> a - b, * <-> /, // -> /, ** -> *, ... (and the operators an operand may be dropped from)
ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
         ast.Mod: ast.Div, ast.Pow: ast.Mult, ast.MatMult: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
         ast.BitXor: ast.BitAnd, ast.LShift: ast.RShift, ast.RShift: ast.LShift}


def name_of(func: ast.expr) -> str | None:
    """The name a call calls: ``f`` of ``f(...)``, ``sum`` of ``np.sum(...)`` and ``x.sum()``; None otherwise."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def without_keyword(call: ast.Call, index: int) -> ast.Call:
    """A copy of ``call`` without its keyword argument at ``index``."""
    new = copy.deepcopy(call)
    del new.keywords[index]
    return new
