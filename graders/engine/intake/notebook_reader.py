"""Every notebook of a submission reduced once, in one budgeted child process.

    reduced = reduce_notebooks({"hw/work.ipynb": data, ...})
    reduced["hw/work.ipynb"]  # Reduced(source, problems, functions), or a str: why it is not readable

A notebook is the learner's JSON and Python: parsing it (``json.loads``, then
``ast.parse``/``ast.unparse`` of every cell, :func:`graders.engine.intake.submission.read_notebook`)
costs what its author decides. So the grader does it once per submission, for
every notebook and every stem at once, in a child process (``python -m
graders.engine.intake.notebook_reader``) under ``RLIMIT_CPU`` :data:`CPU_SECONDS`,
``RLIMIT_AS`` :data:`MEMORY_BYTES` and a wall timeout :data:`WALL_SECONDS`. A child
that runs out of any of them, or answers anything but its JSON, makes every
notebook of that submission unreadable (the reason says which budget), never
the batch. The child only reads: nothing of a notebook is executed.

Within those, the child's CPU is :func:`cpu_budget` of what the notebooks hold, set
before it parses a byte: :data:`FLOOR_SECONDS` and :data:`SECONDS_PER_PACKED_BYTE` for
each byte of the notebooks compressed (zlib, level 6), at most :data:`CPU_SECONDS`. A
notebook's size alone is no measure: a 27 KB zip holds 17 MB of one repeated cell, which
took the whole 10 s (and 21 s of the batch's wall). Compressed, it is the 27 KB the
learner sent (1.3 s); the course's own notebook, 36 KB compressed, costs 0.2 s of its 1.4 s.
A profiling timer (``ITIMER_PROF``) ends the child when its CPU reaches the budget.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import zlib
from pathlib import Path
from typing import NamedTuple

from graders.engine.intake.notebook_cells import CellProblem
from graders.engine.values.texts import DETAILS, detail
from graders.text import Particular

CPU_SECONDS = 10  # one submission's notebooks, all of them: the most any budget may be
FLOOR_SECONDS = 1.0  # the child's start (about 0.06 s) and a small notebook, on a machine a few times slower
SECONDS_PER_PACKED_BYTE = 10e-6  # 100 KB of compressed notebook a second; the course's own read at 3 us a byte
MEMORY_BYTES = 2 << 30
WALL_SECONDS = 30
MAX_ANSWER_BYTES = 256 << 20
UNREADABLE = DETAILS["notebook_unreadable"]  # with one of WHY as its reason (both Particulars: _unreadable)
WHY = {key: DETAILS[f"notebook_{key}"] for key in ("cpu", "wall", "memory", "stopped", "silent")}


class Reduced(NamedTuple):
    """A notebook's definitions as one module source, the cells left out, the functions it defines, and those
    still the untouched stub (only ``raise NotImplementedError``: :func:`stubs_of`)."""

    source: str
    problems: list[CellProblem]
    functions: frozenset[str]
    stubs: frozenset[str]


_CACHE: dict[bytes, Reduced | str] = {}  # sha256 of a notebook's bytes -> what it reduced to (the last CACHED)
CACHED = 64


def _limits(cpu_seconds: int, memory_bytes: int) -> None:
    """The child's own limits, set before it reads a byte (no preexec_fn: the grader may run threads)."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def cpu_budget(notebooks: list[bytes], most: float | None = None, floor: float | None = None,
               rate: float | None = None) -> float:
    """Seconds of CPU for reading ``notebooks``: ``floor`` (:data:`FLOOR_SECONDS`) + ``rate``
    (:data:`SECONDS_PER_PACKED_BYTE`) for each byte of them compressed (what a learner must send for them, however
    they are packed), at most ``most`` (:data:`CPU_SECONDS`)."""
    most, floor = CPU_SECONDS if most is None else most, FLOOR_SECONDS if floor is None else floor
    packed = sum(len(zlib.compress(data, 6)) for data in notebooks)
    return round(min(float(most), floor + (SECONDS_PER_PACKED_BYTE if rate is None else rate) * packed), 2)


def _said_budget(stderr: bytes) -> float:
    """The budget the child wrote on its stderr before it began reading (:data:`CPU_SECONDS` if none)."""
    for line in reversed(stderr.splitlines()):
        if line.startswith(b"budget "):
            try:
                return float(line.split()[1])
            except (ValueError, IndexError):
                break
    return float(CPU_SECONDS)


def _frames(notebooks: dict[str, bytes]) -> bytes:
    out = bytearray()
    for name, data in notebooks.items():
        encoded = name.encode("utf-8", "surrogateescape")
        out += f"{len(encoded)} {len(data)}\n".encode() + encoded + data
    return bytes(out)


def reduce_notebooks(notebooks: dict[str, bytes]) -> dict[str, Reduced | str]:
    """``{name: Reduced or the reason it is unreadable}`` for each notebook: those this process has not reduced
    yet (by their bytes' sha256: nbgrader's preprocessors and the engine ask for one notebook three times) from
    one budgeted child."""
    digests = {name: hashlib.sha256(data).digest() for name, data in notebooks.items()}
    missing = {name: data for name, data in notebooks.items() if digests[name] not in _CACHE}
    for name, found in _reduce(missing).items():
        _CACHE[digests[name]] = found
        while len(_CACHE) > CACHED:
            del _CACHE[next(iter(_CACHE))]
    return {name: _CACHE[digests[name]] for name in notebooks}


def _reduce(notebooks: dict[str, bytes]) -> dict[str, Reduced | str]:
    if not notebooks:
        return {}
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT") if key in os.environ}
    env["PYTHONHASHSEED"] = "0"
    try:
        done = subprocess.run([sys.executable, "-S", "-E", "-B", "-m", "graders.engine.intake.notebook_reader", str(CPU_SECONDS),
                               str(MEMORY_BYTES), str(FLOOR_SECONDS), str(SECONDS_PER_PACKED_BYTE)],
                              input=_frames(notebooks), capture_output=True,
                              timeout=WALL_SECONDS, env=env,
                              cwd=str(Path(__file__).resolve().parents[3]))  # the folder that holds graders/
    except subprocess.TimeoutExpired:
        return dict.fromkeys(notebooks, _unreadable("wall", seconds=WALL_SECONDS))
    if done.returncode != 0 or len(done.stdout) > MAX_ANSWER_BYTES:
        why = (("cpu", {"seconds": f"{_said_budget(done.stderr):g}"})
               if done.returncode in (-signal.SIGKILL, -signal.SIGXCPU, -signal.SIGPROF) else
               ("memory", {"mib": MEMORY_BYTES >> 20}) if b"MemoryError" in done.stderr[-2000:] else
               ("stopped", {"code": done.returncode}))
        return dict.fromkeys(notebooks, _unreadable(why[0], **why[1]))
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return dict.fromkeys(notebooks, _unreadable("silent"))
    return {name: (answer[name] if isinstance(answer[name], str) else
                   Reduced(answer[name]["source"], [CellProblem(*p) for p in answer[name]["problems"]],
                           frozenset(answer[name]["functions"]), frozenset(answer[name]["stubs"])))
            for name in notebooks}


def _unreadable(key: str, **fields) -> Particular:
    """Why a notebook is unreadable, as data (:data:`UNREADABLE` with one of :data:`WHY` as its reason)."""
    return detail("notebook_unreadable", reason=detail(f"notebook_{key}", **fields))


def _child() -> None:
    """Read the frames on stdin, answer ``{name: {"source", "problems", "functions"} or reason}`` on stdout: first
    the frames, then the CPU budget they earn (written on stderr, armed as ``ITIMER_PROF``), then the parsing."""
    import time

    _limits(int(sys.argv[1]), int(sys.argv[2]))
    stream, frames, answer = sys.stdin.buffer, [], {}
    while header := stream.readline():
        name_length, data_length = map(int, header.split())
        frames.append((stream.read(name_length).decode("utf-8", "surrogateescape"), stream.read(data_length)))
    budget = cpu_budget([data for _, data in frames], *map(float, sys.argv[1:2] + sys.argv[3:5]))
    sys.stderr.write(f"budget {budget}\n")
    sys.stderr.flush()
    signal.setitimer(signal.ITIMER_PROF, max(budget - time.process_time(), 0.001))  # SIGPROF's default: the end
    from graders.engine.intake.notebook_cells import _defined_functions, read_notebook

    for name, data in frames:
        try:
            source, problems = read_notebook(data)
        except ValueError as error:
            answer[name] = str(error)
            continue
        answer[name] = {"source": source, "problems": [[p.cell, p.start, p.reason] for p in problems],
                        "functions": sorted(_defined_functions(source)), "stubs": sorted(stubs_of(source))}
    sys.stdout.write(json.dumps(answer, ensure_ascii=True))


def stubs_of(source: str) -> set[str]:
    """The functions of a reduced notebook's module source whose body, a docstring aside, is only ``raise
    NotImplementedError`` (run in this reader's child; :func:`graders.engine.nbgrader.notebook_engine.untouched_stubs`)."""
    import ast

    try:
        tree = ast.parse(source)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return set()
    last = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {name for name, node in last.items() if _raises_not_implemented_only(node.body)}


def _raises_not_implemented_only(body: list) -> bool:
    import ast

    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


if __name__ == "__main__":
    _child()
