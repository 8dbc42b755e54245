"""The grading worker: a fresh interpreter that runs one submission's learner code, confined by the kernel.

    [unshare ... --] python -m graders.engine.worker JOB_DIR SUBMISSION_DIR --run 0,3,4 --events-fd N

``JOB_DIR/job.json`` (+ ``inputs.npz``) lists the exercises and their cases
and the given (starter) code, shared by every submission of a batch.
``SUBMISSION_DIR/files/`` holds the learner files (copied there by the
grader) and ``SUBMISSION_DIR/scratch/`` is the only place the worker may
write. Both are read *before* the worker confines itself
(:func:`graders.engine.confine.confine`): from then on the kernel refuses it
the job folder, the kit, every other submission and the output folder.

When the grader starts it in fresh namespaces, the worker is PID 1 there: it
forks, and that first process only waits (and reaps), so the namespace ends
-- with everything learner code started -- when the grader kills it.

Protocol: one JSON line per event on the events pipe, which the parent reads
with deadlines and size caps: ``{"sandbox": {...}}`` once confined,
``{"load": stem}`` then ``{"loaded": stem, "error": ...}`` around importing a
learner file, ``{"start": i}`` then ``{"done": i, "result": ..., "npz":
base64}`` around an exercise, and ``{"finished": true}`` at the end. The
parent kills and restarts the worker when an exercise overruns its timeout or
the process dies, so a hang or crash costs only that exercise.

This module never imports ``solutions``, ``graders.checks`` or
``graders.misconceptions``; the kernel and the audit hook refuse them to
learner code.
"""

from __future__ import annotations

import argparse
import base64
import faulthandler
import io
import json
import os
import shutil
import sys
import traceback
from pathlib import Path

import numpy as np

from graders.engine import calls, codec, confine, sandbox

OUTPUT_LIMIT = 4000  # characters of printed output kept per case


class CappedWriter:
    """A text stream that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n...[{self.dropped} more characters of output dropped]"
        return out


class Worker:
    def __init__(self, job_dir: Path, sub_dir: Path, events_fd: int, namespaced: bool = False) -> None:
        self.job_dir = job_dir
        self.sub_dir = sub_dir
        self.scratch = sub_dir / "scratch"
        self.files_dir = self.scratch / "files"
        self.namespaced = namespaced
        self.events_fd = events_fd
        self.job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
        self._inputs = None
        self.modules: dict[str, object] = {}
        self.load_errors: dict[str, dict] = {}
        self.starters: dict[str, object] = {}
        self.fence: sandbox.Fence | None = None

    # -- protocol ---------------------------------------------------------
    def emit(self, **event) -> None:
        data = (json.dumps(event, sort_keys=True) + "\n").encode("utf-8")
        while data:
            written = os.write(self.events_fd, data)
            data = data[written:]

    @property
    def inputs(self) -> dict[str, np.ndarray]:
        if self._inputs is None:
            path = self.job_dir / "inputs.npz"
            self._inputs = {}
            if path.exists():
                with np.load(path, allow_pickle=False) as loaded:
                    self._inputs = {key: loaded[key] for key in loaded.files}
        return self._inputs

    # -- set-up -----------------------------------------------------------
    def prepare(self) -> None:
        """Read everything the run needs, then confine this process (see :mod:`graders.engine.confine`)."""
        sys.dont_write_bytecode = True
        self.inputs  # noqa: B018 - read the shared inputs before the kernel closes the job folder
        if self.job.get("needs_torch"):
            import torch

            torch.set_num_threads(1)
        import graders.loader  # noqa: F401 - imported before the kernel closes the kit
        import graders.engine.feedback  # noqa: F401 - nothing of the kit is imported lazily later

        settings = self.job["sandbox"]
        who = confine.identity()
        layers = {"namespaces": self.namespaced}
        layers["scratch_quota"] = self.namespaced and confine.mount_scratch(
            self.scratch, settings.get("scratch_bytes", 128 << 20))
        for folder in ("files", "given", "work"):
            (self.scratch / folder).mkdir(exist_ok=True)
        for source in (self.sub_dir / "files").glob("*.py"):
            shutil.copyfile(source, self.files_dir / source.name)
        for stem, text in self.job.get("starter_sources", {}).items():
            (self.scratch / "given" / f"{stem}.py").write_text(text, encoding="utf-8")
        os.chdir(self.scratch / "work")
        # the kit's own folder is not on the learner's import path; the learner's own files are
        root = os.path.realpath(settings["kit_root"])
        forbidden = [*settings["forbidden_paths"], str(self.job_dir.parent), str(self.sub_dir / "files")]
        closed = forbidden + list(settings.get("closed_paths", []))
        layers = confine.confine(self.scratch, {**settings, "forbidden_paths": closed}, layers)
        sys.path[:] = [str(self.files_dir)] + [p for p in sys.path if p and os.path.realpath(p) != root]
        self.fence = sandbox.Fence(forbidden, settings["forbidden_modules"], allowed_paths=[str(self.scratch)])
        sandbox.install_audit_hook(self.fence)
        self.emit(sandbox=layers, identity=who)

    # -- learner code -----------------------------------------------------
    def starter(self, stem: str):
        """The public starter module of ``stem`` (given code; used by harnesses)."""
        if stem not in self.starters:
            from graders.loader import load_module

            path = self.scratch / "given" / f"{stem}.py"
            if stem not in self.job.get("starter_sources", {}):
                raise ValueError(f"no starter file for {stem!r}")
            self.starters[stem] = load_module(path, f"_rl4llm_starter_{stem}")
        return self.starters[stem]

    def load(self, stem: str) -> None:
        from graders.loader import load_module

        self.emit(load=stem)
        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        error = None
        try:
            self.modules[stem] = load_module(self.files_dir / f"{stem}.py", f"_rl4llm_learner_{stem}")
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is the learner's error
            error = describe_exception(exc, self.files_dir)
        finally:
            sys.stdout, sys.stderr = saved
        violations = self.fence.take_violations()
        if violations:
            error = {"type": "PermissionError", "mro": ["PermissionError"], "message": violations[0],
                     "where": "", "sandbox": True}
        if error:
            error["output"] = capture.text()
            self.load_errors[stem] = error
        self.emit(loaded=stem, error=error)

    def run_exercise(self, index: int) -> None:
        exercise = self.job["exercises"][index]
        stem, name = exercise["stem"], exercise["function"]
        self.emit(start=index)
        encoder = codec.Encoder()
        result: dict = {"cases": [], "missing": None, "violations": []}
        module = self.modules.get(stem)
        function = getattr(module, name, None) if module is not None else None
        if module is None:
            result["missing"] = f"{stem}.py could not be loaded"
        elif not callable(function):
            result["missing"] = f"{stem}.py has no function {name}"
        else:
            for position, case in enumerate(exercise["cases"]):
                outcome = self.run_case(exercise["call"], function, module, case, encoder)
                result["cases"].append(outcome)
                if outcome.get("exception", {}).get("type") == "MemoryError":
                    # the process is near its memory limit: the remaining cases are not run
                    skipped = len(exercise["cases"]) - position - 1
                    result["cases"] += [{"outcome": "raised", "exception": outcome["exception"]}] * skipped
                    break
        result["violations"] = self.fence.take_violations()
        self.emit(done=index, result=json.dumps(result, sort_keys=True, allow_nan=False),
                  npz=pack_arrays(encoder.arrays))

    def run_case(self, call: dict, function, module, case: dict, encoder: codec.Encoder) -> dict:
        make = codec.make_torch_tensor if self.job.get("needs_torch") else None
        args = tuple(codec.decode(case["args"], self.inputs, make_tensor=make))
        kwargs = codec.decode(case["kwargs"], self.inputs, make_tensor=make)
        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        outcome: dict
        try:
            raw = calls.call_case(call, function, module, self.starter, args, kwargs)
            value = codec.normalise(raw)
            outcome = {"outcome": "ok", "value": encoder.encode(value)}
        except BaseException as exc:  # noqa: BLE001 - sys.exit inside an exercise is its error
            outcome = {"outcome": "raised", "exception": describe_exception(exc, self.files_dir)}
        finally:
            sys.stdout, sys.stderr = saved
        if outcome["outcome"] == "ok":
            # the inputs as they are after the call: the grader decides whether they changed
            try:
                outcome["inputs_after"] = encoder.encode(codec.as_input_specs((args, kwargs)))
            except (TypeError, ValueError, RuntimeError):
                outcome["inputs_after"] = None
        outcome["output"] = capture.text()
        return outcome

    def main(self, indices: list[int]) -> None:
        self.prepare()
        for index in indices:
            stem = self.job["exercises"][index]["stem"]
            if stem not in self.modules and stem not in self.load_errors:
                self.load(stem)
            self.run_exercise(index)
        self.emit(finished=True)


def pack_arrays(arrays: dict[str, np.ndarray]) -> str:
    """Arrays as base64 of an ``.npz`` (read back with ``allow_pickle=False``)."""
    if not arrays:
        return ""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def describe_exception(exc: BaseException, files: Path) -> dict:
    """Type, MRO names, message and the learner-file line where it happened."""
    if isinstance(exc, SystemExit):
        message = f"called sys.exit({exc.code!r})"
    elif isinstance(exc, MemoryError):
        message = "ran out of memory (the worker's memory limit was reached)"
    else:
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001
            message = "<unprintable message>"
    where = ""
    files_dir = str(files)
    # no source lines are looked up: they live in files the worker may no longer read
    frames = traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)
    for frame in reversed(frames):
        if frame.filename.startswith(files_dir):
            where = f"{Path(frame.filename).name}, line {frame.lineno}, in {frame.name}"
            break
    if not where and isinstance(exc, SyntaxError) and exc.filename and str(exc.filename).startswith(files_dir):
        where = f"{Path(exc.filename).name}, line {exc.lineno}"
    return {"type": type(exc).__name__, "mro": [c.__name__ for c in type(exc).__mro__],
            "message": message[:2000], "where": where}


def supervise() -> None:
    """As PID 1 of the worker's own PID namespace: fork, wait, reap, and exit with the worker.

    This process runs no learner code and keeps the parent-death signal that
    ``unshare --kill-child`` gave it, so when the grader kills it (or dies)
    the kernel ends every process in the namespace.
    """
    child = os.fork()
    if child == 0:
        return
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except KeyboardInterrupt:
            continue
        if pid == child:
            os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.engine.worker")
    parser.add_argument("job_dir", type=Path)
    parser.add_argument("sub_dir", type=Path)
    parser.add_argument("--run", required=True, help="comma-separated exercise indices")
    parser.add_argument("--events-fd", type=int, required=True)
    parser.add_argument("--namespaced", action="store_true", help="started in fresh namespaces (as PID 1)")
    args = parser.parse_args(argv)
    if args.namespaced and os.getpid() == 1:
        supervise()
    faulthandler.enable(file=sys.__stderr__)
    worker = Worker(args.job_dir.resolve(), args.sub_dir.resolve(), args.events_fd, namespaced=args.namespaced)
    worker.main([int(i) for i in args.run.split(",") if i])
    sys.__stdout__.flush()
    sys.__stderr__.flush()
    os._exit(0)  # skip atexit handlers and threads a learner file may have left behind


if __name__ == "__main__":
    main()
