"""The engine is laid out by job, and its imports point one way (issue 30, point 2).

Every ``import`` of an engine module, at any depth of a function, counts: an arrow that points the
wrong way fails here with the file and the line. The layers, lowest first:

- ``values``   imports no other engine package;
- ``sandbox``  imports only ``values`` (and the C library, :mod:`graders.engine.sandbox.libc`);
- ``intake``   imports only ``values``;
- ``judging``  imports ``values`` only: it never imports the workers;
- ``worker``   imports ``values``, ``sandbox`` and the call code it shares with judging
  (:mod:`graders.engine.judging.calls`, :mod:`graders.engine.judging.answers`, and what they import);
- ``outputs``  imports ``values``, ``judging``, ``intake``;
- ``routes`` and ``nbgrader`` may import every package; no other package imports them.

``graders.checks`` (the check-spec API) imports only ``values`` of the engine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[1] / "graders" / "engine"
PACKAGES = ("values", "sandbox", "intake", "judging", "worker", "outputs", "routes", "nbgrader")
ALLOWED = {
    "values": {"values"},
    "sandbox": {"values", "sandbox"},
    "intake": {"values", "intake"},
    "judging": {"values", "judging"},
    "worker": {"values", "sandbox", "worker", "judging.calls", "judging.answers", "judging.refcache"},
    "outputs": {"values", "judging", "intake", "outputs"},
    "routes": set(PACKAGES),
    "nbgrader": set(PACKAGES),
}
MAX_MODULES = 15


def engine_imports(path: Path) -> list[tuple[int, str]]:
    """(line, 'package[.module]') of every engine import in ``path``, function-level imports included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] if node.module != "graders.engine" else [f"graders.engine.{a.name}"
                                                                          for a in node.names]
            if node.module.count(".") == 2:  # from graders.engine.<package> import <module>, ...
                names = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["graders", "engine"] and len(parts) > 2 and parts[2] in PACKAGES:
                found.append((node.lineno, ".".join(parts[2:4])))
    return found


def allowed(layer: str, target: str) -> bool:
    rules = ALLOWED[layer]
    return target.split(".")[0] in rules or target in rules


def test_every_engine_module_lives_in_a_package_of_its_job():
    loose = sorted(p.name for p in ENGINE.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"engine modules outside a package: {loose}"
    assert sorted(p.name for p in ENGINE.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_point_down_the_layers(package):
    wrong = [f"{path.relative_to(ENGINE.parent.parent)}:{line} imports graders.engine.{target}"
             for path in sorted((ENGINE / package).glob("*.py"))
             for line, target in engine_imports(path) if not allowed(package, target)]
    assert not wrong, f"{package} may import only {sorted(ALLOWED[package])}:\n" + "\n".join(wrong)


def test_checks_import_only_the_values():
    checks = ENGINE.parent / "checks"
    wrong = [f"{path.relative_to(ENGINE.parent.parent)}:{line} imports graders.engine.{target}"
             for path in sorted(checks.rglob("*.py")) for line, target in engine_imports(path)
             if not target.startswith("values")]
    assert not wrong, "\n".join(wrong)


def test_no_folder_of_graders_holds_more_than_15_modules():
    """Code folders stay small enough to read. The catalogue's folders are data, one file per exercise as the
    recipe names them (``graders/misconceptions/<file stem>/<function>.py``), so they follow the course's size."""
    graders = ENGINE.parent
    folders = [graders, *(f for f in graders.rglob("*") if f.is_dir() and f.name != "__pycache__"
                          and f.parent != graders / "misconceptions")]
    crowded = {str(folder.relative_to(graders.parent)): n for folder in folders
               if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > MAX_MODULES}
    assert not crowded, crowded


def test_a_wrong_arrow_is_seen(tmp_path):
    """The control: an import from values into the workers, at function level, is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from graders.engine.worker import runner\n    from graders.engine import judging\n")
    targets = [target for _, target in engine_imports(bad)]
    assert targets == ["worker.runner", "judging"]
    assert not allowed("values", "worker.runner") and not allowed("judging", "worker.runner")
