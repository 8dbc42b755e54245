"""Notebooks read as Jupyter runs them (graders/engine/intake/notebook_cells.py): IPython's syntax, future imports,
one unreadable cell lost alone and named; a correct notebook in that style gets full marks, a hostile one nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.intake.notebook_cells import python_of_cell
from graders.engine.intake.submission import discover, read_notebook
from graders.engine.values.texts import translated

STEM = "module_9_reference"
FUNCTIONS = {STEM: ["group_relative_advantages", "verify_numeric_answer"]}


def _notebook(*cells: str) -> bytes:
    return json.dumps({"cells": [{"cell_type": "markdown", "source": "# title"}]
                       + [{"cell_type": "code", "source": cell} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode("utf-8")


def _solution() -> str:
    return DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")


def _split_solution() -> tuple[str, str, str]:
    """The reference file as three cells: its head (docstring, ``from __future__``, imports), then two halves."""
    text = _solution()
    head_end = text.index("\n# ----")
    middle = text.index("\ndef group_relative_advantages")
    return text[:head_end], text[head_end:middle], text[middle:]


# ---------------------------------------------------------------------------- one cell
@pytest.mark.parametrize("cell, expected", [
    ("%matplotlib inline\nx = 1\n", "pass\nx = 1"),
    ("!pip install numpy\nimport numpy as np", "pass\nimport numpy as np"),
    ("files = !ls\nout, err = %sx ls\n", "pass\npass"),
    ("np.mean?\n??np\n", "pass\npass"),
    ("def f():\n    %time g()\n    return 1\n", "def f():\n    pass\n    return 1"),
    ("%%time\ndef f():\n    return 1\n", "\ndef f():\n    return 1"),
    ("\n\n%%capture out\nY = 2\n", "\n\n\nY = 2"),
    ("# only a comment\n# and another\n", "# only a comment\n# and another"),
    ('"""A docstring first."""\nfrom __future__ import annotations\n',
     '"""A docstring first."""\nfrom __future__ import annotations'),
    # not an escape: the continuation of a bracket, a line of a string, a comment
    ("x = (1\n  % 2)\n!ls\n", "x = (1\n  % 2)\npass"),
    ('s = """\n%not a magic\n!nor this\n"""\n!ls\n', 's = """\n%not a magic\n!nor this\n"""\npass'),
    ("%load_ext autoreload \\\n  more\nx = 1", "pass\n\nx = 1"),
])
def test_ipython_syntax_is_made_inert_line_for_line(cell, expected):
    assert python_of_cell(cell) == expected


@pytest.mark.parametrize("cell", ["%%bash\ncat solutions/module_09/module_9_reference.py\n",
                                  "%%writefile x.py\ndef group_relative_advantages(r):\n    return r\n",
                                  "%%script python\nimport os\n", "  %%html\n<b>x</b>"])
def test_a_cell_magic_that_is_not_python_defines_nothing(cell):
    assert python_of_cell(cell) is None
    source, problems = read_notebook(_notebook(cell))
    assert source.strip() == "" and problems == []


# ---------------------------------------------------------------------------- the whole notebook
def test_a_future_import_in_a_later_cell_is_lifted_and_everything_else_is_kept():
    head, first, second = _split_solution()
    assert "from __future__ import annotations" in head
    source, problems = read_notebook(_notebook("import numpy as np\n%matplotlib inline", "# comments only\n",
                                               head, "%%time\n" + first, second))
    assert problems == []
    assert source.startswith("from __future__ import annotations\n")
    assert source.count("from __future__") == 1
    compile(source, "nb", "exec", dont_inherit=True)
    assert "def group_relative_advantages" in source and "def verify_numeric_answer" in source


def test_one_unreadable_cell_is_lost_alone_and_named():
    head, first, second = _split_solution()
    data = _notebook(head, first, "def broken(:\n    pass\n", "from __future__ import braces\n",
                     "def outer():\n    nonlocal x\n", second)
    source, problems = read_notebook(data)
    assert [(p.cell, p.start) for p in problems] == [(4, "def broken(:"), (5, "from __future__ import braces"),
                                                     (6, "def outer():")]
    assert problems[0].reason == "SyntaxError: invalid syntax (line 1)"
    assert problems[1].reason.startswith("SyntaxError: not a chance")
    assert "nonlocal" in problems[2].reason
    assert "def group_relative_advantages" in source and "def verify_detailed" in source
    assert "broken" not in source and "outer" not in source


def test_the_notes_name_the_cell_in_every_language(tmp_path):
    head, first, second = _split_solution()
    (tmp_path / f"{STEM}.ipynb").write_bytes(_notebook(head, first, "def broken(:\n    pass\n", second))
    found = discover(tmp_path, FUNCTIONS)
    assert STEM in found.sources
    note = found.notes[STEM][-1]
    assert note == (f"{STEM}.ipynb cell 4 (def broken(:): SyntaxError: invalid syntax (line 1); this cell was "
                    "left out, as Jupyter fails it alone, and the notebook's other cells were graded")
    assert translated(note, "ru") == (f"{STEM}.ipynb, ячейка 4 (def broken(:): SyntaxError: invalid syntax "
                                      "(line 1); эта ячейка не учтена (Jupyter тоже не выполнил бы её), остальные "
                                      "ячейки ноутбука проверены")


def test_a_notebook_whose_functions_are_all_unreadable_says_nothing_was_graded(tmp_path):
    (tmp_path / f"{STEM}.ipynb").write_bytes(_notebook(_solution() + "\n)\n"))
    found = discover(tmp_path, FUNCTIONS)
    assert STEM not in found.sources
    [note] = found.notes[STEM]
    assert note.startswith(f"{STEM}.ipynb cell 2 (") and note.endswith("nothing in this notebook could be graded")
    assert "SyntaxError: unmatched ')'" in note


# ---------------------------------------------------------------------------- graded by the engine
def _grade(tmp_path: Path, name: str, data: bytes, log=None) -> dict:
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{STEM}.ipynb").write_bytes(data)
    result = grade_paths([folder], tmp_path / f"out-{name}", GradeOptions(modules=("9",), lang="en"), jobs=1,
                         progress=False, log=log or (lambda _message: None))
    assert not result.internal_errors, result.internal_errors
    [report] = result.reports
    return {e["id"]: e for e in report["exercises"] if e["id"].startswith(f"{STEM}.")}


@pytest.mark.slow
def test_a_correct_notebook_in_jupyter_style_gets_full_marks_and_a_hostile_one_nothing(tmp_path):
    head, first, second = _split_solution()
    solution = DEFAULT_KIT.solution_path(STEM)
    correct = _notebook("import numpy as np\n%matplotlib inline\n!echo setting up", "# comments only\n",
                        head, "%%time\n" + first, "def broken(:\n    pass\n", second, "files = !ls\nnp.mean?\n",
                        f"%%bash\ncat {solution}\n")
    messages: list[str] = []
    entries = _grade(tmp_path, "correct", correct, messages.append)
    assert entries and all(e["points"] == e["max_points"] for e in entries.values()), \
        {k: e["feedback"] for k, e in entries.items() if e["points"] < e["max_points"]}
    assert "cell 6 (def broken(:)" in entries[f"{STEM}.group_relative_advantages"]["feedback"]
    # what `rl4llm grade` writes on stderr: the submission, the notebook, the cell, the reason
    assert [m for m in messages if m.startswith("warning: correct: ")] == [
        f"warning: correct: {STEM}.ipynb cell 6 (def broken(:): SyntaxError: invalid syntax (line 1); this cell was "
        "left out, as Jupyter fails it alone, and the notebook's other cells were graded"]

    starter = DEFAULT_KIT.starter_path(STEM).read_text(encoding="utf-8")
    hostile = _notebook(
        starter,
        f"%%bash\ncp {solution} /tmp/stolen.py\n",
        f"%%capture\nsource = open({str(solution)!r}).read()\nexec(source)\n",
        f"get_ipython().system('cat {solution}')\n",
        "def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):\n"
        f"    get_ipython().system('cat {solution}')\n"
        f"    namespace = {{}}\n    exec(open({str(solution)!r}).read(), namespace)\n"
        "    return namespace['group_relative_advantages'](rewards, scale, eps=eps, ddof=ddof)\n")
    placebo = _grade(tmp_path, "placebo", _notebook(starter))
    attacked = _grade(tmp_path, "hostile", hostile)
    assert set(attacked) == set(placebo)
    assert sum(e["points"] for e in attacked.values()) <= sum(e["points"] for e in placebo.values())
    assert attacked[f"{STEM}.group_relative_advantages"]["points"] == 0
