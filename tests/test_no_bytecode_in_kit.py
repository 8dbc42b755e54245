"""The suite writes no bytecode into the kit: tests/conftest.py checks the kit's ``__pycache__`` folders after
every test, so a test whose child lacks the test environment fails by name, not a grading test beside it."""

from __future__ import annotations

import subprocess
import sys

from conftest import bytecode_state, bytecode_written, kit_package_folders


def _child_imports(root, env: dict) -> None:
    subprocess.run([sys.executable, "-c", "import graders.module"], cwd=root, env={"PATH": "/usr/bin:/bin", **env},
                   check=True, timeout=60)


def test_a_child_without_the_test_environment_is_caught_and_one_with_it_is_not(tmp_path):
    package = tmp_path / "graders"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "module.py").write_text("VALUE = 1\n")
    folders = kit_package_folders(tmp_path)
    assert folders == [package]
    before = bytecode_state(folders)
    _child_imports(tmp_path, {"PYTHONDONTWRITEBYTECODE": "1"})
    assert bytecode_written(before, bytecode_state(folders)) == []
    _child_imports(tmp_path, {})  # control: the environment of its own that two tests gave their children
    assert bytecode_written(before, bytecode_state(folders)) == [str(package / "__pycache__")]
