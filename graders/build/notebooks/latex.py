r"""Each exercise's formula in LaTeX, for the notebooks' Markdown (Jupyter renders ``$$ ... $$``).

The first line of each docstring holds the formula in plain text (what a terminal, pytest and the
stubs show); its typeset form sits beside the exercise's hidden checks, in the ``LATEX`` table of
``graders/checks/<file stem>.py`` (keyed by function name), so adding an exercise still touches the
same four files. ``tests/test_build.py`` checks that every exercise has one; ``rl4llm build`` puts it
above the docstring's line in both languages (LaTeX is the same in every language).
"""

from __future__ import annotations

import importlib


def formula(exercise_id: str) -> str:
    """The exercise's LaTeX formula from its checks module's ``LATEX`` table, or ``""``."""
    stem, function = exercise_id.split(".", 1)
    try:
        checks = importlib.import_module(f"graders.checks.{stem}")
    except ModuleNotFoundError:
        return ""
    return getattr(checks, "LATEX", {}).get(function, "")


def display_math(exercise_id: str) -> str:
    """The exercise's formula as a Markdown display-math block, or ``""`` when it has none."""
    typeset = formula(exercise_id)
    return f"$$\n{typeset}\n$$" if typeset else ""
