"""Every ``RL4LLM_*`` environment variable of the kit: declared once here, read through :func:`get`.

One :class:`Setting` per variable: its name, its kind, the default (as the
environment would spell it), one line of help, and who reads it. Values are
read when asked (``get("RL4LLM_NO_SECCOMP")``), never at import, so a test's
``monkeypatch.setenv`` and a worker's own environment are what count.

The kinds, and what :func:`get` returns for each:

- ``switch``: ``True`` when the variable is exactly ``"1"`` (the sandbox's layer switches);
- ``flag``: ``True`` for ``1``, ``true``, ``yes``, ``on`` (any case, spaces ignored);
- ``str``: the value as set, else the default;
- ``path``: a :class:`~pathlib.Path` of the value, else of the default, else ``None`` (empty
  counts as unset, as the shell's ``${VAR:-default}`` reads it);
- ``language``: the first two letters, lower-cased (``ru_RU.UTF-8`` -> ``ru``), else ``""``;
  which languages exist, and the locale's fallback, are :mod:`graders.language`'s;
- ``int``: the value (else the default) as an integer.

Standard library only: the learner's folder cannot import ``graders``, so
``rl4llm build`` copies this file verbatim to ``starter/_kit_settings.py``
for ``starter/conftest.py``. ``markdown_table()`` is the table of
``docs/settings.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

KINDS = ("switch", "flag", "str", "path", "language", "int")
TRUTHY = ("1", "true", "yes", "on")  # a flag's "on"


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``name``, ``kind`` (one of :data:`KINDS`), ``default``, ``help``, ``reader``."""

    name: str
    kind: str
    default: str
    help: str
    reader: str  # who reads it: grader, learner's pytest, capstone, kit tests, shell script


GRADER, PYTEST, CAPSTONE, KIT_TESTS, SHELL = "grader", "learner's pytest", "capstone", "kit tests", "shell script"

DECLARED = (
    # the language of every learner-facing command
    Setting("RL4LLM_LANG", "language", "", "the language of messages, feedback and figures (`en`, `ru`); "
            "unset: the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`), else English",
            f"{GRADER}, {PYTEST}, {CAPSTONE}"),
    # the grader's sandbox: each switch turns one layer off (reported as missing)
    Setting("RL4LLM_NO_NAMESPACES", "switch", "", "`1`: workers run without user/PID/mount/net/IPC namespaces",
            GRADER),
    Setting("RL4LLM_NO_LANDLOCK", "switch", "", "`1`: workers run without Landlock", GRADER),
    Setting("RL4LLM_NO_SECCOMP", "switch", "", "`1`: workers run without the seccomp filter", GRADER),
    Setting("RL4LLM_NO_CLOSED_ROOT", "switch", "", "`1`: workers keep the host's file tree (no closed root)",
            GRADER),
    Setting("RL4LLM_NO_CGROUPS", "switch", "", "`1`: workers run without a cgroup (memory, tasks, one core)",
            GRADER),
    Setting("RL4LLM_NO_CPU_BUDGET", "switch", "", "`1`: no CPU-time budget per case, only the wall-clock "
            "backstop", GRADER),
    Setting("RL4LLM_NO_BWRAP", "switch", "", "`1`: fork servers start without the outer wall (bubblewrap)",
            GRADER),
    Setting("RL4LLM_KEEP_ROOT", "switch", "", "`1`: workers keep root (audit hook only)", GRADER),
    # the grader's other settings
    Setting("RL4LLM_CACHE", "str", "", "the reference cache's folder (and the outer wall's kept probes); `off` "
            "switches it off; unset: `$XDG_CACHE_HOME/rl4llm`, else `~/.cache/rl4llm`", GRADER),
    Setting("RL4LLM_SHOW_HIDDEN_INPUTS", "flag", "", "`1`: nbgrader feedback shows the inputs of hidden checks "
            "(withheld by default, as on Gradescope)", GRADER),
    Setting("RL4LLM_NBGRADER_VERBOSE", "flag", "", "`1`: `nbgrader autograde` logs as nbgrader does: every "
            "cell's score, the checksum warning of every released test cell, the gradebook's SQLAlchemy warnings",
            GRADER),
    Setting("RL4LLM_HIDE_HIDDEN_INPUTS", "flag", "", "`1`: the in-kernel checks of the source notebooks "
            "(`assert_exercise`) withhold the inputs of hidden checks; nbgrader's feedback withholds them anyway",
            GRADER),
    Setting("RL4LLM_AUTOGRADER_ROOT", "path", "/autograder", "the Gradescope autograder's folder (tests replace it)",
            f"{GRADER}, {SHELL}"),
    Setting("RL4LLM_PYTHON", "path", "", "the Gradescope bundle's interpreter (`run_autograder`); unset: "
            "`$ROOT/venv/bin/python`", SHELL),
    Setting("RL4LLM_TORCH_WHEEL", "path", "", "a local torch==2.13.0 CPU wheel the Gradescope bundle's `setup.sh` "
            "installs instead of the PyTorch CPU index (`examples/gradescope/container.sh` sets it)", SHELL),
    # the learner's pytest, as the kit runs it
    Setting("RL4LLM_IMPL_ROOT", "path", "", "the folder whose `module_0X/` files the public tests import; unset: "
            "`starter/` itself (the kit's tests point it at `solutions/`)", PYTEST),
    Setting("RL4LLM_RECORD_CALLS", "path", "", "a file the learner's conftest dumps every recorded call into "
            "(`rl4llm build`'s hint tables)", PYTEST),
    # the capstone
    Setting("RL4LLM_BIN", "path", ".venv/bin/rl4llm", "the `rl4llm` command `assignments/capstone/gpu_check.sh` "
            "runs (set from `$RL4LLM`)", SHELL),
    # the kit's own tests
    Setting("RL4LLM_TEST_JOBS", "int", "0", "workers of the catalogue tests; `0`: the number of CPUs, at least 2",
            KIT_TESTS),
    Setting("RL4LLM_QWEN_TIKTOKEN", "path", "", "Qwen's `qwen.tiktoken`: the tokenizer test compares with it; "
            "`assignments/capstone/gpu_smoke.sh` builds Qwen3's tokenizer from it (else `--tiktoken`)", KIT_TESTS),
    Setting("RL4LLM_QWEN3_LAYERS", "int", "1", "decoder layers of the Qwen3 capstone test", KIT_TESTS),
    Setting("RL4LLM_QWEN3_FULL_DEPTH", "switch", "", "`1`: the Qwen3 capstone test builds all 28 layers",
            KIT_TESTS),
    Setting("RL4LLM_BENCH_AGAINST", "str", "", "the commit `python -m devtools.benchmark against` compares this "
            "tree with; unset: the last commit when the tree has changes, else the one before", KIT_TESTS),
)
BY_NAME = {setting.name: setting for setting in DECLARED}
SANDBOX_SWITCHES = tuple(s.name for s in DECLARED if "_NO_" in s.name)  # one per sandbox layer; workers inherit them


def declared(name: str) -> Setting:
    """The declaration of ``name``; ``KeyError`` for a variable nobody declared."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name} is not declared in graders/settings.py") from None


def get(name: str, environ: Mapping[str, str] | None = None):
    """The value of ``name`` in ``environ`` (default: ``os.environ``, now), typed by its kind."""
    setting = declared(name)
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if setting.kind == "switch":
        return raw == "1"
    if setting.kind == "flag":
        return (raw or "").strip().lower() in TRUTHY
    if setting.kind == "language":
        return (raw or "").strip().lower()[:2]
    if setting.kind == "path":
        value = raw or setting.default
        return Path(value) if value else None
    value = setting.default if raw is None else raw
    return int(value) if setting.kind == "int" else value


def raw(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of ``name`` exactly as set (``None`` when unset): to pass it on to a child, or restore it."""
    declared(name)
    return (os.environ if environ is None else environ).get(name)


def markdown_table() -> str:
    """Every declared variable: a Markdown table (variable, type, default, reader, what it does)."""
    rows = ["| Variable | Type | Default | Read by | What it does |", "| --- | --- | --- | --- | --- |"]
    for s in DECLARED:
        rows.append(f"| `{s.name}` | {s.kind} | {f'`{s.default}`' if s.default else '—'} | {s.reader} | {s.help} |")
    return "\n".join(rows) + "\n"


def cache_folder() -> Path | None:
    """The grader's cache folder (``RL4LLM_CACHE``, else ``$XDG_CACHE_HOME/rl4llm``, else ``~/.cache/rl4llm``),
    or ``None`` when ``RL4LLM_CACHE=off``: the reference store's, and the outer wall's kept probes'."""
    chosen = get("RL4LLM_CACHE")
    if chosen.lower() in ("off", "0", "no", "false"):
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rl4llm"
