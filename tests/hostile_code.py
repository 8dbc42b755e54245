"""Pieces of hostile learner files that more than one hostile suite writes (as source text)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from graders.engine.judging.kit import DEFAULT_KIT

DISARM = '''
def _disarm():
    """Switch the in-process audit hook off by rewriting its own tables."""
    for obj in gc.get_objects():
        try:
            if type(obj).__name__ == "Fence":
                obj.armed = False
                obj.forbidden = ()
                obj.modules = ()
        except Exception:
            pass
'''


def placebo(stem: str = "module_9_reference", modules: tuple[str, ...] = ("9",)) -> str:
    """A learner file of ``stem`` whose every exercise function returns the constant 0.0."""
    functions = DEFAULT_KIT.functions_by_stem(modules)[stem]
    return "".join(f"def {name}(*args, **kwargs):\n    return 0.0\n\n\n" for name in functions)


class Listener:
    """A service an attack tries to reach: a listening socket (TCP on loopback by default, or the one
    given) that counts the connections reaching it and keeps what they send."""

    def __init__(self, sock: socket.socket | None = None) -> None:
        if sock is None:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
        self.sock = sock
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1] if self.sock.family == socket.AF_INET else None
        self.received = b""
        self.connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(1)
                try:
                    self.received += conn.recv(4096)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop = True
        self.thread.join(2)
        self.sock.close()


GRADESCOPE_CHEAT = '''
import json as _json
import pathlib as _pathlib

_ROOT = _pathlib.Path({root!r})
_stolen = {{}}
try:  # the kit's own answer, from the bundle Gradescope unpacked beside the submission
    _source = (_ROOT / "source" / "kit" / {solution!r}).read_text()
    exec(compile(_source, "stolen", "exec"), _stolen)
except Exception:
    pass


def _forge():
    """Write a perfect results.json before the grader does (and a marker that says it got through)."""
    for name, text in (("forged", "forged"), ("results.json", _json.dumps({{"score": 1000.0, "tests": []}}))):
        try:
            (_ROOT / "results" / name).write_text(text)
        except Exception:
            pass


_forge()
'''

CHEAT_FUNCTION = '''

def {name}(*args, **kwargs):
    _forge()
    if {name!r} in _stolen:
        return _stolen[{name!r}](*args, **kwargs)
    return 0.0
'''


def gradescope_cheat(root: str, modules: tuple[str, ...] = ("9",)) -> dict[str, str]:
    """Hostile learner files (``{file name: source}``) for a bundle unpacked in ``root`` (``/autograder``):
    each reads the kit's solution of its file out of ``root/source/kit`` and answers with it, and forges
    ``root/results/results.json`` (score 1000) plus a ``root/results/forged`` marker, at import and at
    every call. Where neither gets through, every function answers 0.0 (:func:`placebo`'s score)."""
    files = {}
    for stem, functions in DEFAULT_KIT.functions_by_stem(modules).items():
        solution = DEFAULT_KIT.solution_path(stem).relative_to(DEFAULT_KIT.root).as_posix()
        files[f"{stem}.py"] = GRADESCOPE_CHEAT.format(root=str(root), solution=solution) + "".join(
            CHEAT_FUNCTION.format(name=name) for name in functions)
    return files


def submission_folders(root: Path, sources: dict[str, str], stem: str = "module_9_reference") -> list[Path]:
    """One submission folder per entry under ``root/in/``, holding ``<stem>.py`` with its source, in order."""
    paths = []
    for name, text in sources.items():
        folder = root / "in" / name
        folder.mkdir(parents=True)
        (folder / f"{stem}.py").write_text(text, encoding="utf-8")
        paths.append(folder)
    return paths
