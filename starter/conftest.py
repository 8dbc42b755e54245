"""Shared set-up for the learner tests in starter/module_08 and starter/module_09.

- Puts the implementation folders on ``sys.path`` so a test can simply
  ``import module_9_reference``. By default that is this starter folder (your
  work); the kit's own test suite sets ``RL4LLM_IMPL_ROOT`` to ``solutions/``
  to run the same tests against the reference.
- Turns a stub's ``NotImplementedError`` into one clear line instead of a
  traceback wall: "NOT IMPLEMENTED: module_9_reference.<function> ...".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

IMPL_ROOT = Path(os.environ.get("RL4LLM_IMPL_ROOT", Path(__file__).resolve().parent)).resolve()
for _module_dir in ("module_09", "module_08"):
    _path = str(IMPL_ROOT / _module_dir)
    if _path not in sys.path:
        sys.path.insert(0, _path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    excinfo = call.excinfo
    if report.failed and excinfo is not None and excinfo.errisinstance(NotImplementedError):
        report.longrepr = f"NOT IMPLEMENTED: {excinfo.value}"
