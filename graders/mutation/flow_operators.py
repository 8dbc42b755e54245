"""The mutation operators of how values flow (issue 53, point 2): an operand dropped, a ``where`` reduced to one
branch or with its branches swapped, an ordering comparison's operands swapped, a keyword argument dropped,
``x += y`` written ``x = y``, a returned value negated. Each is ``operator(node) -> list of replacements``, as
:mod:`graders.mutation.operators` describes; that module's :data:`~graders.mutation.operators.OPERATORS` holds
them after its own, so the ids of the earlier operators' mutants do not change.
"""

from __future__ import annotations

import ast
import copy

from graders.mutation.syntax import ARITH, name_of, without_keyword

_WHERE = {"where"}  # np.where / torch.where: a condition and two branches


def drop_operand(node):
    """``a + b`` -> ``a`` and ``b`` (an operand dropped: a term forgotten, a factor left out)."""
    if isinstance(node, ast.BinOp) and type(node.op) in ARITH:
        return [copy.deepcopy(node.left), copy.deepcopy(node.right)]
    return []


def where_branch(node):
    """``where(c, a, b)`` -> ``a``, ``b`` (one branch for both) and ``where(c, b, a)`` (the branches swapped)."""
    if isinstance(node, ast.Call) and name_of(node.func) in _WHERE and len(node.args) == 3 \
            and not any(isinstance(arg, ast.Starred) for arg in node.args):
        swapped = copy.deepcopy(node)
        swapped.args[1], swapped.args[2] = swapped.args[2], swapped.args[1]
        return [copy.deepcopy(node.args[1]), copy.deepcopy(node.args[2]), swapped]
    return []


def compare_operands(node):
    """``a < b`` -> ``b < a``: an ordering comparison's operands swapped (one operator, not ``==``)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Lt, ast.LtE,
                                                                                         ast.Gt, ast.GtE)):
        return [ast.Compare(copy.deepcopy(node.comparators[0]), [type(node.ops[0])()], [copy.deepcopy(node.left)])]
    return []


def drop_keyword(node):
    """Any keyword argument dropped (``f(x, eps=1e-8)`` -> ``f(x)``) that :func:`dtype` and :func:`reduction`
    do not already drop."""
    if not isinstance(node, ast.Call):
        return []
    covered = {"dtype", "axis", "dim", "keepdims", "keepdim", "ddof", "correction"}
    return [without_keyword(node, i) for i, k in enumerate(node.keywords) if k.arg is not None and k.arg not in covered]


def assign_for_augment(node):
    """``x += y`` -> ``x = y`` (the running value overwritten instead of accumulated)."""
    if isinstance(node, ast.AugAssign):
        return [ast.Assign([copy.deepcopy(node.target)], copy.deepcopy(node.value))]
    return []


def negate_result(node):
    """``return e`` -> ``return -e`` (a sign forgotten in the end): a value returned negated, for an ``e`` that is
    not a literal, a tuple or a dict (whose parts the other operators reach)."""
    if isinstance(node, ast.Return) and node.value is not None \
            and not isinstance(node.value, (ast.Constant, ast.Tuple, ast.Dict, ast.List, ast.UnaryOp)):
        return [ast.Return(ast.UnaryOp(ast.USub(), copy.deepcopy(node.value)))]
    return []


FLOW_OPERATORS = {"drop_operand": drop_operand, "where_branch": where_branch, "compare_operands": compare_operands,
                  "drop_keyword": drop_keyword, "assign_for_augment": assign_for_augment,
                  "negate_result": negate_result}
