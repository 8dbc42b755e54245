"""The order pytest-xdist hands test files out in (tests/conftest.py): the files that took longest first, from
tests/file_seconds.json, so that the two workers of the README's suite end together."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from conftest import FILE_SECONDS, pytest_collection_modifyitems

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
