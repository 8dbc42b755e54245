"""The outer wall (bubblewrap around the fork servers) and the allow-list that follows the real import path.

- With the inner file layers switched off (Landlock and the closed root), a hostile file that reads a
  host file and looks for the kit's answers finds nothing: the wall's view does not have them. The
  control, the wall off as well, reads both (so the wall is what stops it). A correct file beside it
  keeps full marks, and its report says ``outer_wall``.
- A layered environment (an interpreter whose numpy comes through a ``.pth`` path outside its own
  site-packages) grades a correct file that uses ``numpy.random`` (imported lazily, after confinement)
  fully; the control shows the allow-list without the import path's folders misses numpy.
- ``doctor`` says the wall is missing, and why, where bubblewrap is missing or switched off.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from graders.engine.sandbox import layers as sandbox, wall
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from hostile_code import DISARM, placebo, submission_folders

pytestmark = pytest.mark.slow

STEM = "module_9_reference"
KIT = DEFAULT_KIT.root
OPTIONS = GradeOptions(modules=("9",), timeout=4.0, memory_mb=512, load_timeout=20.0)
INNER_FILES_OFF = {"RL4LLM_NO_LANDLOCK": "1", "RL4LLM_NO_CLOSED_ROOT": "1"}
needs_wall = pytest.mark.skipif(not wall.wall_works()[0], reason=f"no outer wall here: {wall.wall_works()[1]}")

READER = '''
import gc, os
{disarm}
_disarm()  # the audit hook off: only the kernel's layers and the wall remain
found = []
try:
    found.append("read " + open({canary!r}).read())
except OSError as error:
    found.append("refused " + type(error).__name__)
found.append("answers " + str(os.path.exists({answers!r})))
raise RuntimeError("ATTACK:" + "; ".join(found))
'''


def _correct() -> str:
    return DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")


def _grade(root: Path, files: dict[str, str], monkeypatch, env: dict, **options) -> dict[str, dict]:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    paths = submission_folders(root, files, STEM)
    opts = GradeOptions(**{**OPTIONS.__dict__, **options})
    result = grade_paths(paths, root / "out", opts, jobs=2, progress=False, log=lambda _m: None)
    return dict(zip(result.names, result.reports))


def _passed(report: dict) -> bool:
    graded = [e for e in report["exercises"] if e["id"].startswith(STEM)]
    return bool(graded) and all(e["status"] == "passed" for e in graded)


def _attack_word(report: dict) -> str:
    text = json.dumps(report)
    start = text.find("ATTACK:")
    return text[start + 7:text.find('"', start)].split(f" ({STEM}.py")[0] if start >= 0 else ""


def _attack_files(tmp_path: Path) -> tuple[dict[str, str], str]:
    canary = "canary-" + secrets.token_hex(8)
    secret = tmp_path / "host-secret.txt"  # a host file outside every path the wall shows
    secret.write_text(canary)
    reader = placebo() + READER.format(disarm=DISARM, canary=str(secret),
                                       answers=str(DEFAULT_KIT.solution_path(STEM)))
    return {"correct": _correct(), "reader": reader}, canary


@needs_wall
def test_the_wall_hides_the_host_when_the_inner_file_layers_are_off(tmp_path, monkeypatch):
    files, canary = _attack_files(tmp_path)
    reports = _grade(tmp_path / "walled", files, monkeypatch, INNER_FILES_OFF)
    assert _passed(reports["correct"]) and reports["correct"]["sandbox"]["outer_wall"] is True
    assert reports["correct"]["sandbox"]["landlock_files"] is False  # the inner layer really is off
    word = _attack_word(reports["reader"])
    assert word == "refused FileNotFoundError; answers False", word
    assert canary not in json.dumps(reports["reader"])


def test_control_without_the_wall_the_same_file_reads_the_host(tmp_path, monkeypatch):
    files, canary = _attack_files(tmp_path)
    reports = _grade(tmp_path / "open", files, monkeypatch, {**INNER_FILES_OFF, "RL4LLM_NO_BWRAP": "1"})
    assert _passed(reports["correct"]) and reports["correct"]["sandbox"]["outer_wall"] is False
    word = _attack_word(reports["reader"])
    assert word == f"read {canary}; answers True", word


def _layered_python(tmp_path: Path) -> str:
    """A venv without packages whose site-packages has a ``.pth`` path to this venv's (numpy among them)."""
    target = tmp_path / "layered"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = str(target / "bin" / "python")
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    import numpy

    Path(own, "layer.pth").write_text(str(Path(numpy.__file__).parent.parent) + "\n", encoding="utf-8")
    return python


def test_a_layered_environment_grades_a_lazy_numpy_import_fully(tmp_path, monkeypatch):
    python = _layered_python(tmp_path)
    uses_rng = "import numpy.random  # imported after confinement: outside the interpreter's own site-packages\n"
    reports = _grade(tmp_path / "grade", {"correct": _correct() + uses_rng}, monkeypatch, {},
                     worker_python=python)
    report = reports["correct"]
    assert _passed(report), [e["feedback"][:300] for e in report["exercises"] if e["status"] != "passed"]
    assert report["sandbox"]["landlock_files"] and report["sandbox"]["closed_root"]


def test_control_the_allow_list_without_the_import_path_misses_numpy(tmp_path):
    python = _layered_python(tmp_path)
    code = ("import os, numpy, graders.engine.worker.parent; from graders.engine.sandbox import closed_root as c; "
            "place = os.path.dirname(numpy.__file__); closed = [os.path.dirname(graders.__file__)]; "
            "new = c.readable_roots(closed); c.import_roots = lambda _c: []; old = c.readable_roots(closed); "
            "under = lambda roots: any(place == r or place.startswith(r + os.sep) for r in roots); "
            "print(under(new), under(old))")
    done = subprocess.run([python, "-c", "import graders; " + code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(KIT)}, check=True)
    assert done.stdout.split() == ["True", "False"], done.stdout + done.stderr


def test_the_allow_list_never_opens_the_kits_own_packages():
    import graders.engine.worker.parent  # noqa: F401 - imported, as in a fork server
    from graders.engine.sandbox.closed_root import import_roots

    closed = [str(KIT / "graders"), str(KIT / "solutions")]
    for root in import_roots(closed):
        assert not any(c == root or c.startswith(root + os.sep) or root.startswith(c + os.sep) for c in closed), root


def test_doctor_says_why_the_wall_is_missing(monkeypatch):
    monkeypatch.setenv("RL4LLM_NO_BWRAP", "1")
    probe = sandbox.probe_layers()
    assert "outer_wall" in probe.missing and "RL4LLM_NO_BWRAP=1" in probe.detail
    monkeypatch.delenv("RL4LLM_NO_BWRAP")
    monkeypatch.setattr(wall, "bwrap_path", lambda: None)
    wall._probe.cache_clear()
    try:
        ok, why = wall.wall_works(sys.executable, str(KIT))
        assert not ok and "apt-get install bubblewrap" in why
        assert wall.wall_command(sys.executable, str(KIT), "/tmp") == []  # servers start as before
    finally:
        wall._probe.cache_clear()
