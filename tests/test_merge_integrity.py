"""`rl4llm merge` with integrity: a shard folder is input that a learner or a TA could have written to.

One tiny batch of module 9 is graded once, as shards 1/2 and 2/2; each test tampers with
fresh copies of the two shard folders the way an adversary would (a forged report under a zeroed kit
digest, edited points, totals that do not add up, links to the reference solutions, unexpected files,
ids and misconception names that are spreadsheet formulas, names and links that reach outside) and
checks that the merge exits 2 naming the shard, the file and the reason, writes nothing and changes no
shard; and that the untampered shards beside them still merge to the same bytes as before the checks
(each report folder as the shard holds it, and grades.csv; tests/test_shards.py shows that these are the
bytes of an unsharded `rl4llm grade`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest
from test_shards import GRA, _folder, _tree  # the sharding tests' helpers

from graders import __version__, checks, course
from graders.cli import main
from graders.engine.outputs import outfolder, reports
from graders.engine.routes import shards
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import mutant_source
from graders.paths import SOLUTIONS_DIR

OPTIONS = GradeOptions(modules=("9",))
TOTAL = sum(checks.points(e) for e in course.exercises(["9"]))  # Module 9's points, from the registry
FULL = f"{TOTAL:g}"  # as grades.csv writes a whole number of points
SOLUTION = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"  # what no merged folder may ever carry
K3 = "module_9_reference.k3_kl"


NAMES = ["zoe", "placebo", "mallory"]

# slow: every test reads the module's grading batch of three (about 4.5 s) and merges copies of it; a security
# control, not a risk of everyday changes. test_shards.py keeps a merge in the fast tier.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """``shard1/`` (zoe, mallory) and ``shard2/`` (placebo) of one batch of three: zoe the reference, placebo
    the untouched starter (0 points), mallory a mutant whose mistake is named."""
    root = tmp_path_factory.mktemp("graded")
    texts = [SOLUTION.read_text(encoding="utf-8"),
             DEFAULT_KIT.starter_path("module_9_reference").read_text(encoding="utf-8"), mutant_source(GRA, "sample_std")]
    paths = [_folder(root / "subs" / name, text) for name, text in zip(NAMES, texts)]
    for index in (1, 2):
        shards.grade_shard(paths, root / f"shard{index}", shards.ShardSpec(index, 2), OPTIONS, jobs=2, progress=False)
    return root


@functools.cache
def _merged_before(graded: Path) -> dict[str, bytes]:
    """What `rl4llm merge` wrote before it checked anything: each report folder copied from its shard,
    grades.csv of every report in the batch's order, and the run manifest."""
    tree = {}
    for name, index in zip(NAMES, (1, 2, 1)):
        tree.update({f"{name}/{file}": (graded / f"shard{index}" / name / file).read_bytes()
                     for file in ("report.json", "results.json", "junit.xml")})
    ids = json.loads((graded / "shard1" / shards.MANIFEST).read_text(encoding="utf-8"))["exercise_ids"]
    every = [_report(graded / f"shard{index}", name) for name, index in zip(NAMES, (1, 2, 1))]
    tree["grades.csv"] = reports.grades_csv(every, ids).encode()
    tree[outfolder.RUN_MANIFEST] = outfolder.manifest_text(NAMES, ids).encode()  # the run manifest, as grade writes it
    return tree


@pytest.fixture
def copies(graded, tmp_path) -> list[Path]:
    """Fresh copies of the two shard folders, to tamper with."""
    return [Path(shutil.copytree(graded / f"shard{index}", tmp_path / f"shard{index}")) for index in (1, 2)]


def _report(folder: Path, name: str) -> dict:
    return json.loads((folder / name / "report.json").read_text(encoding="utf-8"))


def _entry(report: dict, exercise_id: str) -> dict:
    return next(entry for entry in report["exercises"] if entry["id"] == exercise_id)


def _retotal(report: dict) -> None:
    """The totals as SubmissionReport.to_dict makes them, so that only the edited entries tell."""
    report["score"] = round(sum(e["points"] for e in report["exercises"]), 4)
    report["max_score"] = round(sum(e["max_points"] for e in report["exercises"]), 4)


def _full_marks(report: dict) -> None:
    for entry in report["exercises"]:
        entry.update(points=entry["max_points"], status="passed", feedback="89/89 checks passed.", misconceptions=[])
        entry.pop("not_implemented", None)
    _retotal(report)


def _edit_report(folder: Path, name: str, edit) -> None:
    """A careless forger: ``edit`` the report and write report.json alone (as the grader formats it)."""
    report = _report(folder, name)
    edit(report)
    (folder / name / "report.json").write_text(reports.report_json(report), encoding="utf-8")


def _forge(folder: Path, name: str, edit) -> None:
    """A careful forger: ``edit`` the report, then write every file the grader would write from it (the three
    report files and the shard's grades.csv), so that only what the report says can give it away."""
    report = _report(folder, name)
    edit(report)
    reports.write_submission_reports(folder, name, report)
    manifest = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))
    held = [_report(folder, manifest["names"][index]) for index in manifest["indices"]]
    (folder / "grades.csv").write_text(reports.grades_csv(held, manifest["exercise_ids"]), encoding="utf-8")


def _edit_manifest(folder: Path, **changes) -> None:
    manifest = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))
    shards.write_manifest(folder, {**manifest, **changes})


def _refused(graded: Path, tmp_path: Path, capsys, folders: list[Path], *words: str, out: Path | None = None) -> str:
    """`rl4llm merge` exits 2 with every one of ``words`` on stderr, changes no shard and writes nothing; the
    untampered shards still merge to the bytes they merged to before. Returns stderr."""
    out = out or tmp_path / "out"
    before = {folder: _tree(folder) for folder in folders}
    existed = out.exists()
    assert main(["merge", str(out), *map(str, folders)]) == 2
    err = capsys.readouterr().err
    for text in words:
        assert text in err, err
    assert "refused to merge" in err or "rl4llm merge: " in err
    assert {folder: _tree(folder) for folder in folders} == before
    assert existed or not out.exists()
    good = tmp_path / "untampered"
    shards.merge_shards(good, [graded / "shard1", graded / "shard2"])
    assert _tree(good) == _merged_before(graded)
    return err


# ---------------------------------------------------------------------------- what the untampered shards give
def test_the_batch_is_what_the_attacks_need(graded):
    placebo, mallory = _report(graded / "shard2", "placebo"), _report(graded / "shard1", "mallory")
    assert placebo["score"] == 0 and placebo["max_score"] == TOTAL
    assert "sample_std" in _entry(mallory, GRA)["misconceptions"]
    assert _entry(_report(graded / "shard1", "zoe"), K3)["status"] == "passed"


def test_an_untampered_merge_is_the_unsharded_batch_byte_for_byte(graded, tmp_path, capsys):
    out = tmp_path / "merged"
    assert main(["merge", str(out), str(graded / "shard2"), str(graded / "shard1")]) == 0
    before, merged = _merged_before(graded), _tree(out)
    assert {path: merged[path] for path in before} == before  # every report file and grades.csv
    assert set(merged) - set(before) == {path for path in merged if path.startswith("class_")}  # + the class report
    assert "3 submissions" in capsys.readouterr().out


def test_the_merge_checks_what_the_grader_itself_writes(graded):
    registry = shards.kit_registry(OPTIONS.modules)
    for name, index in zip(NAMES, (1, 2, 1)):
        assert shards.report_problems(_report(graded / f"shard{index}", name), name, registry) == []
    assert json.loads((graded / "shard1" / shards.MANIFEST).read_text())["exercise_ids"] == list(registry.exercise_ids)


# ---------------------------------------------------------------------------- forged reports
def test_a_forged_report_under_a_zeroed_kit_digest_is_refused(graded, tmp_path, capsys, copies):
    _forge(copies[1], "placebo", _full_marks)  # the placebo shows full marks in every file
    for folder in copies:
        _edit_manifest(folder, kit={"version": __version__, "digest": "0" * 64})
    err = _refused(graded, tmp_path, capsys, copies, f"shard 2/2 ({copies[1]}): _shard.json: records kit",
                   f"with kit digest {'0' * 64}, but this kit is", f"shard 1/2 ({copies[0]}): _shard.json",
                   "graded by another kit")
    assert shards.kit_digest() in err


def test_edited_points_with_the_right_digest_are_refused(graded, tmp_path, capsys, copies):
    _edit_report(copies[1], "placebo", _full_marks)  # report.json says full marks; the other files say 0
    _refused(graded, tmp_path, capsys, copies,
             f"shard 2/2 ({copies[1]}): placebo/results.json: is not what placebo/report.json gives",
             "placebo/junit.xml: is not what placebo/report.json gives")


def test_a_report_json_not_as_the_grader_formats_it_is_refused(graded, tmp_path, capsys, copies):
    path = copies[0] / "zoe" / "report.json"
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=1), encoding="utf-8")
    _refused(graded, tmp_path, capsys, copies,
             f"shard 1/2 ({copies[0]}): zoe/report.json: is not byte for byte as the grader writes it")


def test_an_edited_grades_csv_of_a_shard_is_refused(graded, tmp_path, capsys, copies):
    path = copies[1] / "grades.csv"
    path.write_text(path.read_text(encoding="utf-8").replace(f",0,{FULL}\n", f",{FULL},{FULL}\n"), encoding="utf-8")
    _refused(graded, tmp_path, capsys, copies,
             f"shard 2/2 ({copies[1]}): grades.csv: is not what the shard's reports give: edited after grading")


def _set(exercise_id: str, **fields):
    def edit(report: dict) -> None:
        _entry(report, exercise_id).update(fields)
        _retotal(report)
    return edit


@pytest.mark.parametrize("edit, words", [
    (_set(K3, points=3.0), f"zoe/report.json: exercise {K3}: points 3.0 are more than max_points 2.0"),
    (_set(K3, points=20.0, max_points=20.0), f"zoe/report.json: exercise {K3}: max_points 20.0, but this kit gives 2.0"),
    (_set(K3, points=-1.0, status="failed"), f"zoe/report.json: exercise {K3}: points -1.0 are negative"),
    (_set(K3, points=float("nan")), "zoe/report.json: cannot be read: NaN is not a finite number"),
    (_set(K3, status="missing"), f"zoe/report.json: exercise {K3}: status missing with 2.0 of 2.0 points"),
], ids=["above-max", "max-points", "negative", "nan", "status"])
def test_points_this_kit_does_not_give_are_refused(graded, tmp_path, capsys, copies, edit, words):
    _forge(copies[0], "zoe", edit)  # coherent in every file: only the kit's registry can tell
    _refused(graded, tmp_path, capsys, copies, f"shard 1/2 ({copies[0]}): {words}")


def test_infinite_points_are_refused(graded, tmp_path, capsys, copies):
    path = copies[1] / "placebo" / "report.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"points": 0.0', '"points": 1e999', 1), encoding="utf-8")
    _refused(graded, tmp_path, capsys, copies, "placebo/report.json: exercise module_9_reference.verify_detailed: "
             "points inf are not a finite number")


@pytest.mark.parametrize("folder, name, key, words", [
    (1, "placebo", "score", f"placebo/report.json: score {TOTAL} is not the sum of its exercises' points (0.0)"),
    (0, "zoe", "max_score", f"zoe/report.json: max_score 40.0 is not the sum of its exercises' max_points ({TOTAL})"),
])
def test_totals_that_do_not_add_up_are_refused(graded, tmp_path, capsys, copies, folder, name, key, words):
    _forge(copies[folder], name, lambda report: report.update({key: 40.0 if key == "max_score" else TOTAL}))
    _refused(graded, tmp_path, capsys, copies, f"({copies[folder]}): {words}")


# ---------------------------------------------------------------------------- links, files, layout
def _link_junit(shard: Path, tmp_path: Path) -> str:
    (shard / "zoe" / "junit.xml").unlink()
    (shard / "zoe" / "junit.xml").symlink_to(SOLUTION)
    return "zoe/junit.xml: is a symbolic link, not a file (links are never followed)"


def _link_extra(shard: Path, tmp_path: Path) -> str:
    (shard / "zoe" / "solution.py").symlink_to(SOLUTION)
    return "zoe/solution.py: unexpected symbolic link: a submission's folder holds only report.json"


def _link_folder(shard: Path, tmp_path: Path) -> str:
    elsewhere = Path(shutil.move(str(shard / "zoe"), str(tmp_path / "elsewhere")))  # outside the shard
    shutil.copy(SOLUTION, elsewhere / "module_9_reference.py")
    (shard / "zoe").symlink_to(elsewhere, target_is_directory=True)
    return "zoe/: is a symbolic link, not a folder (links are never followed)"


def _hard_link(shard: Path, tmp_path: Path) -> str:
    outside = tmp_path / "outside.xml"
    shutil.copy(SOLUTION, outside)
    (shard / "zoe" / "junit.xml").unlink()
    os.link(outside, shard / "zoe" / "junit.xml")
    return "zoe/junit.xml: is a hard link (2 names for one file)"


@pytest.mark.parametrize("tamper", [_link_junit, _link_extra, _link_folder, _hard_link],
                         ids=["symlinked-file", "extra-symlink", "symlinked-folder", "hard-link"])
def test_links_to_the_reference_solutions_are_refused(graded, tmp_path, capsys, copies, tamper):
    words = tamper(copies[0], tmp_path)
    _refused(graded, tmp_path, capsys, copies, f"shard 1/2 ({copies[0]}): {words}")


def test_a_linked_manifest_is_refused(graded, tmp_path, capsys, copies):
    moved = Path(shutil.move(str(copies[0] / shards.MANIFEST), str(tmp_path / "manifest.json")))
    (copies[0] / shards.MANIFEST).symlink_to(moved)
    _refused(graded, tmp_path, capsys, copies, f"{copies[0] / shards.MANIFEST} is a symbolic link")


def _extra_file(shard: Path) -> str:
    shutil.copy(SOLUTION, shard / "zoe" / "notes.py")
    return "zoe/notes.py: unexpected file: a submission's folder holds only report.json, results.json, junit.xml"


def _stray_file(shard: Path) -> str:
    (shard / "extra.txt").write_text("hello\n", encoding="utf-8")
    return "extra.txt: unexpected file: a shard holds only _shard.json, grades.csv, _lms.json (an LMS download's) and a folder"


def _stray_folder(shard: Path) -> str:
    shutil.copytree(shard / "zoe", shard / "eve")  # a report no manifest lists
    return "eve: unexpected folder"


def _pipe(shard: Path) -> str:
    os.mkfifo(shard / "pipe")
    return "pipe: unexpected named pipe"


def _too_long(shard: Path) -> str:
    with (shard / "zoe" / "report.json").open("a", encoding="utf-8") as file:
        file.write(" " * 2**22)  # still valid JSON, and 4 MiB longer
    return "zoe/report.json: is larger than the 4194304 bytes the grader reads"


def _odd_name(shard: Path) -> str:
    (shard / "zoe" / "x\n\x1b[2J").write_text("", encoding="utf-8")  # a name that would rewrite the terminal
    return "zoe/'x\\n\\x1b[2J': unexpected file"


@pytest.mark.parametrize("tamper", [_extra_file, _stray_file, _stray_folder, _pipe, _too_long, _odd_name],
                         ids=["in-submission", "beside-submissions", "stray-folder", "named-pipe", "too-long", "odd-name"])
def test_unexpected_files_are_refused(graded, tmp_path, capsys, copies, tamper):
    words = tamper(copies[0])
    _refused(graded, tmp_path, capsys, copies, f"shard 1/2 ({copies[0]}): {words}")


# ---------------------------------------------------------------------------- what reaches the CSVs
@pytest.mark.parametrize("bad", ['=HYPERLINK("x")', "+cmd|' /C calc'!A0"])
def test_an_exercise_id_the_kit_does_not_know_is_refused_in_a_report(graded, tmp_path, capsys, copies, bad):
    _edit_report(copies[0], "zoe", lambda report: report["exercises"][0].update(id=bad))
    _refused(graded, tmp_path, capsys, copies,
             f"shard 1/2 ({copies[0]}): zoe/report.json: unknown exercise id {ascii(bad)}: this kit's module(s) 9",
             "zoe/report.json: lacks exercise(s) module_9_reference.verify_detailed")


@pytest.mark.parametrize("bad", ['=HYPERLINK("x")', "@SUM(1)"])
def test_an_exercise_id_the_kit_does_not_know_is_refused_in_the_manifests(graded, tmp_path, capsys, copies, bad):
    for folder in copies:  # every shard agrees, as a merge requires: grades.csv's header would carry it
        ids = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))["exercise_ids"]
        _edit_manifest(folder, exercise_ids=[bad, *ids[1:]])
    _refused(graded, tmp_path, capsys, copies,
             f"shard 1/2 ({copies[0]}): _shard.json: its exercise_ids are not this kit's for module(s) 9 "
             f"(unknown exercise id {ascii(bad)})", f"shard 2/2 ({copies[1]}): _shard.json")


@pytest.mark.parametrize("bad", ["@SUM(1)", "=1+1", "sample_std_typo"])
def test_a_misconception_outside_the_catalogue_is_refused(graded, tmp_path, capsys, copies, bad):
    _forge(copies[0], "mallory", lambda report: _entry(report, GRA).update(misconceptions=[bad]))
    shown = bad if bad.replace("_", "").isalnum() else ascii(bad)
    _refused(graded, tmp_path, capsys, copies, f"shard 1/2 ({copies[0]}): mallory/report.json: exercise {GRA}: "
             f"misconception {shown} is not in this kit's catalogue for that exercise")


# ---------------------------------------------------------------------------- reaching outside
@pytest.mark.parametrize("target", ["zoe", "grades.csv"])
def test_a_link_in_out_is_never_written_through(graded, tmp_path, capsys, target):
    victim = tmp_path / "victim"
    victim.mkdir()
    shutil.copy(SOLUTION, victim / "grades.csv")  # a file outside OUT that a link in OUT points at
    out = tmp_path / "out"
    out.mkdir()
    (out / target).symlink_to(victim if target == "zoe" else victim / "grades.csv")
    before = _tree(victim)
    _refused(graded, tmp_path, capsys, [graded / "shard1", graded / "shard2"],
             f"{out / target} exists and is a symbolic link, not a", "never through a link", out=out)
    assert _tree(victim) == before and sorted(os.listdir(out)) == [target]


def test_a_name_the_grader_never_gives_is_refused(graded, tmp_path, capsys, copies):
    # GRADES.CSV/ beside grades.csv: one file on a case-insensitive disk (unique_names renames it)
    _forge(copies[0], "zoe", lambda report: report.update(submission="GRADES.CSV"))
    shutil.move(str(copies[0] / "zoe"), str(copies[0] / "GRADES.CSV"))
    for folder in copies:
        names = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))["names"]
        _edit_manifest(folder, names=["GRADES.CSV", *names[1:]])
    _refused(graded, tmp_path, capsys, copies, f"{copies[0] / shards.MANIFEST} contradicts itself")


def test_every_problem_is_listed_at_once(graded, tmp_path, capsys, copies):
    _extra_file(copies[0])
    _edit_report(copies[1], "placebo", _full_marks)
    err = _refused(graded, tmp_path, capsys, copies, "refused to merge (", "nothing was written",
                   f"shard 1/2 ({copies[0]}): zoe/notes.py", f"shard 2/2 ({copies[1]}): placebo/results.json")
    assert err.index("shard 1/2") < err.index("shard 2/2")


def test_an_earlier_run_in_out_is_set_aside_never_mixed_in(graded, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(graded / "shard1" / "zoe", out / "earlier_one")  # an earlier run's submission, its grades.csv
    (out / "lone").mkdir()  # a report.json alone is not what the kit writes: it stays, and is not in the report
    shutil.copy(graded / "shard1" / "zoe" / "report.json", out / "lone" / "report.json")
    (out / "grades.csv").write_text("stale\n", encoding="utf-8")
    (out / "mine.txt").write_text("mine\n", encoding="utf-8")  # the user's own file: stays
    assert main(["merge", str(out), str(graded / "shard1"), str(graded / "shard2")]) == 0
    assert "held an earlier run; set aside in" in capsys.readouterr().err
    (previous,) = (out / outfolder.PREVIOUS).iterdir()
    assert (previous / "grades.csv").read_text(encoding="utf-8") == "stale\n" and (previous / "earlier_one").is_dir()
    merged = {path: data for path, data in _tree(out).items()
              if not path.startswith(("class_", outfolder.PREVIOUS, "lone/")) and path != "mine.txt"}
    page = (out / "class_report.html").read_text(encoding="utf-8")
    assert merged == _merged_before(graded) and "earlier_one" not in page and "lone" not in page
    assert (out / "lone" / "report.json").is_file() and (out / "mine.txt").is_file()
