"""Hypothesis's storage never lands in the grader's current folder (its constants cache lists the reference
solution's literals): every grading route sends it to a temporary folder of its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parent.parent
GRADE = '''
import sys
from pathlib import Path
from graders.engine.sandbox import layers as sandbox
from graders.engine.routes import inline
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
if sys.argv[1] == "control":
    sandbox.private_hypothesis_storage = lambda: None  # the guard away
folder = Path("learner"); folder.mkdir()
(folder / "module_9_reference.py").write_text("def group_relative_advantages(*a, **k):\\n    return 0.0\\n")
if sys.argv[2] == "batch":
    grade_paths([folder], Path("out"), GradeOptions(modules=("9",)), progress=False, log=lambda _m: None)
else:
    inline.grade_exercise("module_9_reference.group_relative_advantages", lambda *a, **k: 0.0)
# whatever Hypothesis writes in this process from now on (a constants cache, a charmap, a database)
from hypothesis.configuration import storage_directory
storage_directory("constants").create_if_missing()
'''


# the batch route forks its servers and workers twice (about 3 s of CPU): slow; the in-process route, which
# calls the same guard, stays in the fast tier
@pytest.mark.parametrize("route", [pytest.param("batch", marks=pytest.mark.slow), "inline"])
def test_a_grade_writes_no_hypothesis_folder_in_the_current_folder(tmp_path, route):
    for mode in ("guarded", "control"):
        cwd = tmp_path / mode
        cwd.mkdir()
        done = subprocess.run([sys.executable, "-c", GRADE, mode, route], cwd=cwd, capture_output=True, text=True,
                              timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(KIT),
                                                                 "PYTHONDONTWRITEBYTECODE": "1"})
        assert done.returncode == 0, done.stderr[-2000:]
        # guarded: nothing here; the control (the guard monkeypatched away): Hypothesis's default, ./.hypothesis
        assert (cwd / ".hypothesis").exists() == (mode == "control"), mode
