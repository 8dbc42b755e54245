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
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from graders.engine.intake.notebook_cells import CellProblem

CPU_SECONDS = 10  # one submission's notebooks, all of them
MEMORY_BYTES = 2 << 30
WALL_SECONDS = 30
MAX_ANSWER_BYTES = 256 << 20


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
                               str(MEMORY_BYTES)], input=_frames(notebooks), capture_output=True,
                              timeout=WALL_SECONDS, env=env,
                              cwd=str(Path(__file__).resolve().parents[3]))  # the folder that holds graders/
    except subprocess.TimeoutExpired:
        return dict.fromkeys(notebooks, f"not a readable notebook (reading took more than {WALL_SECONDS} s)")
    if done.returncode != 0 or len(done.stdout) > MAX_ANSWER_BYTES:
        why = (f"reading took more than {CPU_SECONDS} s of CPU" if done.returncode in (-9, -24) else
               f"reading needed more than {MEMORY_BYTES >> 20} MiB" if b"MemoryError" in done.stderr[-2000:] else
               f"its reader stopped ({done.returncode})")
        return dict.fromkeys(notebooks, f"not a readable notebook ({why})")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return dict.fromkeys(notebooks, "not a readable notebook (its reader gave no answer)")
    return {name: (answer[name] if isinstance(answer[name], str) else
                   Reduced(answer[name]["source"], [CellProblem(*p) for p in answer[name]["problems"]],
                           frozenset(answer[name]["functions"]), frozenset(answer[name]["stubs"])))
            for name in notebooks}


def _child() -> None:
    """Read the frames on stdin, answer ``{name: {"source", "problems", "functions"} or reason}`` on stdout."""
    _limits(int(sys.argv[1]), int(sys.argv[2]))
    from graders.engine.intake.notebook_cells import _defined_functions, read_notebook

    stream, answer = sys.stdin.buffer, {}
    while header := stream.readline():
        name_length, data_length = map(int, header.split())
        name = stream.read(name_length).decode("utf-8", "surrogateescape")
        data = stream.read(data_length)
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
