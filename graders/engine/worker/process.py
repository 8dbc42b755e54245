"""The worker's process plumbing: its event lines, a child's CPU clock, killing what is left, namespaces, torch warmed up.

Used by the worker's parent (:mod:`graders.engine.worker.parent`), its children
(:mod:`graders.engine.worker.child`) and the fork server (:func:`warm_up_torch`).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
from pathlib import Path

from graders.engine.sandbox.libc import libc as _libc


CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_REC, MS_PRIVATE = 0x4000, 0x40000


def visible_surrogates(value):
    """``value`` with every lone surrogate in its strings written as visible text (``\\ud800``): strict JSON
    (the grader's door) refuses a lone surrogate's escape, and the learner's text may hold one."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8") if not value.isascii() else value
    if isinstance(value, dict):
        return {visible_surrogates(key): visible_surrogates(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_surrogates(item) for item in value]
    return value


def dumps(value, allow_nan: bool = False) -> str:
    """JSON of a worker's message, lone surrogates made visible first (:func:`visible_surrogates`).

    JSON written ASCII-only spells every surrogate, lone or paired, as a ``\\udXXX`` escape: a text without
    one holds none, and is the answer as it is (the walk, which would change nothing, is skipped)."""
    text = json.dumps(value, sort_keys=True, allow_nan=allow_nan)
    if "\\ud" not in text:
        return text
    return json.dumps(visible_surrogates(value), sort_keys=True, allow_nan=allow_nan)


def _write_line(fd: int, event: dict) -> None:
    data = (dumps(event, allow_nan=True) + "\n").encode("utf-8")
    while data:
        written = os.write(fd, data)
        data = data[written:]


_NOT_JSON = object()  # a line that is not JSON


def _json_lines(buffer: bytearray):
    """The JSON value of each complete line at the start of ``buffer`` (:data:`_NOT_JSON` for one that is not),
    each line taken out of it as it is read."""
    while (end := buffer.find(b"\n")) >= 0:
        line = bytes(buffer[:end])
        del buffer[:end + 1]
        try:
            yield json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            yield _NOT_JSON


def complete_events(buffer: bytearray) -> list[dict]:
    """The JSON objects of the complete lines at the start of ``buffer``, taken out of it; a line that is not a
    JSON object is skipped (what the trusted process writes, read by the worker's parent: no learner code runs
    there; a learner's child is read by :func:`protocol_events`)."""
    return [event for event in _json_lines(buffer) if isinstance(event, dict)]


MAX_CHILD_BYTES = 64 << 20  # what the worker's parent reads from one child in all (its results with their arrays)
# the events a learner's child writes (:class:`graders.engine.worker.child.Child`), by their key sets
CHILD_EVENTS = (frozenset({"sandbox", "identity"}), frozenset({"loaded"}), frozenset({"result", "arrays"}))


class OutsideProtocol(Exception):
    """A learner's child wrote a line that no child of the kit writes (a blank line, text, an unknown event)."""


def protocol_events(buffer: bytearray) -> list[dict]:
    """The events of the complete lines at the start of ``buffer``, taken out of it; raises
    :class:`OutsideProtocol` at the first line that is not one of :data:`CHILD_EVENTS` (learner code holds the
    child's pipe: it may write anything there, and what it writes ends it instead of costing its parent a
    parse per line)."""
    events = []
    for event in _json_lines(buffer):
        if event is _NOT_JSON:
            raise OutsideProtocol("a line that is not an event")
        if not isinstance(event, dict) or frozenset(event) not in CHILD_EVENTS:
            raise OutsideProtocol("an event no child writes")
        events.append(event)
    return events


def closed_root_folder(scratch: Path) -> Path:
    """The empty folder beside a child's scratch folder that its closed root is built on
    (:func:`graders.engine.sandbox.confine.enter_closed_root`); the parent removes it with the scratch folder."""
    return scratch.with_name(scratch.name + ".root")


class CpuClock:
    """The CPU time processes have used together: user + system seconds of all their threads, and of children
    they waited for (``/proc/<pid>/stat`` fields 14-17). ``works`` is False where ``/proc`` cannot tell."""

    TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __init__(self, *pids: int) -> None:
        self.pids = pids
        self.works = True
        self.read()

    def read(self) -> float:
        total = 0.0
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / self.TICKS
            except (OSError, IndexError, ValueError):
                self.works = False
        return total

    def kill(self) -> None:
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
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
