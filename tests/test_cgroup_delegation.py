"""Worker limits from the service manager's delegation: the grader in a delegated cgroup v2 scope
(``systemd-run --user --scope -p Delegate=yes rl4llm grade ...``).

Such a scope has the controllers (``cgroup.controllers``) but passes none to its children, and cannot while a
process lives in it (cgroup v2's "no internal processes" rule). The grader moves itself and what it started
into a leaf (``rl4llm-self-<pid>``), passes ``memory``, ``pids`` and ``cpu`` on, and makes its workers'
cgroups beside the leaf. This machine has cgroup v1 and no systemd, so the tree here is a folder laid out as
the kernel lays out a scope; the kernel's own refusals are what the slow sweep test meets on a real tree.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graders.engine.sandbox import cgroups

SCOPE = "/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"


def _scope(tmp_path: Path, monkeypatch, *, controllers="cpu io memory pids", passed="", procs=()) -> Path:
    root = tmp_path / "cgroup"
    scope = root / SCOPE.lstrip("/")
    scope.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu io memory pids")
    (scope / "cgroup.controllers").write_text(controllers)
    (scope / "cgroup.subtree_control").write_text(passed)
    (scope / "cgroup.procs").write_text("\n".join([str(os.getpid()), *procs]))
    monkeypatch.setattr(cgroups, "ROOT", root)
    monkeypatch.setattr(cgroups, "_own_path", lambda controller: SCOPE if controller == "" else None)
    monkeypatch.setattr(cgroups, "_descendants", lambda pid: [])
    return scope


def test_in_a_delegated_scope_the_grader_moves_into_a_leaf_and_passes_the_controllers_on(tmp_path, monkeypatch):
    scope = _scope(tmp_path, monkeypatch)
    manager = cgroups.Manager()
    assert manager.works and manager.version == 2, manager.reason
    leaf = scope / f"rl4llm-self-{os.getpid()}"
    assert (leaf / "cgroup.procs").read_text() == str(os.getpid())  # out of the scope's own processes first
    assert set((scope / "cgroup.subtree_control").read_text().split()) == {"+cpu", "+memory", "+pids"}
    assert manager.bases == {"": scope / f"rl4llm-{os.getpid()}"}
    group = manager.create(cgroups.Limits(memory_bytes=1 << 30, tasks=64))  # a worker's limits, beside the leaf
    assert (scope / f"rl4llm-{os.getpid()}" / "w1" / "memory.max").read_text() == str(1 << 30)
    assert (scope / f"rl4llm-{os.getpid()}" / "w1" / "pids.max").read_text() == "64"
    group.folders.clear()  # (a folder of plain files: nothing for the kernel to kill)


def test_a_cgroup_that_already_passes_them_on_is_used_as_it_is(tmp_path, monkeypatch):
    scope = _scope(tmp_path, monkeypatch, passed="cpu memory pids")
    manager = cgroups.Manager()
    assert manager.works and not (scope / f"rl4llm-self-{os.getpid()}").exists()


def test_a_scope_without_the_controllers_is_no_delegation_and_says_which(tmp_path, monkeypatch):
    _scope(tmp_path, monkeypatch, controllers="cpu io")
    manager = cgroups.Manager()
    assert not manager.works
    assert "does not delegate memory, pids" in manager.reason and "systemd-run --user --scope" in manager.reason


def test_a_cgroup_holding_another_process_is_not_rearranged(tmp_path, monkeypatch):
    scope = _scope(tmp_path, monkeypatch, procs=("1",))
    manager = cgroups.Manager()
    assert not manager.works and "it holds other processes: 1" in manager.reason
    assert not (scope / f"rl4llm-self-{os.getpid()}").exists()
    assert (scope / "cgroup.subtree_control").read_text() == ""


def test_the_sweep_removes_a_dead_graders_leaf_and_groups_and_keeps_the_living(tmp_path, monkeypatch):
    scope = _scope(tmp_path, monkeypatch)
    manager = cgroups.Manager()
    dead = 2 ** 22 + 17  # above any pid_max: no such process
    for name in (f"rl4llm-self-{dead}", f"rl4llm-{dead}", "rl4llm-self-x", "other"):
        (scope / name).mkdir()
    monkeypatch.setattr(cgroups.time, "sleep", lambda seconds: None)
    removed = manager.sweep_stale()
    assert {path.name for path in removed} == {f"rl4llm-self-{dead}", f"rl4llm-{dead}"}
    assert {path.name for path in scope.iterdir() if path.is_dir()} == {
        f"rl4llm-self-{os.getpid()}", f"rl4llm-{os.getpid()}", "rl4llm-self-x", "other"}


@pytest.fixture(autouse=True)
def _no_manager_left(monkeypatch):
    monkeypatch.setattr(cgroups.Manager, "close", lambda self: None)  # its folders are the test's tmp_path
