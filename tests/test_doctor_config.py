"""`rl4llm doctor` probes exactly the configuration grading uses (issue 51 point 8).

Before, doctor probed its workers with an empty ``PYTHONPATH`` while a batch gave its fork servers the folder
the kit was imported from: with the kit run from a copy on ``PYTHONPATH`` (not installed), doctor said the
outer wall (and more) was missing on a machine where grading walled every worker, and ``--require-sandbox``
refused it. Now both take ``(python, PYTHONPATH)`` from :func:`graders.engine.sandbox.wall.grading_interpreter`
and probe with the same :func:`graders.engine.sandbox.layers.probe_layers`.

- fast: the batch and doctor hand the probes the same interpreter and import path (recorded, nothing started);
- slow: a kit copied to a folder on ``PYTHONPATH``, run by an interpreter that does not have the kit installed:
  ``rl4llm doctor`` and a real ``rl4llm grade`` of a correct file agree on every layer (doctor's list against
  report.json's ``sandbox``), on the worker's identity, on what is missing, and ``--require-sandbox`` gives both
  the same answer; the control, doctor's old empty ``PYTHONPATH``, finds no wall in that configuration.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import graders
from graders.cli import main
from graders.engine.sandbox import layers as sandbox, wall

KIT = Path(graders.__file__).resolve().parent.parent
STEM = "module_9_reference"


class _Stop(Exception):
    """Raised by the recorder once the batch has chosen its workers' configuration: nothing more is started."""


def test_doctor_and_the_batch_probe_the_same_interpreter_and_import_path(tmp_path, monkeypatch, capsys):
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    seen: list[tuple[str, tuple[str, str]]] = []

    def probe(python=None, pythonpath=None):
        seen.append(("probe", (python, pythonpath)))
        return sandbox.Probe({name: True for name in sandbox.LAYERS}, identity="recorded")

    def user(python, pythonpath, cwd):
        seen.append(("user", (python, pythonpath)))
        raise _Stop

    monkeypatch.setattr(sandbox, "probe_layers", probe)
    monkeypatch.setattr(sandbox, "unprivileged_user", user)
    assert main(["doctor"]) == 0
    assert "workers' interpreter: " + sys.executable in capsys.readouterr().out
    assert seen == [("probe", wall.grading_interpreter())]
    assert wall.grading_interpreter() == (sys.executable, str(KIT))  # the folder this process imports the kit from

    folder = tmp_path / "learner"
    folder.mkdir()
    for options, expected in ((GradeOptions(modules=("9",)), wall.grading_interpreter()),
                              (GradeOptions(modules=("9",), worker_python="/opt/python", worker_pythonpath=("/x",)),
                               wall.grading_interpreter("/opt/python", ("/x",)))):
        seen.clear()
        with pytest.raises(_Stop):
            grade_paths([folder], tmp_path / "out", options, progress=False, log=lambda _m: None)
        assert sorted(seen) == [("probe", expected), ("user", expected)]
    assert expected == ("/opt/python", os.pathsep.join([str(KIT), "/x"]))


# ----------------------------------------------------------------------------- the copy on PYTHONPATH, for real
def _python_without_the_kit(tmp_path: Path) -> str:
    """A venv whose site-packages reaches this one's packages through a ``.pth`` line (numpy, torch, ...), but
    not the kit's editable install (a ``.pth`` file in a folder a ``.pth`` line adds is never read)."""
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = str(target / "bin" / "python")
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    import numpy

    Path(own, "packages.pth").write_text(str(Path(numpy.__file__).parent.parent) + "\n", encoding="utf-8")
    return python


def _kit_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "kit"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("graders", "solutions", "starter", "assignments"):
        shutil.copytree(KIT / name, copy / name, ignore=ignore)
    shutil.copy2(KIT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def _run(python: str, copy: Path, cwd: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "RL4LLM_LANG": "en"}
    return subprocess.run([python, "-m", "graders.cli", *arguments], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def _doctor_layers(stdout: str) -> dict[str, bool]:
    """``{layer: in force}`` as doctor lists them (``  [yes] outer_wall ...``)."""
    return {name: mark == "yes" for mark, name in re.findall(r"^  \[(yes|NO )\] (\w+)", stdout, re.MULTILINE)}


@pytest.mark.slow  # a venv, a kit copy, doctor twice and two real grades (about 30 s); the test above stays fast
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)")
@pytest.mark.skipif(not wall.wall_works()[0], reason=f"no outer wall here: {wall.wall_works()[1]}")
def test_doctor_and_a_real_grade_agree_on_every_layer_for_a_kit_copy_on_pythonpath(tmp_path):
    python, copy = _python_without_the_kit(tmp_path), _kit_copy(tmp_path)
    work = tmp_path / "work"
    (work / "anna").mkdir(parents=True)
    shutil.copy2(KIT / "solutions" / "module_09" / f"{STEM}.py", work / "anna" / f"{STEM}.py")
    installed = subprocess.run([python, "-c", "import graders"], capture_output=True, text=True, cwd=work)
    assert installed.returncode != 0, "the interpreter must not have the kit installed"

    doctor = _run(python, copy, work, "doctor")
    assert doctor.returncode == 0, doctor.stderr
    doctor_layers = _doctor_layers(doctor.stdout)
    assert sorted(doctor_layers) == sorted(sandbox.LAYERS), doctor.stdout
    assert f"PYTHONPATH: {copy}" in doctor.stdout
    graded = _run(python, copy, work, "grade", "anna", "--out", "out", "--module", "9", "--quiet",
                  "--no-class-report")
    assert graded.returncode == 0, graded.stderr
    report = json.loads((work / "out" / "anna" / "report.json").read_text(encoding="utf-8"))
    assert any(e["status"] == "passed" for e in report["exercises"])
    assert report["sandbox"]["outer_wall"] is True  # grading walls its workers in this configuration
    assert {name: report["sandbox"][name] for name in sandbox.LAYERS} == doctor_layers
    identity = re.search(r"^worker identity: (.*)$", doctor.stdout, re.MULTILINE)
    assert identity and identity.group(1) == report["sandbox"]["identity"]
    missing = [name for name in sandbox.LAYERS if not doctor_layers[name]]
    warned = re.search(r"sandbox layers missing on this machine: ([\w, ]+)", graded.stderr)
    assert (warned.group(1).strip().split(", ") if warned else []) == missing, graded.stderr

    refused_by_doctor = _run(python, copy, work, "doctor", "--require-sandbox").returncode != 0
    refused_by_grade = _run(python, copy, work, "grade", "anna", "--out", "out-required", "--module", "9",
                            "--quiet", "--no-class-report", "--require-sandbox").returncode != 0
    assert refused_by_doctor == refused_by_grade == bool(missing)

    # the control: probed as doctor probed before (an empty PYTHONPATH), this interpreter finds no kit in the wall
    wall._probe.cache_clear()
    try:
        walled, why = wall.wall_works(python, "")
    finally:
        wall._probe.cache_clear()
    assert not walled and why, why
