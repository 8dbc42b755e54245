"""A notebook's code cells read as Jupyter runs them: one cell at a time, IPython's own syntax made inert.

Jupyter runs a notebook cell by cell: a cell with a syntax error fails alone, and the cells before and
after it still define their functions. :func:`read_cells` does the same without running anything:

- IPython's syntax is removed as IPython itself would transform it away, never run: a line magic
  (``%matplotlib inline``), a shell line (``!pip install x``, ``files = !ls``), a help request
  (``np.mean?``) at the start of a logical line becomes ``pass`` (so an indented block stays a block;
  the line numbers stay those of the cell); a cell magic whose body IPython runs as Python in the
  notebook's namespace (``%%time``, ``%%capture``) keeps its body; any other cell magic (``%%bash``,
  ``%%writefile``, ``%%html``, ``%%script`` ...) hands its body to something other than Python, and the
  cell defines nothing.
- ``from __future__`` imports (``from __future__ import annotations`` as the first line of a cell, as
  Jupyter allows) are lifted to the top of the combined module, where Python requires them; an
  unknown feature (``braces``) fails its cell, as in Jupyter.
- Each cell's definitions are compiled on their own (with those future imports): a cell that Python
  cannot read is a :class:`CellProblem` naming the cell and the reason, and only that cell is lost.

Nothing here executes learner code: the cells are parsed and compiled, never run.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from graders.loader import AST_LOCK, parse

# cell magics whose body IPython runs as Python code in the notebook's own namespace
PYTHON_BODY_MAGICS = frozenset({"time", "capture"})
_CELL_MAGIC = re.compile(r"%%\s*(\w*)")
_ESCAPE = re.compile(r"[%!?]|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]|[\w.]+\s*\?{1,2}\s*$")
_FUTURE = "__future__"


@dataclass(frozen=True)
class CellProblem:
    """A code cell Python cannot read: ``cell`` counts every cell of the notebook from 1, ``start`` is its
    first line (to find it), ``reason`` the error as Python states it."""

    cell: int
    start: str
    reason: str


def python_of_cell(source: str) -> str | None:
    """The cell's source with IPython's escapes made inert (line for line), or ``None`` when its body is not
    Python (a ``%%bash`` cell ...)."""
    lines = source.splitlines()
    first = next((index for index, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return ""
    magic = _CELL_MAGIC.match(lines[first].lstrip())
    if magic:
        if magic.group(1) not in PYTHON_BODY_MAGICS:
            return None
        lines[first] = ""  # the body runs as the cell's Python; line numbers kept
    text = "\n".join(lines)
    try:
        parse(text)
        return text  # no escape in it: `%` or `!` starting a logical line is never Python
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "\n".join(_without_escapes(lines))


def _without_escapes(lines: list[str]) -> list[str]:
    """``lines`` with every IPython escape that starts a logical line (and its ``\\`` continuations) as ``pass``."""
    out: list[str] = []
    depth, quote, joined, escaped = 0, "", False, False
    for line in lines:
        if escaped:  # a continuation line of an escaped command
            out.append("")
            escaped = line.endswith("\\")
            continue
        body = line.lstrip()
        if depth == 0 and not quote and not joined and body and _ESCAPE.match(body):
            out.append(line[:len(line) - len(body)] + "pass")
            escaped = line.endswith("\\")
            continue
        out.append(line)
        depth, quote, comment = _scan(line, depth, quote)
        if len(quote) == 1 and not line.endswith("\\"):
            quote = ""  # an unterminated one-line string: Python will say so
        joined = not quote and not comment and line.endswith("\\")
    return out


def _scan(line: str, depth: int, quote: str) -> tuple[int, str, bool]:
    """Bracket depth and open string after ``line``, and whether it ended in a comment."""
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 2
                continue
            if line.startswith(quote, index):
                index += len(quote)
                quote = ""
                continue
        elif char == "#":
            return depth, quote, True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char in "'\"":
            quote = char * 3 if line.startswith(char * 3, index) else char
            index += len(quote)
            continue
        index += 1
    return depth, quote, False


def _start(source: str) -> str:
    line = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return line if len(line) <= 40 else line[:37] + "..."


def _reason(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        where = f" (line {error.lineno})" if error.lineno else ""
        return f"{type(error).__name__}: {error.msg}{where}"
    if isinstance(error, (RecursionError, MemoryError)):
        return f"{type(error).__name__}: too deeply nested or too long to be read"
    return f"{type(error).__name__}: {error}"


def read_cells(cells: list, keep) -> tuple[list[str], list[CellProblem]]:
    """(the module's pieces of source, the problems) of a notebook's cells: the future imports first, then
    each readable cell's statements that ``keep(node)`` keeps (the definitions the grader loads)."""
    parsed: list[tuple[int, str, list[ast.stmt]]] = []
    futures: dict[str, ast.ImportFrom] = {}
    problems: list[CellProblem] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(map(str, source)) if isinstance(source, list) else str(source)
        try:
            text = python_of_cell(source)
            if text is None:
                continue
            tree = parse(text)
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module == _FUTURE:
                    _compile([node])
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            problems.append(CellProblem(number, _start(source), _reason(error)))
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == _FUTURE:
                for alias in node.names:
                    futures.setdefault(alias.name, ast.ImportFrom(_FUTURE, [alias], 0, lineno=1, col_offset=0))
        parsed.append((number, source, [node for node in tree.body if not _is_future(node) and keep(node)]))
    header = list(futures.values())
    kept = [ast.unparse(ast.Module(body=header, type_ignores=[]))] if header else []
    for number, source, nodes in parsed:
        if not nodes:
            continue
        try:  # compiled alone, with the notebook's future imports: what a valid parse still refuses
            _compile(header + nodes)
            kept.append(ast.unparse(ast.Module(body=nodes, type_ignores=[])))  # may be too deep for ast.unparse
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as error:
            problems.append(CellProblem(number, _start(source), _reason(error)))
            continue
    return kept, sorted(problems, key=lambda problem: problem.cell)


def _compile(nodes: list[ast.stmt]) -> None:
    """Compile statements as a module (raises what compiling learner code may raise); one thread at a time, as
    :func:`graders.loader.parse`: CPython 3.11's conversion of an AST back to C shares the parser's state."""
    with AST_LOCK:
        compile(ast.Module(body=nodes, type_ignores=[]), "<cell>", "exec", dont_inherit=True)


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == _FUTURE


# ---------------------------------------------------------------------------
# A notebook read as one module: its definitions
# ---------------------------------------------------------------------------
_KIT_IMPORT = re.compile(r"^module_\d+_\w+$")


def notebook_definitions(data: bytes) -> str:
    """The definitions of a notebook's code cells as one module source (raises ValueError); see :func:`read_notebook`."""
    return read_notebook(data)[0]


def read_notebook(data: bytes) -> tuple[str, list[CellProblem]]:
    """(the definitions of a notebook's code cells as one module source, the cells that could not be read).

    The cells are read as Jupyter runs them (:mod:`graders.engine.intake.notebook_cells`): IPython's magics and
    shell lines made inert, ``from __future__`` imports at the top of the module, each cell compiled
    on its own. A cell that cannot be read as Python -- a syntax error, a NUL or a lone surrogate in it,
    an expression too deep for the parser or for ``ast.unparse`` (RecursionError, MemoryError) -- is left
    out, as Jupyter fails it alone, and named in the problems; a notebook whose JSON is too deep is not a
    readable notebook (ValueError).
    """
    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, RecursionError, MemoryError) as error:
        raise ValueError(f"not a readable notebook ({type(error).__name__})") from error
    if not isinstance(cells, list):
        raise ValueError("not a readable notebook (cells is not a list)")
    pieces, problems = read_cells(cells, _is_definition)
    return "\n\n\n".join(pieces) + "\n", problems


def _is_definition(node: ast.stmt) -> bool:
    """A statement the grader loads from a notebook: a function, a class, an import, a module constant."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        return not any(_KIT_IMPORT.match(n.split(".")[0]) for n in names)
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        return _is_constant(node)
    return False


def _is_constant(node: ast.Assign | ast.AnnAssign) -> bool:
    """A module constant: a literal value, or UPPER_CASE names (``DIGITS = tuple(...)``, ``PROFILES = {...}``).

    Other assignments (``experiment = run_toy_grpo_experiment(...)``) are the
    notebook's own runs, which grading must not repeat.
    """
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names: list[str] = []
    for target in targets:
        parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(part, ast.Name) for part in parts):
            return False  # attribute or subscript targets change other objects
        names += [part.id for part in parts]
    try:
        ast.literal_eval(node.value)
        return True
    except (ValueError, SyntaxError, TypeError):
        return all(name.lstrip("_").isupper() for name in names)


def _defined_functions(source: str) -> set[str]:
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
