"""The layout table of graders/ in docs/design.md and the tree agree: every path it names exists, every module is named."""

from __future__ import annotations

import re

from graders.paths import REPO_ROOT

README = REPO_ROOT / "docs" / "design.md"
LISTED_FOLDERS = ("graders", "graders/engine", "graders/build")  # every module and package in these is named


def _layout_paths() -> set[str]:
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- layout:begin -->", 1)[1].split("<!-- layout:end -->", 1)[0]
    paths: set[str] = set()
    for row in block.splitlines():
        if not row.startswith("| `"):
            continue
        first = row.split("|")[1]
        names = re.findall(r"`([^`]+)`", first)
        folder = names[0].rsplit("/", 1)[0] if "/" in names[0].rstrip("/") else ""
        for name in names:  # `graders/engine/batch.py`, `grading.py`: later names share the first one's folder
            path = name if "/" in name.rstrip("/") else f"{folder}/{name}"
            paths.add(path.rstrip("/"))
    return paths


def _tree() -> set[str]:
    found = set()
    for folder in LISTED_FOLDERS:
        for entry in (REPO_ROOT / folder).iterdir():
            if entry.name.startswith(("_", ".")):
                continue
            if entry.suffix == ".py" or entry.is_dir():
                found.add(f"{folder}/{entry.name}")
    return found


def test_every_path_in_the_layout_table_exists():
    missing = sorted(path for path in _layout_paths() if not (REPO_ROOT / path).exists())
    assert not missing, f"docs/design.md's layout table names paths that do not exist: {missing}"


def test_every_module_of_graders_is_in_the_layout_table():
    listed = _layout_paths()
    unlisted = sorted(path for path in _tree() if path not in listed)
    assert not unlisted, f"docs/design.md's layout table does not name: {unlisted}"
