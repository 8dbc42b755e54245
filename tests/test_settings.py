"""The kit's ``RL4LLM_*`` environment variables: each declared once in ``graders/settings.py``, read through it.

- every ``RL4LLM_*`` name written anywhere in the kit (code, shell scripts, pages, notebooks) is declared;
- no Python file but ``graders/settings.py`` (and its generated copy ``starter/_kit_settings.py``)
  reads ``os.environ`` / ``os.getenv`` for an ``RL4LLM_*`` name;
- every declared variable is read somewhere (through ``settings.get``/``raw``, or by a shell script);
- ``docs/settings.md`` holds ``settings.markdown_table()`` as it is now;
- each kind reads its value as the code before it did (``"1"`` switches, the truthy flag, the language code).
"""

from __future__ import annotations

import ast
import os
import re
from functools import cache
from pathlib import Path

import pytest

from graders import settings
from graders.paths import REPO_ROOT

NAME = re.compile(r"RL4LLM_[A-Z0-9_]*[A-Z0-9]")
SUFFIXES = (".py", ".sh", ".md", ".ipynb")
SKIP_DIRS = {".venv", ".git", "__pycache__", "node_modules", ".pytest_cache", ".hypothesis"}
SETTINGS_FILES = {"graders/settings.py", "starter/_kit_settings.py"}
SETTINGS_NAMES = {"settings", "kit_settings", "_kit_settings"}  # how the kit imports graders/settings.py
# readers still reading os.environ themselves, each with who converts it (the test fails once one is done,
# so the entry is removed then)
PENDING = {"starter/_kit_say.py": "C's graders/text.py conversion (the public tests' say reads RL4LLM_LANG)"}
DOCS = REPO_ROOT / "docs" / "settings.md"
BEGIN, END = "<!-- generated:settings:begin -->", "<!-- generated:settings:end -->"


def _files(suffixes=SUFFIXES) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(REPO_ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        found += [Path(folder) / name for name in names if name.endswith(suffixes)]
    return sorted(found)


def _rel(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "RL4LLM_..."`` constants (``HIDE_ENV``), so reads through them are seen too."""
    return {node.targets[0].id: node.value.value for node in tree.body
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def _value(node: ast.AST, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` or a bare ``environ`` (a function's own mapping of the environment)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (isinstance(node, ast.Name)
                                                                           and node.id == "environ")


def _environ_reads(tree: ast.Module) -> set[str]:
    """``RL4LLM_*`` names read straight from the environment: ``environ.get(...)``, ``environ[...]``,
    ``os.getenv(...)``, ``... in environ``."""
    constants, names = _constants(tree), set()
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value)) or \
                    (isinstance(func, ast.Attribute) and func.attr == "getenv") or \
                    (isinstance(func, ast.Name) and func.id == "getenv"):
                key = _value(node.args[0], constants)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            key = _value(node.slice, constants)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and _is_environ(node.comparators[0]):
            key = _value(node.left, constants)
        if key and key.startswith("RL4LLM_"):
            names.add(key)
    return names


def _settings_reads(tree: ast.Module) -> set[str]:
    """Names read through the settings module: ``settings.get("RL4LLM_...")``, ``settings.raw(...)``."""
    constants, names = _constants(tree), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "raw") and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in SETTINGS_NAMES:
            key = _value(node.args[0], constants)
            if key:
                names.add(key)
    return names


@cache  # read once for the tests that use them
def _python_reads() -> dict[str, tuple[set[str], set[str]]]:
    """``{file: (names read from the environment, names read through settings)}`` of every Python file but the
    settings module. Only the reads are kept, not the trees: a million AST nodes kept alive for the rest of the
    run made every later full garbage collection in this pytest worker about 0.5 s slower. A file whose text
    never spells ``RL4LLM_`` is not parsed: every name either scan keeps is a literal or a constant of the same
    file, so such a file reads no setting (parsing every file took about 4 s; most of them spell none)."""
    reads = {}
    for path in _files((".py",)):
        if _rel(path) not in SETTINGS_FILES:
            text = path.read_text(encoding="utf-8")
            if "RL4LLM_" not in text:
                reads[_rel(path)] = (set(), set())
                continue
            tree = ast.parse(text, filename=str(path))
            reads[_rel(path)] = (_environ_reads(tree), _settings_reads(tree))
    return reads


def test_every_rl4llm_name_in_the_kit_is_declared():
    undeclared: dict[str, set[str]] = {}
    for path in _files():
        if path == Path(__file__):
            continue  # this file's own examples of undeclared names
        for name in set(NAME.findall(path.read_text(encoding="utf-8", errors="replace"))):
            if name not in settings.BY_NAME:
                undeclared.setdefault(name, set()).add(_rel(path))
    assert not undeclared, f"declare these in graders/settings.py: {undeclared}"


def test_only_the_settings_module_reads_the_environment_for_them():
    readers = {rel: sorted(names) for rel, (names, _) in _python_reads().items() if names}
    still_pending = {rel for rel in PENDING if rel in readers}
    assert still_pending == set(PENDING), f"converted at last: remove {set(PENDING) - still_pending} from PENDING"
    unexpected = {rel: names for rel, names in readers.items() if rel not in PENDING}
    assert not unexpected, f"read these through graders.settings (settings.get): {unexpected}"


def test_the_scan_sees_a_read_of_each_form():
    tree = ast.parse('HIDE = "RL4LLM_X"\nos.environ.get("RL4LLM_A")\nos.environ["RL4LLM_B"]\nos.getenv(HIDE)\n'
                     '"RL4LLM_C" in environ\nos.environ["RL4LLM_D"] = "1"\n')
    assert _environ_reads(tree) == {"RL4LLM_A", "RL4LLM_B", "RL4LLM_X", "RL4LLM_C"}


def test_every_declared_variable_is_read_somewhere():
    read = set().union(*(names for _, names in _python_reads().values()))
    for path in _files((".sh", ".py")):  # a shell script, standalone or a Python string (run_autograder)
        read |= set(re.findall(r"\$\{?(RL4LLM_[A-Z0-9_]*[A-Z0-9])", path.read_text(encoding="utf-8")))
    unread = [s.name for s in settings.DECLARED if s.name not in read]
    assert not unread, f"declared but read nowhere (remove the declaration, or read it through settings): {unread}"


def test_each_declaration_is_complete():
    assert len(settings.BY_NAME) == len(settings.DECLARED)
    for s in settings.DECLARED:
        assert NAME.fullmatch(s.name) and s.kind in settings.KINDS and s.help and s.reader, s
        assert "|" not in s.help + s.reader, f"{s.name}: a `|` breaks the Markdown table"
    assert settings.SANDBOX_SWITCHES == ("RL4LLM_NO_NAMESPACES", "RL4LLM_NO_LANDLOCK", "RL4LLM_NO_SECCOMP",
                                         "RL4LLM_NO_CLOSED_ROOT", "RL4LLM_NO_CGROUPS", "RL4LLM_NO_CPU_BUDGET",
                                         "RL4LLM_NO_BWRAP")


def _generated_block(text: str) -> str:
    assert text.count(BEGIN) == 1 and text.count(END) == 1, f"{DOCS}: one {BEGIN} ... {END} block"
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def test_the_docs_table_is_fresh():
    from graders.build.docs import stale_blocks
    assert _generated_block(DOCS.read_text(encoding="utf-8")) == settings.markdown_table(), \
        "docs/settings.md is stale: run `rl4llm build` (it writes settings.markdown_table() between the markers)"
    assert stale_blocks(DOCS) == [], "the build's docs writer sees docs/settings.md as stale: run `rl4llm build`"


def test_the_starter_copy_is_the_module_verbatim():
    copy = (REPO_ROOT / "starter" / "_kit_settings.py").read_text(encoding="utf-8")
    assert copy.endswith((REPO_ROOT / "graders" / "settings.py").read_text(encoding="utf-8")), "run `rl4llm build`"
    assert "graders" not in "\n".join(line for line in copy.splitlines() if line.startswith(("import", "from")))


@pytest.mark.parametrize("name, value, expected", [
    ("RL4LLM_NO_SECCOMP", None, False), ("RL4LLM_NO_SECCOMP", "1", True), ("RL4LLM_NO_SECCOMP", "true", False),
    ("RL4LLM_NO_SECCOMP", " 1", False),  # a switch is on only when it is exactly "1", as the sandbox always read it
    ("RL4LLM_HIDE_HIDDEN_INPUTS", " Yes ", True), ("RL4LLM_HIDE_HIDDEN_INPUTS", "on", True),
    ("RL4LLM_HIDE_HIDDEN_INPUTS", "0", False), ("RL4LLM_HIDE_HIDDEN_INPUTS", None, False),
    ("RL4LLM_LANG", "ru_RU.UTF-8", "ru"), ("RL4LLM_LANG", " EN", "en"), ("RL4LLM_LANG", None, ""),
    ("RL4LLM_CACHE", "off", "off"), ("RL4LLM_CACHE", None, ""),
    ("RL4LLM_AUTOGRADER_ROOT", None, Path("/autograder")), ("RL4LLM_AUTOGRADER_ROOT", "/x", Path("/x")),
    ("RL4LLM_IMPL_ROOT", None, None), ("RL4LLM_IMPL_ROOT", "", None), ("RL4LLM_IMPL_ROOT", "/s", Path("/s")),
    ("RL4LLM_TEST_JOBS", None, 0), ("RL4LLM_TEST_JOBS", "3", 3), ("RL4LLM_QWEN3_LAYERS", None, 1),
])
def test_each_kind_reads_as_the_kit_always_read_it(name, value, expected):
    environ = {} if value is None else {name: value}
    assert settings.get(name, environ) == expected
    assert settings.raw(name, environ) == value


def test_values_are_read_when_asked(monkeypatch):
    monkeypatch.setenv("RL4LLM_NO_LANDLOCK", "1")
    assert settings.get("RL4LLM_NO_LANDLOCK") is True
    monkeypatch.delenv("RL4LLM_NO_LANDLOCK")
    assert settings.get("RL4LLM_NO_LANDLOCK") is False
    with pytest.raises(KeyError, match="not declared"):
        settings.get("RL4LLM_NO_SUCH_THING")
