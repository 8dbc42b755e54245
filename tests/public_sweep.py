"""The sweep "every catalogued mistake fails a public test of its own function", for any set of exercises, and
its record (``tests/sweep_record.json``): each exercise's input digest for which the sweep last passed.

The exhaustive tier runs the sweep over every exercise (tests/test_public_means_full.py); the fast tier runs it
for the exercises whose digest differs from the record's (tests/test_sweep_record.py), so a change cannot land
with green-but-wrong public tests for the exercises it touches.

An exercise's digest covers what its sweep reads, exercise by exercise (issue 54, point 2: adding or changing one
exercise re-sweeps that exercise only): each mistake's own text (what it adds after the reference file); the
reference file's top-level statements that the exercise's function and its mistakes reach by name
(:func:`name_slice`: the definitions they name, transitively, and every statement that defines no name, such as
a side effect); the same slice of the starter's stub; the public tests that can run for it (those that name its
function, as ``pytest -k`` selects them) with the top-level code they reach; its own entry of each data file of
the starter's module folder that is keyed by exercise (``_refused.json``), every other data file whole; the
module's given modules and any other learner file the tests or the reference name; and the starter's top-level
files (the conftest and what it reads). Left out: the hint tables (which change no verdict), the module pages
(``*.md``: a page's wording runs no test) and what a run of the starter's tests leaves (bytecode, dot folders
such as .hypothesis/).
"""
from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from graders import course
from graders.build import exercises_in
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import all_catalogue_files, exercise_of, mutant_source, read_entries
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, run_many
from learner_variants import OUTSIDE_MISTAKES, TYPE_VARIANTS, variant_source

RECORD = Path(__file__).with_name("sweep_record.json")
PYCACHE = tempfile.mkdtemp(prefix="rl4llm-pycache-")  # the runs' bytecode, outside the tree
atexit.register(shutil.rmtree, PYCACHE, True)
FAILED = re.compile(r"^FAILED \S+::(test_\w+)", re.MULTILINE)
STEMS = [f.stem for f in DEFAULT_KIT.files() if DEFAULT_KIT.solution_path(f.stem).exists()]


@functools.cache
def mistakes(stem: str) -> tuple[tuple[str, str, str], ...]:
    """(exercise id, name, learner file text) of every catalogued and wrong-type mistake of ``stem`` (read once
    a session: a test that changes the catalogue or the references does so in a copy, never in the tree)."""
    found = [(exercise_of(path), entry.name, mutant_source(exercise_of(path), entry.name))
             for path in all_catalogue_files() if path.parent.name == stem for entry in read_entries(path)]
    found += [(v.exercise, v.name, variant_source(v)) for v in (*TYPE_VARIANTS, *OUTSIDE_MISTAKES) if v.stem == stem]
    return tuple(found)


def owner(test_name: str, functions: list[str]) -> str | None:
    """The function a public test is a test of: the longest ``f`` with ``test_name`` = ``test_<f>[_...]``."""
    names = [f for f in functions if test_name == f"test_{f}" or test_name.startswith(f"test_{f}_")]
    return max(names, key=len) if names else None


def _job(tmp_root: Path, number: int, stem: str, exercise: str, name: str, text: str) -> Job:
    folder = course.module_of(stem).folder
    root = tmp_root / f"{number}-{re.sub(r'[^a-z0-9_]', '_', name)}"
    shutil.copytree(SOLUTIONS_DIR / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / folder / f"{stem}.py").write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RL4LLM_RECORD_CALLS", "PYTHONDONTWRITEBYTECODE")}
    env.update(RL4LLM_IMPL_ROOT=str(root), RL4LLM_LANG="en", MPLBACKEND="Agg", COLUMNS="400",
               PYTHONPYCACHEPREFIX=PYCACHE)
    function = exercise.split(".", 1)[1]
    return Job(args=[str(STARTER_DIR / folder / f"test_{stem}.py"), "-q", "-rf", "-p", "no:cacheprovider",
                     "-k", function], env=env, cwd=str(REPO_ROOT))


def own_failures(tmp_root: Path, stem: str, chosen: list[tuple[str, str, str]]) -> list[tuple[set[str], str]]:
    """For each mistake of ``chosen`` (all of learner file ``stem``): the public tests of its own function that
    failed, and the run's output; run two at a time, each a fork of one preloaded driver."""
    functions = [e.split(".", 1)[1] for e in exercises_in(DEFAULT_KIT.solution_path(stem))]
    runs = run_many([_job(tmp_root, number, stem, *mistake) for number, mistake in enumerate(chosen)], workers=2)
    return [({test for test in FAILED.findall(run.stdout) if owner(test, functions) == exercise.split(".", 1)[1]},
             f"(exit {run.returncode})\n{run.stdout}") for (exercise, _, _), run in zip(chosen, runs)]


def unfailed(chosen: list[tuple[str, str, str]], failures: list[tuple[set[str], str]]) -> list[str]:
    """The mistakes of ``chosen`` whose :func:`own_failures` entry names no failed test, each with the run's
    last lines."""
    return [f"{exercise} {name}: every public test of {exercise.split('.', 1)[1]} passes {output[-600:]}"
            for (exercise, name, _), (failed, output) in zip(chosen, failures) if not failed]


def slipped(tmp_root: Path, stem: str, chosen: list[tuple[str, str, str]]) -> list[str]:
    """The mistakes of ``chosen`` (all of learner file ``stem``) that fail no public test of their own
    function, each with the run's last lines."""
    return unfailed(chosen, own_failures(tmp_root, stem, chosen))


def _files_digest(paths) -> bytes:
    digest = hashlib.sha256()
    for path in sorted(paths):
        # what a run of the starter's tests leaves (bytecode, .hypothesis/, .pytest_cache/) is not an input, nor
        # are the module pages (README.md, README.ru.md: a page's wording runs no test)
        skipped = any(part == "__pycache__" or part.startswith(".") for part in path.relative_to(REPO_ROOT).parts)
        if path.is_file() and not skipped and path.name != "_hints.json" and path.suffix != ".md":
            digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.digest()


_ALWAYS_NAMES = {"pytestmark", "pytest_plugins", "__all__"}


def _segmenter(text: str):
    """``node -> its source text`` for one module's text (``ast.get_source_segment`` splits the whole text on
    every call)."""
    lines = text.splitlines(keepends=True)

    def segment(node) -> str:
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            return lines[first].encode()[node.col_offset:node.end_col_offset].decode(errors="replace")
        return (lines[first].encode()[node.col_offset:].decode(errors="replace") + "".join(lines[first + 1:last])
                + lines[last].encode()[:node.end_col_offset].decode(errors="replace"))

    return segment


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[list[tuple[frozenset[str] | None, frozenset[str], str]], tuple[tuple[str, str], ...]]:
    """:func:`_statements` of a module's text, and ``(name, text)`` of its top-level tests (``SyntaxError`` if it
    does not parse)."""
    tree = ast.parse(text)
    segment = _segmenter(text)
    tests = tuple((node.name, segment(node)) for node in tree.body
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.name.lower().startswith("test"))
    return [(None if d is None else frozenset(d), frozenset(u), t) for d, u, t in _statements(tree, segment)], tests


def _statements(tree: ast.Module, segment) -> list[tuple[set[str] | None, set[str], str]]:
    """``(names it defines or None for "always kept", names it uses, its text)`` for each top-level statement;
    an import is one item per name it binds. A name is used where it is read, is a parameter (a pytest fixture
    is asked for by its parameter's name) or is a string that could be one (``usefixtures("x")``)."""
    items: list[tuple[set[str] | None, set[str], str]] = []
    for node in tree.body:
        segment_text = segment(node)
        decorators = "".join(segment(d) for d in getattr(node, "decorator_list", []))
        used: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                used.add(n.id)
            elif isinstance(n, ast.arg):
                used.add(n.arg)
            elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
                used.add(n.value)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not any(a.name == "*" for a in node.names):
            module = getattr(node, "module", None) or ""
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                items.append(({bound}, set(), f"import {module} {'.' * getattr(node, 'level', 0)}{alias.name} "
                                             f"as {bound}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            always = node.name.startswith("pytest_") or "autouse" in decorators
            items.append((None if always else {node.name}, used, decorators + segment_text))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            simple = all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets)
            always = not simple or not names or names & _ALWAYS_NAMES or isinstance(node, ast.AugAssign)
            items.append((None if always else names, used, segment_text))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value,
                                                                                                str):
            continue  # a docstring runs nothing
        else:
            items.append((None, used, segment_text))
    return items


def name_slice(text: str, roots: set[str]) -> str:
    """The top-level statements of module ``text`` that ``roots`` reach by name (transitively), with every
    statement that defines no name; in source order. Over-inclusive on purpose: an unparsable text is whole."""
    try:
        items, _ = _parsed(text)
    except SyntaxError:
        return text
    needed = set(roots)
    for defined, used, _ in items:
        if defined is None:
            needed |= used
    kept: set[int] = set()
    while True:
        grown = {i for i, (defined, _, _) in enumerate(items) if i not in kept and defined and defined & needed}
        if not grown:
            break
        kept |= grown
        for i in grown:
            needed |= items[i][1]
    return "\n\0".join(segment for i, (defined, _, segment) in enumerate(items) if defined is None or i in kept)


def _tests_slice(text: str, function: str) -> str:
    """The public tests ``pytest -k <function>`` can select (every test whose text names the function) and the
    top-level code they reach."""
    try:
        _, tests = _parsed(text)
    except SyntaxError:
        return text
    return name_slice(text, {name for name, segment in tests if function in segment})


def _data_slice(path: Path, data: bytes, exercise: str) -> bytes:
    """A data file of the starter's module folder as the exercise's sweep reads it: its entry alone where the
    file is a JSON object keyed by exercise id (``_refused.json``), else the whole file."""
    if path.suffix == ".json":
        try:
            found = json.loads(data)
        except ValueError:
            return data
        if isinstance(found, dict) and found and all(key.count(".") == 1 for key in found):
            return json.dumps(found.get(exercise), sort_keys=True).encode()
    return data


def digests(find=mistakes, read=None) -> dict[str, str]:
    """Exercise id -> the SHA-256 of everything its sweep reads (the module docstring lists it); ``find``
    gives a learner file's mistakes, ``read`` a kit file's text (both planted by tests)."""
    read = read or (lambda path: path.read_bytes().decode("utf-8", "surrogateescape"))
    runtime = b"".join(p.name.encode() + b"\0" + read(p).encode("utf-8", "surrogateescape") + b"\0"
                       for p in sorted(STARTER_DIR.glob("*.py")))
    result = {}
    for stem in STEMS:
        folder = course.module_of(stem).folder
        reference = read(SOLUTIONS_DIR / folder / f"{stem}.py")
        stub = read(STARTER_DIR / folder / f"{stem}.py")
        tests = read(STARTER_DIR / folder / f"test_{stem}.py")
        others = [p for p in (SOLUTIONS_DIR / folder).glob("*.py") if p.stem != stem and p.stem not in STEMS]
        data = [p for p in (STARTER_DIR / folder).rglob("*") if p.is_file() and p.suffix not in (".py", ".md")
                and p.name != "_hints.json" and not any(part == "__pycache__" or part.startswith(".")
                                                        for part in p.relative_to(STARTER_DIR).parts)]
        given = [p for p in (STARTER_DIR / folder).glob("*.py") if p.stem not in STEMS and not
                 p.name.startswith("test_")]
        texts = {p: read(p) for p in sorted([*others, *given])}
        # another learner file of the module (its reference, copied beside the mistake): the definitions of it
        # that this file, its tests or the given modules name, and what they reach
        words = set(re.findall(r"[A-Za-z_]\w*", "\n".join([reference, tests, stub, *texts.values()])))
        for other in sorted((SOLUTIONS_DIR / folder).glob("*.py")):
            if other.stem != stem and other.stem in STEMS and other.stem in words:
                texts[other] = name_slice(read(other), words)
        shared = runtime + b"\0".join(p.name.encode() + b"\0" + text.encode("utf-8", "surrogateescape")
                                       for p, text in texts.items())
        found = find(stem)
        for exercise in exercises_in(DEFAULT_KIT.solution_path(stem)):
            function = exercise.split(".", 1)[1]
            own = sorted(m for m in found if m[0] == exercise)
            tails = [text[len(reference.rstrip("\n")):] if text.startswith(reference.rstrip("\n")) else text
                     for _, _, text in own]
            roots = {function} | {n.id for tail in tails for n in _names_in(tail)}
            digest = hashlib.sha256(shared)
            for part in (name_slice(reference, roots), name_slice(stub, {function}), _tests_slice(tests, function)):
                digest.update(b"\0\0" + part.encode())
            for path in sorted(data):
                digest.update(b"\0\0" + path.name.encode() + b"\0"
                              + _data_slice(path, read(path).encode("utf-8", "surrogateescape"), exercise))
            for (_, name, _), tail in zip(own, tails):
                digest.update(f"\0{name}\0{tail}".encode())
            result[exercise] = digest.hexdigest()
    return result


def _names_in(text: str) -> list[ast.Name]:
    try:
        return [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)]
    except SyntaxError:
        return []


def read_record(path: Path = RECORD) -> dict[str, str]:
    """The committed record (exercise id -> digest), empty when missing or unreadable."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def stale(record: dict[str, str], current: dict[str, str]) -> list[str]:
    """The exercises whose sweep the record does not vouch for (new or changed), sorted."""
    return sorted(exercise for exercise, digest in current.items() if record.get(exercise) != digest)


def write_record(current: dict[str, str], path: Path = RECORD) -> None:
    """Record ``current`` (every exercise's digest: call it only after their sweeps passed)."""
    path.write_text(json.dumps(current, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def sweep_changed(tmp_root: Path, record: dict[str, str], current: dict[str, str],
                  run=slipped) -> tuple[list[str], list[str]]:
    """Run the sweep for the exercises :func:`stale` names: (the mistakes that slipped, those exercises)."""
    changed = stale(record, current)
    missed: list[str] = []
    for stem in STEMS:
        chosen = [mistake for mistake in mistakes(stem) if mistake[0] in changed]
        if chosen:
            (tmp_root / stem).mkdir()
            missed += run(tmp_root / stem, stem, chosen)
    return missed, changed
