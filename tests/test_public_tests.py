"""Every public learner test file passes against solutions/ and fails cleanly against the untouched starter.

"Cleanly" means each case fails with the one line conftest makes of a stub's
NotImplementedError ("NOT IMPLEMENTED: <file stem>.<function> ..."), never a
traceback wall and never an error in collection.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from graders import course
from graders.paths import SOLUTIONS_DIR, STARTER_DIR
from conftest import run_learner_tests

pytestmark = pytest.mark.slow  # pytest runs in subprocesses: about 20 s

PUBLIC_TEST_FILES = sorted(STARTER_DIR.glob("module_*/test_*.py"))


def test_every_learner_file_has_public_tests():
    covered = {path.name.removeprefix("test_") for path in PUBLIC_TEST_FILES}
    learner_files = {f"{stem}.py" for stem in course.STEMS}
    assert learner_files and learner_files <= covered, learner_files - covered


@pytest.mark.parametrize("test_file", PUBLIC_TEST_FILES, ids=lambda p: p.stem)
def test_public_tests_pass_against_the_solutions(test_file, tmp_path):
    run = run_learner_tests(test_file, SOLUTIONS_DIR, tmp_path)
    failed = [case for case in run.cases if case["outcome"] != "passed"]
    assert run.cases and not failed, (failed[:3], run.output[-2000:])
    assert run.returncode == 0


@pytest.mark.parametrize("test_file", PUBLIC_TEST_FILES, ids=lambda p: p.stem)
def test_public_tests_fail_cleanly_against_the_untouched_starter(test_file, tmp_path):
    stem = test_file.stem.removeprefix("test_")
    run = run_learner_tests(test_file, STARTER_DIR, tmp_path)
    assert run.cases, run.output[-2000:]
    for case in run.cases:
        assert case["outcome"] == "failure", case
        lines = [line for line in case["message"].splitlines() if line.strip()]  # JUnit: message + text
        assert lines and all(line.startswith(f"NOT IMPLEMENTED: {stem}.") for line in lines), case


@pytest.mark.parametrize("language, words", [("en", "samples the toy differently"), ("ru", "сэмплирует игрушечную")])
def test_the_grpo_toy_test_skips_where_torch_samples_differently(tmp_path, language, words):
    # a starter whose reference outcomes came from a torch that sampled otherwise: before any update the
    # learner's run already differs from the file's fingerprint, so it cannot be compared here
    starter = tmp_path / "starter"
    shutil.copytree(STARTER_DIR, starter, ignore=shutil.ignore_patterns("__pycache__"))
    table = json.loads((starter / "module_09" / "_toy_reference.json").read_text(encoding="utf-8"))
    table["fingerprint"]["before_train_accuracy"] += 0.125
    (starter / "module_09" / "_toy_reference.json").write_text(json.dumps(table), encoding="utf-8")
    env = {**os.environ, "RL4LLM_IMPL_ROOT": str(SOLUTIONS_DIR), "RL4LLM_LANG": language}
    run = subprocess.run([sys.executable, "-m", "pytest", "module_09/test_module_9_training.py", "-q", "-rs",
                          "-p", "no:cacheprovider", "-k", "trains_the_toy"],
                         cwd=starter, env=env, capture_output=True, text=True, timeout=600)
    assert "2 skipped" in run.stdout and "SKIPPED [2]" in run.stdout and words in run.stdout, run.stdout[-3000:]
