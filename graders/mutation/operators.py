"""The mutation operators: every small wrong version of one function, read from its AST.

:func:`mutants` walks the function's body (its docstring, f-strings and the
messages of ``raise`` statements left alone) in a fixed order and asks each
operator of :data:`OPERATORS` what it would put in place of a node; every answer
is one :class:`Mutant`, the function's source with that single change. Its id,
``<exercise>:<operator>:<line>:<col>:<index>``, is stable: the same source gives
the same ids in the same order (``index`` counts the variants of one operator
at one line and column, nested nodes that start there included).

An operator is ``operator(node) -> list of replacements``; a replacement is an
AST node put where ``node`` was, or :data:`DROP` for a statement that is
removed (``pass`` stands in for it, so that the body stays valid).
"""

from __future__ import annotations

import ast
import copy
import difflib
from dataclasses import dataclass

from graders.mutation.flow_operators import FLOW_OPERATORS
from graders.mutation.syntax import ARITH, name_of, without_keyword

DROP = "drop"  # a statement removed

_ARITH = ARITH
_COMPARE = {ast.Lt: (ast.LtE, ast.GtE), ast.LtE: (ast.Lt, ast.Gt), ast.Gt: (ast.GtE, ast.LtE),
            ast.GtE: (ast.Gt, ast.Lt), ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.Is: (ast.IsNot,),
            ast.IsNot: (ast.Is,), ast.In: (ast.NotIn,), ast.NotIn: (ast.In,)}
# names swapped wherever they are called or read: builtins, np.<name>, torch.<name>, x.<name>()
_NAMES = {"min": "max", "max": "min", "amin": "amax", "amax": "amin", "nanmin": "nanmax", "nanmax": "nanmin",
          "argmin": "argmax", "argmax": "argmin", "maximum": "minimum", "minimum": "maximum",
          "fmax": "fmin", "fmin": "fmax", "clamp_min": "clamp_max", "clamp_max": "clamp_min",
          "mean": "sum", "nanmean": "nansum", "nansum": "nanmean", "nanargmin": "nanargmax", "nanargmax": "nanargmin",
          "float64": "float32", "double": "float", "int64": "int32", "any": "all", "all": "any",
          "logsumexp": "max", "exp": "log", "log": "exp", "log1p": "expm1", "expm1": "log1p",
          "std": "var", "var": "std"}
_SUM_MEAN = {"sum": "mean"}  # sum -> mean only as np.sum / x.sum(): the builtin sum has no mean
_SHIFTS = {"max", "amax", "min", "amin", "mean", "logsumexp", "nanmax"}  # x - x.max(...) -> x
_CLIPS = {"clip", "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "nan_to_num"}  # np.clip(x, a, b) -> x
_IDENTITY_METHODS = {"detach", "clone", "copy", "float", "double", "item", "tolist", "squeeze", "flatten", "ravel",
                     "contiguous", "astype", "to"}  # x.detach() -> x
_CASTS = {"float", "int", "bool", "abs", "asarray", "array", "as_tensor", "tensor", "float64", "atleast_1d"}
_STATISTICS = {"std", "var", "nanstd", "nanvar"}
_DTYPES = {"float64": "float32", "float32": "float64", "int64": "int32", "double": "float", "float": "float64"}


_name_of, _without_keyword = name_of, without_keyword


def _renamed(func: ast.expr, name: str) -> ast.expr:
    new = copy.deepcopy(func)
    if isinstance(new, ast.Name):
        new.id = name
    else:
        new.attr = name
    return new


# ---------------------------------------------------------------------------
# The operators
# ---------------------------------------------------------------------------
def arithmetic(node):
    """``a + b`` -> ``a - b``, ``*`` <-> ``/``, ``//`` -> ``/``, ``**`` -> ``*``, ... (also ``x += y``)."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _ARITH:
        new = copy.deepcopy(node)
        new.op = _ARITH[type(node.op)]()
        return [new]
    return []


def comparison(node):
    """``<`` -> ``<=`` and ``>=``, ``==`` <-> ``!=``, ``is`` <-> ``is not``, ``in`` <-> ``not in``."""
    found = []
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            for other in _COMPARE.get(type(op), ()):
                new = copy.deepcopy(node)
                new.ops[position] = other()
                found.append(new)
    return found


def boolean(node):
    """``a and b`` <-> ``a or b``; then each operand alone (a dropped clause)."""
    if not isinstance(node, ast.BoolOp):
        return []
    new = copy.deepcopy(node)
    new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    return [new, *(copy.deepcopy(value) for value in node.values)]


def unary(node):
    """``-x`` -> ``x``, ``not x`` -> ``x``, ``~x`` -> ``x``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not, ast.Invert, ast.UAdd)):
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return []  # a negative literal: the constant operator varies it
        return [copy.deepcopy(node.operand)]
    return []


def constant(node):
    """A number ``c`` -> ``0``, ``c + 1``, ``c - 1``, ``-c``; ``True`` <-> ``False``; ``-c`` literals too."""
    value, sign = None, 1
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value, sign = node.operand.value, -1
    if isinstance(value, bool):
        return [ast.Constant(not value)]
    if not isinstance(value, (int, float)) or isinstance(value, complex):
        return []
    value = sign * value
    found, seen = [], {value}
    for other in (0 * value, value + 1, value - 1, -value):
        if other not in seen:
            seen.add(other)
            found.append(ast.UnaryOp(ast.USub(), ast.Constant(-other)) if other < 0 else ast.Constant(other))
    return found


def swap_name(node):
    """``min`` <-> ``max``, ``argmin`` <-> ``argmax``, ``maximum`` <-> ``minimum``, ``np.sum``/``x.sum()`` <->
    ``np.mean``/``x.mean()``, ``exp`` <-> ``log``, ``std`` <-> ``var``, ``float64`` -> ``float32``, ..."""
    if isinstance(node, ast.Call):
        name = _name_of(node.func)
        table = dict(_NAMES)
        if isinstance(node.func, ast.Attribute):
            table.update(_SUM_MEAN)
        if name in table:
            return [ast.Call(_renamed(node.func, table[name]), copy.deepcopy(node.args),
                             copy.deepcopy(node.keywords))]
    return []


def dtype(node):
    """A dtype ``np.float64``/``torch.float64``/``"float64"`` -> ``float32`` (and back), ``dtype=...`` removed."""
    if isinstance(node, ast.Attribute) and node.attr in _DTYPES and isinstance(node.ctx, ast.Load):
        return [_renamed(node, _DTYPES[node.attr])]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _DTYPES:
        return [ast.Constant(_DTYPES[node.value])]
    if isinstance(node, ast.Call):
        return [_without_keyword(node, i) for i, k in enumerate(node.keywords) if k.arg == "dtype"]
    return []


def reduction(node):
    """``axis=k``/``dim=k`` removed or -> ``k + 1`` and ``k - 1``; ``keepdims`` removed; ``ddof`` removed,
    or ``ddof=1`` added to a ``std``/``var`` that has none."""
    if not isinstance(node, ast.Call):
        return []
    found = []
    for index, keyword in enumerate(node.keywords):
        if keyword.arg in ("axis", "dim", "keepdims", "keepdim", "ddof", "correction"):
            found.append(_without_keyword(node, index))
        if keyword.arg in ("axis", "dim") and isinstance(keyword.value, (ast.Constant, ast.UnaryOp)):
            for delta in (1, -1):
                new = copy.deepcopy(node)
                new.keywords[index].value = ast.BinOp(copy.deepcopy(keyword.value), ast.Add(), ast.Constant(delta))
                found.append(new)
    if _name_of(node.func) in _STATISTICS and not any(k.arg in ("ddof", "correction") for k in node.keywords):
        new = copy.deepcopy(node)
        new.keywords.append(ast.keyword("ddof", ast.Constant(1)))
        found.append(new)
    return found


def swap_arguments(node):
    """``f(a, b)`` -> ``f(b, a)`` (each adjacent pair of positional arguments); ``a - b`` -> ``b - a``,
    likewise ``/``, ``**``."""
    found = []
    if isinstance(node, ast.Call):
        for i in range(len(node.args) - 1):
            if isinstance(node.args[i], ast.Starred) or isinstance(node.args[i + 1], ast.Starred):
                continue
            new = copy.deepcopy(node)
            new.args[i], new.args[i + 1] = new.args[i + 1], new.args[i]
            found.append(new)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div, ast.Pow, ast.FloorDiv)):
        found.append(ast.BinOp(copy.deepcopy(node.right), node.op.__class__(), copy.deepcopy(node.left)))
    return found


def remove_call(node):
    """A stabilising or converting call removed: ``x - x.max(...)`` -> ``x``, ``np.clip(x, a, b)``/
    ``torch.clamp(x, ...)``/``np.maximum(x, eps)`` -> ``x``, ``x.detach()``/``x.astype(...)`` -> ``x``,
    ``float(x)``/``np.asarray(x)`` -> ``x``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.right, ast.Call) \
            and _name_of(node.right.func) in _SHIFTS:
        return [copy.deepcopy(node.left)]
    if not isinstance(node, ast.Call):
        return []
    name = _name_of(node.func)
    method = isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                                          and node.func.value.id in ("np", "torch", "math", "F"))
    if name in _IDENTITY_METHODS and method:
        return [copy.deepcopy(node.func.value)]
    if name in _CLIPS:
        if method and not node.args:
            return [copy.deepcopy(node.func.value)]
        if node.args and not isinstance(node.args[0], ast.Starred):
            return [copy.deepcopy(node.args[0])]
    if name in _CASTS and not method and len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
        return [copy.deepcopy(node.args[0])]
    return []


def drop_guard(node):
    """An ``if ...: raise`` guard removed (its ``else`` kept), and an ``assert`` removed."""
    if isinstance(node, ast.If) and node.body and isinstance(node.body[-1], ast.Raise):
        return [DROP if not node.orelse else ast.If(ast.Constant(False), [ast.Pass()], copy.deepcopy(node.orelse))]
    if isinstance(node, ast.Assert):
        return [DROP]
    return []


def drop_statement(node):
    """A statement removed (an assignment, an expression, a loop, an ``if`` that is no guard); an ``if``'s
    ``else`` clause removed; ``a if c else b`` -> ``a`` and ``b``; ``if c:`` -> ``if True:``/``if False:``."""
    if isinstance(node, ast.IfExp):
        return [copy.deepcopy(node.body), copy.deepcopy(node.orelse)]
    found = []
    if isinstance(node, ast.If):
        if not (node.body and isinstance(node.body[-1], ast.Raise)):
            found.append(DROP)
            for test in (True, False):
                new = copy.deepcopy(node)
                new.test = ast.Constant(test)
                found.append(new)
        if node.orelse:
            new = copy.deepcopy(node)
            new.orelse = []
            found.append(new)
        return found
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return []  # a nested function's docstring
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.For, ast.While, ast.With)):
        return [DROP]
    return []


def slice_bound(node):
    """Off by one: each bound of ``x[a:b]`` -> ``a + 1``, ``a - 1``; ``range(a, b)``'s stop likewise."""
    found = []
    if isinstance(node, ast.Slice):
        for field in ("lower", "upper"):
            bound = getattr(node, field)
            if bound is not None:
                for op in (ast.Add, ast.Sub):
                    new = copy.deepcopy(node)
                    setattr(new, field, ast.BinOp(copy.deepcopy(bound), op(), ast.Constant(1)))
                    found.append(new)
    elif isinstance(node, ast.Call) and _name_of(node.func) in ("range", "arange") and node.args:
        stop = 1 if len(node.args) >= 2 else 0
        for op in (ast.Add, ast.Sub):
            new = copy.deepcopy(node)
            new.args[stop] = ast.BinOp(copy.deepcopy(node.args[stop]), op(), ast.Constant(1))
            found.append(new)
    return found


OPERATORS = {"arithmetic": arithmetic, "comparison": comparison, "boolean": boolean, "unary": unary,
             "constant": constant, "swap_name": swap_name, "dtype": dtype, "reduction": reduction,
             "swap_arguments": swap_arguments, "remove_call": remove_call, "drop_guard": drop_guard,
             "drop_statement": drop_statement, "slice_bound": slice_bound, **FLOW_OPERATORS}


# ---------------------------------------------------------------------------
# Walking one function
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """One single-change version of a function: its stable id, where, the change as one diff line, its source."""

    id: str
    exercise: str
    operator: str
    line: int  # in the file the function was read from
    col: int
    index: int
    diff: str  # "- old line  ->  + new line" (unparsed, so formatting is canonical)
    source: str  # the whole mutated function, unparsed


_TOKENS = (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)  # not nodes to replace


def _walk(function: ast.FunctionDef):
    """(node, parent, field, position) in source order, the docstring, f-strings and raise messages skipped."""
    body = function.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0

    def visit(node, parent, field, position):
        yield node, parent, field, position
        if isinstance(node, (ast.JoinedStr, ast.Raise)):
            return  # f-strings and the messages of raise are never mutated
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns"):
                continue  # annotations are never evaluated (``from __future__ import annotations``)
            for i, item in (enumerate(value) if isinstance(value, list) else [(None, value)]):
                if isinstance(item, ast.AST) and not isinstance(item, _TOKENS):
                    yield from visit(item, node, name, i)

    for i, statement in enumerate(body[start:], start):
        yield from visit(statement, function, "body", i)


def _replace(function: ast.FunctionDef, path: tuple, replacement) -> ast.FunctionDef:
    """A copy of ``function`` with the node at ``path`` (a list of (field, position) steps) replaced."""
    new = copy.deepcopy(function)
    parent = new
    for field, position in path[:-1]:
        value = getattr(parent, field)
        parent = value[position] if position is not None else value
    field, position = path[-1]
    if replacement == DROP:
        replacement = ast.Pass()
    if position is None:
        setattr(parent, field, replacement)
    else:
        getattr(parent, field)[position] = replacement
    return ast.fix_missing_locations(new)


def _paths(function: ast.FunctionDef):
    """Each mutable node with its path from the function, in :func:`_walk`'s order."""
    paths = {id(function): ()}
    for node, parent, field, position in _walk(function):
        paths[id(node)] = paths[id(parent)] + ((field, position),)
        yield node, paths[id(node)]


def _diff(before: str, after: str) -> str:
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:].strip())
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:].strip())
    return f"- {' / '.join(removed) or '(nothing)'}  ->  + {' / '.join(added) or '(nothing)'}"


def mutants(function: ast.FunctionDef, exercise: str = "", operators=None) -> list[Mutant]:
    """Every mutant of ``function`` (a parsed ``def``), in a stable order; mutants whose source equals the
    original's, or another mutant's, are left out (the first one kept)."""
    original = ast.unparse(function)
    seen = {original}
    found = []
    chosen = {name: OPERATORS[name] for name in (operators or OPERATORS)}
    counts: dict[tuple, int] = {}  # (operator, line, col) -> variants so far: nested nodes may share a position
    for node, path in _paths(function):
        for name, operator in chosen.items():
            for replacement in operator(node):
                if replacement == DROP and isinstance(node, ast.stmt) and len(getattr_path(function, path)) == 1:
                    continue  # the only statement of a body: pass alone is no realistic mistake
                try:
                    source = ast.unparse(_replace(function, path, replacement))
                    compile(source, "<mutant>", "exec")
                except (SyntaxError, ValueError, TypeError):
                    continue
                if source in seen:
                    continue
                seen.add(source)
                line, col = getattr(node, "lineno", function.lineno), getattr(node, "col_offset", 0)
                index = counts[name, line, col] = counts.get((name, line, col), -1) + 1
                found.append(Mutant(f"{exercise}:{name}:{line}:{col}:{index}", exercise, name, line, col, index,
                                    _diff(original, source), source))
    return found


def getattr_path(function: ast.FunctionDef, path: tuple) -> list:
    """The list (a body) that holds the node at ``path``: a dropped statement's siblings."""
    parent = function
    for field, position in path[:-1]:
        value = getattr(parent, field)
        parent = value[position] if position is not None else value
    value = getattr(parent, path[-1][0])
    return value if isinstance(value, list) else [value]


def function_node(source: str, name: str) -> ast.FunctionDef:
    """The top-level ``def name`` of a module's source."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise KeyError(f"no top-level function {name}")
