"""The learner's pytest says before submission which imports the grader will not have (issue 52, point 3).

The grading machine has the course's packages (:data:`graders.course.GRADER_PACKAGES`, written into the generated
``starter/_kit_course.py``), the standard library, the given modules and the learner files; ``starter/conftest.py``
reads the learner files of the module folders a run collected and names, at the end of the run, each top-level
import outside them with its line, in the learner's language. The runs below are the learner's own pytest on a copy
of the module's files (``RL4LLM_IMPL_ROOT``, as tests/test_first_run.py runs it).
"""

from __future__ import annotations

import os
import shutil

import pytest

from graders import course
from graders.build.hints import starter_conftest
from graders.build.support import course_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, run_many

REF = "module_9_reference.py"
FOREIGN = "import seaborn as sns\nfrom google.colab import drive  # copied from a notebook\n"
COURSE_ONLY = "import json, numpy\nimport torch.nn as nn\nfrom grpo_toy import *  # noqa\nimport module_9_training\n"


def _learner(root, extra: str):
    """A copy of Module 9's files with ``extra`` put right after the reference file's ``from __future__`` line;
    returns the folder and the line ``extra`` starts on."""
    shutil.copytree(SOLUTIONS_DIR / "module_09", root / "module_09", ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "module_09" / REF
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(number for number, line in enumerate(lines) if line.startswith("from __future__")) + 1
    path.write_text("".join(lines[:at] + [extra] + lines[at:]), encoding="utf-8")
    return root, at + 1


def test_the_list_is_the_courses_one_and_the_starter_carries_it():
    assert course.GRADER_PACKAGES == ("numpy", "torch")
    assert f"GRADER_PACKAGES = {course.GRADER_PACKAGES!r}" in course_module()
    assert (STARTER_DIR / "_kit_course.py").read_text(encoding="utf-8") == course_module()  # the build's output


def test_the_check_reads_top_level_imports_only():
    conftest = starter_conftest()
    source = ("from __future__ import annotations\nimport os, pandas\nimport numpy as np\ntry:\n    import seaborn\n"
              "except ImportError:\n    seaborn = None\nfrom google.colab import drive\nfrom . import sibling\n"
              "import arithmetic_toy, module_8_reference\n\n\ndef f():\n    import scipy\n\n\nclass C:\n"
              "    import sklearn\n")
    assert conftest.foreign_imports(source) == [(2, "import os, pandas", "pandas"), (5, "import seaborn", "seaborn"),
                                                (8, "from google.colab import drive", "google.colab")]
    assert conftest.foreign_imports("def broken(:\n") == []  # its own SyntaxError says more
    for path in sorted(SOLUTIONS_DIR.glob("module_*/*.py")):  # the reference solutions import nothing foreign
        assert conftest.foreign_imports(path.read_text(encoding="utf-8")) == [], path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    foreign, line = _learner(tmp_path_factory.mktemp("foreign"), FOREIGN)
    clean, _ = _learner(tmp_path_factory.mktemp("clean"), COURSE_ONLY)
    folder = str(STARTER_DIR / "module_09")
    args = [folder, "-q", "-p", "no:cacheprovider", "-k", "k3_kl"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    jobs = [Job(args, {**env, "RL4LLM_LANG": language, "RL4LLM_IMPL_ROOT": str(root)}, str(REPO_ROOT))
            for language, root in (("en", foreign), ("ru", foreign), ("en", clean))]
    return run_many(jobs), line


def test_an_import_the_grader_lacks_is_named_with_its_line(runs):
    (english, russian, _), line = runs
    assert "imports the grader will not have" in english.stdout, english.stdout[-3000:]
    assert f"{REF}, line {line}: import seaborn as sns -- the grading machine has no package seaborn" in english.stdout
    assert f"{REF}, line {line + 1}: from google.colab import drive -- " in english.stdout
    assert "NumPy, PyTorch" in english.stdout
    assert "импорты, которых не будет на проверяющей машине" in russian.stdout, russian.stdout[-3000:]
    assert f"{REF}, строка {line}: import seaborn as sns — на проверяющей машине нет пакета seaborn" in russian.stdout
    assert "the grading machine" not in russian.stdout


def test_numpy_torch_the_standard_library_and_given_modules_warn_of_nothing(runs):
    (_, _, clean), _ = runs
    assert clean.returncode == 0, clean.stdout[-3000:]
    assert "grader will not have" not in clean.stdout and "no package" not in clean.stdout
