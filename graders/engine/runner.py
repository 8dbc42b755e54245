"""The grader's side of the worker protocol: start, watch, kill, restart.

:class:`ForkServer` is the grader's handle on a preloaded process that forks
workers (:mod:`graders.engine.forkserver`). :func:`run_worker` runs a list of
exercises of one submission in worker processes forked by it. It reads the worker's events with a deadline: an exercise that
overruns its timeout, or a worker that dies (segfault, ``os._exit``, the
memory limit, a signal), costs that exercise only -- a fresh worker picks up
the remaining exercises. A learner file whose import hangs or kills the
worker costs that file's exercises only.

The fork server's client is :mod:`graders.engine.fork_client`; the configuration and results both sides
share, :mod:`graders.engine.worker_config`.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import time
from pathlib import Path

from graders.engine import bundles, cgroups
from graders.engine.fork_client import LOG_TAIL, ForkServer
from graders.engine.learner_text import clean as clean_learner_text
from graders.engine.worker_config import (CPU_BUDGET_MESSAGE, ExerciseRun, SandboxMissing, WorkerConfig,
                                          WorkerStartError, wall_backstop)


LOG_KEEP = 64 << 10  # bytes of the worker's stdout/stderr kept (the tail)
MAX_EVENT_BYTES = 64 << 20  # one event line (a result with its arrays, base64)
MAX_RESULT_JSON = 8 << 20  # the JSON part of one exercise's result


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
        arrays = bundles.unpack_blob(packed, MAX_EVENT_BYTES)
    except (ValueError, TypeError, RecursionError, OSError) as error:
        return ExerciseRun("crashed", message=f"the worker's result could not be read ({error})")
    return ExerciseRun("done", payload=payload, arrays=arrays)
