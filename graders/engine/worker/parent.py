"""The grading worker: a clean parent per submission, and fresh confined children for its exercises.

A fork server (:mod:`graders.engine.worker.forkserver`) forks the parent
(:class:`Parent`) for each submission, in fresh namespaces, with NumPy, the
kit and (on the torch server) torch already imported. The parent never runs
learner code. It forks a child (:class:`Child`) per group of exercises and
relays what the child reports to the grader. A group is the exercises
of one learner file without a harness, or those of one learner file that share
a harness. A harness's trusted part (its toy experiments, which hold another
exercise's formula) runs in a trusted process forked beside the child
(:mod:`graders.engine.worker.trusted`), the learner's function served to it by
the child over a pipe pair (:mod:`graders.engine.worker.served`); the trusted
process reports its cases' outcomes on a pipe of its own, which the parent
attaches to the exercise's ``done`` event (``served``). Each child gets only its own exercises'
files (``JOB_DIR/ex_<i>.json`` + ``.arrays``: the cases and the call mode; the parent reads them for it),
gets its own mount and IPC namespaces with a fresh size-capped ``tmpfs`` as
its only writable folder, confines itself
(:func:`graders.engine.sandbox.confine.confine`), and only then loads the learner's
file and runs the cases. So no learner code ever shares a process with a
harness's trusted part, nor with the grader;
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
"arrays": codec.pack_blob(...), "inputs_changed": [[node, ...], ...]}`` around each exercise's cases
(``inputs_changed``: the parent's own reading, per case, of the array inputs it laid out in a shared
region before the fork, :class:`Shared`; absent when the job turns it off; ``served``: the trusted
process's reports of the exercise's trusted cases, ``[{"position", "result", "arrays"}, ...]``, only for
an exercise that has a trusted part), ``{"crashed": i, "stem": ..., "during":
"load"|"exercise", "code": ...}`` when a child dies, and ``{"finished":
true}``. A child only ever speaks to the parent, through its own pipe, and
the parent labels what it relays with the exercises it started the child
for, in order: a child cannot report for another exercise.

This module never imports ``solutions``, ``graders.checks`` or
``graders.misconceptions``; the kernel and the audit hook refuse them to
learner code.

Every array input of a child's cases lies in a shared anonymous mapping the parent makes before it
forks the child (:class:`Shared`, :mod:`graders.engine.values.shared_inputs`): the child's inputs are
views of it, and after each result the parent reads it back and says which array inputs the call
changed. The child's own report of its inputs after the call (``inputs_after``) can add to that verdict,
never take from it.

The parent is this module; the child, :mod:`graders.engine.worker.child`; their process plumbing
(event lines, CPU clock, namespaces, torch's warm-up), :mod:`graders.engine.worker.process`.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sys
import time
import traceback
from pathlib import Path

from graders.engine.sandbox import closed_root, confine
from graders.engine.sandbox.libc import libc as _libc
from graders.engine.values import shared_inputs
from graders.engine.worker import served
from graders.engine.worker.child import Child, read_exercise
from graders.engine.worker.trusted import Trusted, TrustedReports
from graders.engine.worker.process import (MAX_CHILD_BYTES, CpuClock, OutsideProtocol, closed_root_folder,
                                           kill_descendants, protocol_events, _write_line)


PR_SET_CHILD_SUBREAPER = 36
CPU_POLL_SECONDS = 0.05  # how often the parent reads a child's CPU time while it is silent


class Shared:
    """One child's exercises as the parent read them, and their array inputs in a region the parent maps
    before the fork and reads back after each result (:mod:`graders.engine.values.shared_inputs`)."""

    def __init__(self, job_dir: Path, indices: list[int], share: bool,
                 limit: int = shared_inputs.MAX_SHARED_BYTES) -> None:
        self.exercises = [read_exercise(job_dir, index) for index in indices]
        self.layout: list = [[[] for _ in entry["cases"]] for entry, _ in self.exercises]
        self.region = None
        if share:
            self.layout, size = shared_inputs.lay_out(self.exercises, limit)
            self.region = shared_inputs.new_region(size)
            shared_inputs.fill(self.region, self.layout, self.exercises)

    def changed(self, number: int) -> list[list[int]] | None:
        """Per case of the child's exercise ``number``, the array nodes whose values are no longer the job's."""
        if self.region is None:
            return None
        return shared_inputs.changed(self.region, self.layout[number], self.exercises[number][1])


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
        self.breach = ""  # why the last child was ended for what it wrote (outside the protocol, too much)

    def emit(self, **event) -> None:
        _write_line(self.events_fd, event)

    def prepare(self) -> None:
        """Everything children share, done once: what the kernel will let them read (the fork server has
        imported everything they use: :func:`graders.engine.worker.forkserver.preload`)."""
        settings = self.job["sandbox"]
        self.forbidden = [*settings["forbidden_paths"], str(self.job_dir.parent), str(self.sub_dir / "files")]
        self.readable = closed_root.readable_roots(self.forbidden + list(settings.get("closed_paths", [])))
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

        Exercises that share a harness (the same source) share a child; no other exercise joins them (and a
        harness's trusted part runs beside that child, in the trusted process). In hide mode no child runs
        entries of two parts (``parts``: public checks, hidden checks): a process that held a hidden input
        never runs a public check (:mod:`graders.engine.judging.parts`).
        """
        harness = self.job.get("harness", {})
        parts = self.job.get("parts", {})
        groups: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
        for index in indices:
            stem = self.job["stems"][str(index)]
            key = (stem, harness.get(str(index), ""), parts.get(str(index), ""))
            groups.setdefault(key, []).append((index, stem))
        return list(groups.values())

    def run_child(self, indices: list[int], stem: str) -> list[tuple[int, str]]:
        """One child for ``indices`` (one learner file); returns the exercises still to run after a crash."""
        scratch = self.sub_dir / "scratch" / str(indices[0])
        scratch.mkdir(mode=0o700, exist_ok=True)
        # every array input of these exercises' cases in memory this process keeps: the child's are views of it
        # (at most the memory the child's learner code is granted: the region is in its address space)
        shared = Shared(self.job_dir, indices, bool(self.job.get("shared_inputs")),
                        int(self.job["sandbox"].get("memory_bytes") or shared_inputs.MAX_SHARED_BYTES))
        # a harness's trusted cases run in a process of their own, the learner's function served to it by the
        # child over a pipe pair (graders.engine.worker.served): the pair is made before either fork
        trusted = any((self.job_dir / f"trusted_{index}.json").exists() for index in indices)
        pair = (os.pipe(), os.pipe()) if trusted else None  # (to the child, to the trusted process)
        read_fd, write_fd = os.pipe()
        self.emit(load=stem)
        pid = self.fork(lambda: Child(self, indices, stem, scratch, write_fd, shared,
                                  served.Lines(pair[0][0], pair[1][1]) if pair else None).run(),
                    closing=[read_fd, *((pair[0][1], pair[1][0]) if pair else ())])
        os.close(write_fd)
        pids, trusted_fd = [pid], None
        if pair:  # made after the child's fork: the child holds no end of the trusted process's pipe
            trusted_fd, trusted_write = os.pipe()
            trusted_scratch = self.sub_dir / "scratch" / f"{indices[0]}t"
            trusted_scratch.mkdir(mode=0o700, exist_ok=True)
            pids.append(self.fork(lambda: Trusted(self, indices, trusted_scratch, trusted_write, shared,
                                              served.Lines(pair[1][0], pair[0][1])).run(),
                              closing=[read_fd, trusted_fd, pair[0][0], pair[1][1]]))
            os.close(trusted_write)
            for fd in (*pair[0], *pair[1]):
                os.close(fd)
        clock = CpuClock(*pids)  # the budget counts both: the toy's own work is the exercise's too
        stage, finished, over_budget = self.relay(indices, stem, read_fd, clock, shared, trusted_fd)
        clock.kill()  # it has nothing more to say: a child that closed its pipe, or one still spinning threads
        status = self.clean_up(pid)  # after its last result, runs no longer than it takes to be killed
        left: list[tuple[int, str]] = []
        if stage != "done":
            code = os.waitstatus_to_exitcode(status) if status is not None else None
            if stage == "load":
                self.failed_stems.add(stem)
            self.emit(crashed=indices[finished], stem=stem, during="load" if stage == "load" else "exercise",
                      code=None if over_budget or self.breach else code, cpu_timeout=over_budget,
                      **({"breach": self.breach} if self.breach else {}))
            left = [(index, stem) for index in indices[finished + 1:]]
        for folder in (scratch, scratch.with_name(f"{indices[0]}t")):
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(closed_root_folder(folder), ignore_errors=True)
        return left

    def fork(self, body, closing: list[int]) -> int:
        """Fork a process that closes ``closing`` and the events pipe, runs ``body`` and exits (70 and a
        traceback on stderr when the kit itself failed there); returns its pid."""
        pid = os.fork()
        if pid == 0:  # never returns
            for fd in (*closing, self.events_fd):  # it speaks only through its own pipe, never for another
                os.close(fd)
            code = 0
            try:
                body()
            except BaseException:  # noqa: BLE001 - the kit's own failure in the process: say so on stderr
                traceback.print_exc(file=sys.__stderr__)
                code = 70
            sys.__stderr__.flush()
            os._exit(code)
        return pid

    def budget(self, stage: str, index: int) -> float | None:
        """CPU seconds the child may spend on ``stage`` (its load, or exercise ``index``); None: no budget."""
        if stage == "load":
            return self.job.get("load_timeout")
        return self.job.get("timeouts", {}).get(str(index))

    def relay(self, indices: list[int], stem: str, fd: int, clock: "CpuClock",
              shared: Shared, trusted_fd: int | None = None) -> tuple[str, int, bool]:
        """Forward the child's reports, labelled with the exercises it was started for, in order, and hold
        it to its CPU-time budget: the load's, then each exercise's own.

        The budget counts CPU seconds of the child's every thread (``/proc/<pid>/stat``), not wall-clock
        time, so a loaded machine does not change the verdict; the grader keeps a generous wall-clock
        backstop for a child that sleeps or deadlocks (:func:`graders.engine.worker.runner.wall_backstop`).
        Returns how far it got (``load``, ``exercise`` or ``done``), how many exercises it finished, and
        whether the child was killed for spending more than its budget.
        """
        stage, finished = "load", 0
        buffer = bytearray()
        received = 0  # bytes read from the child in all: its cap counts every byte, not only what is unparsed
        spent = 0.0  # this process's CPU seconds spent reading the child's lines: charged to the child's budget
        reported = False  # whether this child has sent its sandbox report
        self.breach = ""
        limit, start = self.budget("load", indices[0]), clock.read()
        trusted = TrustedReports(trusted_fd)
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while True:
                if limit is not None and clock.read() + spent - start > limit:
                    clock.kill()
                    trusted.close()
                    return stage, finished, True
                ready, _, _ = select.select([pipe, *trusted.fds], [], [], CPU_POLL_SECONDS)
                if trusted_fd in ready:
                    trusted.read()
                self.pass_on_layers(trusted, clock.works and limit is not None)
                if pipe not in ready:
                    continue
                began = time.process_time()
                chunk = pipe.read(1 << 20)
                received += len(chunk)
                if not chunk:
                    trusted.close()
                    return stage, finished, False
                if received > MAX_CHILD_BYTES:
                    clock.kill()
                    trusted.close()
                    self.breach = f"more than {MAX_CHILD_BYTES >> 20} MiB"
                    return stage, finished, False
                buffer += chunk
                try:
                    events = protocol_events(buffer)
                except OutsideProtocol as breach:
                    clock.kill()  # a line no child of the kit writes: the child ends here, its parent parses no more
                    trusted.close()
                    self.breach = str(breach)
                    return stage, finished, False
                finally:
                    spent += time.process_time() - began
                for event in events:
                    if "sandbox" in event and stage == "load" and not reported:
                        reported = True  # each child reports once, before any learner code runs
                        if not self.sent_sandbox:
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
                        limit, start, spent = self.budget(stage, indices[0]), clock.read(), 0.0
                        self.emit(start=indices[0])
                    elif "result" in event and stage == "exercise":
                        # the inputs as this process reads them back, beside what the child says
                        changed = shared.changed(finished)
                        # and the trusted process's outcomes of its trusted cases, written before it let the
                        # child go on: all of them are in its pipe by now
                        served_cases = trusted.take(finished)
                        self.pass_on_layers(trusted, clock.works and limit is not None)
                        self.emit(done=indices[finished], result=event["result"], arrays=event.get("arrays"),
                                  **({} if changed is None else {"inputs_changed": changed}),
                                  **({} if served_cases is None else {"served": served_cases}))
                        finished += 1
                        if finished == len(indices):
                            trusted.close()
                            return "done", finished, False
                        limit, start, spent = self.budget(stage, indices[finished]), clock.read(), 0.0
                        self.emit(start=indices[finished])
                    else:  # an event out of its turn (a second sandbox report, a result before the load)
                        clock.kill()
                        trusted.close()
                        self.breach = "an event out of its turn"
                        return stage, finished, False

    def pass_on_layers(self, trusted: TrustedReports, cpu_budget: bool) -> None:
        """The trusted process's sandbox report, once it has come, as the child's is passed on: the grader
        counts a layer only where every process had it (:func:`graders.engine.sandbox.layers.merge_reported`)."""
        if trusted.layers is not None:
            self.emit(sandbox={**trusted.layers, "cpu_budget": cpu_budget}, identity=self.identity)
            trusted.layers = None

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
