"""Where the kit's folders are. One place, so nothing else hard-codes a path."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS_DIR = REPO_ROOT / "solutions"
STARTER_DIR = REPO_ROOT / "starter"
ASSIGNMENTS_DIR = REPO_ROOT / "assignments"
SEEDS_DIR = Path(__file__).resolve().parent / "seeds"
