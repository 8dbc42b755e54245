"""The kit keeps its own bytecode (``Kit.keep_bytecode``), as a package install does, before a batch fingerprints it:
the batch's processes (fork servers, the notebook reader, the layers' probe) run with ``PYTHONDONTWRITEBYTECODE``
and read it instead of compiling the kit's modules each (about 1 s of CPU a batch, ``docs/timings.md``). Where the
user asked for no bytecode, or a folder cannot be written, nothing is written and nothing fails."""

from __future__ import annotations

import os
import sys

import pytest

from graders.engine.judging import kit as kit_module
from graders.engine.judging.kit import Kit


@pytest.fixture
def tiny_kit(tmp_path, monkeypatch):
    """A kit of three folders in ``tmp_path`` (the engine's among them), bytecode written into the folders
    themselves (no prefix: where the batch's processes look for it)."""
    folders = {name: tmp_path / name for name in ("graders", "solutions", "starter")}
    for name, folder in folders.items():
        folder.mkdir()
        (folder / f"{name}_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.setattr(kit_module, "GRADERS_DIR", folders["graders"])
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return Kit(solutions_dir=folders["solutions"], starter_dir=folders["starter"], root=tmp_path), folders


def _caches(folders) -> dict[str, list[str]]:
    return {name: sorted(p.name for p in (folder / "__pycache__").glob("*.pyc")) if (folder / "__pycache__").is_dir()
            else [] for name, folder in folders.items()}


def test_missing_bytecode_is_written_once_and_then_left_alone(tiny_kit):
    kit, folders = tiny_kit
    assert kit.keep_bytecode()
    found = _caches(folders)
    assert all(len(files) == 1 and files[0].startswith(f"{name}_module.") for name, files in found.items()), found
    stamps = {p: p.stat().st_mtime_ns for folder in folders.values() for p in (folder / "__pycache__").iterdir()}
    assert kit.keep_bytecode()
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # up to date: nothing rewritten


def test_a_changed_source_gets_fresh_bytecode(tiny_kit):
    kit, folders = tiny_kit
    kit.keep_bytecode()
    source = folders["solutions"] / "solutions_module.py"
    (cache,) = (folders["solutions"] / "__pycache__").iterdir()
    before = cache.read_bytes()
    source.write_text("VALUE = 2  # changed, longer\n", encoding="utf-8")
    later = source.stat().st_mtime + 10  # compileall compares the whole seconds of the source's time
    os.utime(source, (later, later))
    kit.keep_bytecode()
    assert cache.read_bytes() != before


def test_no_bytecode_where_the_user_asked_for_none(tiny_kit, monkeypatch):
    kit, folders = tiny_kit
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE=1 or python -B
    assert not kit.keep_bytecode()
    assert _caches(folders) == {name: [] for name in folders}


def test_no_bytecode_where_it_goes_to_a_prefix_of_its_own(tiny_kit, monkeypatch, tmp_path):
    """``PYTHONPYCACHEPREFIX`` (the suite's own processes): the batch's children would not read it there, and a
    kit copied to a temporary folder would leave its bytecode in the prefix for good."""
    kit, folders = tiny_kit
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    assert not kit.keep_bytecode()
    assert _caches(folders) == {name: [] for name in folders} and not (tmp_path / "prefix").exists()


def test_asked_whatever_the_environment_it_writes_into_the_kit_and_leaves_the_prefix_as_it_was(tiny_kit,
                                                                                             monkeypatch, tmp_path):
    """The suite's controller and the benchmark (``PYTHONDONTWRITEBYTECODE`` and a prefix of their own): into the
    kit's folders, where the batch's processes read it."""
    kit, folders = tiny_kit
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    assert kit.keep_bytecode(whatever_the_environment=True)
    assert all(len(files) == 1 for files in _caches(folders).values())
    assert sys.pycache_prefix == str(tmp_path / "prefix") and not (tmp_path / "prefix").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes a read-only folder")
def test_a_read_only_folder_is_skipped_without_a_word(tiny_kit):
    kit, folders = tiny_kit
    os.chmod(folders["starter"], 0o555)
    try:
        assert kit.keep_bytecode()
    finally:
        os.chmod(folders["starter"], 0o755)
    found = _caches(folders)
    assert found["starter"] == [] and found["solutions"] and found["graders"]


def test_a_read_only_folder_is_skipped_even_for_root(tiny_kit, monkeypatch):
    """As root a folder's mode does not stop a write: the check is os.access, planted to say no."""
    kit, folders = tiny_kit
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(folders["starter"])
                        else real(path, mode))
    assert kit.keep_bytecode()
    found = _caches(folders)
    assert found["starter"] == [] and found["solutions"] and found["graders"]


def test_a_batch_keeps_the_bytecode_before_it_grades(monkeypatch, tmp_path):
    """Before ``_grade_paths``, where the tripwire fingerprints the kit and the batch's processes start."""
    from graders.engine.routes import batch

    order: list[str] = []
    monkeypatch.setattr(Kit, "keep_bytecode", lambda self: order.append("keep") or True)
    monkeypatch.setattr(batch, "_grade_paths", lambda *a, **k: order.append(f"batch, writing: {not sys.dont_write_bytecode}"))
    batch.grade_paths([tmp_path], tmp_path / "out")
    assert order == ["keep", "batch, writing: False"]
