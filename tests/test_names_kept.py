"""Students' names are kept (issue 33, point 1): a submission's name as given -- Cyrillic, accented Latin,
spaces, CSV metacharacters, names that differ only in case or in Unicode normalisation -- is in grades.csv,
report.json, the run manifest, the scoreboard and the class report, beside a file-system-safe folder name that
is unique, stable and the same in every shard."""

from __future__ import annotations

import csv
import io
import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from graders.engine.routes.batch import grade_paths, unique_names
from graders.engine.routes.grading import GradeOptions
from graders.engine.outputs.outfolder import NAME
from graders.engine.intake.submission import display_name, submission_name
from graders.paths import SOLUTIONS_DIR

NAMES = ["Иван Петров", "Пётр Иванов", "Анна", "José García", "=cmd|' -C calc'!A0", "a,b\"c",
         unicodedata.normalize("NFC", "Zoë"), unicodedata.normalize("NFD", "Zoë"), "Alice", "alice"]


def test_folder_names_are_safe_unique_and_stable():
    folders = [submission_name(Path(name)) for name in NAMES]
    assert all(NAME.fullmatch(folder) for folder in folders), folders
    assert len(set(folders)) == len(folders)  # NFC and NFD, Alice and alice: all different
    assert folders == [submission_name(Path(name)) for name in NAMES]  # the same on every run and shard
    assert folders[0].startswith("ivan_petrov-") and folders[3].startswith("Jose_Garcia-")
    assert submission_name(Path("alice")) == "alice" and submission_name(Path("bob.zip")) == "bob"
    assert [display_name(Path(name)) for name in NAMES] == NAMES
    assert unique_names(folders) == folders


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    paths = []
    for index, name in enumerate(NAMES):
        folder = root / "class" / name
        folder.mkdir(parents=True)
        if index == 0:  # one real submission; the others hand in nothing and are graded as missing
            shutil.copy(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", folder)
        paths.append(folder)
    options = GradeOptions(modules=("9",))
    result = grade_paths(paths, root / "out", options, jobs=2, progress=False, log=lambda _m: None)
    return root, paths, result


@pytest.mark.slow
def test_every_output_keeps_the_name_as_given(graded):
    root, paths, result = graded
    out = root / "out"
    rows = list(csv.reader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    assert rows[0][:2] == ["submission", "name"]
    shown = {row[0]: row[1] for row in rows[1:]}
    for path in paths:
        folder, given = submission_name(path), display_name(path)
        report = json.loads((out / folder / "report.json").read_text(encoding="utf-8"))
        assert report["submission"] == folder
        assert report.get("name", folder) == given
        cell = shown[folder]
        assert cell.lstrip("'") == given and (cell.startswith("'") == given.startswith("="))  # formulas neutralised
    manifest = json.loads((out / "_batch.json").read_text(encoding="utf-8"))
    assert set(manifest["display"].values()) == {name for name in NAMES if name not in ("Alice", "alice")}
    scored = next(report for report in result.reports if report["submission"] == submission_name(paths[0]))
    assert scored["name"] == "Иван Петров" and scored["score"] > 0


@pytest.mark.slow
def test_the_class_report_and_scoreboard_show_the_names(graded):
    from graders.classreport import build_class_report
    from graders.engine.outputs.reports import scoreboard

    root, _paths, result = graded
    board = scoreboard(result.reports, language="ru")
    assert "Иван Петров" in board and "José García" in board
    written = build_class_report(root / "out", "en")
    students = written["students"].read_text(encoding="utf-8")
    page = written["report"].read_text(encoding="utf-8")
    for name in ("Иван Петров", "Пётр Иванов", "Анна", "José García"):
        assert name in students and name in page, name
    # Zoë twice (NFC and NFD): two rows, told apart by their folder names
    assert students.count("Zo") >= 2


@pytest.mark.slow
def test_shards_merge_to_the_same_bytes_with_the_names(graded, tmp_path):
    from graders.engine.routes.shards import ShardSpec, grade_shard, merge_shards

    root, paths, _result = graded
    options = GradeOptions(modules=("9",))
    shards = []
    for index in (1, 2):
        folder = tmp_path / f"shard{index}"
        grade_shard(paths, folder, ShardSpec(index, 2), options, jobs=2, progress=False)
        shards.append(folder)
    merge_shards(tmp_path / "merged", shards)
    for name in ("grades.csv", "_batch.json"):
        assert (tmp_path / "merged" / name).read_bytes() == (root / "out" / name).read_bytes(), name
