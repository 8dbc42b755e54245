"""The grading worker: a fresh interpreter that runs one submission's learner code.

    python -m graders.engine.worker JOB_DIR SUBMISSION_DIR --run 0,3,4 --events-fd N

``JOB_DIR/job.json`` (+ ``inputs.npz``) lists the exercises and their cases,
shared by every submission of a batch. ``SUBMISSION_DIR`` holds ``files/``
(the learner files, copied there by the grader), ``work/`` (the working
directory) and ``out/`` (one ``ex_<i>.json``/``.npz`` result per exercise).

Protocol: one JSON line per event on the events pipe, which the parent reads
with deadlines: ``{"load": stem}`` then ``{"loaded": stem, "error": ...}``
around importing a learner file, ``{"start": i}`` then ``{"done": i}`` around
an exercise, and ``{"finished": true}`` at the end. The parent kills and
restarts the worker when an exercise overruns its timeout or the process
dies, so a hang or crash costs only that exercise.

This module never imports ``solutions``, ``graders.checks`` or
``graders.misconceptions``, and the audit hook refuses them to learner code.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
import traceback
from pathlib import Path

import numpy as np

from graders.engine import calls, codec, sandbox

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
    def __init__(self, job_dir: Path, sub_dir: Path, events_fd: int) -> None:
        self.job_dir = job_dir
        self.sub_dir = sub_dir
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
        sys.dont_write_bytecode = True
        os.chdir(self.sub_dir / "work")
        self.inputs  # noqa: B018 - read the shared inputs before the fence is armed
        if self.job.get("needs_torch"):
            import torch

            torch.set_num_threads(1)
        import graders.loader  # noqa: F401 - imported before the fence is armed

        settings = self.job["sandbox"]
        # the kit's own folder is not on the learner's import path; the learner's own files are
        root = os.path.realpath(settings["kit_root"])
        sys.path[:] = [str(self.sub_dir / "files")] + [p for p in sys.path if p and os.path.realpath(p) != root]
        self.fence = sandbox.Fence(settings["forbidden_paths"] + [str(self.job_dir.parent)],
                                   settings["forbidden_modules"],
                                   allowed_paths=[str(self.sub_dir), str(self.job_dir),
                                                  *settings.get("allowed_paths", [])])
        sandbox.limit_resources(settings.get("memory_bytes"), settings.get("file_bytes", 256 << 20))
        sandbox.install_audit_hook(self.fence)

    # -- learner code -----------------------------------------------------
    def starter(self, stem: str):
        """The public starter module of ``stem`` (given code; used by harnesses)."""
        if stem not in self.starters:
            from graders.loader import load_module

            path = self.job["starter_files"].get(stem)
            if path is None:
                raise ValueError(f"no starter file for {stem!r}")
            self.starters[stem] = load_module(Path(path), f"_rl4llm_starter_{stem}")
        return self.starters[stem]

    def load(self, stem: str) -> None:
        from graders.loader import load_module

        self.emit(load=stem)
        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        error = None
        try:
            self.modules[stem] = load_module(self.sub_dir / "files" / f"{stem}.py", f"_rl4llm_learner_{stem}")
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is the learner's error
            error = describe_exception(exc, self.sub_dir)
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
        codec.write_bundle(self.sub_dir / "out" / f"ex_{index}", result, encoder.arrays)
        self.emit(done=index)

    def run_case(self, call: dict, function, module, case: dict, encoder: codec.Encoder) -> dict:
        make = codec.make_torch_tensor if self.job.get("needs_torch") else None
        args = tuple(codec.decode(case["args"], self.inputs, make_tensor=make))
        kwargs = codec.decode(case["kwargs"], self.inputs, make_tensor=make)
        before_args, before_kwargs = calls.snapshot(args), calls.snapshot(kwargs)
        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        outcome: dict
        try:
            raw = calls.call_case(call, function, module, self.starter, args, kwargs)
            value = codec.normalise(raw)
            outcome = {"outcome": "ok", "value": encoder.encode(value)}
        except BaseException as exc:  # noqa: BLE001 - sys.exit inside an exercise is its error
            outcome = {"outcome": "raised", "exception": describe_exception(exc, self.sub_dir)}
        finally:
            sys.stdout, sys.stderr = saved
        if outcome["outcome"] == "ok":
            changed = calls.modified_inputs(before_args, before_kwargs, args, kwargs)
            if changed:
                outcome = {"outcome": "modified_input", "changed": changed}
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


def describe_exception(exc: BaseException, sub_dir: Path) -> dict:
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
    files_dir = str(sub_dir / "files")
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith(files_dir):
            where = f"{Path(frame.filename).name}, line {frame.lineno}, in {frame.name}"
            break
    if not where and isinstance(exc, SyntaxError) and exc.filename and str(exc.filename).startswith(files_dir):
        where = f"{Path(exc.filename).name}, line {exc.lineno}"
    return {"type": type(exc).__name__, "mro": [c.__name__ for c in type(exc).__mro__],
            "message": message[:2000], "where": where}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.engine.worker")
    parser.add_argument("job_dir", type=Path)
    parser.add_argument("sub_dir", type=Path)
    parser.add_argument("--run", required=True, help="comma-separated exercise indices")
    parser.add_argument("--events-fd", type=int, required=True)
    args = parser.parse_args(argv)
    faulthandler.enable(file=sys.__stderr__)
    worker = Worker(args.job_dir.resolve(), args.sub_dir.resolve(), args.events_fd)
    worker.main([int(i) for i in args.run.split(",") if i])
    sys.__stdout__.flush()
    sys.__stderr__.flush()
    os._exit(0)  # skip atexit handlers and threads a learner file may have left behind


if __name__ == "__main__":
    main()
