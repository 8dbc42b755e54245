"""The kit's import structure: no cycles under graders/, between modules or between packages, no package reading
another's private names, and grading never imports the build tool.

The graph is static: every ``import`` / ``from ... import`` of every module
under ``graders/`` (function-local ones included, and
``importlib.import_module("<literal>")``), resolved to the modules under
``graders/`` it names -- ``from graders.engine import codec`` is an edge to
``graders.engine.values.codec`` when that is a module, else to ``graders.engine``.
Importing a module also runs its packages' ``__init__``, but a package that
imports its own submodules (``graders.build`` its stages) is the ordinary
layout, not a cycle, so those implicit edges are left out.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from functools import cache

import pytest

from graders.paths import REPO_ROOT

GRADERS_DIR = REPO_ROOT / "graders"
GRADING_MODULES = ("graders.engine.routes.batch", "graders.engine.routes.grading", "graders.engine.nbgrader.scoring", "graders.cli")


def _module_name(path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, object]:
    """Every module under graders/ (catalogue entries, examples and seeds are files too) -> its path."""
    return {_module_name(path): path for path in sorted(GRADERS_DIR.rglob("*.py")) if "__pycache__" not in path.parts}


def _imported_names(path, name: str) -> set[str]:
    """Dotted names a module imports, as written (relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found |= {f"{base}.{alias.name}" for alias in node.names}
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the modules under graders/ it imports (a copy of the graph read once per process)."""
    return {name: set(targets) for name, targets in _import_graph().items()}


@cache  # every module under graders/ parsed once for the tests that need the graph (about 1.2 s each time)
def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imported_names(path, name):
            if imported in modules:
                targets.add(imported)
            elif imported.rpartition(".")[0] in modules:  # ``from package import attribute``
                targets.add(imported.rpartition(".")[0])
        graph[name] = targets - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as [a, b, ..., a], or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def test_the_graph_sees_function_local_and_relative_imports():
    graph = import_graph()
    assert "graders.build" in graph["graders.cli"]  # a function-local import
    assert "graders.checks" in graph["graders.checks.module_9_reference.verifier"]  # ``from graders.checks import Case``
    assert "graders.engine.values.codec" in graph["graders.engine.values.compare"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles_under_graders():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


DATA_MODULES = ("graders.misconceptions.", "graders.examples", "graders.seeds")  # entries and files, not code


def package_of(module: str) -> str:
    """The package a module counts in for the layering rules: each subpackage of ``graders.engine``
    (``graders.engine.values``, ...), each other subpackage of ``graders`` (``graders.checks``, ...), and each
    top-level module on its own (``graders.course``)."""
    parts = module.split(".")
    return ".".join(parts[:3] if len(parts) >= 3 and parts[1] == "engine" else parts[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between packages (:func:`package_of`): an edge where a module of one imports a module of
    another."""
    found: dict[str, set[str]] = {}
    for module, targets in graph.items():
        found.setdefault(package_of(module), set()).update(package_of(target) for target in targets)
    return {package: targets - {package} for package, targets in found.items()}


def private_reaches(modules: dict[str, object]) -> list[str]:
    """Every place a module uses another package's private name (``_name``, dunders aside): imported by name
    (``from graders.engine.values.codec import _x``) or read from a module it imported (``codec._x``)."""
    found = []
    for name, path in modules.items():
        if name.startswith(DATA_MODULES):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases: dict[str, str] = {}  # a local name -> the kit module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level and node.module.startswith("graders"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in modules:
                        aliases[alias.asname or alias.name] = full
                    elif (alias.name.startswith("_") and not alias.name.startswith("__")
                          and package_of(node.module) != package_of(name)):
                        found.append(f"{name}: from {node.module} import {alias.name}")
            elif isinstance(node, ast.Import):
                aliases |= {alias.asname: alias.name for alias in node.names if alias.asname and alias.name in modules}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")
                    and package_of(aliases[node.value.id]) != package_of(name)):
                found.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    return sorted(set(found))


def test_no_import_loop_between_packages():
    graph = package_graph(import_graph())
    assert graph["graders.engine.routes"] >= {"graders.engine.worker", "graders.engine.judging"}  # it sees them
    cycle = find_cycle(graph)
    assert cycle is None, "packages import each other: " + " -> ".join(cycle)
    # the rule can fail: a checks module that asked the course for something would close a loop
    assert find_cycle(package_graph({**import_graph(), "graders.course": {"graders.checks"}})) is not None


def test_no_package_reaches_into_another_packages_private_names(tmp_path):
    assert private_reaches(_modules()) == []
    # the rule can fail: both forms are found, within a package neither is
    (tmp_path / "a.py").write_text("from graders.engine.values.codec import _stack\n"
                                   "from graders.engine.values import codec\ncodec._x\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from graders.engine.values.codec import _stack\n", encoding="utf-8")
    found = private_reaches({"graders.checks.a": tmp_path / "a.py", "graders.engine.values.b": tmp_path / "b.py",
                             "graders.engine.values.codec": tmp_path / "b.py"})
    assert found == ["graders.checks.a: from graders.engine.values.codec import _stack",
                     "graders.checks.a: graders.engine.values.codec._x"], found


def test_the_engine_and_the_checks_never_reach_the_build_statically():
    graph = import_graph()
    for name in graph:
        if name.startswith(("graders.engine", "graders.checks", "graders.course", "graders.fences")):
            reached = sorted(m for m in _reachable(graph, name) if m.startswith("graders.build"))
            assert not reached, f"{name} reaches {reached}"


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_grading_never_imports_the_build_tool():
    code = ("import importlib, json, sys\n"
            f"for name in {GRADING_MODULES!r}:\n"
            "    importlib.import_module(name)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m == 'graders.build' or m.startswith('graders.build.'))))\n")
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == []


# ----------------------------------------------------------------------------- the learner's side
def learner_side_graph(folder) -> dict[str, set[str]]:
    """A module folder's given modules and learner files (by plain name: ``from grpo_toy import ...``) -> the
    ones of the same folder each imports, ``if TYPE_CHECKING:`` imports included."""
    stems = {path.stem for path in folder.glob("*.py") if path.stem != "__init__" and not path.stem.startswith("test_")}
    graph = {}
    for stem in stems:
        names = _imported_names(folder / f"{stem}.py", stem)
        graph[stem] = {name.split(".")[0] for name in names if name.split(".")[0] in stems} - {stem}
    return graph


def test_no_import_cycles_among_the_given_modules_and_learner_files():
    from graders.paths import SOLUTIONS_DIR, STARTER_DIR

    folders = sorted(f for root in (SOLUTIONS_DIR, STARTER_DIR) for f in root.glob("module_*") if f.is_dir())
    assert folders
    assert "arithmetic_toy" in learner_side_graph(SOLUTIONS_DIR / "module_09")["grpo_toy"]  # the graph sees them
    for folder in folders:
        cycle = find_cycle(learner_side_graph(folder))
        assert cycle is None, f"{folder.relative_to(REPO_ROOT)}: import cycle " + " -> ".join(cycle)


def _unit(module: str) -> str | None:
    """The package a module counts for: a top-level module or package of ``graders``, or an engine package."""
    parts = module.split(".")
    if parts[0] != "graders" or len(parts) < 2:
        return None
    return ".".join(parts[:3] if parts[1] == "engine" and len(parts) >= 3 else parts[:2])


def test_no_loop_between_packages():
    """Issue 54, point 5: the packages of ``graders`` (the engine's by job) import one another without a loop,
    function-local imports included (the registry asking the checks for points closed one: course -> checks ->
    engine.values -> course)."""
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        source = _unit(module)
        for target in targets:
            unit = _unit(target)
            if source and unit and unit != source:
                graph.setdefault(source, set()).add(unit)
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def loop_from(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state:
                found = loop_from(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = loop_from(node, [node])
            assert found is None, f"a loop between packages: {' -> '.join(found)}"
