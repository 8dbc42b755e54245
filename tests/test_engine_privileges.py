"""Run as root, workers drop to user nobody when that user can reach the interpreter.

This machine's default interpreter lives under /root (unreachable for nobody), so the
test uses the system's /usr/bin/python3.X with this environment's packages, when the
versions agree; elsewhere (not root, no such interpreter) it is skipped.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from graders.checks import spec_for
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.sandbox.layers import NOBODY, unprivileged_user

SYSTEM_PYTHON = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
STEM = "module_9_reference"


def _unusable_reason() -> str | None:
    """Why this machine cannot run the test, or None: root, a system Python of this version, and
    the engine's own probe that user nobody can start it and import the worker from this checkout
    (a checkout inside a mode-700 folder, such as one made by mktemp -d, is out of nobody's reach)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not SYSTEM_PYTHON.exists():
        return "needs root and a system Python of this version"
    probe = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
                           capture_output=True, text=True)
    if probe.stdout.strip() != str(tuple(sys.version_info[:2])):
        return "needs root and a system Python of this version"
    pythonpath = os.pathsep.join([str(DEFAULT_KIT.root), *site.getsitepackages()])
    with tempfile.TemporaryDirectory() as cwd:
        os.chmod(cwd, 0o755)
        user, reason = unprivileged_user(str(SYSTEM_PYTHON), pythonpath, cwd)
    return None if user == NOBODY else reason


UNUSABLE = _unusable_reason()
pytestmark = pytest.mark.skipif(UNUSABLE is not None, reason=str(UNUSABLE))

OVERRIDE = textwrap.dedent('''

    _right = informative_group_probability


    def informative_group_probability(p, group_size):
        try:
            with open({target!r}, "w") as handle:
                handle.write("pwned")
        except OSError:
            pass
        return _right(p, group_size)
''')


@pytest.mark.slow  # a grading batch as nobody (about 2.5 s); a security control, not a risk of everyday changes
def test_workers_run_as_nobody_and_cannot_write_the_kit(tmp_path):
    target = DEFAULT_KIT.root / "graders" / "pwned_by_a_submission.txt"
    folder = tmp_path / "learner"
    folder.mkdir()
    text = DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8") + OVERRIDE.format(target=str(target))
    (folder / f"{STEM}.py").write_text(text, encoding="utf-8")
    notes: list[str] = []
    options = GradeOptions(modules=("9",), worker_python=str(SYSTEM_PYTHON),
                           worker_pythonpath=tuple(site.getsitepackages()))
    result = grade_paths([folder], tmp_path / "out", options, progress=False, log=notes.append)
    assert "nobody" in result.privilege_note and not [n for n in notes if not n.startswith("warning: sandbox")]
    assert result.reports[0]["sandbox"]["identity"] == "user nobody (65534)"
    assert not target.exists()
    for entry in result.reports[0]["exercises"]:
        if entry["id"].startswith(f"{STEM}.") and spec_for(entry["id"]) is not None:
            assert entry["status"] == "passed", (entry["id"], entry["feedback"])
