"""What collecting the tests costs every pytest-xdist worker: no test file that the fast tier collects imports a
heavy package at its top (tests/conftest.py, ``HEAVY_PACKAGES``), so a worker pays that import only when it runs
a test that needs it."""

from __future__ import annotations

import re

from conftest import HEAVY_AT_COLLECTION, HEAVY_PACKAGES, WHOLLY_SLOW, pytest_collectreport

from graders.paths import REPO_ROOT


def test_no_file_of_the_fast_tier_imports_a_heavy_package_at_collection():
    """A file marked slow as a whole is never imported by the fast tier (tests/conftest.py's
    ``pytest_ignore_collect``): it may import what it needs at its top. The fast tier is where this check
    counts: in the whole suite such a file may import a package before a fast file does, which then goes
    unrecorded."""
    offending = {name: packages for name, packages in HEAVY_AT_COLLECTION.items()
                 if not WHOLLY_SLOW.search((REPO_ROOT / "tests" / name).read_text(encoding="utf-8"))}
    assert not offending, (f"imported at collection by test files the fast tier collects: {offending}; import "
                           "these packages in a fixture or in the tests that use them (HEAVY_PACKAGES in "
                           "tests/conftest.py)")


def test_the_record_names_the_file_whose_collection_imported_the_package(monkeypatch):
    """The control: a package that appears while a file is collected is put down to that file, once."""
    import sys
    from types import SimpleNamespace

    record: dict[str, list[str]] = {}
    absent = "rl4llm_heavy_stand_in"  # a listed package that no run has imported, whatever ran before
    monkeypatch.setattr("conftest.HEAVY_AT_COLLECTION", record)
    monkeypatch.setattr("conftest.HEAVY_PACKAGES", (*HEAVY_PACKAGES, absent))
    monkeypatch.setitem(sys.modules, absent, object())
    pytest_collectreport(SimpleNamespace(nodeid="tests/test_heavy.py"))
    pytest_collectreport(SimpleNamespace(nodeid="tests/test_after.py"))
    pytest_collectreport(SimpleNamespace(nodeid="tests/test_heavy.py::test_one"))
    assert absent in record.get("test_heavy.py", [])
    assert "test_after.py" not in record and all(re.fullmatch(r"test_\w+\.py", name) for name in record)


def test_each_worker_and_what_it_starts_get_their_share_of_the_cores(monkeypatch):
    import os

    import torch
    from conftest import THREAD_VARIABLES, share_the_cores

    if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):  # this run's own worker got its share at start
        assert os.environ.get("OMP_NUM_THREADS") and torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])
    saved = torch.get_num_threads()
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    try:
        assert share_the_cores(2) == 2 and torch.get_num_threads() == 2
        assert all(os.environ[name] == "2" for name in THREAD_VARIABLES)
        monkeypatch.setenv("OMP_NUM_THREADS", "3")  # what the caller set is kept
        share_the_cores(4)
        assert os.environ["OMP_NUM_THREADS"] == "3" and torch.get_num_threads() == 3
        assert share_the_cores(8) == 1  # never fewer than one
    finally:
        torch.set_num_threads(saved)
