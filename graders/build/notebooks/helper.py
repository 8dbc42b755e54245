"""The helper cell of every notebook: ``check_close``, ``sampled``, ``check_raises``, ``visible_checks``.

``check_close`` judges a value with the autograder's own code: the engine's
comparator program (:mod:`graders.build.comparator`: ``normalise``,
``mismatch``) is copied verbatim into the body of ``_kit_comparator``, a
function that returns what the helpers call, so its many names stay out of
the learner's namespace. Around it, the notebook's own pieces: ``sampled``
(five entries of a long expected array), ``check_raises`` and
``visible_checks`` (warnings on stdout: nbgrader fails a cell that writes to
stderr).
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize

from graders.build.comparator import comparator_program

HEAD = '''\
# Helpers of the visible tests (given; read-only).
import contextlib as _contextlib
import sys as _sys

import numpy as np


def _kit_comparator():
    """The autograder's own comparator, copied here by `rl4llm build`: a visible check judges a value
    exactly as the autograder does (``normalise`` both values, then ``mismatch``)."""
'''
TAIL = '''\
    return normalise, mismatch


_normalise, _mismatch = _kit_comparator()


class sampled:
    """Expected entries of a long 1-D array: ``sampled(length, at, values)`` checks ``got[at]`` only."""

    def __init__(self, length, at, values):
        self.length, self.at, self.values = length, list(at), np.array(values, dtype=np.float64)

    def __repr__(self):
        return f"sampled({self.length}, {self.at}, {self.values.tolist()})"


def _unsampled(expected, got):
    """(expected, got) with each ``sampled`` entry of ``expected`` replaced by ``got`` itself but for the
    sampled indices, which hold the expected values (so only those are checked, at their own indices)."""
    if isinstance(expected, sampled):
        full = np.full(expected.length, np.nan)
        if isinstance(got, np.ndarray) and got.shape == full.shape:
            full = got.copy()
        full[expected.at] = expected.values
        return full, got
    if isinstance(expected, dict) and isinstance(got, dict):
        pairs = {key: _unsampled(item, got[key]) for key, item in expected.items() if key in got}
        return ({key: pairs[key][0] if key in pairs else item for key, item in expected.items()},
                {**got, **{key: pair[1] for key, pair in pairs.items()}})
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        pairs = [_unsampled(item, have) for item, have in zip(expected, got)]
        return [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    return expected, got


def check_close(got, expected, rtol=1e-05, atol=1e-06):
    """Assert that ``got`` matches ``expected`` as the autograder compares them: |got - expected| <= atol +
    rtol * |expected| elementwise (NaN matches NaN), the same shapes, every expected key."""
    expected, got = _unsampled(expected, _normalise(got))
    problem = _mismatch(_normalise(expected), got, rtol=rtol, atol=atol)
    if problem:
        raise AssertionError(problem)


class check_raises:
    """``with check_raises(ValueError): f(...)`` asserts that the block raises that exception type."""

    def __init__(self, expected):
        self.expected = expected

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            raise AssertionError(f"expected {self.expected.__name__} to be raised")
        return issubclass(kind, self.expected)


@_contextlib.contextmanager
def visible_checks(advisory=None):
    """Run visible checks with warnings shown on stdout (nbgrader fails a test cell that writes to stderr).

    ``advisory``: a failing check only prints a note (the function builds on other exercises, which the
    autograder answers with the reference's results for each check's own inputs).
    """
    saved = _sys.stderr
    _sys.stderr = _sys.stdout
    try:
        yield
    except Exception as error:
        if advisory is None:
            raise
        print(f"visible check failed ({advisory}): {type(error).__name__}: {error}")
    finally:
        _sys.stderr = saved
'''


def _only_docstrings_span_lines(program: str) -> None:
    """Indenting a program changes the value of a multi-line string literal; only docstrings may have one."""
    tree = ast.parse(program)
    docstrings = {node.body[0].lineno for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for token in tokenize.generate_tokens(io.StringIO(program).readline):
        if token.type == tokenize.STRING and token.start[0] != token.end[0] and token.start[0] not in docstrings:
            raise ValueError(f"line {token.start[0]} of the engine's comparator: a multi-line string cannot be indented")


def helper_source() -> str:
    """The helper cell's code."""
    program = comparator_program()
    _only_docstrings_span_lines(program)
    return HEAD + textwrap.indent(program, "    ") + "\n" + TAIL


def helper_names() -> set[str]:
    """The names the helper cell defines (functions, classes, assignments): no learner file may define them."""
    names: set[str] = set()
    for node in ast.parse(helper_source()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names
