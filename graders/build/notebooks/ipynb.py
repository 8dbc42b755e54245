"""Writing a notebook: nbformat 4.5 JSON with nbgrader cell metadata, byte-deterministic.

Fixed cell ids, sorted keys, no outputs or execution counts, kernel ``python3``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


@dataclass
class Notebook:
    """Cells in order; :meth:`text` is the ``.ipynb`` file."""

    cells: list[dict] = field(default_factory=list)

    def _meta(self, grade_id: str, *, solution=False, grade=False, locked=True, points=None) -> dict:
        meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
        if points is not None:
            meta["points"] = int(points) if float(points).is_integer() else float(points)
        return {"nbgrader": meta}

    def markdown(self, cell_id: str, text: str) -> None:
        self.cells.append({"cell_type": "markdown", "id": cell_id, "metadata": self._meta(cell_id),
                           "source": _lines(text)})

    def code(self, cell_id: str, text: str, **meta) -> None:
        self.cells.append({"cell_type": "code", "execution_count": None, "id": cell_id,
                           "metadata": self._meta(cell_id, **meta), "outputs": [], "source": _lines(text)})

    def text(self) -> str:
        notebook = {"cells": self.cells, "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
                    "nbformat": 4, "nbformat_minor": 5}
        return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _lines(text: str) -> list[str]:
    """nbformat's multi-line string form: every line keeps its newline except the last."""
    return text.splitlines(keepends=True)
