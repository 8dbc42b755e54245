"""The grader's side of the worker protocol: start, watch, kill, restart.

:class:`ForkServer` is the grader's handle on a preloaded process that forks
workers (:mod:`graders.engine.worker.forkserver`). :func:`run_worker` runs a list of
exercises of one submission in worker processes forked by it. It reads the worker's events with a deadline: an exercise that
overruns its timeout, or a worker that dies (segfault, ``os._exit``, the
memory limit, a signal), costs that exercise only -- a fresh worker picks up
the remaining exercises. A learner file whose import hangs or kills the
worker costs that file's exercises only.

Every line a worker sends is decoded by :mod:`graders.engine.values.door` (one strict schema with limits); a
line that does not fit costs the exercise it arrived for (``crashed``, "the worker's result could not be
read"), never the batch. A submission's workers may send :data:`graders.engine.values.door.MAX_SUBMISSION_BYTES`
in all, and may run :func:`wall_cap` seconds in all (a child that sleeps or stops itself in every
exercise spends no CPU: only a clock ends it); past either, its remaining exercises end at once.

The fork server's client is :mod:`graders.engine.worker.fork_client`; the configuration and results both sides
share, :mod:`graders.engine.worker.config`.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

from graders.engine.sandbox import cgroups
from graders.engine.sandbox.layers import merge_reported
from graders.engine.judging import calls
from graders.engine.values import door
from graders.engine.worker.fork_client import LOG_TAIL, ForkServer
from graders.engine.values.kit_messages import kit_message, kit_text
from graders.engine.values.scrub import without_addresses, without_paths
from graders.engine.values.texts import detail
from graders.text import Particular
from graders.engine.worker.config import SandboxMissing, WorkerConfig, WorkerStartError, wall_backstop
from graders.engine.values.protocol import (CPU_BUDGET_MESSAGE, OUTSIDE_PROTOCOL_MESSAGE, TOO_MUCH_MESSAGE,
                                            WALL_CAP_MESSAGE, ExerciseRun)


LOG_KEEP = 64 << 10  # bytes of the worker's stdout/stderr kept (the tail)
MAX_EVENT_BYTES = door.MAX_EVENT_BYTES  # one event line (a result with its arrays, base64)
MAX_RESULT_JSON = door.MAX_RESULT_JSON  # the JSON part of one exercise's result
WALL_CAP_FACTOR, WALL_CAP_GRACE = 1.0, 30.0  # a submission's lane: 1 x its CPU budgets (loads too) + 30 s
_NOT_SERVED_KIT = kit_message("not_served")
NOT_SERVED = {"outcome": "raised", "exception": {  # a trusted case the trusted process reported nothing for
    "type": "RuntimeError", "mro": ["RuntimeError", "Exception", "BaseException", "object"],
    "message": kit_text(_NOT_SERVED_KIT, "en"), "where": "", "sandbox": False, "output": "",
    "kit": _NOT_SERVED_KIT}}


def unreadable(reason: str) -> Particular:
    """The message of an exercise whose worker's report the door refused (:mod:`graders.engine.values.door`)."""
    return detail("result_unreadable", error=reason)


def wall_cap(exercises: list[dict], indices: list[int], load_timeout: float) -> float:
    """Wall-clock seconds one lane of a submission may run in all: :data:`WALL_CAP_FACTOR` x (its exercises'
    CPU budgets + one load budget per learner file) + :data:`WALL_CAP_GRACE`."""
    stems = {exercises[i]["stem"] for i in indices}
    budgets = sum(float(exercises[i]["timeout"]) for i in indices) + load_timeout * len(stems)
    return WALL_CAP_FACTOR * budgets + WALL_CAP_GRACE


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except (ValueError, TypeError):
        return f"signal {-code}"


def describe_exit(code: int | None) -> Particular:
    """How a worker ended, as the kit says it (a Particular of DETAILS; the code or signal is data)."""
    if code is None:
        return detail("exit_unresponsive")
    if code < 0:
        name = _signal_name(code)
        known = {"SIGSEGV": "exit_segfault", "SIGKILL": "exit_killed", "SIGABRT": "exit_aborted",
                 "SIGXFSZ": "exit_file_size"}
        return detail(known[name]) if name in known else detail("exit_signal", signal=name)
    return detail("exit_code", code=code)


def _sanitise(text: str, sub_dir: Path) -> str:
    """A crash log without the grader's own frames, absolute paths or addresses (reports stay deterministic)."""
    text = text.replace(str(sub_dir / "scratch" / "files") + os.sep, "").replace(str(sub_dir), "<submission>")
    lines = [line for line in text.splitlines() if "/graders/" not in line]
    return without_addresses(without_paths("\n".join(lines)))


class Interrupted(Exception):
    """The batch was stopped (Ctrl-C): the worker is killed and its submission left ungraded, never half-reported."""


class _Refused(Exception):
    """A worker's line the door refused; ``everything``: the submission's byte cap is spent (stop it all)."""

    def __init__(self, message: str, everything: bool = False) -> None:
        super().__init__(message)
        self.message, self.everything = message, everything


class _Process:
    def __init__(self, config: WorkerConfig, server: ForkServer, job_dir: Path, sub_dir: Path,
                 indices: list[int], sent: list[int]):
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
        self.config = config
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
        self.sent = sent  # [bytes] read from this submission's workers so far (its lane), shared by its workers

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
            self.sent[0] += len(chunk)
            if self.sent[0] > door.MAX_SUBMISSION_BYTES:
                self.buffer = bytearray()
                raise _Refused(TOO_MUCH_MESSAGE, everything=True)
            self.buffer += chunk
            if len(self.buffer) > MAX_EVENT_BYTES and b"\n" not in self.buffer:
                self.buffer = bytearray()  # an event larger than any result may be: keep nothing
                raise _Refused(unreadable(f"an event larger than {MAX_EVENT_BYTES} bytes"))

    def next_event(self, deadline: float) -> door.Event | None:
        """The next event, decoded by the door, or ``None`` at EOF; raises ``TimeoutError`` past ``deadline``,
        :class:`_Refused` for a line the door refuses (or past the submission's byte cap)."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[:end + 1]
                event = door.read_event(line)
                if isinstance(event, door.Refusal):
                    raise _Refused(unreadable(event))
                return event
            if self.eof:
                return None
            if self.config.abort:
                raise Interrupted("the batch was stopped")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._pump(min(remaining, 0.5))

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

    ``layers`` (a dict) receives the sandbox layers the worker's processes reported: each layer in force only
    if every one had it (:func:`graders.engine.sandbox.layers.merge_reported`).
    """
    layers = {} if layers is None else layers
    results: dict[int, ExerciseRun] = {}
    remaining = list(indices)
    attempt = 0
    sent = [0]  # bytes read from this lane's workers, together
    cap = time.monotonic() + wall_cap(exercises, indices, config.load_timeout)
    while remaining:
        attempt += 1
        process = _Process(config, server, job_dir, sub_dir, remaining, sent)
        current: tuple[str, object] | None = None
        deadline = time.monotonic() + wall_backstop(config.load_timeout)
        started_anything = False
        outcome, message = None, ""
        try:
            while True:
                event = process.next_event(min(deadline, cap))
                if event is None:
                    outcome = "eof"
                    break
                started_anything = True
                kind = event.kind
                if kind == "sandbox":  # each process that runs the submission's work reports its own: a
                    # learner's child (the first of a worker) and each trusted process; all must have a layer
                    merge_reported(layers, {**{str(k): bool(v) for k, v in event.sandbox.items()},
                                            "cgroup_limits": process.group is not None,
                                            "identity": event.identity[:200]})
                    missing = [name for name in config.require if layers.get(name) is not True]
                    if missing:
                        process.kill()
                        process.finish()
                        raise SandboxMissing("a worker started without the sandbox layer(s) "
                                             f"{', '.join(missing)} (--require-sandbox)")
                elif kind == "load":
                    current, deadline = ("load", event.load), time.monotonic() + wall_backstop(config.load_timeout)
                elif kind == "loaded":
                    _loaded(event, exercises, remaining, results)
                    current = None
                elif kind == "start":
                    if event.start in remaining:
                        current = ("exercise", event.start)
                        deadline = time.monotonic() + wall_backstop(exercises[event.start]["timeout"])
                elif kind == "done":
                    if event.done in remaining:
                        results[event.done] = _read_result(event, exercises[event.done])
                        remaining.remove(event.done)
                    current = None
                    deadline = time.monotonic() + wall_backstop(config.load_timeout)
                elif kind == "crashed":  # a child died; the worker goes on with the next exercise
                    _crashed(event, exercises, remaining, results, process.log_tail(sub_dir))
                    current = None
                    deadline = time.monotonic() + wall_backstop(config.load_timeout)
                elif kind == "finished" and event.finished:
                    outcome = "finished"
                    break
        except Interrupted:
            process.kill()
            process.finish()
            raise
        except TimeoutError:
            outcome = "cap" if time.monotonic() >= cap else "timeout"
            message = WALL_CAP_MESSAGE
            process.kill()
        except _Refused as refused:
            outcome, message = ("bytes" if refused.everything else "refused"), refused.message
            process.kill()
        code = process.finish()
        if config.namespaces and code is not None and code > 128:
            code = -(code - 128)  # the namespace's PID 1 exits with 128 + the signal that killed the worker
        if outcome == "finished":
            break
        tail = process.log_tail(sub_dir)
        if outcome in ("cap", "bytes"):  # the submission's own caps: nothing more of it runs
            status = "timeout" if outcome == "cap" else "crashed"
            for index in remaining:
                load = current is not None and current[0] == "load" and exercises[index]["stem"] == current[1]
                results[index] = ExerciseRun(("load_" if load else "") + status, message=message)
            break
        if current is None:
            if attempt == 1 and not started_anything and outcome != "refused":
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
        if outcome != "refused":
            message = describe_exit(None if outcome == "timeout" else code)
        for index in affected:
            results[index] = ExerciseRun(status, message=message, output=tail)
            remaining.remove(index)
    return results


def _loaded(event: door.Event, exercises: list[dict], remaining: list[int], results: dict) -> None:
    """A ``loaded`` event: a load error (or one the door refuses) costs its file's exercises."""
    error = door.read_error(event.error)
    if error is None:
        return
    run = (ExerciseRun("load_crashed", message=unreadable(error)) if isinstance(error, door.Refusal)
           else ExerciseRun("load_error", payload={"error": error}))
    for index in [i for i in remaining if exercises[i]["stem"] == event.loaded]:
        results[index] = run
        remaining.remove(index)


def _crashed(event: door.Event, exercises: list[dict], remaining: list[int], results: dict, tail: str) -> None:
    """A ``crashed`` event: its child died (or spent its CPU budget) at load or in an exercise."""
    over_budget = event.cpu_timeout  # its parent ended it: CPU budget spent
    if event.breach:  # its parent ended it for writing outside the protocol (or too much): a crash, no tail
        message, tail = OUTSIDE_PROTOCOL_MESSAGE, ""
    else:
        message = CPU_BUDGET_MESSAGE if over_budget else describe_exit(event.code)
        tail = "" if over_budget else tail
    if event.during == "load":
        for other in [i for i in remaining if exercises[i]["stem"] == event.stem]:
            status = "load_timeout" if over_budget else "load_crashed"
            results[other] = ExerciseRun(status, message=message, output=tail)
            remaining.remove(other)
    elif event.crashed in remaining:
        results[event.crashed] = ExerciseRun("timeout" if over_budget else "crashed", message=message, output=tail)
        remaining.remove(event.crashed)


def _read_result(event: door.Event, exercise: dict) -> ExerciseRun:
    """One exercise's result from its ``done`` event, through the door (sizes, kinds and references checked)."""
    read = door.read_result(event.result, event.arrays, len(exercise.get("cases", ())))
    if isinstance(read, door.Refusal):
        return ExerciseRun("crashed", message=unreadable(read))
    payload, arrays = read
    positions = calls.trusted_positions(exercise) if exercise.get("trusted_apart") else []
    if positions:
        # a trusted case's outcome comes from the trusted process only, whatever else the child's result says:
        # what the child put there is a placeholder (only its printed output is kept), and no array of the
        # child's has the served prefix
        served = door.read_served([] if event.served is door.UNSET else event.served, positions)
        if isinstance(served, door.Refusal) or any(name.startswith("t") for name in arrays):
            return ExerciseRun("crashed", message=unreadable(served if isinstance(served, door.Refusal)
                                                             else "an array named as a served one"))
        cases, served_arrays = served
        for position in positions:
            if position < len(payload["cases"]):
                output = payload["cases"][position].get("output", "")
                payload["cases"][position] = {**cases.get(position, NOT_SERVED), "output": output}
        arrays = {**arrays, **served_arrays}
    observed = None if event.inputs_changed is door.UNSET else event.inputs_changed
    return ExerciseRun("done", payload=payload, arrays=arrays, inputs_changed=observed)
