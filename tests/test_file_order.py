"""How the README's suite shares the machine under pytest-xdist (tests/conftest.py): the order the workers get the
test files in (the files that took longest first, from tests/file_seconds.json, so that the two workers end
together), and the torch threads each worker gets (its share of the cores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import (FILE_SECONDS, THREAD_VARIABLES, THREADS_PER_WORKER, _share_the_cores,
                      pytest_collection_modifyitems)

TESTS = Path(__file__).resolve().parent


def test_the_record_names_only_test_files_that_exist():
    recorded = json.loads(FILE_SECONDS.read_text(encoding="utf-8"))
    stale = sorted(name for name in recorded if not (TESTS / name).is_file())
    assert not stale, (f"tests/file_seconds.json names files that are gone: {stale}; rerun the whole suite with "
                       "--update-file-seconds (or delete the names)")
    assert all(isinstance(value, (int, float)) and value >= 0 for value in recorded.values())


def test_files_go_longest_first_and_keep_their_own_order(monkeypatch, tmp_path):
    record = tmp_path / "file_seconds.json"
    record.write_text(json.dumps({"test_b.py": 50.0, "test_c.py": 300.0}), encoding="utf-8")
    monkeypatch.setattr("conftest.FILE_SECONDS", record)
    items = [SimpleNamespace(path=Path(f"tests/{name}"), index=index) for index, name in
             enumerate(["test_a.py", "test_b.py", "test_b.py", "test_new.py", "test_c.py", "test_c.py"])]
    pytest_collection_modifyitems(None, None, items)
    assert [(item.path.name, item.index) for item in items] == [
        ("test_c.py", 4), ("test_c.py", 5), ("test_b.py", 1), ("test_b.py", 2), ("test_a.py", 0), ("test_new.py", 3)]


class _Torch:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def set_num_threads(self, count: int) -> None:
        self.threads.append(count)


@pytest.mark.parametrize("cpus, workers, share", [(2, "2", 1), (8, "2", 4), (2, "16", 1), (1, "1", 1)])
def test_each_worker_gets_its_share_of_the_cores(monkeypatch, cpus, workers, share):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", workers)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    torch = _Torch()
    monkeypatch.setitem(sys.modules, "torch", torch)  # imported already: its pool is resized too
    assert _share_the_cores() == share
    assert [os.environ[name] for name in THREAD_VARIABLES] == [str(share)] * 3 and torch.threads == [share]


@pytest.mark.parametrize("given", [{"OMP_NUM_THREADS": "3"}, {"PYTEST_XDIST_WORKER_COUNT": ""}])
def test_a_users_thread_count_and_a_run_without_workers_are_left_alone(monkeypatch, given):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    torch = _Torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert _share_the_cores() is None and torch.threads == []
    assert {name: os.environ.get(name) for name in THREAD_VARIABLES} == {
        name: given.get(name) for name in THREAD_VARIABLES}


def test_this_worker_and_the_processes_it_starts_use_the_share():
    if THREADS_PER_WORKER is None:
        pytest.skip("not a pytest-xdist worker, or OMP_NUM_THREADS was given: nothing was shared")
    import torch

    child = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                           capture_output=True, text=True, check=True, timeout=120)
    assert torch.get_num_threads() == THREADS_PER_WORKER == int(child.stdout)
