"""Environment errors through the real command line (issue 52, point 5): a read-only or full disk, a path that is a
file where a folder is expected (or the other way round), a bad ``export --to``, nonsensical counts, a
``--module`` the class did not hand in, ``export`` after Ctrl-C. Each is one clear line on stderr, an exit status
that is not 0, no traceback, and nothing the user gave is lost."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from graders.cli import main
from graders.engine.judging.kit import DEFAULT_KIT


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line(err: str, *words: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and all(word in lines[0] for word in words), err
    return lines[0]


def _submission(root: Path, stem: str = "module_9_reference") -> Path:
    folder = root / "alice"
    folder.mkdir(parents=True)
    (folder / f"{stem}.py").write_text(DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8"), encoding="utf-8")
    return folder


@pytest.mark.parametrize("jobs", ["0", "-3", "two"])
def test_a_nonsensical_count_is_refused(tmp_path, capsys, jobs):
    for command in (["grade", tmp_path, "--out", tmp_path / "out"], ["demo", "--out", tmp_path / "demo"]):
        with pytest.raises(SystemExit) as stopped:
            main([str(part) for part in command] + ["--jobs", jobs])
        assert stopped.value.code == 2
        _one_line(capsys.readouterr().err, "--jobs", "positive whole number")
    assert not (tmp_path / "out").exists() and not (tmp_path / "demo").exists()


@pytest.mark.parametrize("cores, gib, expected", [(2, 24, 2), (1, 64, 1), (16, 24, 4), (64, 512, 8), (4, 4, 1),
                                                 (4, 0, 4)])
def test_without_jobs_a_class_is_graded_on_the_cores_and_memory_there_are(monkeypatch, cores, gib, expected):
    """``--jobs`` left out: the cores this process may use, at most 8, one submission per 2 × 3 GiB of memory
    (the memory unknown: the cores decide); never 0."""
    import os

    from graders.cli_checks import default_jobs

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": (gib << 30) // 4096}
    monkeypatch.setattr(os, "sysconf", lambda name: pages[name])
    assert default_jobs(3072) == expected


def test_without_jobs_the_grade_command_takes_the_default(monkeypatch, tmp_path, capsys):
    import graders.cli as cli
    from graders.engine.routes import batch

    seen = {}

    def grade_paths(paths, out, options, *, jobs, progress):
        seen["jobs"] = jobs
        raise batch.GraderError("stopped here")

    monkeypatch.setattr(batch, "grade_paths", grade_paths)
    monkeypatch.setattr(cli, "default_jobs", lambda memory_mb: 5)
    _run(capsys, "grade", _submission(tmp_path), "--out", tmp_path / "out", "--module", "9")
    assert seen == {"jobs": 5}
    _run(capsys, "grade", tmp_path / "alice", "--out", tmp_path / "out2", "--module", "9", "--jobs", "1")
    assert seen == {"jobs": 1}


def test_a_read_only_out_is_said_before_grading(tmp_path, capsys, monkeypatch):
    import graders.cli_checks as checks

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "out"))

    monkeypatch.setattr(checks.tempfile, "NamedTemporaryFile", refuse)
    code, out, err = _run(capsys, "grade", _submission(tmp_path), "--out", tmp_path / "out", "--lang", "en")
    assert code != 0 and out == ""
    _one_line(err, "--out", "cannot be written", "read-only")


def test_an_out_that_is_a_file_is_kept(tmp_path, capsys):
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes", encoding="utf-8")
    code, _, err = _run(capsys, "grade", _submission(tmp_path), "--out", mine, "--lang", "en")
    assert code == 2 and mine.read_text(encoding="utf-8") == "my notes"
    _one_line(err, "is a file, not a folder")


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_the_earlier_run_is_kept(tmp_path, capsys, monkeypatch):
    """grades.csv cannot be written (ENOSPC): one line, exit 1; every report is written, the earlier run set aside
    whole, and no half-written grades.csv."""
    import graders.engine.routes.batch as batch

    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("submission,name,total,max_total\nold,old,1,2\n", encoding="utf-8")

    def full(folder, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "grades.csv"))

    monkeypatch.setattr(batch, "_write_csv", full)
    monkeypatch.setattr(batch, "kit_fingerprint", lambda kit: {})  # other edits of the checkout are not ours
    code, _, err = _run(capsys, "grade", _submission(tmp_path), "--out", out, "--module", "9", "--quiet",
                        "--lang", "en")
    assert code == 1
    line = [line for line in err.splitlines() if "disk is full" in line]
    assert len(line) == 1 and "nothing was deleted" in line[0] and "Traceback" not in err, err
    assert (out / "alice" / "report.json").is_file() and not (out / "grades.csv").exists()
    (earlier,) = (out / "_previous").iterdir()
    assert "old,old,1,2" in (earlier / "grades.csv").read_text(encoding="utf-8")


def test_a_full_disk_while_writing_a_report_stops_the_batch_in_one_line(tmp_path, capsys, monkeypatch):
    import graders.engine.routes.batch as batch
    from graders.engine.outputs import reports

    def full(out_dir, name, report):
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(out_dir) / name / "report.json"))

    monkeypatch.setattr(reports, "write_submission_reports", full)
    monkeypatch.setattr(batch, "kit_fingerprint", lambda kit: {})
    code, _, err = _run(capsys, "grade", _submission(tmp_path), "--out", tmp_path / "out", "--module", "9",
                        "--quiet", "--lang", "ru")
    assert code == 1
    line = [line for line in err.splitlines() if "диск заполнен" in line]
    assert len(line) == 1 and "ничего не удалено" in line[0] and "Traceback" not in err, err


def test_an_os_error_in_any_command_is_one_line(tmp_path, capsys, monkeypatch):
    """Whatever command meets an OSError the kit does not handle itself (here the class report's folder read), it
    is said in one line with exit 1 (the LMS export's own --to errors: tests/test_lms*.py)."""
    import graders.classreport as classreport

    def full(folder, language=None):
        raise OSError(errno.EACCES, "Permission denied", str(folder))

    monkeypatch.setattr(classreport, "build_class_report", full)
    code, _, err = _run(capsys, "report", tmp_path, "--lang", "ru")
    assert code == 1
    _one_line(err, "rl4llm report:", "нет прав доступа", str(tmp_path), "ничего не удалено")


def test_bundle_out_a_file_is_refused_and_kept(tmp_path, capsys):
    mine = tmp_path / "bundle.txt"
    mine.write_text("mine", encoding="utf-8")
    for extra in ([], ["--force"]):
        code, _, err = _run(capsys, "bundle", "--out", mine, *extra)
        assert code == 2 and mine.read_text(encoding="utf-8") == "mine"
        _one_line(err, "is a file, not a folder")


def test_gradescope_out_a_new_folder_is_refused(tmp_path, capsys):
    code, _, err = _run(capsys, "gradescope", "--out", f"{tmp_path / 'newdir'}/")
    assert code == 2 and not (tmp_path / "newdir").exists()
    _one_line(err, "is a folder", "autograder.zip")


def test_gradescope_out_that_cannot_be_written_keeps_the_old_zip(tmp_path, capsys, monkeypatch):
    import graders.engine.routes.gradescope as gradescope

    old = tmp_path / "autograder.zip"
    old.write_bytes(b"the old bundle")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(gradescope, "_write", full)
    code, _, err = _run(capsys, "gradescope", "--out", old)
    assert code == 2 and old.read_bytes() == b"the old bundle"
    assert not list(tmp_path.glob(".*writing"))
    _one_line(err, "cannot be written")


def test_a_module_the_class_did_not_hand_in_is_said_before_grading(tmp_path, capsys, monkeypatch):
    import graders.engine.routes.batch as batch

    said_before: list[str] = []

    def grade_paths(*args, **kwargs):
        said_before.append(capsys.readouterr().err)
        raise batch.GraderError("stopped by the test")

    monkeypatch.setattr(batch, "grade_paths", grade_paths)
    main(["grade", str(_submission(tmp_path)), "--out", str(tmp_path / "out"), "--module", "8", "--lang", "en"])
    (err,) = said_before
    _one_line(err, "--module 8", "Module 9", "score 0")
    main(["grade", str(tmp_path / "alice"), "--out", str(tmp_path / "out"), "--module", "9", "--lang", "en"])
    assert "warning" not in said_before[1]


def test_export_after_ctrl_c_exports_what_was_graded(tmp_path, capsys, monkeypatch):
    """An interrupted grade of an LMS download still records the download's ids: export writes the graded students'
    grades and lists the others as not graded (never "no graded LMS download here")."""
    import graders.engine.routes.batch as batch
    import graders.lms_cli as lms_cli

    out = tmp_path / "out"

    class Staged:
        def cleanup(self):
            pass

    monkeypatch.setattr(lms_cli, "stage_download", lambda args, paths, language: (
        paths, "moodle", {"1201": "Анна Петрова", "1305": "Иван Сидоров"}, Staged()))

    def interrupted(paths, out_dir, options, **kwargs):
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "grades.csv").write_text("submission,name,lms_id,total,max_total\n"
                                            "anna_petrova-1201,Анна Петрова,1201,40,46\n", encoding="utf-8")
        stopped = batch.BatchInterrupted("1 of 2")
        stopped.graded, stopped.total, stopped.folder = 1, 2, out_dir
        raise stopped

    monkeypatch.setattr(batch, "grade_paths", interrupted)
    code, _, err = _run(capsys, "grade", _submission(tmp_path), "--out", out, "--lang", "en", "--module", "9")
    assert code == 130 and "interrupted" in err
    assert json.loads((out / "_lms.json").read_text(encoding="utf-8"))["students"]["1201"] == "Анна Петрова"
    code, printed, err = _run(capsys, "export", out, "--lms", "moodle", "--lang", "en")
    assert "no graded LMS download here" not in err and "Traceback" not in err
