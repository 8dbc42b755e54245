"""Sharded grading: `rl4llm grade --shard I/N` on many machines + `rl4llm merge` give the bytes of one
unsharded `rl4llm grade`; a set of shards that is not exactly one batch is refused with the reason;
the SLURM example's command lines parse with the CLI's own parser."""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from graders.cli import build_parser, main
from graders.engine.outputs import reports
from graders.engine.routes import shards
from graders.engine.routes.batch import GraderError, grade_paths, unique_names
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import mutant_source
from graders.paths import REPO_ROOT

GRA = "module_9_reference.group_relative_advantages"
SBATCH = REPO_ROOT / "examples" / "slurm" / "grade_array.sbatch"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------- which shard holds what
@pytest.mark.parametrize("text, spec", [("1/1", (1, 1)), ("2/8", (2, 8)), (" 8 / 8 ", (8, 8))])
def test_parse_shard_reads_i_of_n(text, spec):
    parsed = shards.parse_shard(text)
    assert (parsed.index, parsed.count) == spec and str(parsed) == f"{spec[0]}/{spec[1]}"


@pytest.mark.parametrize("text, message", [
    ("0/3", "0/3: I must be between 1 and N"),
    ("4/3", "4/3: I must be between 1 and N"),
    ("1/0", "1/0: N must be at least 1"),
    ("-1/3", "-1/3: I must be between 1 and N"),
    ("3", "expected I/N, e.g. 2/8"),
    ("a/b", "expected I/N, e.g. 2/8"),
    ("1/10001", "1/10001: N must be at most 10000"),
    ("1/" + "9" * 5000, "expected I/N, e.g. 2/8"),  # refused before int() reads 5000 digits
])
def test_parse_shard_says_what_is_wrong(text, message):
    with pytest.raises(shards.ShardError, match=message):
        shards.parse_shard(text)


def test_a_bad_shard_on_the_command_line_exits_2_with_the_reason(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--shard", "0/3"])
    assert stopped.value.code == 2
    assert "--shard: 0/3: I must be between 1 and N" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("total", range(0, 9))
@pytest.mark.parametrize("count", range(1, 5))
def test_round_robin_puts_every_submission_in_exactly_one_shard(total, count):
    held = {index: shards.ShardSpec(index, count).indices(total) for index in range(1, count + 1)}
    assert sorted(k for indices in held.values() for k in indices) == list(range(total))
    for index, indices in held.items():
        assert all(k % count + 1 == index for k in indices)


def test_batch_names_are_the_unsharded_names_repeats_numbered_across_the_batch(tmp_path):
    paths = [tmp_path / "a" / "x", tmp_path / "b" / "x", tmp_path / "c" / "grades.csv", tmp_path / "x.zip"]
    names = shards.batch_names(paths)
    assert names == ["x", "x-2", "grades.csv-submission", "x-3"]
    assert names == unique_names(["x", "x", "grades.csv", "x"])
    assert not any(name.startswith("_") for name in names)  # no submission folder can be _shard.json


def test_grade_paths_refuses_names_that_do_not_fit_the_paths(tmp_path):
    with pytest.raises(GraderError, match="1 names given for 2 submissions"):
        grade_paths([tmp_path / "a", tmp_path / "b"], tmp_path / "out", names=["a"], progress=False)


# ---------------------------------------------------------------------------- merging (no grading)
IDS = DEFAULT_KIT.exercises(("9",))  # a merge refuses any exercise its kit does not grade
TOP = shards.kit_registry(("9",)).max_points


def _report(name: str, points: float) -> dict:
    """A report as the grader writes one for module 9: ``points`` on the first exercise, every other one passed."""
    entries = [{"id": i, "points": TOP[i], "max_points": TOP[i], "status": "passed", "feedback": "",
                "misconceptions": []} for i in IDS]
    entries[0].update(points=points, status="failed" if points < TOP[IDS[0]] else "passed")
    return {"submission": name, "score": round(sum(e["points"] for e in entries), 4),
            "max_score": round(sum(TOP.values()), 4), "exercises": entries}


def _fake_batch(root: Path, names: list[str], count: int) -> tuple[list[Path], list[dict]]:
    """The shard folders `grade --shard I/count` would leave for ``names``, without grading anything."""
    every = [_report(name, k * 0.25) for k, name in enumerate(names)]
    template = shards.new_manifest(shards.ShardSpec(1, count), names, GradeOptions(modules=("9",)))
    folders = []
    for index in range(1, count + 1):
        spec = shards.ShardSpec(index, count)
        folder = root / f"shard{index}"
        folder.mkdir(parents=True)
        manifest = {**copy.deepcopy(template), "index": index, "indices": spec.indices(len(names)),
                    "complete": True, "exercise_ids": IDS}
        held = [every[k] for k in manifest["indices"]]
        for report in held:
            reports.write_submission_reports(folder, report["submission"], report)
        (folder / "grades.csv").write_text(reports.grades_csv(held, IDS), encoding="utf-8")
        shards.write_manifest(folder, manifest)
        folders.append(folder)
    return folders, every


def _edit_manifest(folder: Path, **changes) -> None:
    manifest = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))
    shards.write_manifest(folder, {**manifest, **changes})


NAMES = ["zoe", "adam", "x", "x-2", "grades.csv-submission"]


# 7 > 5 submissions: two shards hold nothing (fast); each other count is a merge of about 1 s, slow
@pytest.mark.parametrize("count", [pytest.param(count, marks=pytest.mark.slow) for count in (1, 2, 3)] + [7])
def test_merge_writes_the_unsharded_grades_csv_and_every_report_folder(tmp_path, capsys, count):
    folders, every = _fake_batch(tmp_path, NAMES, count)
    out = tmp_path / "merged"
    assert main(["merge", str(out), *map(str, reversed(folders))]) == 0  # any order of the shard folders
    assert (out / "grades.csv").read_bytes() == reports.grades_csv(every, IDS).encode()
    for report in every:
        name = report["submission"]
        assert json.loads((out / name / "report.json").read_text(encoding="utf-8")) == report
        assert {"report.json", "results.json", "junit.xml"} <= set(os.listdir(out / name))
    assert not (out / shards.MANIFEST).exists()
    assert f"{len(NAMES)} submissions" in capsys.readouterr().out


def _refused(tmp_path, capsys, out: Path, folders: list[Path], message: str) -> None:
    """`rl4llm merge` exits 2 naming the problem, and changes nothing in the shard folders."""
    before = {folder: _tree(folder) for folder in {*folders, out} if folder.is_dir()}
    assert main(["merge", str(out), *map(str, folders)]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert {folder: _tree(folder) for folder in before} == before
    assert out in before or not out.exists()


def test_merge_refuses_a_missing_shard(tmp_path, capsys):
    folders, _ = _fake_batch(tmp_path, NAMES, 3)
    _refused(tmp_path, capsys, tmp_path / "out", [folders[0], folders[2]], "shard 2/3 is missing")
    _refused(tmp_path, capsys, tmp_path / "out", [folders[0]], "shards 2/3, 3/3 are missing")


def test_merge_refuses_a_shard_given_twice(tmp_path, capsys):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    copied = tmp_path / "copy"
    shutil.copytree(folders[1], copied)
    _refused(tmp_path, capsys, tmp_path / "out", [*folders, copied], "shard 2/2 is given twice")


@pytest.mark.parametrize("change, words", [
    ({"names": ["zoe", "adam", "x", "x-2", "other"]}, "the submissions (or their order)"),
    ({"names": ["adam", "zoe", "x", "x-2", "grades.csv-submission"]}, "the submissions (or their order)"),
    ({"exercise_ids": IDS[1:]}, "the exercises graded (--module)"),
    ({"kit": {"version": "0.0.1", "digest": "0" * 64}}, "the kit"),
])
def test_merge_refuses_shards_of_different_batches(tmp_path, capsys, change, words):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    _edit_manifest(folders[1], **change)
    _refused(tmp_path, capsys, tmp_path / "out", folders, f"are shards of different batches: they differ in {words}")


def test_merge_refuses_shards_of_different_shard_counts(tmp_path, capsys):
    halves, _ = _fake_batch(tmp_path / "two", NAMES, 2)
    thirds, _ = _fake_batch(tmp_path / "three", NAMES, 3)
    _refused(tmp_path, capsys, tmp_path / "out", [halves[0], thirds[1], thirds[2]],
             "they differ in the number of shards N")


def test_merge_refuses_an_unfinished_shard(tmp_path, capsys):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    _edit_manifest(folders[0], complete=False)
    _refused(tmp_path, capsys, tmp_path / "out", folders, "shard 1/2 (")
    _refused(tmp_path, capsys, tmp_path / "out", folders, "did not finish grading; grade that shard again")


def test_merge_refuses_a_missing_report(tmp_path, capsys):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    (folders[1] / "adam" / "report.json").unlink()
    _refused(tmp_path, capsys, tmp_path / "out", folders, "has no report for submission 'adam'")


def test_merge_refuses_a_folder_that_is_not_a_shard(tmp_path, capsys):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    plain = tmp_path / "plain"
    plain.mkdir()
    _refused(tmp_path, capsys, tmp_path / "out", [folders[0], plain], "has no _shard.json")
    _refused(tmp_path, capsys, tmp_path / "out", [folders[0], tmp_path / "absent"], "no such folder")
    (plain / shards.MANIFEST).write_text("{not json", encoding="utf-8")
    _refused(tmp_path, capsys, tmp_path / "out", [folders[0], plain], "cannot be read")


@pytest.mark.parametrize("change", [
    {"indices": [0, 1]},
    {"index": 3},
    {"total": 4},
    {"names": ["zoe", "adam", "x", "x", "grades.csv-submission"]},
    {"names": ["zoe", "../../escape", "x", "x-2", "grades.csv-submission"]},  # would copy from outside
])
def test_merge_refuses_a_manifest_that_contradicts_itself(tmp_path, capsys, change):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    _edit_manifest(folders[0], **change)
    _refused(tmp_path, capsys, tmp_path / "out", folders, "contradicts itself")


def test_merge_refuses_to_write_into_a_shard(tmp_path, capsys):
    folders, _ = _fake_batch(tmp_path, NAMES, 2)
    # `rl4llm merge shards/*` takes the first shard for OUT
    _refused(tmp_path, capsys, folders[0], folders[1:], "is itself a shard folder")
    _refused(tmp_path, capsys, folders[0] / "merged", folders, "lies inside shard 1/2")
    (tmp_path / "zoe").mkdir()
    moved = shutil.move(str(folders[0]), str(tmp_path / "zoe" / "shard1"))  # OUT/zoe/ would land on it
    _refused(tmp_path, capsys, tmp_path, [Path(moved), folders[1]], "would write over shard 1/2")


# ---------------------------------------------------------------------------- end to end
def _folder(path: Path, text: str) -> Path:
    path.mkdir(parents=True)
    (path / "module_9_reference.py").write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> list[Path]:
    """Five submissions of module 9's reference file: two broken by a one-line edit, two named alike."""
    root = tmp_path_factory.mktemp("batch")
    reference = DEFAULT_KIT.solution_path("module_9_reference").read_text(encoding="utf-8")
    renamed = reference.replace("def k3_kl(", "def k3_kl_estimate(", 1)  # one line: k3_kl is missing
    assert renamed != reference
    return [_folder(root / "zoe", reference),
            _folder(root / "mallory", mutant_source(GRA, "sample_std")),
            _folder(root / "one" / "sam", reference),
            _folder(root / "two" / "sam", renamed),  # "sam-2" in the whole batch, whichever shard holds it
            _folder(root / "adam", reference)]


@pytest.mark.slow
def test_sharded_grading_and_merge_give_the_unsharded_bytes(batch, tmp_path, capsys):
    paths = [str(p) for p in batch]
    common = ["--module", "9", "--jobs", "2", "--quiet"]
    assert main(["grade", *paths, "--out", str(tmp_path / "whole"), *common]) == 0
    for index in (1, 2):
        assert main(["grade", *paths, "--out", str(tmp_path / f"shard{index}"), "--shard", f"{index}/2", *common]) == 0
    printed = capsys.readouterr().out
    assert "shard 2/2: graded 2 of 5 submissions" in printed
    manifest = json.loads((tmp_path / "shard2" / shards.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["names"] == ["zoe", "mallory", "sam", "sam-2", "adam"] and manifest["indices"] == [1, 3]
    assert manifest["complete"] and manifest["exercise_ids"] == DEFAULT_KIT.exercises(("9",))
    assert sorted(os.listdir(tmp_path / "shard2")) == ["_shard.json", "grades.csv", "mallory", "sam-2"]

    assert main(["merge", str(tmp_path / "merged"), str(tmp_path / "shard1"), str(tmp_path / "shard2")]) == 0
    whole, merged = _tree(tmp_path / "whole"), _tree(tmp_path / "merged")
    assert merged["grades.csv"] == whole["grades.csv"]
    assert merged == whole  # every report folder too
    scores = {row.split(",")[0]: row.split(",")[-2] for row in whole["grades.csv"].decode().splitlines()[1:]}
    assert scores["zoe"] == scores["sam"] != scores["sam-2"] and scores["mallory"] != scores["zoe"]


# ---------------------------------------------------------------------------- the SLURM example
def _run_script(tmp_path: Path, args: list[str], env: dict[str, str], *, nodes: str | None = None,
                returncode: int = 0) -> subprocess.CompletedProcess:
    """Run grade_array.sbatch under bash with stand-ins for `sbatch` and `rl4llm` that log their arguments
    (and, given ``nodes``, for `sinfo`, printing them: one "CPUs memory-MB partition" line per node)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (tmp_path / "calls").mkdir(exist_ok=True)
    stand_in = ('#!/bin/bash\nn=$(ls "$CALLS" | wc -l)\nprintf "%s\\0" "$(basename "$0")" "$@" > "$CALLS/$n"\n'
                'if [ "${1:-}" = --parsable ]; then echo "4242;cluster"; else echo "Submitted batch job 4243"; fi\n')
    for name in ("sbatch", "rl4llm"):
        (bin_dir / name).write_text(stand_in, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    if nodes is not None:
        (bin_dir / "sinfo").write_text(f"#!/bin/bash\ncat <<'NODES'\n{nodes}\nNODES\n", encoding="utf-8")
        (bin_dir / "sinfo").chmod(0o755)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}  # even when tests run on SLURM
    full = {**clean, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CALLS": str(tmp_path / "calls"),
            "RL4LLM": str(bin_dir / "rl4llm"), **env}
    completed = subprocess.run(["bash", str(SBATCH), *args], cwd=tmp_path, env=full, capture_output=True,
                               text=True, timeout=60)
    assert completed.returncode == returncode, completed.stderr
    return completed


def _calls(tmp_path: Path) -> list[list[str]]:
    files = sorted((tmp_path / "calls").iterdir(), key=lambda p: int(p.name))
    return [p.read_text(encoding="utf-8").split("\0")[:-1] for p in files]


def test_the_slurm_script_declares_an_array():
    text = SBATCH.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/bash\n") and "\r" not in text
    assert "\n#SBATCH --array=1-" in text and os.access(SBATCH, os.X_OK)


def test_a_slurm_array_task_runs_a_grade_command_the_cli_accepts(tmp_path):
    _run_script(tmp_path, ["--module", "9", "subs/a", "subs/b b"],
                {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_CPUS_PER_TASK": "4"})
    [call] = _calls(tmp_path)
    assert call[0] == "rl4llm"
    args = build_parser().parse_args(call[1:])
    assert args.command == "grade" and args.shard == shards.ShardSpec(2, 3) and args.out == "shards/2"
    assert args.submissions == ["subs/a", "subs/b b"] and args.module.number == "9" and args.jobs == 4


def test_a_rerun_of_one_slurm_task_keeps_the_batch_shard_count(tmp_path):
    _run_script(tmp_path, ["subs/a"], {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "1", "N_SHARDS": "8"})
    assert build_parser().parse_args(_calls(tmp_path)[0][1:]).shard == shards.ShardSpec(3, 8)


def test_submitting_the_slurm_script_queues_the_array_and_a_merge_the_cli_accepts(tmp_path):
    completed = _run_script(tmp_path, ["--module", "9", "subs/a", "subs/b"],
                            {"N_SHARDS": "3", "OUT_DIR": "final grades"})
    array, merge = _calls(tmp_path)
    assert array[:3] == ["sbatch", "--parsable", "--array=1-3"]
    script = array.index(str(SBATCH))
    assert all(arg.startswith("--") for arg in array[3:script])  # the request and the log (tested below)
    assert array[script + 1:] == ["--module", "9", "subs/a", "subs/b"]
    assert merge[0] == "sbatch" and "--dependency=afterok:4242" in merge
    command = shlex.split(merge[merge.index("--wrap") + 1])
    assert command[0] == str(tmp_path / "bin" / "rl4llm")
    args = build_parser().parse_args(command[1:])
    assert args.command == "merge" and args.out == "final grades"
    assert args.shards == ["shards/1", "shards/2", "shards/3"]
    assert "4242" in completed.stdout


def _option(call: list[str], name: str) -> str:
    [value] = [arg.split("=", 1)[1] for arg in call if arg.startswith(f"{name}=")]
    return value


def test_the_slurm_defaults_fit_a_two_cpu_node_and_the_logs_go_under_the_shards_folder(tmp_path):
    text = SBATCH.read_text(encoding="utf-8")
    assert "\n#SBATCH --cpus-per-task=2\n" in text and "\n#SBATCH --mem=4G\n" in text
    completed = _run_script(tmp_path, ["subs/a"], {"N_SHARDS": "2", "SHARDS_DIR": "my shards"},
                            nodes="2 3900 small*\n2 7800 small*")
    array, merge = _calls(tmp_path)
    assert (_option(array, "--cpus-per-task"), _option(array, "--mem")) == ("2", "4G")
    assert _option(array, "--output") == "my shards/logs/rl4llm-grade-%A_%a.log"
    assert _option(merge, "--output") == "my shards/logs/rl4llm-merge-%j.log"
    assert (tmp_path / "my shards" / "logs").is_dir()  # SLURM needs the folder before the job starts
    assert not list(tmp_path.glob("*.log")) and "my shards/logs/" in completed.stdout


def test_submitting_refuses_a_request_no_node_can_take(tmp_path):
    completed = _run_script(tmp_path, ["subs/a"], {"CPUS": "4", "MEM": "16G"}, nodes="2 7800 small*\n2 7800 small*",
                            returncode=2)
    assert not list((tmp_path / "calls").iterdir())  # nothing submitted
    assert "no node of this cluster has 4 CPUs and 16G" in completed.stderr
    assert "2 CPUs and 7800 MB" in completed.stderr and "CPUS=1 MEM=3G" in completed.stderr
    assert not (tmp_path / "shards").exists()


@pytest.mark.parametrize("env", [{"MEM": "8000"}, {"CPUS": "3"}])
def test_submitting_refuses_memory_or_cpus_beyond_every_node(tmp_path, env):
    completed = _run_script(tmp_path, ["subs/a"], env, nodes="2 7800 small*", returncode=2)
    assert "no node of this cluster" in completed.stderr and not list((tmp_path / "calls").iterdir())


def test_the_node_check_passes_a_request_that_fits_or_is_skipped(tmp_path):
    (tmp_path / "fits").mkdir()
    (tmp_path / "skipped").mkdir()
    _run_script(tmp_path / "fits", ["subs/a"], {"CPUS": "4", "MEM": "15000M"}, nodes="2 7800 a\n8 16000 b")
    assert [call[0] for call in _calls(tmp_path / "fits")] == ["sbatch", "sbatch"]
    _run_script(tmp_path / "skipped", ["subs/a"], {"CPUS": "4", "SKIP_NODE_CHECK": "1"}, nodes="2 7800 a")
    assert _option(_calls(tmp_path / "skipped")[0], "--cpus-per-task") == "4"


@pytest.mark.parametrize("env", [{"MEM": "lots"}, {"CPUS": "0"}])
def test_submitting_refuses_a_request_that_is_no_size(tmp_path, env):
    completed = _run_script(tmp_path, ["subs/a"], env, returncode=2)
    assert "must be a positive number of CPUs and a size" in completed.stderr


@pytest.mark.slow
def test_shards_of_an_lms_download_merge_with_their_ids_and_export(tmp_path, capsys):
    """A Moodle download graded in two shards: each report keeps its LMS id (and a named mistake's hints), the
    merge accepts them and carries the download's ``_lms.json``, and the merged folder exports every student;
    shards of two downloads (their ``_lms.json`` differ) are refused."""
    import zipfile

    from graders.engine.outputs.lms import LMS_FILE

    reference = DEFAULT_KIT.solution_path("module_9_reference").read_bytes()
    mutant = mutant_source(GRA, "sample_std").encode("utf-8")
    students = [("Анна Петрова", "1201", reference), ("Ivan Petrov", "1202", mutant), ("Ли Мин", "1203", b"x = (\n")]
    download = tmp_path / "download.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for name, number, data in students:
            archive.writestr(f"{name}_{number}_assignsubmission_file_/module_9_reference.py", data)
    folders = []
    for index in (1, 2):
        folders.append(tmp_path / f"shard{index}")
        assert main(["grade", str(download), "--out", str(folders[-1]), "--module", "9", "--quiet",
                     "--shard", f"{index}/2"]) == 0
    ids = {json.loads(p.read_text(encoding="utf-8"))["lms_id"] for f in folders for p in f.glob("*/report.json")}
    assert ids == {number for _, number, _ in students}
    assert main(["merge", str(tmp_path / "merged"), *map(str, folders)]) == 0, capsys.readouterr().err
    merged = tmp_path / "merged"
    assert (merged / LMS_FILE).read_bytes() == (folders[0] / LMS_FILE).read_bytes()
    hinted = [e for p in merged.glob("*/report.json") for e in json.loads(p.read_text(encoding="utf-8"))["exercises"]
              if e.get("hints")]
    assert hinted and all(set(e["hints"]["sample_std"]) == {"en", "ru"} for e in hinted)
    capsys.readouterr()
    assert main(["export", str(merged), "--lms", "moodle"]) == 0, capsys.readouterr().err
    exported = next(merged.glob("moodle*.csv")).read_text(encoding="utf-8")
    assert all(number in exported for _, number, _ in students), exported
    (folders[1] / LMS_FILE).write_text('{"system": "moodle", "students": {}}\n', encoding="utf-8")
    assert main(["merge", str(tmp_path / "merged-again"), *map(str, folders)]) != 0
    assert "not graded from one LMS download" in capsys.readouterr().err
