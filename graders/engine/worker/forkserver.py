"""A preloaded process that forks the grading workers: imports paid once per batch, not per submission.

    python -m graders.engine.worker.forkserver --control-fd N [--torch]

The grader starts one server per batch for exercises without torch and,
when the batch has any, one with torch imported and warmed up (about 1.5 s of
imports and first-use set-up that every submission's worker used to pay).
Neither server ever runs learner code or loads a solution: it imports NumPy,
the worker and (``--torch``) torch, then waits for requests.

For each submission the grader sends a request (JSON, with three file
descriptors: the worker's events pipe, its log pipe and its ``go`` pipe) on
the control socket (a ``SOCK_SEQPACKET`` pair). The server forks:

- **W0**, the request's process: it starts its own session (the grader kills
  the whole group on a timeout), closes the control socket, and enters fresh
  user, PID, mount, network and IPC namespaces (``unshare(2)``, as
  ``unshare --user --map-root-user --pid --fork --mount --mount-proc --net
  --ipc`` does), then forks
- **W1**, PID 1 of the new PID namespace, which dies with W0
  (``PR_SET_PDEATHSIG``), mounts its own ``/proc`` and runs the worker
  (:class:`graders.engine.worker.parent.Parent`) exactly as a freshly started
  interpreter would, from its ``go`` on. W0 waits and exits as W1 did
  (``128 + signal`` when a signal ended it).

So every submission still gets a fresh process in fresh namespaces, and every
exercise a fresh confined child of that process; only the imports are shared,
as copy-on-write memory. Where namespaces cannot be made, W0 runs the worker
itself (the report's ``sandbox`` says ``namespaces: false``).

Replies on the control socket: ``{"forked": request, "pid": pid}`` (or
``{"failed": request, "error": ...}``) and, when a W0 ends, ``{"exited":
pid, "status": wait status}``. The server exits when the grader closes the
socket (or dies), killing what it started.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import gc
import json
import os
import select
import signal
import socket
import sys
import traceback
from pathlib import Path

from graders.engine.sandbox.libc import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID,  # noqa: F401
                                 CLONE_NEWUSER, PR_SET_PDEATHSIG, enter_namespaces, mount_own_proc)
from graders.engine.sandbox.libc import libc as _libc

NUMPY_NICENESS = 5  # how much lower the server without torch (and its workers) is scheduled
MAX_MESSAGE = 1 << 16


class Server:
    """The server's loop: fork on request, report exits, stop when the grader goes."""

    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.children: set[int] = set()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def send(self, **message) -> None:
        self.control.sendall(json.dumps(message).encode("utf-8"))

    def serve(self) -> None:
        self.send(ready=True)
        while True:
            readable, _, _ = select.select([self.control, self.wake_read], [], [])
            if self.wake_read in readable:
                os.read(self.wake_read, 4096)
            self.reap()
            if self.control in readable:
                data, fds, _, _ = socket.recv_fds(self.control, MAX_MESSAGE, 8)
                if not data:
                    break
                self.fork(data, fds)
        self.stop()

    def fork(self, data: bytes, fds: list[int]) -> None:
        request = json.loads(data.decode("utf-8"))
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as error:
            for fd in fds:
                os.close(fd)
            self.send(failed=request["id"], error=str(error))
            return
        if pid == 0:  # W0: never returns
            code = 70
            try:
                self.launch(request, fds)
            except BaseException:  # noqa: BLE001 - the kit's own failure: on the worker's log
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        for fd in fds:
            os.close(fd)
        self.children.add(pid)
        self.send(forked=request["id"], pid=pid)

    def launch(self, request: dict, fds: list[int]) -> None:
        """W0 (and W1): namespaces, the standard streams, then the worker; exits, never returns."""
        events_fd, log_fd, go_fd = fds
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in (self.control.fileno(), self.wake_read, self.wake_write):
            os.close(fd)
        namespaced = bool(request.get("namespaces")) and enter_namespaces()
        if namespaced:
            pid = os.fork()
            if pid != 0:  # W0: end as W1 ends
                for fd in fds:
                    os.close(fd)
                _, status = os.waitpid(pid, 0)
                os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
            _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if not mount_own_proc():
                namespaced = False  # no /proc of its own: the report says so
        for target, fd in ((0, go_fd), (1, log_fd), (2, log_fd)):
            os.dup2(fd, target)
        os.close(go_fd)
        os.close(log_fd)
        os.environ.update(request.get("env", {}))
        os.chdir(request["sub_dir"])
        from graders.engine.worker import parent as worker

        parent = worker.Parent(Path(request["job_dir"]), Path(request["sub_dir"]), events_fd,
                               namespaced=namespaced and os.getpid() == 1)
        parent.prepare()
        parent.run([int(i) for i in request["run"]])
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.send(exited=pid, status=status)

    def stop(self) -> None:
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)


def preload(torch: bool) -> None:
    """What every worker would import: NumPy, the worker and what it imports lazily, torch warmed up."""
    sys.dont_write_bytecode = True
    import numpy  # noqa: F401

    import graders.engine.worker.parent  # noqa: F401 - and its child's module
    import graders.engine.worker.process
    import graders.loader  # noqa: F401

    if torch:
        graders.engine.worker.process.warm_up_torch()
    # everything imported so far moves to the collector's permanent generation: otherwise each full
    # collection in every forked worker walks torch's and NumPy's objects again (and touching them
    # copies their pages out of the server)
    gc.freeze()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.engine.worker.forkserver")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--torch", action="store_true", help="import torch and warm it up")
    args = parser.parse_args(argv)
    faulthandler.enable()  # on the log: a worker's crash of the kit's own shows where
    control = socket.socket(fileno=args.control_fd)
    if not args.torch:
        # the workers without torch are never what a submission waits for last: on a busy machine the
        # server with torch (its imports, then the toy runs) gets the larger share of the cores
        os.nice(NUMPY_NICENESS)
    preload(args.torch)
    Server(control).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
