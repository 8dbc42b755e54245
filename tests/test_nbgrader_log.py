"""The nbgrader course's defaults, fast: hidden inputs withheld unless asked, nbgrader's noise quiet, and the
resubmissions ``autograde`` would skip named (graders/engine/nbgrader/log.py). The real nbgrader run is
tests/test_nbgrader.py (slow)."""

from __future__ import annotations

import io
import os
import time
import warnings
from pathlib import Path

import pytest

from graders.engine.nbgrader import log as nbgrader_log
from graders.engine.nbgrader.log import skipped_resubmissions, warn_skipped_resubmissions


def _course(tmp_path: Path, *, resubmitted: bool = True, timestamp: bool = False) -> Path:
    """alice's module_09, autograded; her submitted notebook newer than the autograded copy when ``resubmitted``."""
    submitted = tmp_path / "submitted" / "alice" / "module_09"
    graded = tmp_path / "autograded" / "alice" / "module_09"
    for folder in (submitted, graded):
        folder.mkdir(parents=True)
        (folder / "module_9_reference.ipynb").write_text("{}", encoding="utf-8")
    now = time.time()
    os.utime(graded / "module_9_reference.ipynb", (now, now))
    later = now + (60 if resubmitted else -60)
    os.utime(submitted / "module_9_reference.ipynb", (later, later))
    if timestamp:
        (submitted / "timestamp.txt").write_text("2026-12-01 20:00:00.000000 UTC", encoding="utf-8")
    (tmp_path / "submitted" / "bob" / "module_09").mkdir(parents=True)  # never autograded: nbgrader grades it
    return tmp_path


@pytest.mark.parametrize("argv", [["nbgrader", "autograde", "module_09"], ["nbgrader", "autograde"],
                                  ["nbgrader", "autograde", "module_09", "--student", "alice"],
                                  ["nbgrader", "autograde", "--student=alice", "module_09"]])
def test_a_resubmission_autograde_would_skip_is_named(tmp_path, argv):
    assert skipped_resubmissions(_course(tmp_path), argv) == [("alice", "module_09")]


@pytest.mark.parametrize("argv", [["nbgrader", "autograde", "module_09", "--force"],
                                  ["nbgrader", "autograde", "module_09", "--force=True"],
                                  ["nbgrader", "generate_feedback", "module_09"],
                                  ["nbgrader", "autograde", "module_08"],
                                  ["nbgrader", "autograde", "module_09", "--student", "bob"]])
def test_no_warning_where_nbgrader_grades_it_or_was_not_asked(tmp_path, argv):
    assert skipped_resubmissions(_course(tmp_path), argv) == []


def test_no_warning_for_an_unchanged_submission_or_one_with_a_timestamp(tmp_path):
    argv = ["nbgrader", "autograde", "module_09"]
    assert skipped_resubmissions(_course(tmp_path / "same", resubmitted=False), argv) == []
    assert skipped_resubmissions(_course(tmp_path / "stamped", timestamp=True), argv) == []  # nbgrader compares those


def test_the_warning_is_written_once_per_process_in_the_instructors_language(tmp_path, monkeypatch):
    monkeypatch.setattr(nbgrader_log, "_WARNED", set())
    course = _course(tmp_path)
    argv = ["nbgrader", "autograde", "module_09"]
    stream = io.StringIO()
    [line] = warn_skipped_resubmissions(course, argv, "en", stream)
    warn_skipped_resubmissions(course, argv, "en", stream)  # nbgrader loads its config file more than once
    assert stream.getvalue() == line + "\n"
    assert line.startswith("[rl4llm | WARNING] alice/module_09: the submission changed after it was autograded")
    assert line.endswith("`nbgrader autograde module_09 --student alice --force`")
    [russian] = warn_skipped_resubmissions(course, argv, "ru", io.StringIO())
    assert "сдача изменилась после автопроверки" in russian and "--student alice --force" in russian


@pytest.mark.parametrize("verbose", [False, True])
def test_the_gradebooks_session_warnings_are_quiet_unless_verbose(monkeypatch, verbose):
    sqlalchemy_exc = pytest.importorskip("sqlalchemy.exc")
    if verbose:
        monkeypatch.setenv("RL4LLM_NBGRADER_VERBOSE", "1")
    else:
        monkeypatch.delenv("RL4LLM_NBGRADER_VERBOSE", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nbgrader_log.quiet_database_warnings()
        warnings.warn("Object of type <SubmittedAssignment> not in session, add operation along "
                      "'Assignment.submissions' will not proceed", sqlalchemy_exc.SAWarning)
        warnings.warn("some other database warning", sqlalchemy_exc.SAWarning)
    messages = [str(w.message) for w in caught]
    assert "some other database warning" in messages
    assert any("not in session" in m for m in messages) == verbose


@pytest.mark.slow  # importing nbgrader takes seconds
@pytest.mark.parametrize("show, hidden", [(None, True), ("1", False), ("0", True)])
def test_nbgrader_feedback_withholds_hidden_inputs_unless_asked(monkeypatch, show, hidden):
    pytest.importorskip("nbgrader")
    from graders.engine.nbgrader.scoring import EngineScores

    monkeypatch.delenv("RL4LLM_HIDE_HIDDEN_INPUTS", raising=False)
    if show is None:
        monkeypatch.delenv("RL4LLM_SHOW_HIDDEN_INPUTS", raising=False)
    else:
        monkeypatch.setenv("RL4LLM_SHOW_HIDDEN_INPUTS", show)
    assert EngineScores().hide_hidden_inputs is hidden
