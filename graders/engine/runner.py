"""The grader's side of the worker protocol: start, watch, kill, restart.

:func:`run_worker` runs a list of exercises of one submission in worker
processes. It reads the worker's events with a deadline: an exercise that
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
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders.engine import codec

LOG_TAIL = 1500


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
    text = text.replace(str(sub_dir / "files") + os.sep, "").replace(str(sub_dir), "<submission>")
    lines = [line for line in text.splitlines() if "/graders/" not in line]
    text = "\n".join(lines)
    text = re.sub(r"(?<![\w.])/(?:[^\s\"'/]+/)+([^\s\"'/]+)", r"\1", text)
    return re.sub(r"0x[0-9a-fA-F]{6,}", "0x...", text)


class _Process:
    def __init__(self, config: WorkerConfig, job_dir: Path, sub_dir: Path, indices: list[int], attempt: int):
        read_fd, write_fd = os.pipe()
        self.log_path = sub_dir / f"worker_{attempt}.log"
        log = open(self.log_path, "wb")  # noqa: SIM115 - closed below once the child holds it
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(sub_dir / "work"),
               "PYTHONPATH": config.kit_parent, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(sub_dir / "work"), "LC_ALL": "C.UTF-8",
               "PYTHONIOENCODING": "utf-8", **config.env}
        command = [config.python, "-m", "graders.engine.worker", str(job_dir), str(sub_dir),
                   "--run", ",".join(map(str, indices)), "--events-fd", str(write_fd)]
        extra = {}
        if config.user is not None:
            extra = {"user": config.user, "group": config.user, "extra_groups": []}
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         pass_fds=(write_fd,), cwd=str(sub_dir / "work"), env=env,
                                         start_new_session=True, **extra)
        except OSError as error:
            os.close(read_fd)
            raise WorkerStartError(f"cannot start the grading worker ({config.python}): {error}") from error
        finally:
            os.close(write_fd)
            log.close()
        self.read_fd = read_fd
        os.set_blocking(read_fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(read_fd, selectors.EVENT_READ)
        self.buffer = b""
        self.eof = False

    def next_event(self, deadline: float) -> dict | None:
        """The next event, or ``None`` at EOF; raises ``TimeoutError`` past ``deadline``."""
        while True:
            if b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    event = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue  # noise on the events pipe is ignored
                if isinstance(event, dict):
                    return event
                continue
            if self.eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            if self.selector.select(timeout=min(remaining, 1.0)):
                try:
                    chunk = os.read(self.read_fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.eof = True
                self.buffer += chunk
                if len(self.buffer) > 1 << 20:  # a flood on the events pipe: treat as a crash
                    self.buffer, self.eof = b"", True

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass

    def finish(self) -> int | None:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # stray threads' children, if any
        except (ProcessLookupError, PermissionError):
            pass
        self.selector.close()
        os.close(self.read_fd)
        return code

    def log_tail(self, sub_dir: Path) -> str:
        try:
            data = self.log_path.read_bytes()[-LOG_TAIL:]
        except OSError:
            return ""
        return _sanitise(data.decode("utf-8", "replace"), sub_dir).strip()


def run_worker(config: WorkerConfig, job_dir: Path, sub_dir: Path, exercises: list[dict],
               indices: list[int]) -> dict[int, ExerciseRun]:
    """Run exercises ``indices`` (positions in ``exercises``) of one submission; never raises for learner faults."""
    results: dict[int, ExerciseRun] = {}
    remaining = list(indices)
    attempt = 0
    while remaining:
        attempt += 1
        process = _Process(config, job_dir, sub_dir, remaining, attempt)
        current: tuple[str, object] | None = None
        deadline = time.monotonic() + config.load_timeout
        started_anything = False
        outcome = None
        try:
            while True:
                event = process.next_event(deadline)
                if event is None:
                    outcome = "eof"
                    break
                started_anything = True
                if "load" in event:
                    current, deadline = ("load", event["load"]), time.monotonic() + config.load_timeout
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
                        deadline = time.monotonic() + exercises[index]["timeout"]
                elif "done" in event:
                    index = event["done"]
                    if index in remaining:
                        results[index] = _read_result(sub_dir, index)
                        remaining.remove(index)
                    current = None
                    deadline = time.monotonic() + config.load_timeout
                elif event.get("finished"):
                    outcome = "finished"
                    break
        except TimeoutError:
            outcome = "timeout"
            process.kill()
        code = process.finish()
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


def _read_result(sub_dir: Path, index: int) -> ExerciseRun:
    try:
        payload, arrays = codec.read_bundle(sub_dir / "out" / f"ex_{index}")
        if not isinstance(payload, dict) or not isinstance(payload.get("cases"), list):
            raise ValueError("malformed result")
    except (OSError, ValueError) as error:
        return ExerciseRun("crashed", message=f"the worker's result could not be read ({type(error).__name__})")
    return ExerciseRun("done", payload=payload, arrays=arrays)
