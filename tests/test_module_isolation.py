"""A test file that leaves a module under a learner's plain name (``module_9_reference``, ``grpo_toy``) in
``sys.modules`` does not hand it to the next file in its pytest-xdist worker: tests/conftest.py puts those names
back as collection left them after each file's last test (a walkthrough test's two-function module once made a
later file's ``import module_9_reference`` fail 38 tests, depending on which files shared a worker)."""

from __future__ import annotations

import sys
import types

import conftest


def test_the_learner_names_are_put_back_after_a_file(monkeypatch):
    assert {"module_9_reference", "module_8_training", "grpo_toy"} <= set(conftest._PLAIN_AT_START)
    stray = types.ModuleType("module_9_reference")
    monkeypatch.setitem(sys.modules, "module_9_reference", stray)  # monkeypatch puts both back after the test
    monkeypatch.setitem(sys.modules, "grpo_toy", types.ModuleType("grpo_toy"))
    changed = conftest._restore_plain_modules()
    assert {"module_9_reference", "grpo_toy"} <= set(changed)
    assert sys.modules.get("module_9_reference") is conftest._PLAIN_AT_START["module_9_reference"]
    assert sys.modules.get("module_9_reference") is not stray
