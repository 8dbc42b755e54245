"""The grader's handle on a fork server (:class:`ForkServer`) and on each process it forked (:class:`ServedProcess`).

A fork server (:mod:`graders.engine.worker.forkserver`) is started once per batch with the workers' own
environment (:func:`_server_env`), inside the outer wall where this machine has it (:mod:`.wall`), and
forks a worker per request; a reader thread collects which request got which pid and how each worker ended. :mod:`graders.engine.worker.runner` drives the workers.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from graders.engine.sandbox import wall
from graders.engine.sandbox.confine import WALL_MARK
from graders.engine.worker.config import WorkerConfig, WorkerStartError

LOG_TAIL = 1500


def _server_env(config: WorkerConfig) -> dict[str, str]:
    """The environment of a fork server, so of every worker (each submission adds its own folders)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": config.kit_parent,
            "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
            **config.env}


def _outer_uid(config: WorkerConfig) -> str:
    """The server's user outside the wall (what a walled worker's identity is, in words, in its report)."""
    return str(config.user if config.user is not None else os.getuid())


class ForkServer:
    """One fork server (:mod:`graders.engine.worker.forkserver`): started once per batch, forks a worker per request.

    Thread-safe: the submissions of a batch ask for workers from several threads. A reader thread
    collects the server's replies (which request got which pid, which worker ended with which status).
    It starts on :meth:`start`, or on the first request (a batch that never needs torch never imports it).
    """

    def __init__(self, config: WorkerConfig, *, torch: bool, cwd: Path, log_path: Path) -> None:
        self.config, self.torch, self.cwd, self.log_path = config, torch, cwd, log_path
        self.starting = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.socket: socket.socket | None = None
        self.changed = threading.Condition()
        self.forked: dict[int, int | str] = {}  # request -> pid, or why it failed
        self.exited: dict[int, int] = {}  # pid -> wait status
        self.dead = False
        self.requests = 0

    def start(self) -> "ForkServer":
        """Start the server process (once; later calls return at once)."""
        with self.starting:
            if self.proc is not None or self.dead:
                return self
            config = self.config
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            command = [config.python, "-m", "graders.engine.worker.forkserver", "--control-fd", str(theirs.fileno())]
            if self.torch:
                command.append("--torch")
            # the outer wall (bubblewrap) around the server and all it forks, where this machine has it
            walled = wall.wall_command(config.python, config.kit_parent, str(self.cwd))
            command = [*walled, *command]
            extra = {}
            if config.user is not None:
                extra = {"user": config.user, "group": config.user, "extra_groups": []}
            try:
                with open(self.log_path, "wb") as log:
                    self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                                 pass_fds=(theirs.fileno(),), cwd=str(self.cwd),
                                                 env={**_server_env(config),
                                                      WALL_MARK: _outer_uid(config) if walled else ""},
                                                 start_new_session=True, **extra)
            except OSError as error:
                ours.close()
                raise WorkerStartError(f"cannot start the grading worker ({config.python}): {error}") from error
            finally:
                theirs.close()
            self.socket = ours
            threading.Thread(target=self._read, name="fork-server", daemon=True).start()
        return self

    def _read(self) -> None:
        while True:
            try:
                data = self.socket.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            try:
                message = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                break  # the server is broken: treated as gone (requests fail with its log)
            with self.changed:
                if "forked" in message:
                    self.forked[message["forked"]] = int(message["pid"])
                elif "failed" in message:
                    self.forked[message["failed"]] = str(message.get("error", "?"))
                elif "exited" in message:
                    self.exited[int(message["exited"])] = int(message["status"])
                self.changed.notify_all()
        with self.changed:
            self.dead = True
            self.changed.notify_all()

    def log_tail(self) -> str:
        try:
            return self.log_path.read_bytes()[-LOG_TAIL:].decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def spawn(self, request: dict, fds: list[int]) -> "ServedProcess":
        """Ask for a worker (``fds``: its events, log and ``go`` pipes); returns it once forked."""
        self.start()
        if self.socket is None:
            raise WorkerStartError("the grading worker's server was stopped before it started")
        with self.changed:
            self.requests += 1
            number = self.requests
            try:
                socket.send_fds(self.socket, [json.dumps({**request, "id": number}).encode("utf-8")], fds)
            except OSError as error:
                raise WorkerStartError(f"the grading worker's server is gone ({error}):\n{self.log_tail()}") from error
            while number not in self.forked and not self.dead:
                self.changed.wait()
            answer = self.forked.pop(number, None)
        if not isinstance(answer, int):
            raise WorkerStartError(f"the grading worker could not start ({answer or 'its server stopped'}):\n"
                                   f"{self.log_tail()}")
        return ServedProcess(self, answer)

    def wait_exit(self, pid: int, timeout: float | None) -> int | None:
        """The wait status of worker ``pid`` (``None`` if the server died first); raises ``TimeoutError``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.changed:
            while pid not in self.exited and not self.dead:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError
                self.changed.wait(remaining)
            return self.exited.pop(pid, None)

    def close(self, *, kill: bool = False) -> None:
        """Stop the server (it kills whatever it started) and wait for it; ``kill``: at once (its imports
        are not waited for). Closing twice, or a server never started, does nothing."""
        with self.starting:
            self.dead = self.dead or self.proc is None  # never started: it never will
        if self.socket is None or self.socket.fileno() < 0:
            return
        if kill:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.socket.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class ServedProcess:
    """A worker forked by a :class:`ForkServer`, with the part of ``subprocess.Popen`` that the runner uses."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None
        self.gone = False

    def wait(self, timeout: float | None = None) -> int | None:
        if not self.gone:
            try:
                status = self.server.wait_exit(self.pid, timeout)
            except TimeoutError:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout) from None
            self.gone = True
            if status is not None:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        """SIGKILL the worker's process group (it leads its own session): W0, and W1 with its namespace."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
