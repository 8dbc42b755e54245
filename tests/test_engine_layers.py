"""The engine is laid out by job, and its imports point one way (issue 30, point 2).

Every import of an engine module counts, read as ``tests/test_imports.py`` reads them (at any depth of a
function, relative, or through ``importlib.import_module``): an arrow that points the wrong way fails here
with the module and its target. The layers, lowest first:

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

from functools import cache
from pathlib import Path

import re

import pytest
from test_imports import _imported_names, _modules

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


@cache  # read when a test first needs it, not at collection (where every pytest-xdist worker paid it)
def imports() -> dict[str, set[str]]:
    """module -> the dotted names it imports, as tests/test_imports.py reads them (function-level and relative
    imports, importlib.import_module of a literal name)."""
    return {name: _imported_names(path, name) for name, path in _modules().items()}


def engine_targets(imported: set[str]) -> set[str]:
    """'package[.module]' of every engine package or module among the dotted names a module imports."""
    found = set()
    for name in imported:
        parts = name.split(".")
        if parts[:2] == ["graders", "engine"] and len(parts) > 2 and parts[2] in PACKAGES:
            found.add(".".join(parts[2:4]))
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
    wrong = [f"{name} imports graders.engine.{target}" for name, imported in imports().items()
             if name.startswith(f"graders.engine.{package}.") or name == f"graders.engine.{package}"
             for target in sorted(engine_targets(imported)) if not allowed(package, target)]
    assert not wrong, f"{package} may import only {sorted(ALLOWED[package])}:\n" + "\n".join(wrong)


def test_checks_import_only_the_values():
    checks = ENGINE.parent / "checks"
    wrong = [f"{name} imports graders.engine.{target}" for name, imported in imports().items()
             if name.startswith("graders.checks") for target in sorted(engine_targets(imported))
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
    bad.write_text("def f():\n    from graders.engine.worker import runner\n    from graders.engine import judging\n"
                   "    importlib.import_module('graders.engine.outputs.feedback')\n")
    targets = sorted(engine_targets(_imported_names(bad, "graders.engine.values.bad")))
    assert targets == ["judging", "outputs.feedback", "worker.runner"]
    assert not allowed("values", "worker.runner") and not allowed("judging", "worker.runner")


def test_the_engines_map_names_its_packages_and_nothing_else():
    """``graders/engine/__init__.py``'s map lists every package of the engine, and no module of the flat layout
    the engine had before (issue 54, point 5: every map true)."""
    import graders.engine as engine

    listed = set(re.findall(r"``(\w+)/``", engine.__doc__))
    assert listed == set(PACKAGES), sorted(listed ^ set(PACKAGES))
    flat = set(re.findall(r"^- ``(\w+)``", engine.__doc__, re.MULTILINE))
    assert not flat, f"modules of the old flat layout in the map: {sorted(flat)}"
