"""The outer wall's probes are kept between batches while nothing they depend on changes (graders/engine/sandbox/wall.py).

Before a batch's fork servers can start, the grader learns the servers' import path (an interpreter
start) and whether that interpreter starts inside bubblewrap (another): about half a second on the
path to the first learner file. A success is kept in the grader's cache folder, stamped with what it
depends on, and read back only while every stamp holds:

- kept: a second probe starts nothing, and says the same;
- a changed stamp (a folder of the import path changed: a package installed) probes again;
- ``RL4LLM_CACHE=off`` keeps nothing; a failure is never kept; a damaged kept file is probed again,
  never trusted or raised;
- ``forget_kept_probes`` (what ``rl4llm doctor`` and a batch whose server would not start call) drops them.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from graders.engine.sandbox import wall

needs_wall = pytest.mark.skipif(not wall.wall_works()[0], reason=f"no outer wall here: {wall.wall_works()[1]}")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A cache folder of this test's own, the in-process memo cleared before and after; returns the
    pair a batch would probe, with a folder of this test's own on the import path (a stamp to change)."""
    monkeypatch.setenv("RL4LLM_CACHE", str(tmp_path / "cache"))
    extra = tmp_path / "site"
    extra.mkdir()
    python, pythonpath = wall.grading_interpreter(None, (str(extra),))
    wall._probe.cache_clear()
    wall._interpreter.cache_clear()
    yield python, pythonpath, extra
    wall._probe.cache_clear()
    wall._interpreter.cache_clear()


def _count_starts(monkeypatch) -> list:
    started: list = []
    real = subprocess.run

    def counted(*args, **kwargs):
        started.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(wall.subprocess, "run", counted)
    return started


def _forget_memo() -> None:
    wall._probe.cache_clear()
    wall._interpreter.cache_clear()


@needs_wall
def test_a_kept_probe_starts_nothing_and_says_the_same(fresh, monkeypatch, tmp_path):
    python, pythonpath, extra = fresh
    started = _count_starts(monkeypatch)
    first = wall.wall_works(python, pythonpath), wall._interpreter(python, pythonpath)
    assert first[0] == (True, "") and len(started) == 2  # the interpreter's probe, then bwrap's
    assert str(extra) in first[1]["path"]
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache" / "wall").iterdir()) == ["interpreter", "wall"]
    # the cache folder it made is its user's alone, as the reference store makes it (workers run as another user)
    assert {oct(p.stat().st_mode & 0o777) for p in (tmp_path / "cache", tmp_path / "cache" / "wall")} == {"0o700"}
    _forget_memo()  # as a new grading process would start
    again = wall.wall_works(python, pythonpath), wall._interpreter(python, pythonpath)
    assert again == first and len(started) == 2


@needs_wall
def test_a_changed_import_path_folder_probes_again(fresh, monkeypatch):
    python, pythonpath, extra = fresh
    started = _count_starts(monkeypatch)
    assert wall.wall_works(python, pythonpath) == (True, "") and len(started) == 2
    time.sleep(0.01)
    (extra / "newly_installed.pth").write_text("", encoding="utf-8")  # the folder's mtime moves
    _forget_memo()
    assert wall.wall_works(python, pythonpath) == (True, "") and len(started) == 4


@needs_wall
def test_nothing_is_kept_with_the_cache_off(fresh, monkeypatch, tmp_path):
    python, pythonpath, _ = fresh
    monkeypatch.setenv("RL4LLM_CACHE", "off")
    started = _count_starts(monkeypatch)
    for _ in range(2):
        _forget_memo()
        assert wall.wall_works(python, pythonpath) == (True, "")
    assert len(started) == 4 and not (tmp_path / "cache").exists()


def test_a_failure_is_never_kept(fresh, monkeypatch, tmp_path):
    python, pythonpath, _ = fresh
    monkeypatch.setattr(wall, "bwrap_path", lambda: "/bin/false")  # bwrap "runs" and fails
    ok, why = wall.wall_works(python, pythonpath)
    assert not ok and "could not start" in why
    kept = sorted(p.name.split("-")[0] for p in (tmp_path / "cache" / "wall").iterdir())
    assert kept == ["interpreter"]  # the interpreter's probe succeeded; the wall's did not, and is not kept


@needs_wall
@pytest.mark.parametrize("damage", ["not json", "[]", '{"stamps": [], "value": {"info": {"path": 3}}}',
                                    '{"stamps": [], "value": {"works": true}}'])
def test_a_damaged_kept_probe_is_probed_again(fresh, monkeypatch, tmp_path, damage):
    python, pythonpath, _ = fresh
    assert wall.wall_works(python, pythonpath) == (True, "")
    for path in (tmp_path / "cache" / "wall").iterdir():
        path.write_text(damage, encoding="utf-8")
    started = _count_starts(monkeypatch)
    _forget_memo()
    assert wall.wall_works(python, pythonpath) == (True, "") and len(started) == 2
    assert all(json.loads(p.read_text(encoding="utf-8"))["stamps"] for p in (tmp_path / "cache" / "wall").iterdir())


@needs_wall
def test_forgetting_drops_every_kept_probe(fresh, tmp_path):
    python, pythonpath, _ = fresh
    wall.wall_works(python, pythonpath)
    assert any((tmp_path / "cache" / "wall").iterdir())
    wall.forget_kept_probes()
    assert not any((tmp_path / "cache" / "wall").iterdir())


def test_the_doctor_probes_afresh(fresh, tmp_path, capsys):
    from graders.cli import main

    stale = tmp_path / "cache" / "wall" / "wall-stale.json"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"stamps": [], "value": {"works": true}}', encoding="utf-8")
    main(["doctor"])
    assert "outer_wall" in capsys.readouterr().out
    assert not stale.exists()
