"""The helper cell of every notebook: ``check_close``, ``sampled``, ``check_raises``, ``visible_checks``.

``check_close`` judges a value with the autograder's own code: the engine's
comparator program (:mod:`graders.build.comparator`: ``normalise``,
``mismatch``) is copied verbatim into the body of ``_kit_comparator``, a
function that returns what the helpers call, so its many names stay out of
the learner's namespace. The learner's pytest's "likely mistake" rule and the
engine's translation of the comparator's line (:mod:`.diagnosis`) are copied
the same way into ``_kit_hints``. Around them, the notebook's own pieces:
``sampled`` (five entries of a long expected array), ``check_raises`` and
``visible_checks``.

``visible_checks("<stem>.<function>")`` runs one exercise's checks with
warnings on stdout (nbgrader fails a cell that writes to stderr), the
notebook's functions recorded as the conftest records them. A failing check
fails the cell, its message in the notebook's language (``_LANGUAGE``, the
one line in which the languages' helper cells differ) with the likely mistake
named by the conftest's rule from ``_hints.json`` beside the notebook. An
exercise the autograder checks with trusted copies of others first runs
those others on their own public cases (``with checks.use(name):``): only
where one of them fails its own case does a failure of the exercise print a
note instead (the autograder would not count it) -- never when the
exercise's own body raises ``NotImplementedError``.
"""

from __future__ import annotations

import ast
import functools
import io
import textwrap
import tokenize

from graders.build.comparator import comparator_program
from graders.build.notebooks.diagnosis import diagnosis_program

HEAD = '''\
# Helpers of the visible tests (given; read-only).
import contextlib as _contextlib
import json as _json
import sys as _sys
from types import SimpleNamespace as _SimpleNamespace

import numpy as np

_LANGUAGE = {language!r}  # the language of this notebook's messages


def _kit_comparator():
    """The autograder's own comparator, copied here by `rl4llm build`: a visible check judges a value
    exactly as the autograder does (``normalise`` both values, then ``mismatch``)."""
'''
HINTS_HEAD = '''\
    return normalise, mismatch, float_trap, Raised, explaining


_normalise, _mismatch, _float_trap, _Raised, _explaining = _kit_comparator()


def _kit_hints(kit_compare, language):
    """The learner's pytest's "likely mistake" rule (starter/conftest.py) and the engine's translation of the
    comparator's line, copied here by `rl4llm build`: a failing visible check names a catalogued mistake exactly
    when pytest would."""
'''
TAIL = '''\


_kit = _kit_hints(_SimpleNamespace(normalise=_normalise, mismatch=_mismatch, float_trap=_float_trap,
                                   Raised=_Raised, explaining=_explaining),
                  lambda: _LANGUAGE)


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


def _say(key, **fields):
    """One line of the visible checks in the notebook's language."""
    return _kit.CHECK_TEXT[key].in_(_LANGUAGE, **fields)


def check_close(got, expected, rtol=1e-05, atol=1e-06):
    """Assert that ``got`` matches ``expected`` as the autograder compares them: |got - expected| <= atol +
    rtol * |expected| elementwise (NaN matches NaN), the same shapes, every expected key."""
    expected, got = _unsampled(expected, _normalise(got))
    problem = _mismatch(_normalise(expected), got, rtol=rtol, atol=atol)
    if problem:
        raise AssertionError(problem.in_(_LANGUAGE))  # the comparator's line is data: said in the notebook's language


class check_raises:
    """``with check_raises(ValueError): f(...)`` asserts that the block raises that exception type."""

    def __init__(self, expected):
        self.expected = expected

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            raise AssertionError(_say("did_not_raise", exception=self.expected.__name__))
        return issubclass(kind, self.expected)


def _hint_table():
    """The notebook's "likely mistake" table: ``_hints.json`` beside the notebook (it ships with the release);
    empty without it."""
    try:
        with open("_hints.json", encoding="utf-8") as file:
            table = _json.load(file)
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def _raised_in(error, name):
    """Whether ``error`` was raised in the body of the function ``name`` itself (its innermost frame)."""
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and frame.tb_frame.f_code.co_name == name


def _reason(error):
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class _Checks:
    """The checks of one exercise: ``with checks.use(name):`` runs a public case of a function it calls."""

    def __init__(self, name):
        self.name, self.used, self.wrong = name, [], []

    @_contextlib.contextmanager
    def use(self, name):
        if name not in self.used:
            self.used.append(name)
        try:
            yield
        except Exception as error:  # shown wrong on its own public case
            self.wrong.append((name, _reason(error)))


def _verdict(checks, error, lines):
    """Raise ``error`` (the exercise's own failure), with the likely mistake; or, where a function it calls is
    shown wrong on its own case and the exercise itself does not raise NotImplementedError, print why the
    checks are not decided."""
    if isinstance(error, NotImplementedError) and _raised_in(error, checks.name):
        raise NotImplementedError(_say("not_implemented", name=checks.name)) from None
    if checks.wrong:
        name, reason = checks.wrong[0]
        print("\\n".join([_say("undecided", name=checks.name, dependency=name, reason=reason), *lines]))
        return
    if checks.used:
        lines = [*lines, _say("dependencies_pass", dependencies=", ".join(checks.used), name=checks.name)]
    if isinstance(error, AssertionError):
        raise AssertionError("\\n".join([str(error), *lines])) from None
    print("\\n".join(lines))
    raise error


@_contextlib.contextmanager
def visible_checks(exercise):
    """Run the visible checks of ``exercise`` (``"<stem>.<function>"``) with warnings shown on stdout (nbgrader
    fails a test cell that writes to stderr) and the notebook's functions recorded, as the learner's pytest
    records them, to name a likely mistake when a check fails."""
    stem, _, name = exercise.partition(".")
    checks, table, namespace, saved = _Checks(name), _hint_table(), globals(), {}
    recorded = {key.partition(".")[2] for key in table if key.startswith(stem + ".")} | {name}
    for function in sorted(recorded):
        if callable(namespace.get(function)):
            saved[function] = namespace[function]
            namespace[function] = _kit.wrap(f"{stem}.{function}", saved[function])
    stderr, _sys.stderr = _sys.stderr, _sys.stdout
    _kit.RECORDER.calls, _kit.RECORDER.active = [], True
    try:
        yield checks
    except Exception as error:
        _kit.RECORDER.active = False
        try:
            lines = _kit.diagnosis(_kit.observations(_kit.RECORDER.calls, table), table, False, _LANGUAGE)
        except Exception:  # a hint is a bonus: never hide the failure
            lines = []
        _verdict(checks, error, lines)
    finally:
        _kit.RECORDER.active, _sys.stderr = False, stderr
        namespace.update(saved)
'''


@functools.lru_cache(maxsize=8)  # a function of the text (raises again on every call; caches only a pass)
def _only_docstrings_span_lines(program: str) -> None:
    """Indenting a program changes the value of a multi-line string literal; only docstrings may have one."""
    tree = ast.parse(program)
    docstrings = {node.body[0].lineno for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for token in tokenize.generate_tokens(io.StringIO(program).readline):
        if token.type == tokenize.STRING and token.start[0] != token.end[0] and token.start[0] not in docstrings:
            raise ValueError(f"line {token.start[0]} of a copied program: a multi-line string cannot be indented")


def helper_source(language: str = "en") -> str:
    """The helper cell's code, its messages in ``language``."""
    programs = comparator_program(), diagnosis_program()
    for program in programs:
        _only_docstrings_span_lines(program)
    return (HEAD.replace("{language!r}", repr(language)) + textwrap.indent(programs[0], "    ") + "\n"
            + HINTS_HEAD + textwrap.indent(programs[1], "    ") + TAIL)


def helper_names() -> set[str]:
    """The names the helper cell defines (functions, classes, assignments): no learner file may define them."""
    return set(_defined_names(helper_source()))


@functools.lru_cache(maxsize=8)  # a function of the text: every notebook of a build asks
def _defined_names(source: str) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return frozenset(names)
