"""An output folder holds one run: an earlier run is set aside (never deleted, never mixed in), the run manifest says
which submissions the report describes, and a folder an older kit wrote (no manifest) is read with a note.

- fast: :func:`graders.engine.outputs.outfolder.set_aside` on an earlier run's files; the class report of a folder with a
  manifest and a forged ``report.json`` beside it; a manifest pointing outside; a listed report gone;
- slow: ``rl4llm grade`` of five, then of three submissions into one folder (``grades.csv`` and the report say 3,
  the five are in ``_previous/``), then a Module 8 run into it (no ``nan is not in list``), and ``rl4llm report``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from graders.classreport import REPORT_FILE, ReportError, SUMMARY_FILE, build_class_report
from graders.cli import main
from graders.engine.outputs import outfolder
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.values.protocol import ExerciseReport, Status, SubmissionReport
from graders.engine.outputs.reports import write_submission_reports

GRA = "module_9_reference.group_relative_advantages"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _report(folder: Path, name: str, points: float) -> None:
    status = Status.PASSED if points == 3.0 else Status.FAILED
    write_submission_reports(folder, name, SubmissionReport(name, (ExerciseReport(GRA, status, points, 3.0, ""),))
                             .to_dict())


def _earlier_run(folder: Path, names=("a", "b", "c"), report: bool = False) -> None:
    for name in names:
        _report(folder, name, 3.0)
    (folder / "grades.csv").write_text("submission,total\n", encoding="utf-8")
    outfolder.write_run_manifest(folder, list(names), [GRA])
    if report:
        build_class_report(folder, "en")


def test_an_earlier_run_is_set_aside_whole_and_nothing_else_moves(tmp_path):
    _earlier_run(tmp_path, report=True)
    (tmp_path / "my_notes.txt").write_text("mine", encoding="utf-8")  # the user's own: stays
    (tmp_path / "inputs").mkdir()  # a folder without reports: not a run's
    (tmp_path / "inputs" / "x.py").write_text("x = 1\n", encoding="utf-8")
    before = _tree(tmp_path)
    notes = []
    target = outfolder.set_aside(tmp_path, log=notes.append)
    assert target is not None and target.parent == tmp_path / outfolder.PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_previous", "inputs", "my_notes.txt"]
    moved = {f"_previous/{target.name}/{key}": data for key, data in before.items()
             if key not in ("my_notes.txt", "inputs/x.py")}
    assert _tree(tmp_path) == {**moved, "my_notes.txt": b"mine", "inputs/x.py": b"x = 1\n"}  # nothing lost
    assert "set aside in" in notes[0] and "3 submission folder(s)" in notes[0] and "nothing deleted" in notes[0]
    _earlier_run(tmp_path, ("d",))  # a second earlier run: a folder of its own, the first kept
    second = outfolder.set_aside(tmp_path)
    assert second != target and (target / "a" / "report.json").is_file() and (second / "d" / "report.json").is_file()
    assert outfolder.set_aside(tmp_path) is None  # nothing left to move


def test_a_submission_being_graded_inside_the_folder_is_never_moved(tmp_path):
    _earlier_run(tmp_path)
    shutil.copy(tmp_path / "a" / "report.json", tmp_path / "a" / "submission.py")
    assert "a" not in outfolder.earlier_run(tmp_path, keep=[tmp_path / "a" / "submission.py"])
    assert "a" in outfolder.earlier_run(tmp_path)


def test_a_forged_report_beside_the_last_run_is_not_in_the_report(tmp_path):
    _earlier_run(tmp_path)
    _report(tmp_path, "forged", 0.0)  # written after the run, by anyone: its folder is not in the manifest
    written = build_class_report(tmp_path, "en")
    page = (tmp_path / REPORT_FILE).read_text(encoding="utf-8")
    assert "3 submissions" in page and "forged" not in page
    assert any("forged" in note and "left out" in note for note in written["notes"])
    summary = pd.read_csv(tmp_path / SUMMARY_FILE)
    assert summary.loc[0, "pass_rate"] == 1.0 and summary.loc[0, "handed_in"] == 3


@pytest.mark.parametrize("names", [["../x"], ["a", "a"], "a", [".hidden"], [3]])
def test_a_manifest_the_kit_did_not_write_is_refused(tmp_path, names):
    _earlier_run(tmp_path)
    (tmp_path / outfolder.RUN_MANIFEST).write_text(json.dumps({"format": outfolder.FORMAT, "names": names,
                                                               "exercise_ids": [GRA]}), encoding="utf-8")
    with pytest.raises(ReportError, match="not a run manifest the kit writes"):
        build_class_report(tmp_path, "en")


def test_a_report_the_manifest_lists_and_the_folder_lacks_is_a_clear_error(tmp_path):
    _earlier_run(tmp_path)
    (tmp_path / "b" / "report.json").unlink()
    with pytest.raises(ReportError, match=r"lists submissions whose report is missing: .*b/report.json"):
        build_class_report(tmp_path, "en")


def test_the_manifest_is_deterministic(tmp_path):
    one = outfolder.manifest_text(["b", "a"], [GRA])
    assert one == outfolder.manifest_text(["a", "b"], [GRA]) and json.loads(one)["names"] == ["a", "b"]
    outfolder.write_run_manifest(tmp_path, ["b", "a"], [GRA])
    assert (tmp_path / outfolder.RUN_MANIFEST).read_text(encoding="utf-8") == one
    assert outfolder.read_run_manifest(tmp_path) == {"names": ["a", "b"], "exercise_ids": [GRA], "interrupted": None, "display": {}}
    assert sorted(p.name for p in tmp_path.iterdir()) == [outfolder.RUN_MANIFEST]  # no temporary file left


def _submission(folder: Path, name: str, source: str) -> Path:
    (folder / name).mkdir(parents=True)
    (folder / name / "module_9_reference.py").write_text(source, encoding="utf-8")
    return folder / name


@pytest.mark.slow
def test_regrading_three_after_five_reports_three_and_another_module_never_crashes(tmp_path, capsys):
    reference = DEFAULT_KIT.solution_path("module_9_reference").read_text(encoding="utf-8")
    five = [_submission(tmp_path / "in", f"s{i}", reference) for i in range(5)]
    out = tmp_path / "out"
    common = ["--module", "9", "--jobs", "2", "--quiet"]
    assert main(["grade", *map(str, five), "--out", str(out), *common]) == 0
    first = _tree(out)
    assert "5 submissions" in (out / REPORT_FILE).read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["grade", *map(str, five[:3]), "--out", str(out), *common]) == 0
    printed = capsys.readouterr()
    assert "held an earlier run; set aside in" in printed.err
    assert len((out / "grades.csv").read_text(encoding="utf-8").splitlines()) == 1 + 3
    assert "3 submissions" in (out / REPORT_FILE).read_text(encoding="utf-8")
    previous = next((out / outfolder.PREVIOUS).iterdir())
    assert _tree(previous) == first  # the earlier run, byte for byte
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["_previous", "s0", "s1", "s2"]

    # a Module 8 run of one submission into the same folder, then `rl4llm report` (the old kit: nan is not in list)
    module_8 = DEFAULT_KIT.solution_path("module_8_reference").read_text(encoding="utf-8")
    (tmp_path / "in8" / "m8").mkdir(parents=True)
    (tmp_path / "in8" / "m8" / "module_8_reference.py").write_text(module_8, encoding="utf-8")
    assert main(["grade", str(tmp_path / "in8" / "m8"), "--out", str(out), "--module", "8", "--quiet"]) == 0
    assert main(["report", str(out), "--lang", "en"]) == 0
    page = (out / REPORT_FILE).read_text(encoding="utf-8")
    assert "1 submissions" in page and "module_9_reference" not in page and "module_8_reference" in page
    # and the same two runs' reports side by side in a folder without a manifest (an older kit's)
    mixed = tmp_path / "mixed"
    shutil.copytree(out / "m8", mixed / "m8")
    shutil.copytree(previous / "s0", mixed / "s0")
    assert main(["report", str(mixed)]) == 0
    assert "different sets of exercises" in capsys.readouterr().err
