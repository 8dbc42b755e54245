"""Reading a submission's notebooks costs CPU in proportion to what the learner sent (issue 51, point 4).

Round 4's notebook cost +20-25 s for a 28 KB submission: a zip of 27 KB holds 17 MB of one repeated cell
(``X = f'{a:{b}}...'``), and the notebook reader's child spent its whole 10 s of CPU on it (the batch's
wall: +21 s). Per byte of notebook, the reading is linear (the course's notebook: 1 us a byte; the costliest
construct found, nested f-string format specs, 20 us), so what it may cost is set by what the notebooks hold
*compressed*: a floor and 10 us a compressed byte (:func:`graders.engine.intake.notebook_reader.cpu_budget`),
armed in the child before it parses a byte. The course's own notebooks read in full inside theirs.
"""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from pathlib import Path

import pytest

from graders.engine.intake import notebook_reader
from graders.engine.intake.notebook_reader import CPU_SECONDS, FLOOR_SECONDS, Reduced, cpu_budget, reduce_notebooks
from graders.engine.intake.submission import discover
from graders.engine.judging.kit import DEFAULT_KIT
from graders.paths import REPO_ROOT

STEM = "module_9_reference"
REFERENCE = DEFAULT_KIT.solution_path(STEM).read_bytes()
STEMS = {STEM: ["group_relative_advantages"], "module_9_training": ["g"]}
COURSE = sorted((REPO_ROOT / "assignments" / "source").glob("module_0?/module_*.ipynb"))


def _notebook(cells: list[str]) -> bytes:
    return json.dumps({"cells": [{"cell_type": "code", "source": source} for source in cells]}).encode()


def _round_4() -> bytes:
    """17 MB of notebook that a zip packs into 27 KB: 1,200 cells of 2,000 nested format specs each."""
    return _notebook(["X = f'" + "{a:{b}}" * 2000 + "'"] * 1200)


def _zip(path: Path, members) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in members:
            archive.writestr(name, data)
    path.write_bytes(buffer.getvalue())
    return path


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def _fresh(monkeypatch) -> None:
    monkeypatch.setattr(notebook_reader, "_CACHE", {})  # each test pays for its own reading


# 28 KB notebooks of each shape the search for costly inputs tried (tiny cells, broken cells, one long line,
# deep JSON, many outputs, long assignments): each is read, or refused, within its own budget
SHAPES = {
    "tiny_cells": _notebook(["def f():pass"] * 600),
    "broken_cells": _notebook(["("] * 750),
    "one_long_cell": _notebook(["x=1\n" * 7000]),
    "format_specs": _notebook(["X=f'" + "{a:{b}}" * 4000 + "'"]),
    "deep_json": b'{"cells":[' + b"[" * 9000 + b"]" * 9000 + b"]}",
    "outputs": json.dumps({"cells": [{"cell_type": "code", "source": "", "outputs": [{"text": "a"}] * 2000}]}).encode(),
    "compare_chain": _notebook(["X=1" + "<1" * 14000]),
}


def test_the_round_4_zip_costs_its_budget_not_ten_seconds(tmp_path, monkeypatch):
    _fresh(monkeypatch)
    notebook = _round_4()
    path = _zip(tmp_path / "round4.zip", [("work.ipynb", notebook), (f"{STEM}.py", REFERENCE)])
    assert path.stat().st_size < 40_000 and len(notebook) > 16_000_000
    budget = cpu_budget([notebook])
    assert budget < 2.0  # 1 s + 10 us for each of its 27 KB compressed
    before = _children_cpu()
    found = discover(path, {**STEMS, "module_9_training": ["g"]})
    spent = _children_cpu() - before
    assert found.problem is None and found.raw[STEM] == REFERENCE  # the learner's .py beside it: read whole
    assert spent < budget + 0.5, (spent, budget)  # before: the whole 10 s
    (why,) = reduce_notebooks({"work.ipynb": notebook}).values()  # cached: the reason the reading gave
    assert why == f"not a readable notebook (reading took more than {budget:g} s of CPU)"


def test_the_courses_own_notebooks_read_in_full_within_theirs(monkeypatch):
    _fresh(monkeypatch)
    books = {path.name: path.read_bytes() for path in COURSE}
    assert len(books) == 4
    budget = cpu_budget(list(books.values()))
    before = _children_cpu()
    reduced = reduce_notebooks(books)
    spent = _children_cpu() - before
    assert all(isinstance(found, Reduced) and found.functions for found in reduced.values()), reduced
    assert FLOOR_SECONDS < budget < CPU_SECONDS and spent < budget, (spent, budget)  # some 0.5 s of about 2 s


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_28_kb_shape_is_read_or_refused_within_its_budget(monkeypatch, shape):
    _fresh(monkeypatch)
    data = SHAPES[shape]
    assert len(data) < 40_000
    budget = cpu_budget([data])
    before = _children_cpu()
    (found,) = reduce_notebooks({"n.ipynb": data}).values()
    spent = _children_cpu() - before
    assert isinstance(found, (Reduced, str)) and spent < budget + 0.5, (shape, spent, budget)


def test_the_budget_is_proportional_to_the_compressed_bytes():
    small, large = os.urandom(10_000), os.urandom(100_000)  # incompressible: compressed, as large as they are
    assert cpu_budget([]) == FLOOR_SECONDS
    assert cpu_budget([small]) == pytest.approx(FLOOR_SECONDS + 0.1, abs=0.01)
    assert cpu_budget([large]) == pytest.approx(FLOOR_SECONDS + 1.0, abs=0.01)
    assert cpu_budget([large] * 100) == CPU_SECONDS  # never more than the child's hard limit
    assert cpu_budget([b"x" * 20_000_000]) < FLOOR_SECONDS + 0.3  # 20 MB of one byte: about 20 KB compressed


def test_the_reasons_are_in_both_languages():
    for text in (notebook_reader.UNREADABLE, *notebook_reader.WHY.values()):
        assert text.in_("ru") != text.in_("en") and text.in_("ru").strip()


# the control alone spends the old 10 s of CPU; the guarded behaviour is the fast test above
@pytest.mark.slow
def test_control_without_the_budget_the_round_4_zip_takes_the_whole_ten_seconds(tmp_path, monkeypatch):
    _fresh(monkeypatch)
    monkeypatch.setattr(notebook_reader, "FLOOR_SECONDS", float(CPU_SECONDS))  # the old fixed budget
    notebook = _round_4()
    start, before = time.perf_counter(), _children_cpu()
    (why,) = reduce_notebooks({"work.ipynb": notebook}).values()
    spent = _children_cpu() - before
    wall = time.perf_counter() - start
    assert why.startswith("not a readable notebook (reading took more than"), why  # 10 s of CPU, or 30 s of wall
    assert spent > 8 or wall > 25, (spent, wall)  # a loaded machine may reach the wall first
