"""The grader's side of the worker protocol: start, watch, kill, restart.

:class:`ForkServer` is the grader's handle on a preloaded process that forks
workers (:mod:`graders.engine.forkserver`). :func:`run_worker` runs a list of
exercises of one submission in worker processes forked by it. It reads the worker's events with a deadline: an exercise that
overruns its timeout, or a worker that dies (segfault, ``os._exit``, the
memory limit, a signal), costs that exercise only -- a fresh worker picks up
the remaining exercises. A learner file whose import hangs or kills the
worker costs that file's exercises only.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders.engine import cgroups, codec
from graders.engine.learner_text import clean as clean_learner_text

LOG_TAIL = 1500
LOG_KEEP = 64 << 10  # bytes of the worker's stdout/stderr kept (the tail)
MAX_EVENT_BYTES = 64 << 20  # one event line (a result with its arrays, base64)
MAX_RESULT_JSON = 8 << 20  # the JSON part of one exercise's result


WALL_FACTOR, WALL_GRACE = 3.0, 15.0  # the wall-clock backstop: 3 x the CPU budget + 15 s
CPU_BUDGET_MESSAGE = "the exercise used more CPU time than its budget"


def wall_backstop(cpu_seconds: float) -> float:
    """Wall-clock seconds after which the grader ends a worker whose child spends ``cpu_seconds`` of CPU.

    The budget itself is CPU time, held by the worker's parent (:meth:`graders.engine.worker.Parent.relay`),
    so the verdict does not depend on how busy the machine is; the clock only catches a child that sleeps
    or deadlocks (no CPU spent, no progress). Generous: on a machine so loaded that a child gets a third of
    a core, a child within its CPU budget still finishes before it.
    """
    return WALL_FACTOR * float(cpu_seconds) + WALL_GRACE


class WorkerStartError(RuntimeError):
    """The worker could not even start: the grader itself is broken (exit non-zero)."""


@dataclass
class ExerciseRun:
    """What came back from the worker for one exercise (before comparison)."""

    status: str  # "done" | "timeout" | "crashed" | "load_error" | "load_timeout" | "load_crashed"
    payload: dict | None = None
    arrays: dict = field(default_factory=dict)
    message: str = ""
    output: str = ""


@dataclass
class WorkerConfig:
    python: str = sys.executable
    kit_parent: str = ""
    user: int | None = None
    load_timeout: float = 60.0
    env: dict = field(default_factory=dict)
    namespaces: bool = True  # workers enter fresh namespaces (graders.engine.forkserver.enter_namespaces)
    require: tuple = ()  # layers every worker must report active (--require-sandbox)
    ready: object = None  # a threading.Event: set once the grader has loaded all it executes
    abort: bool = False  # set before ``ready`` when that loading failed: workers run nothing
    cgroup: cgroups.Limits | None = None  # each worker's cgroup limits (graders.engine.cgroups), where given


class SandboxMissing(WorkerStartError):
    """A worker came up without a layer that ``--require-sandbox`` demands."""


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except (ValueError, TypeError):
        return f"signal {-code}"


def describe_exit(code: int | None) -> str:
    if code is None:
        return "the worker process stopped responding"
    if code < 0:
        name = _signal_name(code)
        extra = {"SIGSEGV": " (a segmentation fault)", "SIGKILL": " (killed, often by the memory limit)",
                 "SIGABRT": " (aborted)", "SIGXFSZ": " (wrote a file larger than allowed)"}.get(name, "")
        return f"the worker process was killed by {name}{extra}"
    return f"the worker process exited with code {code}"


def _sanitise(text: str, sub_dir: Path) -> str:
    """A crash log without the grader's own frames, absolute paths or addresses (reports stay deterministic)."""
    text = text.replace(str(sub_dir / "scratch" / "files") + os.sep, "").replace(str(sub_dir), "<submission>")
    lines = [line for line in text.splitlines() if "/graders/" not in line]
    text = "\n".join(lines)
    text = re.sub(r"(?<![\w.])/(?:[^\s\"'/]+/)+([^\s\"'/]+)", r"\1", text)
    return re.sub(r"0x[0-9a-fA-F]{6,}", "0x...", text)


def _server_env(config: WorkerConfig) -> dict[str, str]:
    """The environment of a fork server, so of every worker (each submission adds its own folders)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": config.kit_parent,
            "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
            **config.env}


class ForkServer:
    """One fork server (:mod:`graders.engine.forkserver`): started once per batch, forks a worker per request.

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
            command = [config.python, "-m", "graders.engine.forkserver", "--control-fd", str(theirs.fileno())]
            if self.torch:
                command.append("--torch")
            extra = {}
            if config.user is not None:
                extra = {"user": config.user, "group": config.user, "extra_groups": []}
            try:
                with open(self.log_path, "wb") as log:
                    self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                                 pass_fds=(theirs.fileno(),), cwd=str(self.cwd),
                                                 env=_server_env(config), start_new_session=True, **extra)
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


class _Process:
    def __init__(self, config: WorkerConfig, server: ForkServer, job_dir: Path, sub_dir: Path,
                 indices: list[int]):
        read_fd, write_fd = os.pipe()
        log_read, log_write = os.pipe()
        go_read, go_write = os.pipe()
        work = str(sub_dir / "scratch" / "work")
        request = {"job_dir": str(job_dir), "sub_dir": str(sub_dir), "run": list(indices),
                   "namespaces": config.namespaces,
                   "env": {"HOME": work, "MPLCONFIGDIR": work, "HYPOTHESIS_STORAGE_DIRECTORY": work}}
        try:
            self.proc = server.spawn(request, [write_fd, log_write, go_read])
        except BaseException:
            for fd in (read_fd, log_read, go_write):
                os.close(fd)
            raise
        finally:
            for fd in (write_fd, log_write, go_read):
                os.close(fd)
        self.read_fd, self.log_fd = read_fd, log_read
        self.group = self.cgroup(config)  # before "go": the worker runs nothing outside it
        if config.ready is not None:
            config.ready.wait()
        try:
            os.write(go_write, b"stop\n" if config.abort else b"go\n")
        except OSError:
            pass  # the worker is already gone: the event loop reports it
        finally:
            os.close(go_write)
        self.selector = selectors.DefaultSelector()
        for fd in (read_fd, log_read):
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)
        self.buffer = bytearray()
        self.log = bytearray()
        self.eof = False

    def _pump(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout=timeout):
            try:
                chunk = os.read(key.fd, 1 << 20)
            except BlockingIOError:
                continue
            if key.fd == self.log_fd:
                if not chunk:
                    self.selector.unregister(self.log_fd)
                self.log += chunk
                if len(self.log) > 2 * LOG_KEEP:
                    del self.log[:-LOG_KEEP]
                continue
            if not chunk:
                self.eof = True
            self.buffer += chunk
            if len(self.buffer) > MAX_EVENT_BYTES and b"\n" not in self.buffer:
                # an event larger than any result may be: treat as a crash, keep nothing
                self.buffer, self.eof = bytearray(), True

    def next_event(self, deadline: float) -> dict | None:
        """The next event, or ``None`` at EOF; raises ``TimeoutError`` past ``deadline``."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[:end + 1]
                try:
                    # learner text (messages, output, names) made safe for every report, once, here
                    event = clean_learner_text(json.loads(line.decode("utf-8")))
                except (UnicodeDecodeError, ValueError, RecursionError):
                    continue  # noise on the events pipe is ignored
                if isinstance(event, dict):
                    return event
                continue
            if self.eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._pump(min(remaining, 1.0))

    def cgroup(self, config: WorkerConfig):
        """The worker (and whatever it forked already) in a cgroup of its own with ``config.cgroup``'s
        limits; ``None`` where this machine gives none (the report's ``cgroup_limits`` says so)."""
        if config.cgroup is None or not cgroups.manager().works:
            return None
        try:
            group = cgroups.manager().create(config.cgroup)
        except OSError:
            return None
        try:
            group.add(self.proc.pid)
        except OSError:
            group.close()
            return None
        return group

    def kill(self) -> None:
        """SIGKILL the worker's process group: W0 and the namespace's PID 1 (so the namespace ends)."""
        self.proc.kill()

    def finish(self) -> int | None:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        self.kill()  # whatever is left of the group (outside namespaces: stray children)
        if self.group is not None:
            self.group.close()  # and of the cgroup: nothing it started outlives it
        deadline = time.monotonic() + 0.5
        while self.log_fd in self.selector.get_map() and time.monotonic() < deadline:
            self._pump(0.05)
        self.selector.close()
        os.close(self.read_fd)
        os.close(self.log_fd)
        return code

    def log_tail(self, sub_dir: Path) -> str:
        data = bytes(self.log[-LOG_TAIL:])
        return _sanitise(data.decode("utf-8", "replace"), sub_dir).strip()


def run_worker(config: WorkerConfig, server: ForkServer, job_dir: Path, sub_dir: Path, exercises: list[dict],
               indices: list[int], layers: dict | None = None) -> dict[int, ExerciseRun]:
    """Run exercises ``indices`` (positions in ``exercises``) of one submission; never raises for learner faults.

    ``layers`` (a dict) receives the sandbox layers the first worker reported.
    """
    layers = {} if layers is None else layers
    results: dict[int, ExerciseRun] = {}
    remaining = list(indices)
    attempt = 0
    while remaining:
        attempt += 1
        process = _Process(config, server, job_dir, sub_dir, remaining)
        current: tuple[str, object] | None = None
        deadline = time.monotonic() + wall_backstop(config.load_timeout)
        started_anything = False
        outcome = None
        try:
            while True:
                event = process.next_event(deadline)
                if event is None:
                    outcome = "eof"
                    break
                started_anything = True
                if "sandbox" in event and not layers and isinstance(event["sandbox"], dict):
                    layers.update({str(k): bool(v) for k, v in event["sandbox"].items()})
                    layers["cgroup_limits"] = process.group is not None
                    layers["identity"] = str(event.get("identity", ""))[:200]
                    missing = [name for name in config.require if layers.get(name) is not True]
                    if missing:
                        process.kill()
                        process.finish()
                        raise SandboxMissing("a worker started without the sandbox layer(s) "
                                             f"{', '.join(missing)} (--require-sandbox)")
                elif "load" in event:
                    current, deadline = ("load", event["load"]), time.monotonic() + wall_backstop(config.load_timeout)
                elif "loaded" in event:
                    stem, error = event["loaded"], event.get("error")
                    if error:
                        for index in [i for i in remaining if exercises[i]["stem"] == stem]:
                            results[index] = ExerciseRun("load_error", payload={"error": error})
                            remaining.remove(index)
                    current = None
                elif "start" in event:
                    index = event["start"]
                    if index in remaining:
                        current = ("exercise", index)
                        deadline = time.monotonic() + wall_backstop(exercises[index]["timeout"])
                elif "done" in event:
                    index = event["done"]
                    if index in remaining:
                        results[index] = _read_result(event)
                        remaining.remove(index)
                    current = None
                    deadline = time.monotonic() + wall_backstop(config.load_timeout)
                elif "crashed" in event:  # a child died; the worker goes on with the next exercise
                    index, code = event["crashed"], event.get("code")
                    over_budget = event.get("cpu_timeout") is True  # its parent ended it: CPU budget spent
                    message = CPU_BUDGET_MESSAGE if over_budget else describe_exit(code if isinstance(code, int) else None)
                    tail = "" if over_budget else process.log_tail(sub_dir)
                    if event.get("during") == "load":
                        for other in [i for i in remaining if exercises[i]["stem"] == event.get("stem")]:
                            status = "load_timeout" if over_budget else "load_crashed"
                            results[other] = ExerciseRun(status, message=message, output=tail)
                            remaining.remove(other)
                    elif index in remaining:
                        results[index] = ExerciseRun("timeout" if over_budget else "crashed", message=message,
                                                     output=tail)
                        remaining.remove(index)
                    current = None
                    deadline = time.monotonic() + wall_backstop(config.load_timeout)
                elif event.get("finished"):
                    outcome = "finished"
                    break
        except TimeoutError:
            outcome = "timeout"
            process.kill()
        code = process.finish()
        if config.namespaces and code is not None and code > 128:
            code = -(code - 128)  # the namespace's PID 1 exits with 128 + the signal that killed the worker
        if outcome == "finished":
            break
        tail = process.log_tail(sub_dir)
        if current is None:
            if not started_anything or outcome == "timeout":
                if attempt == 1 and not started_anything:
                    raise WorkerStartError(f"the grading worker failed to start ({describe_exit(code)}):\n{tail}")
            # died between exercises: blame the next one so the loop always progresses
            current = ("exercise", remaining[0])
        kind, what = current
        if kind == "load":
            affected = [i for i in remaining if exercises[i]["stem"] == what]
            status = "load_timeout" if outcome == "timeout" else "load_crashed"
        else:
            affected = [what]
            status = "timeout" if outcome == "timeout" else "crashed"
        message = describe_exit(None if outcome == "timeout" else code)
        for index in affected:
            results[index] = ExerciseRun(status, message=message, output=tail)
            remaining.remove(index)
    return results


def _read_result(event: dict) -> ExerciseRun:
    """One exercise's result from its ``done`` event, size-capped before anything is parsed."""
    try:
        text, packed = event.get("result"), event.get("arrays")
        if not isinstance(text, str):
            raise ValueError("malformed result")
        if len(text) > MAX_RESULT_JSON:
            raise ValueError(f"result larger than {MAX_RESULT_JSON} bytes")
        payload = clean_learner_text(json.loads(text))  # the result's learner text, as the events' (above)
        if not isinstance(payload, dict) or not isinstance(payload.get("cases"), list):
            raise ValueError("malformed result")
        arrays = codec.unpack_blob(packed, MAX_EVENT_BYTES)
    except (ValueError, TypeError, RecursionError, OSError) as error:
        return ExerciseRun("crashed", message=f"the worker's result could not be read ({error})")
    return ExerciseRun("done", payload=payload, arrays=arrays)
