"""Offline capstone data (no download): a data set cached as a Hub snapshot (the huggingface_hub cache layout,
built here in a tmp dir with a few rows as parquet or jsonl) loads with HF_HUB_OFFLINE=1; preflight names
exactly what the run loads (the same ``locate_data``), and says how to fix what is missing, in English and
Russian; ``gpu_check.sh`` sets HF_HUB_OFFLINE=1 itself unless told to allow downloads."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from graders.capstone.run.data import canonical_hash, load_rows
from graders.capstone.run.hub_data import locate_data, read_snapshot_split
from graders.capstone.run.preflight import format_preflight, resource_lines
from graders.capstone.run.profiles import CapstoneError, get_profile
from graders.paths import REPO_ROOT

GPU_SCRIPT = REPO_ROOT / "assignments" / "capstone" / "gpu_check.sh"
REVISION = "0123456789abcdef0123456789abcdef01234567"
ANSWERS = ["\\frac{1}{2}", "2\\sqrt{3}", "(0, 1)", "???", "12", "\\pi", "x^2+1", "50\\%", "7", "-3"]


def _math_rows(count: int, split: str) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": f"{split} question {index}"}],
             "solution": ANSWERS[index % len(ANSWERS)]} for index in range(count)]


@pytest.fixture
def hub_home(tmp_path, monkeypatch):
    """An empty HF_HOME, offline; ``snapshot(repo, files)`` writes a cached snapshot: files = {relative path: rows}."""
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def snapshot(repo_id: str, files: dict, readme: str | None = None) -> Path:
        repo = home / "hub" / f"datasets--{repo_id.replace('/', '--')}"
        folder = repo / "snapshots" / REVISION
        for relative, rows in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if relative.endswith(".parquet"):
                import pyarrow as pa
                import pyarrow.parquet as pq

                pq.write_table(pa.Table.from_pylist(rows), path)
            else:
                path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        if readme is not None:
            (folder / "README.md").write_text(readme, encoding="utf-8")
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
        return folder

    return snapshot


def _data_line(lines):
    return next(line for line in lines if "data" in line.key)


@pytest.mark.slow  # the capstone's tooling: pyarrow and datasets read a parquet snapshot (about 2.7 s)
def test_a_parquet_snapshot_loads_offline_as_the_same_rows_as_the_data_dir(hub_home, tmp_path):
    train, test = _math_rows(200, "train"), _math_rows(30, "test")
    folder = hub_home("trl-lib/DeepMath-103K", {"data/train-00000-of-00002.parquet": train[:150],
                                                 "data/train-00001-of-00002.parquet": train[150:],
                                                 "data/test-00000-of-00001.parquet": test})
    profile = get_profile("grpo", "smoke")
    location = locate_data(profile)
    assert location.kind == "snapshot" and location.where == str(folder) and location.offline
    assert [Path(path).name for path in location.files["train"]] == ["train-00000-of-00002.parquet",
                                                                     "train-00001-of-00002.parquet"]
    rows, evaluation, report = load_rows(profile)
    held_out = read_snapshot_split(location, profile.data.eval_split)
    assert report["train"]["rows"] == 128 and report["eval"]["rows"] == len(held_out) == 8  # test[:8] of 30
    assert report["train"]["kept"] < 128 and report["train"]["dropped_examples"] == ["???"] * 5
    assert 0 < report["train"]["verifier_decided"] < report["train"]["kept"]
    data_dir = tmp_path / "jsonl"  # the --data-dir route with the same rows: the same rows come out
    data_dir.mkdir()
    for name, split_rows in (("train", train), ("test", test)):
        (data_dir / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in split_rows), encoding="utf-8")
    same_rows, same_eval, same_report = load_rows(profile, data_dir)
    assert canonical_hash(rows) == canonical_hash(same_rows) and canonical_hash(evaluation) == canonical_hash(same_eval)
    assert same_report == report
    line = _data_line(resource_lines("grpo", "smoke"))
    assert (line.status, line.key, line.values["where"]) == ("ok", "preflight_data", str(folder))


def test_a_jsonl_snapshot_whose_readme_names_the_files_loads_offline(hub_home):
    preferences = [{"prompt": [{"role": "user", "content": f"q{index}"}],
                    "chosen": [{"role": "assistant", "content": "good"}],
                    "rejected": [{"role": "assistant", "content": "bad"}]} for index in range(5)]
    readme = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: pieces/fit.jsonl\n"
              "  - split: test\n    path: pieces/held_out.jsonl\n---\n# card\n")
    hub_home("trl-lib/ultrafeedback_binarized", {"pieces/fit.jsonl": preferences,
                                                 "pieces/held_out.jsonl": preferences[:3]}, readme)
    profile = get_profile("dpo", "smoke")
    train, evaluation, report = load_rows(profile)
    assert train == preferences and evaluation == preferences[:3] and report is None


def test_offline_and_absent_the_run_and_preflight_say_the_same_fix_in_both_languages(hub_home):
    profile = get_profile("grpo", "smoke")
    with pytest.raises(CapstoneError) as caught:
        load_rows(profile)
    assert caught.value.key == "preflight_data_missing"
    english, russian = caught.value.text("en"), caught.value.text("ru")
    assert "hf download trl-lib/DeepMath-103K --repo-type dataset" in english and "--data-dir" in english
    assert "hf download trl-lib/DeepMath-103K --repo-type dataset" in russian and "скачайте" in russian
    lines = resource_lines("grpo", "smoke")
    line = _data_line(lines)
    assert (line.status, line.key) == ("fail", "preflight_data_missing")
    assert "train.jsonl, test.jsonl" in format_preflight(lines, "grpo", "smoke", "en")


def test_a_snapshot_missing_a_split_is_named_and_fails_offline_and_warns_online(hub_home, monkeypatch):
    hub_home("trl-lib/DeepMath-103K", {"data/train-00000-of-00001.parquet": _math_rows(4, "train")})
    profile = get_profile("grpo", "smoke")
    with pytest.raises(CapstoneError) as caught:
        load_rows(profile)
    assert caught.value.key == "preflight_data_incomplete" and caught.value.values["missing"] == "test"
    assert "test" in caught.value.text("ru") and "скачайте набор заново" in caught.value.text("ru")
    assert _data_line(resource_lines("grpo", "smoke")).status == "fail"
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # online: the run would download it through datasets
    assert locate_data(profile).kind == "hub"
    assert _data_line(resource_lines("grpo", "smoke")).status == "warn"


def test_a_data_dir_without_a_split_fails_preflight_as_the_run_does(hub_home, tmp_path):
    (tmp_path / "train.jsonl").write_text(json.dumps(_math_rows(1, "train")[0]) + "\n", encoding="utf-8")
    profile = get_profile("grpo", "smoke")
    with pytest.raises(CapstoneError) as caught:
        load_rows(profile, tmp_path)
    line = _data_line(resource_lines("grpo", "smoke", data_dir=str(tmp_path)))
    assert caught.value.key == line.key == "error_data_dir" and line.status == "fail"
    assert line.values == caught.value.values and line.values["name"] == "test"


def _gpu_check_environment(tmp_path, *arguments: str, **environment: str) -> str:
    """What gpu_check.sh passes to its first command (a fake rl4llm that prints HF_HUB_OFFLINE and fails)."""
    fake = tmp_path / "fake-rl4llm"
    fake.write_text("#!/usr/bin/env bash\necho \"HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-unset}\"\nexit 3\n",
                    encoding="utf-8")
    fake.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key != "HF_HUB_OFFLINE"}
    env.update(RL4LLM=str(fake), NUM_GPUS="0", **environment)
    result = subprocess.run(["bash", str(GPU_SCRIPT), *arguments, str(tmp_path / "out")], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    return result.stdout + result.stderr


def test_gpu_check_runs_offline_unless_downloads_are_allowed(tmp_path):
    assert "HF_HUB_OFFLINE=1" in _gpu_check_environment(tmp_path)
    assert "HF_HUB_OFFLINE=1" in _gpu_check_environment(tmp_path, HF_HUB_OFFLINE="0")  # the script decides
    printed = _gpu_check_environment(tmp_path, "--allow-downloads")
    assert "HF_HUB_OFFLINE=unset" in printed
    assert "HF_HUB_OFFLINE=unset" in _gpu_check_environment(tmp_path, ALLOW_DOWNLOADS="1")
    assert "--allow-downloads" in _gpu_check_environment(tmp_path)  # the failed preflight says how to download
