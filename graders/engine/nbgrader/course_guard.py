"""The nbgrader course's tamper guard: the course folder and the gradebook fingerprinted around each grading run.

A second line of defence behind the engine's sandbox (:mod:`graders.engine.nbgrader.scoring`): size,
times and inode of every entry, ``ctime`` included, which no process can set back, before and after;
if anything changed, the gradebook is restored from a copy taken just before and the notebook fails
with :class:`CourseTampered` (nbgrader records no grade from that run).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


class CourseTampered(RuntimeError):
    """Files of the course folder or the gradebook changed while a notebook was being graded."""


def fingerprint(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (links not followed): type, size, mtime, ctime, inode."""
    found: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (info.st_mode, info.st_size, info.st_mtime_ns,
                                                  info.st_ctime_ns, info.st_ino)
    return found


def _sqlite_path(db_url: str) -> Path | None:
    if db_url.startswith("sqlite:///") and not db_url.startswith("sqlite:///:memory:"):
        return Path(db_url[len("sqlite:///"):])
    return None


class _Guard:
    """Fingerprints of the course folder and the gradebook, and a copy of the gradebook, before grading."""

    SIDECARS = ("-journal", "-wal", "-shm")

    def __init__(self, course: Path, db_url: str) -> None:
        self.course = course
        self.db = _sqlite_path(db_url)
        self.before = fingerprint(course)
        self.db_before = self._db_state()
        self.db_bytes = self.db.read_bytes() if self.db is not None and self.db.is_file() else None

    def _db_state(self):
        if self.db is None:
            return None
        state = {}
        for suffix in ("",) + self.SIDECARS:
            path = Path(f"{self.db}{suffix}")
            try:
                info = os.lstat(path)
            except OSError:
                continue
            state[suffix] = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        return state

    def check(self) -> None:
        """Raise :class:`CourseTampered` (after restoring the gradebook) if anything changed."""
        after = fingerprint(self.course)
        changed = sorted(path for path in set(self.before) | set(after) if self.before.get(path) != after.get(path))
        db_changed = self._db_state() != self.db_before
        if not changed and not db_changed:
            return
        restored = ""
        if db_changed and self.db is not None and self.db_bytes is not None:
            for suffix in self.SIDECARS:
                if suffix not in self.db_before:
                    with contextlib.suppress(OSError):
                        os.remove(f"{self.db}{suffix}")
            with contextlib.suppress(OSError):
                os.remove(self.db)  # a fresh file: the learner's code may have kept it open or linked it
            self.db.write_bytes(self.db_bytes)
            restored = f"; the gradebook {self.db} was restored from the copy taken before grading"
        shown = ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else "")
        raise CourseTampered(f"files changed while the kit's engine graded this notebook ({shown or 'the gradebook'})"
                             f"{restored}. The engine's sandbox should have prevented this; no grade is "
                             "recorded from this run. Inspect the submission and the course folder.")
