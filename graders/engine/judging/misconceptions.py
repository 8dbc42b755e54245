'''The misconception catalogue: known wrong implementations, used to name a learner's mistake.

One file per exercise, ``graders/misconceptions/<file stem>/<function>.py``,
holds that exercise's entries. An entry is a function::

    def eps_swapped(ratios, advantages, eps_low=0.2, eps_high=0.2):
        """looks like eps_low and eps_high swapped; the range is [1 - eps_low, 1 + eps_high]

        ru: похоже, eps_low и eps_high перепутаны; диапазон равен [1 - eps_low, 1 + eps_high]
        """
        return _right(ratios, advantages, eps_high, eps_low)

- its name is the entry's NAME, the name reports and hint tables show;
- its docstring is the HINT shown to the learner, in every language of the
  course (:data:`graders.course.LANGUAGES`): first the English hint, then,
  after a blank line, one paragraph per other language that opens with its
  code, ``ru: ...`` (each one sentence; a long one may wrap over several
  lines, which are joined by single spaces). Identifiers, formulas and code
  read the same in every language; the loader reads it as one
  :class:`graders.text.Text` (:func:`hint_text`), which every reader reads with ``hint.in_(language)``;
- its signature is the exercise's, parameter for parameter (names, kinds,
  defaults), because the checks call it exactly as they call the learner's;
- its body is the WRONG formula. It runs in the namespace of the learner
  module, so it uses that file's imports and helpers (``np``, ``torch``,
  ``_float_array``, the other exercises) without importing them, and
  ``_right``, the exercise's right (reference) definition. A mistake one step
  away from the lecture is one line: the reference with other arguments
  (eps swapped, beta = 1, the pair the other way round) or a flipped sign,
  ``-_right(...)``; a genuinely different formula keeps its own body. An
  entry need not check its arguments: where the reference raises, the graders
  never consult the catalogue (only wrong VALUES are matched, and the hint
  tables skip such inputs).

Besides entries the file holds only its docstring and private helpers
(``def _name``) shared by its entries, e.g. the standardisation as first
written (no exact zeros for an all-equal group, unlike the reference) that
``sample_std`` and its neighbours vary; a helper may not reuse a name of the
learner module. Entries are listed by NAME, whatever their order in the file.

Applying an entry means running its definitions after the learner module's
own: the exercise's reference definition renamed ``_right``, the file's
helpers, then the entry renamed to the exercise's function, so that only that
one function is wrong. :func:`entry_source` is that text:

- :func:`load_misconceptions` (the grader) runs it in a *copy* of the
  reference module's namespace and returns the wrong function;
- :func:`mutant_source` (the kit's tests) appends it to the reference file:
  a complete learner file to grade as a submission (and, as definitions only,
  it also fits a notebook cell).

A malformed file raises :class:`CatalogueError` naming the file, the line and
the problem.
'''

from __future__ import annotations

import __future__
import ast
import copy
import functools
import inspect
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graders.text import Text
from graders.course import LANGUAGES
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.loader import AST_LOCK, parse

RIGHT = "_right"  # the name under which an entry reaches the exercise's reference definition


class CatalogueError(ValueError):
    """A malformed catalogue file: the message names the file, the line and the problem."""


@dataclass(frozen=True)
class Entry:
    """One catalogue entry as written, read without running anything."""

    exercise: str
    name: str
    hint: Text  # the hint in every language (its value: the English one)
    path: Path
    line: int

    def hint_in(self, language: str) -> str:
        return self.hint.in_(language)


@dataclass(frozen=True)
class Misconception:
    exercise: str
    name: str
    hint: Text  # the hint in every language (its value: the English one)
    path: Path
    function: Callable
    module: types.ModuleType  # the reference namespace with this entry applied

    def hint_in(self, language: str) -> str:
        return self.hint.in_(language)


# ---------------------------------------------------------------------------
# The files
# ---------------------------------------------------------------------------
def catalogue_file(exercise_id: str, kit: Kit = DEFAULT_KIT) -> Path:
    """Where the entries of ``exercise_id`` live (the file may not exist: no entry yet)."""
    stem, function = exercise_id.split(".", 1)
    return kit.misconceptions_dir / stem / f"{function}.py"


def all_catalogue_files(kit: Kit = DEFAULT_KIT) -> list[Path]:
    """Every catalogue file, one per exercise that has entries."""
    if not kit.misconceptions_dir.is_dir():
        return []
    return sorted(p for p in kit.misconceptions_dir.glob("*/*.py") if not p.name.startswith("_"))


def exercise_of(path: Path) -> str:
    """The exercise id a catalogue file belongs to: ``<folder>.<file stem>``."""
    path = Path(path)
    return f"{path.parent.name}.{path.stem}"


def _fail(path: Path, line: int | None, problem: str):
    raise CatalogueError(f"{path}{f':{line}' if line else ''}: {problem}")


def _parse(path: Path) -> tuple[str, list[ast.FunctionDef], list[ast.FunctionDef]]:
    """(text, helpers, entries) of a catalogue file, its layout checked (parsed once per text: a grading
    process reads each catalogue file for every batch, and every entry's source reads its file again)."""
    text = Path(path).read_text(encoding="utf-8")
    helpers, entries = _layout(text, str(path))
    return text, list(helpers), list(entries)


@functools.lru_cache(maxsize=128)
def _layout(text: str, filename: str) -> tuple[tuple[ast.FunctionDef, ...], tuple[ast.FunctionDef, ...]]:
    """(helpers, entries) of a catalogue file's ``text``, its layout checked; a problem is raised on every call
    (an exception is never kept). The nodes are shared: callers copy one before changing it (:func:`_compiled`)."""
    path = Path(filename)
    try:
        tree = parse(text, filename=filename)
    except SyntaxError as error:
        _fail(path, error.lineno, f"syntax error: {error.msg}")
    function = Path(path).stem
    helpers, entries, seen = [], [], {}
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            continue  # the module docstring
        if not isinstance(node, ast.FunctionDef):
            _fail(path, node.lineno, f"only entries and helpers (def) may stand at the top level, "
                                     f"found {type(node).__name__}")
        if node.decorator_list:
            _fail(path, node.lineno, f"{node.name}: decorators are not supported")
        if node.name in seen:
            _fail(path, node.lineno, f"{node.name} is defined twice (first at line {seen[node.name]})")
        seen[node.name] = node.lineno
        if node.name == RIGHT:
            _fail(path, node.lineno, f"{RIGHT} is reserved: it is the exercise's reference definition")
        if not node.name.startswith("_") and not re.fullmatch(r"[a-z][a-z0-9_]*", node.name):
            _fail(path, node.lineno, f"entry {node.name}: a NAME is snake_case")
        calls_itself = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == function]
        if calls_itself:
            _fail(path, calls_itself[0].lineno, f"{node.name} uses {function}, which the entry replaces: "
                                                f"call {RIGHT} (the reference) instead")
        (helpers if node.name.startswith("_") else entries).append(node)
    return tuple(helpers), tuple(entries)


_LANGUAGE_PARAGRAPH = re.compile(r"(?P<language>[a-z]{2}):\s+(?P<text>.*)", re.DOTALL)


def hint_text(docstring: str) -> Text:
    """The hint of an entry's docstring as a :class:`~graders.text.Text`: the English paragraph, then ``ru: ...``.

    Raises ``ValueError`` naming what is wrong: a language missing or twice, one the course does not
    have, or a paragraph without a language after the English one.
    """
    english, *others = [p for p in re.split(r"\n[ \t]*\n", docstring.strip()) if p.strip()] or [""]
    if not english.strip() or _LANGUAGE_PARAGRAPH.fullmatch(english.strip()):
        raise ValueError("the docstring must open with the English hint")
    hints = {LANGUAGES[0]: " ".join(english.split())}
    for paragraph in others:
        match = _LANGUAGE_PARAGRAPH.fullmatch(paragraph.strip())
        if match is None:
            raise ValueError(f"a paragraph after the English hint must open with a language code "
                             f"({', '.join(f'{code}:' for code in LANGUAGES[1:])}): {paragraph.strip()[:40]!r}")
        language, text = match["language"], " ".join(match["text"].split())
        if language not in LANGUAGES[1:]:
            raise ValueError(f"{language}: the course speaks {', '.join(LANGUAGES)}")
        if language in hints:
            raise ValueError(f"two {language}: hints")
        if not text:
            raise ValueError(f"the {language}: hint is empty")
        hints[language] = text
    missing = [language for language in LANGUAGES if language not in hints]
    if missing:
        raise ValueError(f"no {', '.join(missing)} hint: add a paragraph "
                         f"{' / '.join(f'{code}: ...' for code in missing)} to the docstring")
    try:
        return Text(*(hints[language] for language in LANGUAGES))
    except ValueError as error:  # the placeholders differ
        raise ValueError(str(error)) from None


def _hint(path: Path, node: ast.FunctionDef) -> Text:
    first = node.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str) and first.value.value.strip()):
        _fail(path, node.lineno, f"entry {node.name} has no docstring (its HINT)")
    try:
        return hint_text(first.value.value)
    except ValueError as error:
        _fail(path, first.lineno, f"entry {node.name}: {error}")


def read_entries(path: Path) -> list[Entry]:
    """The entries of a catalogue file, sorted by name, read without running it (once per text)."""
    return list(_read_entries(Path(path).read_text(encoding="utf-8"), str(path), exercise_of(path)))


@functools.lru_cache(maxsize=128)
def _read_entries(text: str, filename: str, exercise: str) -> tuple[Entry, ...]:
    _helpers, entries = _layout(text, filename)
    path = Path(filename)
    found = [Entry(exercise, node.name, _hint(path, node), path, node.lineno) for node in entries]
    return tuple(sorted(found, key=lambda entry: entry.name))


# ---------------------------------------------------------------------------
# Applying an entry
# ---------------------------------------------------------------------------
def _renamed(text: str, node: ast.FunctionDef, name: str) -> str:
    """The source of the top-level ``def`` ``node`` of ``text``, defining ``name`` instead."""
    segment = ast.get_source_segment(text, node)
    head = f"def {node.name}("
    assert segment.startswith(head), segment[:80]
    return f"def {name}(" + segment[len(head):]


def _reference_definition(exercise_id: str, kit: Kit) -> tuple[Path, str, ast.FunctionDef]:
    stem, function = exercise_id.split(".", 1)
    path = kit.solution_path(stem)
    text = path.read_text(encoding="utf-8")
    node = _top_level_functions(text, str(path)).get(function)
    if node is None:
        raise CatalogueError(f"{catalogue_file(exercise_id, kit)}: {path} defines no function {function}")
    return path, text, node


@functools.lru_cache(maxsize=8)
def _top_level_functions(text: str, filename: str) -> dict[str, ast.FunctionDef]:
    """The first top-level ``def`` of each name in a reference file's ``text``, parsed once per text (every entry
    of a catalogue reads its reference; callers copy a node before changing it)."""
    found: dict[str, ast.FunctionDef] = {}
    for node in parse(text, filename=filename).body:
        if isinstance(node, ast.FunctionDef):
            found.setdefault(node.name, node)
    return found


@functools.lru_cache(maxsize=64)
def _renamed_reference(text: str, filename: str, function: str) -> str:
    """:func:`_renamed` of the reference ``function`` as ``_right``, once per reference text (splitting a long file
    into lines for every entry cost more than the rest of :func:`entry_source`)."""
    return _renamed(text, _top_level_functions(text, filename)[function], RIGHT)


def entry_source(exercise_id: str, name: str, kit: Kit = DEFAULT_KIT) -> str:
    """The definitions that make ``exercise_id`` entry ``name``: ``_right``, the helpers, the entry renamed."""
    path = catalogue_file(exercise_id, kit)
    if not path.exists():
        raise KeyError(f"no misconception {name!r} for {exercise_id} ({path} does not exist)")
    text, helpers, entries = _parse(path)
    node = next((n for n in entries if n.name == name), None)
    if node is None:
        raise KeyError(f"no misconception {name!r} for {exercise_id}")
    function = exercise_id.split(".", 1)[1]
    reference_path, reference_text, _ = _reference_definition(exercise_id, kit)
    pieces = [f"# misconception {name!r} ({path.parent.name}/{path.name}); {RIGHT} is the right {function}",
              _renamed_reference(reference_text, str(reference_path), function),
              *(ast.get_source_segment(text, helper) for helper in helpers),
              _renamed(text, node, function)]
    return "\n\n\n".join(pieces) + "\n"


def mutant_source(exercise_id: str, name: str, kit: Kit = DEFAULT_KIT) -> str:
    """A complete learner file: the reference solution with catalogue entry ``name`` applied after it."""
    stem = exercise_id.split(".", 1)[0]
    applied = entry_source(exercise_id, name, kit)
    return kit.solution_path(stem).read_text(encoding="utf-8").rstrip("\n") + "\n\n\n" + applied


def _signature(function: Callable) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def _compiled(where: Path, definition: ast.FunctionDef, name: str) -> types.CodeType:
    """The code of a module defining ``definition`` under ``name`` (a copy renamed; ``definition`` is unchanged)."""
    renamed = copy.deepcopy(definition)
    renamed.name = name
    with AST_LOCK:  # an AST compiled while another thread parses: CPython 3.11's shared depth (loader.parse)
        return compile(ast.Module(body=[renamed], type_ignores=[]), str(where), "exec",
                       flags=__future__.annotations.compiler_flag, dont_inherit=True)


def load_misconceptions(exercise_id: str, kit: Kit = DEFAULT_KIT) -> list[Misconception]:
    """Every catalogued misconception of ``exercise_id`` as a callable, in the grading process (sorted by name)."""
    path = catalogue_file(exercise_id, kit)
    if not path.exists():
        return []
    stem, function = exercise_id.split(".", 1)
    text, helpers, nodes = _parse(path)
    reference = kit.reference_module(stem)
    right = getattr(reference, function, None)
    if not callable(right):
        _fail(path, None, f"{exercise_id} is no exercise: {stem} defines no function {function}")
    for helper in helpers:
        if helper.name in vars(reference):
            _fail(path, helper.lineno, f"helper {helper.name} would replace {stem}'s own {helper.name}")
    reference_path, _reference_text, reference_node = _reference_definition(exercise_id, kit)
    entries = list(_read_entries(text, str(path), exercise_of(path)))  # the text _parse read: one read, one version
    # the reference as _right and the helpers are the same code for every entry: compiled once, run in each module
    shared = [_compiled(where, definition, name) for where, definition, name in (
        (reference_path, reference_node, RIGHT), *((path, helper, helper.name) for helper in helpers))] if entries else []
    found = []
    for entry in entries:
        module = types.ModuleType(f"{reference.__name__}__misconception_{entry.name}")
        module.__dict__.update({k: v for k, v in vars(reference).items() if k not in ("__name__", "__spec__")})
        module.__dict__["__name__"] = reference.__name__  # dataclasses and pickling-free helpers resolve through it
        node = next(n for n in nodes if n.name == entry.name)
        for code in (*shared, _compiled(path, node, function)):
            exec(code, module.__dict__)  # noqa: S102 - kit code, grader side only
        wrong = module.__dict__[function]
        if _signature(wrong) != _signature(right):
            _fail(path, entry.line, f"entry {entry.name}{inspect.signature(wrong)} does not have the signature "
                                    f"of {function}{inspect.signature(right)}")
        found.append(Misconception(exercise_id, entry.name, entry.hint, path, wrong, module))
    return found
