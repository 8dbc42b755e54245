"""The grading worker: a clean parent per submission, and fresh confined children for its exercises.

A fork server (:mod:`graders.engine.forkserver`) forks the parent
(:class:`Parent`) for each submission, in fresh namespaces, with NumPy, the
kit and (on the torch server) torch already imported. The parent never runs
learner code. It forks a child (:class:`Child`) per group of exercises and
relays what the child reports to the grader. A group is the exercises
of one learner file without a harness, or those of one learner file that share
a harness (a harness may hold a trusted copy of another exercise's formula,
so no other exercise's learner code may share its process). Each child reads only its own exercises'
files (``JOB_DIR/ex_<i>.json`` + ``.npz``: the cases and the call mode),
gets its own mount and IPC namespaces with a fresh size-capped ``tmpfs`` as
its only writable folder, confines itself
(:func:`graders.engine.confine.confine`), and only then loads the learner's
file and runs the cases. So no learner code ever shares a process with a
harness's trusted code (other than its own exercise's), nor with the grader;
a child that dies costs the exercise it was running, and a fresh child runs
the rest of its group.

In its own namespaces the parent is PID 1: after every child it kills
whatever else is left in the namespace, and when the grader kills the parent
the kernel ends everything at once.

``JOB_DIR/job.json`` holds what every child needs (the sandbox settings, the
given code, which file each exercise belongs to) and no case.
``SUBMISSION_DIR/files/`` holds the learner files (copied there by the
grader); ``SUBMISSION_DIR/scratch/<i>/`` is the mount point of the child whose
first exercise is ``i``.

Given modules (``grpo_toy.py``: the kit's given code that learner files
import by their plain names) come from the job, never from the submission: a
child writes them to ``given/`` in its scratch and puts that folder first on
``sys.path``, so the learner's ``from grpo_toy import ...`` gets the kit's
copy (a submitted ``grpo_toy.py`` is never even copied: only learner files
are). A harness gets copies of its own (``starter(name)``), loaded before any
learner code runs and then dropped from ``sys.modules``: whatever the
learner's code does to the modules it imported, or to any module it can name,
never reaches what the harness runs.

The parent starts its first child only after the grader writes ``go`` on
its standard input, which the grader does once it has loaded every file it
will execute itself (so the worker's start-up overlaps that, but no learner
code runs before it).

Protocol on the events pipe (JSON lines, read by the grader with deadlines
and size caps), all written by the parent: ``{"sandbox": {...}, "identity":
...}`` (from the first child, written before any learner code ran),
``{"load": stem}`` / ``{"loaded": stem, "error": ...}`` around a child's
import of the learner file, ``{"start": i}`` / ``{"done": i, "result": ...,
"arrays": codec.pack_blob(...)}`` around each exercise's cases, ``{"crashed": i, "stem": ..., "during":
"load"|"exercise", "code": ...}`` when a child dies, and ``{"finished":
true}``. A child only ever speaks to the parent, through its own pipe, and
the parent labels what it relays with the exercises it started the child
for, in order: a child cannot report for another exercise.

This module never imports ``solutions``, ``graders.checks`` or
``graders.misconceptions``; the kernel and the audit hook refuse them to
learner code.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import sys
import traceback
from pathlib import Path

import numpy as np

from graders.engine import calls, codec, confine, sandbox
from graders.engine.libc import libc as _libc

OUTPUT_LIMIT = 4000  # characters of printed output kept per case
MAX_CHILD_BYTES = 64 << 20  # what the parent reads from one child (a result with its arrays)
CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
PR_SET_CHILD_SUBREAPER = 36
CPU_POLL_SECONDS = 0.05  # how often the parent reads a child's CPU time while it is silent
MS_REC, MS_PRIVATE = 0x4000, 0x40000
HARNESS_PREFIX = "_rl4llm_given_"  # the harness's own copies of given modules (never in sys.modules)


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


def _write_line(fd: int, event: dict) -> None:
    data = (json.dumps(event, sort_keys=True) + "\n").encode("utf-8")
    while data:
        written = os.write(fd, data)
        data = data[written:]


class Parent:
    """One submission's worker: imports once, forks a confined child per exercise, relays its reports."""

    def __init__(self, job_dir: Path, sub_dir: Path, events_fd: int, namespaced: bool = False) -> None:
        self.job_dir = job_dir
        self.sub_dir = sub_dir
        self.events_fd = events_fd
        self.namespaced = namespaced
        self.job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
        self.failed_stems: set[str] = set()
        self.sent_sandbox = False

    def emit(self, **event) -> None:
        _write_line(self.events_fd, event)

    def prepare(self) -> None:
        """Everything children share, done once: what the kernel will let them read (the fork server has
        imported everything they use: :func:`graders.engine.forkserver.preload`)."""
        settings = self.job["sandbox"]
        self.forbidden = [*settings["forbidden_paths"], str(self.job_dir.parent), str(self.sub_dir / "files")]
        self.readable = confine.readable_roots(self.forbidden + list(settings.get("closed_paths", [])))
        self.identity = confine.identity()
        if self.namespaced:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # PID 1 without handlers: nothing inside can signal it
        elif sys.platform.startswith("linux"):
            # outside namespaces: orphans of a child (setsid daemons) become this process's, to be ended
            _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def run(self, indices: list[int]) -> None:
        """Wait for the grader's ``go``, then run ``indices`` child by child (see :meth:`groups`)."""
        # the grader says "go" once it has loaded everything it executes: no learner code runs before
        if sys.stdin.buffer.readline().strip() != b"go":
            self.emit(finished=True)
            return
        sys.stdin.close()
        for group in self.groups(indices):
            while group and group[0][1] not in self.failed_stems:
                group = self.run_child([index for index, _ in group], group[0][1])
        self.emit(finished=True)

    def groups(self, indices: list[int]) -> list[list[tuple[int, str]]]:
        """The children of ``indices``: per learner file, one for its plain exercises, then one per harness.

        A harness may hold trusted copies of other exercises' formulas (the GRPO toy's group advantages,
        the exact KL optimum), so learner code of no other exercise may share its process: exercises that
        share a harness (the same source) share a child; no other exercise joins them.
        """
        harness = self.job.get("harness", {})
        groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for index in indices:
            stem = self.job["stems"][str(index)]
            groups.setdefault((stem, harness.get(str(index), "")), []).append((index, stem))
        return list(groups.values())

    def run_child(self, indices: list[int], stem: str) -> list[tuple[int, str]]:
        """One child for ``indices`` (one learner file); returns the exercises still to run after a crash."""
        scratch = self.sub_dir / "scratch" / str(indices[0])
        scratch.mkdir(mode=0o700, exist_ok=True)
        read_fd, write_fd = os.pipe()
        self.emit(load=stem)
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            os.close(self.events_fd)  # the child speaks only through its own pipe, never for another exercise
            code = 0
            try:
                Child(self, indices, stem, scratch, write_fd).run()
            except BaseException:  # noqa: BLE001 - the kit's own failure in the child: say so on stderr
                traceback.print_exc(file=sys.__stderr__)
                code = 70
            sys.__stderr__.flush()
            os._exit(code)
        os.close(write_fd)
        clock = CpuClock(pid)
        stage, finished, over_budget = self.relay(indices, stem, read_fd, clock)
        clock.kill()  # it has nothing more to say: a child that closed its pipe, or one still spinning threads
        status = self.clean_up(pid)  # after its last result, runs no longer than it takes to be killed
        left: list[tuple[int, str]] = []
        if stage != "done":
            code = os.waitstatus_to_exitcode(status) if status is not None else None
            if stage == "load":
                self.failed_stems.add(stem)
            self.emit(crashed=indices[finished], stem=stem, during="load" if stage == "load" else "exercise",
                      code=None if over_budget else code, cpu_timeout=over_budget)
            left = [(index, stem) for index in indices[finished + 1:]]
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(closed_root_folder(scratch), ignore_errors=True)
        return left

    def budget(self, stage: str, index: int) -> float | None:
        """CPU seconds the child may spend on ``stage`` (its load, or exercise ``index``); None: no budget."""
        if stage == "load":
            return self.job.get("load_timeout")
        return self.job.get("timeouts", {}).get(str(index))

    def relay(self, indices: list[int], stem: str, fd: int, clock: "CpuClock") -> tuple[str, int, bool]:
        """Forward the child's reports, labelled with the exercises it was started for, in order, and hold
        it to its CPU-time budget: the load's, then each exercise's own.

        The budget counts CPU seconds of the child's every thread (``/proc/<pid>/stat``), not wall-clock
        time, so a loaded machine does not change the verdict; the grader keeps a generous wall-clock
        backstop for a child that sleeps or deadlocks (:func:`graders.engine.runner.wall_backstop`).
        Returns how far it got (``load``, ``exercise`` or ``done``), how many exercises it finished, and
        whether the child was killed for spending more than its budget.
        """
        stage, finished = "load", 0
        buffer = bytearray()
        limit, start = self.budget("load", indices[0]), clock.read()
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while True:
                if limit is not None and clock.read() - start > limit:
                    clock.kill()
                    return stage, finished, True
                ready, _, _ = select.select([pipe], [], [], CPU_POLL_SECONDS)
                if not ready:
                    continue
                chunk = pipe.read(1 << 20)
                if not chunk:
                    return stage, finished, False
                buffer += chunk
                if len(buffer) > MAX_CHILD_BYTES:
                    return stage, finished, False
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[:end + 1]
                    try:
                        event = json.loads(line.decode("utf-8"))
                    except (UnicodeDecodeError, ValueError, RecursionError):
                        continue
                    if not isinstance(event, dict):
                        continue
                    if "sandbox" in event and stage == "load" and not self.sent_sandbox:
                        self.sent_sandbox = True
                        layers = dict(event["sandbox"]) if isinstance(event["sandbox"], dict) else {}
                        layers["cpu_budget"] = clock.works and limit is not None
                        self.emit(sandbox=layers, identity=event.get("identity", ""))
                    elif "loaded" in event and stage == "load":
                        error = event["loaded"] if isinstance(event["loaded"], dict) else None
                        self.emit(loaded=stem, error=error)
                        if error:
                            self.failed_stems.add(stem)
                            return "done", finished, False
                        stage = "exercise"
                        limit, start = self.budget(stage, indices[0]), clock.read()
                        self.emit(start=indices[0])
                    elif "result" in event and stage == "exercise":
                        self.emit(done=indices[finished], result=event["result"], arrays=event.get("arrays"))
                        finished += 1
                        if finished == len(indices):
                            return "done", finished, False
                        limit, start = self.budget(stage, indices[finished]), clock.read()
                        self.emit(start=indices[finished])

    def clean_up(self, pid: int) -> int | None:
        """Wait for the child; then end everything else it left running. Returns its wait status."""
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = None
        if self.namespaced:  # PID 1: kill(-1) reaches every other process of the namespace
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            kill_descendants()
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        return status


class Child:
    """Exercises of one learner file in a forked process: read their case files, confine, load the file, run.

    A harness's exercise always has a child of its own (:meth:`Parent.groups`).
    """

    def __init__(self, parent: Parent, indices: list[int], stem: str, scratch: Path, write_fd: int) -> None:
        self.parent = parent
        self.indices = indices
        self.stem = stem
        self.scratch = scratch
        self.files_dir = scratch / "files"
        self.given_dir = scratch / "given"
        self.write_fd = write_fd
        self.starters: dict[str, object] = {}
        self.kept: dict[str, tuple[dict, dict]] = {}  # given module -> its kept state from the job
        self.fence: sandbox.Fence | None = None

    def report(self, **event) -> None:
        _write_line(self.write_fd, event)

    def read_exercise(self, index: int) -> tuple[dict, dict]:
        """Exercise ``index``'s entry (cases, call mode) and its input arrays."""
        path = self.parent.job_dir / f"ex_{index}"
        exercise = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        inputs = {}
        if path.with_suffix(".npz").exists():
            with np.load(path.with_suffix(".npz"), allow_pickle=False) as loaded:
                inputs = {key: loaded[key] for key in loaded.files}
        return exercise, inputs

    def run(self) -> None:
        parent = self.parent
        exercises = [self.read_exercise(index) for index in self.indices]
        needed = {name for exercise, _ in exercises for name in exercise["call"].get("given", ())}
        self.kept = {name: codec.read_bundle(parent.job_dir / f"given_{name}")  # read now: confined, it cannot
                     for name in parent.job.get("given_state", ()) if name in needed}
        settings = parent.job["sandbox"]
        layers = {"namespaces": parent.namespaced, "scratch_quota": False}
        root = None  # where the closed root is built: only in a mount namespace of its own
        if parent.namespaced and private_namespaces():
            layers["scratch_quota"] = confine.mount_scratch(self.scratch, settings.get("scratch_bytes", 128 << 20))
            root = closed_root_folder(self.scratch)
            root.mkdir(mode=0o700, exist_ok=True)
        for folder in ("files", "given", "work"):
            (self.scratch / folder).mkdir(exist_ok=True)
        for source in (parent.sub_dir / "files").glob("*.py"):
            shutil.copyfile(source, self.files_dir / source.name)
        for name, text in parent.job.get("given_sources", {}).items():
            (self.given_dir / f"{name}.py").write_text(text, encoding="utf-8")
        os.chdir(self.scratch / "work")
        layers = confine.confine(self.scratch, settings, layers, readable=parent.readable, root=root)
        if settings.get("landlock_required") and not layers.get("landlock_files"):
            # the grader let learner code start before loading the kit's files, counting on Landlock
            raise RuntimeError("Landlock could not be applied, and this batch relies on it: no learner code runs")
        root = os.path.realpath(settings["kit_root"])
        self.fence = sandbox.Fence(parent.forbidden, settings["forbidden_modules"], allowed_paths=[str(self.scratch)])
        # the kit's own folder and every forbidden one (the server's working folder, say) are not on the
        # learner's import path: an innocent import must never make the import system list them; the kit's
        # given modules and the learner's own files are (given first: a learner file never stands in for one)
        sys.path[:] = [str(self.given_dir), str(self.files_dir)] + [
            p for p in sys.path if p and os.path.realpath(p) != root and not self.fence.path_is_forbidden(p)]
        sandbox.install_audit_hook(self.fence)
        self.report(sandbox=layers, identity=parent.identity)  # before any learner code runs
        for exercise, _ in exercises:
            self.load_given(exercise)
        module = self.load()
        if module is not None:
            for exercise, inputs in exercises:
                self.run_exercise(module, exercise, inputs)

    def load_given(self, exercise: dict) -> None:
        """The harness's own copies of the given modules it declares, loaded before any learner code runs.

        They are then taken out of ``sys.modules``: learner code finds them under no name (its own
        ``import grpo_toy`` loads another copy, from ``given/``).
        """
        from graders.loader import load_module

        files = {name: self.given_dir / f"{name}.py" for name in self.parent.job.get("given_sources", {})}
        for name in exercise["call"].get("given", ()):
            self.starters[name] = load_module(files[name], f"{HARNESS_PREFIX}{name}", given=files)
            if name in self.kept:  # an earlier batch's warm-ups of the same code
                codec.fill_kept_state(self.starters[name], *self.kept[name])
        for key in [key for key in sys.modules if key.startswith(HARNESS_PREFIX)]:
            del sys.modules[key]

    # -- learner code -----------------------------------------------------
    def starter(self, name: str):
        """The starter's given module ``name`` as the harness loaded it (see :meth:`load_given`)."""
        if name not in self.starters:
            raise ValueError(f"the harness declares no given module {name!r} (Harness(given=...))")
        return self.starters[name]

    def load(self):
        from graders.loader import load_module

        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        error = module = None
        try:
            module = load_module(self.files_dir / f"{self.stem}.py", f"_rl4llm_learner_{self.stem}")
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
        self.report(loaded=error)
        return None if error else module

    def run_exercise(self, module, exercise: dict, inputs: dict) -> None:
        name = exercise["function"]
        encoder = codec.Encoder()
        result: dict = {"cases": [], "missing": None, "violations": []}
        function = getattr(module, name, None)
        if not callable(function):
            result["missing"] = f"{self.stem}.py has no function {name}"
        else:
            for position, case in enumerate(exercise["cases"]):
                outcome = self.run_case(exercise, function, module, case, inputs, encoder)
                result["cases"].append(outcome)
                if outcome.get("exception", {}).get("type") == "MemoryError":
                    # the process is near its memory limit: the remaining cases are not run
                    skipped = len(exercise["cases"]) - position - 1
                    result["cases"] += [{"outcome": "raised", "exception": outcome["exception"]}] * skipped
                    break
        result["violations"] = self.fence.take_violations()
        self.report(result=json.dumps(result, sort_keys=True, allow_nan=False), arrays=codec.pack_blob(encoder.arrays))

    def run_case(self, exercise: dict, function, module, case: dict, inputs: dict, encoder: codec.Encoder) -> dict:
        make = codec.make_torch_tensor if exercise.get("torch") else None
        args = tuple(codec.decode(case["args"], inputs, make_tensor=make))
        kwargs = codec.decode(case["kwargs"], inputs, make_tensor=make)
        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        outcome: dict
        try:
            raw = calls.call_case(exercise["call"], function, module, self.starter, args, kwargs)
            value = codec.normalise(raw)
            outcome = {"outcome": "ok", "value": encoder.encode(value), "type": codec.type_of(raw)}
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


def closed_root_folder(scratch: Path) -> Path:
    """The empty folder beside a child's scratch folder that its closed root is built on
    (:func:`graders.engine.confine.enter_closed_root`); the parent removes it with the scratch folder."""
    return scratch.with_name(scratch.name + ".root")


class CpuClock:
    """The CPU time a child has used: user + system seconds of all its threads, and of children it waited
    for (``/proc/<pid>/stat`` fields 14-17). ``works`` is False where ``/proc`` cannot tell (not Linux)."""

    TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.works = True
        self.read()

    def read(self) -> float:
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            return sum(int(fields[i]) for i in (11, 12, 13, 14)) / self.TICKS
        except (OSError, IndexError, ValueError):
            self.works = False
            return 0.0

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_descendants() -> None:
    """SIGKILL every process below this one (it is a child subreaper: orphans come back to it), until none is left."""
    for _ in range(1000):
        children: list[int] = []
        try:
            for task in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                    children += [int(pid) for pid in handle.read().split()]
        except OSError:
            return
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def warm_up_torch() -> None:
    """One thread, and torch's first-use set-up (kernels, autograd: about half a second per process) paid
    once here, so that every forked child starts warm. The toys' optimiser is written out in their given
    modules (``torch.optim`` would import ``torch._dynamo``, another second); its operations run here."""
    import torch

    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    embed, gru, head = torch.nn.Embedding(5, 4), torch.nn.GRU(4, 8, batch_first=True), torch.nn.Linear(8, 5)
    parameters = [*embed.parameters(), *gru.parameters(), *head.parameters()]
    tokens = torch.randint(0, 5, (2, 3), generator=generator)
    hidden, _ = gru(embed(tokens))
    logits = head(hidden)
    loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tokens)
    loss = loss + torch.log_softmax(logits, -1).mean() + torch.nn.functional.logsigmoid(logits.double()).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(parameters, 1.0)
    with torch.no_grad():  # the written-out Adam's operations
        for p in parameters:
            m, v = torch.zeros_like(p), torch.zeros_like(p)
            m.lerp_(p.grad, 0.1)
            v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
            p.addcdiv_(m, (v.sqrt() / 0.5).add_(1e-8), value=-1e-3)


def private_namespaces() -> bool:
    """Give this process its own mount and IPC namespaces (mounts private): True when it worked."""
    if _libc().unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0:
        return False
    return _libc().mount(b"none", b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) == 0


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
