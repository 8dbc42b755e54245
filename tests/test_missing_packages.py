"""A failing import costs only what uses it (graders/engine/worker/missing.py).

A complete file with ``import seaborn`` or ``from google.colab import drive`` at its top (copied from a
notebook) scored 0 on every exercise: "could not be loaded: ModuleNotFoundError". Now such a file keeps full
marks on the ``.py`` and the notebook routes, a function that does use the package loses its own checks only,
its feedback names the package and the line to remove (in English and in Russian), and the kit's own packages
are never stood in for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.worker.missing import MissingPackages, Placeholder

STEM = "module_9_reference"
NOTEBOOK_HEAD = ("import seaborn as sns\nfrom google.colab import drive\ndrive.mount('/content/drive')\n"
                 "sns.set_theme(style='whitegrid')\npalette = sns.color_palette()[0]\nif palette:\n    raise SystemExit\n"
                 "for _ in sns.unused:\n    raise SystemExit\n")


def _solution() -> str:
    return DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")


def _with_head(text: str) -> str:
    """``text`` with :data:`NOTEBOOK_HEAD` after its ``from __future__`` import (which must come first)."""
    future = "from __future__ import annotations\n"
    at = text.index(future) + len(future)
    return text[:at] + NOTEBOOK_HEAD + text[at:]


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": cell, "metadata": {}, "outputs": [],
                                  "execution_count": None} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _grade(tmp_path: Path, files: dict[str, tuple[str, str]], language: str = "en") -> dict[str, dict]:
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    paths = []
    for name, (file_name, text) in files.items():
        (tmp_path / "in" / name).mkdir(parents=True)
        (tmp_path / "in" / name / file_name).write_text(text, encoding="utf-8")
        paths.append(tmp_path / "in" / name)
    result = grade_paths(paths, tmp_path / "out", GradeOptions(modules=("9",), lang=language), jobs=2,
                         progress=False, log=lambda _message: None)
    assert not result.internal_errors, result.internal_errors
    return {name: {e["id"]: e for e in report["exercises"] if e["id"].startswith(STEM)}
            for name, report in zip(result.names, result.reports)}


@pytest.mark.slow
def test_an_unused_missing_package_costs_nothing_and_a_used_one_only_its_function(tmp_path):
    solution = _solution()
    uses = _with_head(solution).replace("def k3_kl(", "def k3_kl(*args, **kwargs):\n    return sns.kl(*args)\n\n\n"
                                        "def _unused_k3_kl(", 1)
    head, rest = solution.split("from __future__ import annotations\n", 1)
    reports = _grade(tmp_path, {"py": (f"{STEM}.py", _with_head(solution)), "uses": (f"{STEM}.py", uses),
                                "notebook": (f"{STEM}.ipynb", _notebook(head + "from __future__ import annotations",
                                                                        NOTEBOOK_HEAD, rest))})
    for name in ("py", "notebook"):
        assert all(e["status"] == "passed" for e in reports[name].values()), {
            e["id"]: e["feedback"][:200] for e in reports[name].values() if e["status"] != "passed"}
    lost = {exercise_id for exercise_id, e in reports["uses"].items() if e["status"] != "passed"}
    assert lost == {f"{STEM}.k3_kl"}, lost
    feedback = reports["uses"][f"{STEM}.k3_kl"]["feedback"]
    line = _with_head(solution).splitlines().index("import seaborn as sns") + 1
    assert f"the grading machine has no package seaborn ({STEM}.py, line {line}): remove that import" in feedback


@pytest.mark.slow
def test_the_missing_package_message_reads_in_russian(tmp_path):
    uses = _with_head(_solution()).replace("def k3_kl(", "def k3_kl(*args, **kwargs):\n    return sns.kl(*args)\n"
                                           "\n\ndef _unused_k3_kl(", 1)
    feedback = _grade(tmp_path, {"uses": (f"{STEM}.py", uses)}, "ru")["uses"][f"{STEM}.k3_kl"]["feedback"]
    assert "на проверяющей машине нет пакета seaborn (" in feedback and "уберите этот импорт" in feedback
    assert "grading machine" not in feedback


def test_a_placeholder_absorbs_the_top_level_and_raises_on_any_use_after_the_load():
    finder = MissingPackages(set(), "/x/learner.py")
    spec = finder.find_spec("seaborn")
    module = finder.create_module(spec)
    finder.exec_module(module)
    theme = module.set_theme(style="whitegrid")
    assert isinstance(theme, Placeholder) and not theme and list(theme) == [] and isinstance(theme + 1, Placeholder)
    finder.loading = False
    for use in (lambda: module.color_palette, lambda: theme(), lambda: theme.x, lambda: theme + 1,
                lambda: list(theme), lambda: bool(theme), lambda: theme[0]):
        with pytest.raises(ModuleNotFoundError, match="the grading machine has no package seaborn"):
            use()
    assert finder.find_spec("pandas_later") is None  # only while the file loads


def test_the_kits_own_packages_are_never_stood_in_for():
    finder = MissingPackages({"solutions", "graders"}, "/x/learner.py")
    assert finder.find_spec("solutions") is None and finder.find_spec("solutions.module_09") is None
    assert finder.find_spec("graders.checks") is None
    assert finder.find_spec("seaborn") is not None
