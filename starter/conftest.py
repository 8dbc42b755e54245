"""Shared set-up for the learner tests in starter/module_08 and starter/module_09.

- Puts the implementation folders on ``sys.path`` so a test can simply
  ``import module_9_reference``. By default that is this starter folder (your
  work); the kit's own test suite sets ``RL4LLM_IMPL_ROOT`` to ``solutions/``
  to run the same tests against the reference.
- Turns a stub's ``NotImplementedError`` into one clear line instead of a
  traceback wall: "NOT IMPLEMENTED: module_9_reference.<function> ...".
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path

import pytest

IMPL_ROOT = Path(os.environ.get("RL4LLM_IMPL_ROOT", Path(__file__).resolve().parent)).resolve()
IMPL_DIRS = [str(IMPL_ROOT / _module_dir) for _module_dir in ("module_09", "module_08")]
for _path in IMPL_DIRS:
    if _path not in sys.path:
        sys.path.insert(0, _path)


class _ImplementationFirst(importlib.abc.MetaPathFinder):
    """Find ``module_*`` files in IMPL_ROOT first: pytest prepends each test file's own folder
    (starter/module_0X) to sys.path, which would otherwise shadow RL4LLM_IMPL_ROOT."""

    def find_spec(self, name, path=None, target=None):
        if path is None and name.startswith("module_"):
            return importlib.machinery.PathFinder.find_spec(name, IMPL_DIRS)
        return None


sys.meta_path.insert(0, _ImplementationFirst())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    excinfo = call.excinfo
    if report.failed and excinfo is not None and excinfo.errisinstance(NotImplementedError):
        report.longrepr = f"NOT IMPLEMENTED: {excinfo.value}"
