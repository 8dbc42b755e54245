"""Pieces of hostile learner files that more than one hostile suite writes (as source text)."""

from __future__ import annotations

import socket
import threading

from graders.engine.kit import DEFAULT_KIT

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
