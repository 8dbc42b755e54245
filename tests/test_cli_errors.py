"""Clear errors and interruptions that say so: every usage error is one line and exit 2; Ctrl-C during a batch
stops the workers, writes what finished with a run manifest marked interrupted, and exits 130 with one line; the
next run into the folder says it set an interrupted run aside."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders.paths import REPO_ROOT, SOLUTIONS_DIR

RL4LLM = [sys.executable, "-m", "graders.cli"]


def _rl4llm(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*RL4LLM, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, words", [
    (["grade"], "the following arguments are required"),
    (["grade", "x", "--out", "o", "--bogus"], "unrecognized arguments: --bogus"),
    (["grade", "x", "--out", "o", "--module", "module9"], "the course has modules 8 (module_08), 9 (module_09)"),
    (["run", "module9"], "the course has modules 8 (module_08), 9 (module_09)"),
    (["capstone", "grade"], "the following arguments are required"),
    (["frobnicate"], "invalid choice"),
])
def test_a_usage_error_is_one_line_and_exit_2(args, words):
    completed = _rl4llm(*args)
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "--help" in lines[0], completed.stderr
    assert "Traceback" not in completed.stderr and completed.stdout == ""


@pytest.mark.parametrize("command", [["grade", "graders/examples"], ["merge"]])
def test_an_out_that_is_a_file_is_one_line_and_exit_2(tmp_path, command):
    target = tmp_path / "grades.txt"
    target.write_text("the user's own file\n", encoding="utf-8")
    args = [*command, "--out", str(target)] if command[0] == "grade" else [*command, str(target), str(tmp_path)]
    completed = _rl4llm(*args)
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "is a file, not a folder" in lines[0], completed.stderr
    assert target.read_text(encoding="utf-8") == "the user's own file\n"  # nothing a user gave is lost


def _descendants(pid: int) -> set[int]:
    """Every process under ``pid`` now (from /proc's parent links)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_ctrl_c_writes_what_finished_marks_the_run_and_the_next_run_says_so(tmp_path):
    submissions = []
    for index in range(6):
        folder = tmp_path / "class" / f"student{index}"
        folder.mkdir(parents=True)
        for stem in ("module_9_reference", "module_9_training"):
            shutil.copy(SOLUTIONS_DIR / "module_09" / f"{stem}.py", folder)
        submissions.append(str(folder))
    out = tmp_path / "grades"
    # as from a terminal: a shell without job control starts its background commands with SIGINT ignored, and
    # Python then keeps ignoring it (a suite run with `&` in a script would otherwise see no interruption at all)
    grader = subprocess.Popen([*RL4LLM, "grade", *submissions, "--out", str(out), "--module", "9", "--jobs", "1",
                               "--quiet"], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not list(out.glob("*/report.json")) and time.monotonic() < deadline and grader.poll() is None:
        time.sleep(0.2)
    assert grader.poll() is None, "the batch ended before it could be interrupted"
    workers = _descendants(grader.pid)
    assert workers, "no fork server or worker under the grader"
    grader.send_signal(signal.SIGINT)
    stdout, stderr = grader.communicate(timeout=120)
    assert grader.returncode == 130, stderr
    lines = [line for line in stderr.strip().splitlines() if not line.startswith(("note:", "warning:"))]
    assert len(lines) == 1 and lines[0].startswith("rl4llm grade: interrupted: "), stderr
    assert "Traceback" not in stderr + stdout and "KeyboardInterrupt" not in stderr
    time.sleep(0.5)
    assert not [pid for pid in workers if _alive(pid)], "a worker or fork server outlived the interrupted batch"
    graded = sorted(path.parent.name for path in out.glob("*/report.json"))
    manifest = json.loads((out / "_batch.json").read_text(encoding="utf-8"))
    assert manifest["names"] == graded and manifest["interrupted"] == {"graded": len(graded), "of": 6}
    assert 1 <= len(graded) < 6 and f"{len(graded)} of 6 submission(s) graded" in lines[0]
    rows = (out / "grades.csv").read_text(encoding="utf-8").strip().splitlines()[1:]
    assert sorted(row.split(",")[0] for row in rows) == graded
    for name in graded:  # what finished is whole: full marks, as a correct file deserves
        report = json.loads((out / name / "report.json").read_text(encoding="utf-8"))
        assert report["score"] == report["max_score"], report
    again = _rl4llm("grade", submissions[0], "--out", str(out), "--module", "9", "--quiet", "--no-class-report")
    assert again.returncode == 0, again.stderr
    assert f"held an earlier run that was interrupted ({len(graded)} of 6 submission(s) graded)" in again.stderr
    assert len(list((out / "_previous").iterdir())) == 1
