"""``assignments/capstone/gpu_smoke.sh``, the offline GPU check, on CPU: its arguments and errors, its data
(graders/capstone/smoke.py), its summary, the peak-memory field of the passport, the wheel list against
constraints/capstone.txt, and (the exhaustive tier: -m exhaustive) the whole script in its CPU dry-run mode: 1 decoder layer, the byte-level
tokenizer, one GRPO and one DPO step, then ``capstone check`` and ``capstone grade`` on each run folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from graders.capstone import smoke
from graders.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "assignments" / "capstone" / "gpu_smoke.sh"
WHEELS = REPO_ROOT / "assignments" / "capstone" / "gpu_smoke_wheels.txt"
CONSTRAINTS = REPO_ROOT / "constraints" / "capstone.txt"
# What a bare CUDA torch + transformers environment already has of constraints/capstone.txt (their own
# dependencies), so the wheel list leaves it out.
BARE = {"torch", "transformers", "tokenizers", "huggingface-hub", "safetensors", "fsspec", "jinja2", "sympy"}


def _script(*args: str, env: dict | None = None, timeout: int = 60) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "RL4LLM_QWEN_TIKTOKEN"}
    environment.update({"PYTHON": sys.executable, "RL4LLM_LANG": "en", **(env or {})})
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=environment,
                          timeout=timeout, cwd=REPO_ROOT)


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_help_says_what_it_needs():
    result = _script("--help")
    assert result.returncode == 0, result.stderr
    for flag in ("--tiktoken", "--out", "--wheels", "--eval-rows", "--device", "--layers", "RL4LLM_QWEN_TIKTOKEN"):
        assert flag in result.stdout
    assert "set -euo" not in result.stdout


@pytest.mark.parametrize(("args", "said"), [
    ((), "no qwen.tiktoken given: pass --tiktoken PATH or set RL4LLM_QWEN_TIKTOKEN"),
    (("--tiktoken", "/nonexistent/qwen.tiktoken"), "the qwen.tiktoken file '/nonexistent/qwen.tiktoken' does not exist"),
    (("--bogus",), "unknown argument '--bogus'"),
    (("--device", "tpu"), "--device must be cuda or cpu, got 'tpu'"),
    (("--device", "cpu", "--layers", "29"), "--layers must be 1..28, got '29'"),
    (("--device", "cpu", "--eval-rows", "9"), "--eval-rows must be 1..8"),
    (("--device", "cpu", "--wheels", "/nonexistent/wheels"), "the wheel folder '/nonexistent/wheels' does not exist"),
    (("--out",), "--out needs a value"),
])
def test_a_usage_error_exits_2_naming_the_problem(args, said):
    result = _script(*args)
    assert result.returncode == 2
    assert said in result.stderr and "--help" in result.stderr
    assert "==" not in result.stdout  # nothing started


def test_a_folder_with_files_is_never_overwritten(tmp_path):
    kept = tmp_path / "mine.txt"
    kept.write_text("keep me", encoding="utf-8")
    result = _script("--device", "cpu", "--out", str(tmp_path))
    assert result.returncode == 2 and "exists and is not empty" in result.stderr
    assert kept.read_text(encoding="utf-8") == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_the_wheel_list_agrees_with_the_constraints():
    wheels, constraints = _pins(WHEELS), _pins(CONSTRAINTS)
    assert {name: version for name, version in wheels.items() if name in constraints} == \
        {name: version for name, version in constraints.items() if name in wheels}
    assert set(constraints) - BARE <= set(wheels), set(constraints) - BARE - set(wheels)
    assert not BARE & set(wheels)  # beyond torch and transformers only
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = [re.split(r"[<>=!~ \[]", requirement)[0] for requirement in
              project["optional-dependencies"]["capstone"] + project["dependencies"]]
    needed = {re.sub(r"[-_.]+", "-", name).lower() for name in needed} - BARE - {"numpy", "tqdm"}  # transformers'
    assert needed <= set(wheels), needed - set(wheels)
    assert "rl4llm-kit" not in wheels  # the script imports the kit from the checkout


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# slow: about 4 s of CPU (the rows written twice, prepared as the run keeps them); capstone tooling, not an
# everyday change
@pytest.mark.slow
def test_the_data_folders_have_the_hubs_columns_and_every_reference_is_kept(tmp_path):
    from graders.capstone.run.data import prepare_math_rows

    folders = smoke.write_data(tmp_path, eval_rows=3)
    train, report = prepare_math_rows(_rows(folders["grpo"] / "train.jsonl"))  # what the run keeps (slow test: loads)
    assert len(train) == 128 and len(_rows(folders["grpo"] / "test.jsonl")) == 3
    assert report["kept_fraction"] == 1.0
    assert 0 < report["verifier_decided"] < 128  # numbers for the verifier, intervals for math-verify
    assert train[0]["prompt"][0]["role"] == "user" and "boxed" in train[0]["prompt"][0]["content"]
    pairs, held_out = _rows(folders["dpo"] / "train.jsonl"), _rows(folders["dpo"] / "test.jsonl")
    assert (len(pairs), len(held_out)) == (64, 8)
    assert {"prompt", "chosen", "rejected", "score_chosen", "score_rejected"} <= set(pairs[0])
    assert pairs[0]["chosen"][0]["role"] == "assistant" and pairs[0]["chosen"] != pairs[0]["rejected"]
    smoke.write_data(tmp_path / "again", eval_rows=3)  # the same rows every time
    assert (tmp_path / "again" / "grpo" / "train.jsonl").read_bytes() == (folders["grpo"] / "train.jsonl").read_bytes()


def test_peak_memory_is_recorded_on_cuda_only_and_the_passport_check_accepts_it(monkeypatch):
    import torch

    from graders.capstone.run.passport_check import passport_problems
    from graders.capstone.run.run import peak_memory

    assert peak_memory("cpu") is None
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: 3 << 30)
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda: 4 << 30)
    memory = peak_memory("cuda: NVIDIA H200")
    assert memory == {"peak_allocated_bytes": 3 << 30, "peak_reserved_bytes": 4 << 30}
    assert passport_problems({"memory": memory}) == [] and passport_problems({"memory": None}) == []
    assert passport_problems({"memory": {"peak_allocated_bytes": 1 << 70}})  # the general rules still apply


def _fake_folder(out: Path, steps: list[tuple[str, int, float]], grade_score: float, memory: dict | None) -> None:
    (out / "grpo").mkdir(parents=True)
    (out / "steps.tsv").write_text("".join(f"{n}\t{rc}\t{s}\n" for n, rc, s in steps), encoding="utf-8")
    passport = {"log_history": [{"step": 1, "loss": 0.0, "step_time": 1.5}, {"step": 2, "loss": 0.0, "step_time": 2.5},
                                {"step": 2, "train_runtime": 4.0}],
                "wall_time_s": {"train": 4.0, "total": 9.0}, "trainer_args": {"max_steps": 2}, "memory": memory}
    (out / "grpo" / "passport.json").write_text(json.dumps(passport), encoding="utf-8")
    (out / "grades" / "grpo").mkdir(parents=True)
    checks = [{"name": "verifier", "points": 3.0, "max_points": 3.0, "message": "ok"},
              {"name": "consistency", "points": grade_score - 3.0, "max_points": 1.0, "message": "a dry run"}]
    (out / "grades" / "grpo" / "capstone_grade.json").write_text(json.dumps(
        {"score": grade_score, "max_score": 4.0, "checks": checks}), encoding="utf-8")


def test_the_summary_prints_times_and_memory_and_fails_on_a_failed_step(tmp_path):
    _fake_folder(tmp_path / "ok", [("model", 0, 10.0), ("grpo-run", 0, 20.0)], 4.0,
                 {"peak_allocated_bytes": 3 << 30, "peak_reserved_bytes": 5 << 30})
    said, code = smoke.summary(tmp_path / "ok", "cuda")
    assert code == 0 and "gpu_smoke: every step passed" in said
    assert re.search(r"grpo\s+2/2\s+4\.0\s+2\.0\s+9\.0\s+3\.00\s+5\.00", said), said
    assert "step times from log_history (s): 1.5, 2.5" in said and "total 30.0 s" in said
    _fake_folder(tmp_path / "bad", [("model", 0, 10.0), ("grpo-run", 1, 600.0)], 4.0, None)
    said, code = smoke.summary(tmp_path / "bad", "cuda")
    assert code == 1 and "FAILED: grpo-run" in said and "over the target by 130.0 s" in said
    russian, _ = smoke.summary(tmp_path / "bad", "cuda", language="ru")
    assert "ОШИБКА: grpo-run" in russian


def test_a_grade_below_the_maximum_fails_on_cuda_and_is_explained_on_cpu(tmp_path):
    _fake_folder(tmp_path, [("grpo-run", 0, 20.0)], 3.0, None)
    said, code = smoke.summary(tmp_path, "cuda")
    assert code == 1 and "grpo-grade<max" in said and "consistency (0/1): a dry run" in said
    said, code = smoke.summary(tmp_path, "cpu")
    assert code == 0 and "a CPU dry run is never the profile's run" in said


@pytest.mark.slow
@pytest.mark.exhaustive  # about 2 minutes on one worker; its steps one by one are in test_capstone_qwen3.py
def test_the_cpu_dry_run_of_the_whole_script(tmp_path):
    out = tmp_path / "smoke"
    result = _script("--device", "cpu", "--layers", "1", "--out", str(out), timeout=1500)
    assert result.returncode == 0, (result.stdout[-4000:], result.stderr[-2000:])
    printed = result.stdout
    assert "== summary (cpu, decoder layers: 1)" in printed
    for run, steps in (("grpo", "1/1"), ("dpo", "1/1")):
        assert re.search(rf"^{run}\s+{steps}\s+\d", printed, re.MULTILINE), printed[-3000:]
    assert "grpo: step times from log_history (s): " in printed
    assert "gpu_smoke: every step passed" in printed
    names = [line.split("\t")[0] for line in (out / "steps.tsv").read_text(encoding="utf-8").splitlines()]
    assert names == ["model", "data", "grpo-run", "grpo-check", "grpo-grade", "dpo-run", "dpo-check", "dpo-grade"]
    assert json.loads((out / "model" / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"] == 1
    for run in ("grpo", "dpo"):
        passport = json.loads((out / run / "passport.json").read_text(encoding="utf-8"))
        assert passport["device"] == "cpu" and passport["memory"] is None and passport["overrides"]["max_steps"] == 1
        assert passport["model"]["num_hidden_layers"] == 1 and passport["model"]["vocab_size"] == 151936
        check = json.loads((out / run / "capstone_report.json").read_text(encoding="utf-8"))
        assert check["checks"][0]["passed"]  # the passport's structure, "memory" included
        grade = json.loads((out / "grades" / run / "capstone_grade.json").read_text(encoding="utf-8"))
        consistency = next(c for c in grade["checks"] if c["name"] == "consistency")
        assert grade["score"] < grade["max_score"] and consistency["points"] == 0
        assert "a dry run" in consistency["message"] and "runs on cuda" in consistency["message"]
    assert "a CPU dry run is never the profile's run" in printed
    assert (out / "grpo" / "module_9_reference.py").is_file() and (out / "summary.txt").is_file()


@pytest.mark.slow  # imports TRL and PEFT
def test_the_grade_measures_a_gpu_run_on_the_gpu(tmp_path, monkeypatch):
    """On a CUDA machine the grade's re-evaluation moves the base model to the GPU, as the run's trainer did
    (else GRPO's 512-token greedy passes of a 28-layer model would run on the CPU, in bf16)."""
    import torch

    from graders.capstone import reeval as capstone_reeval
    from graders.capstone.run import run

    moved = []

    class Model:
        def to(self, device):
            moved.append(device)
            return self

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(run, "load_model_and_tokenizer", lambda profile, options, dtype: (Model(), None, {"dtype": dtype}))
    monkeypatch.setattr(run, "measure", lambda *args: {"greedy_accuracy": 0.0})
    monkeypatch.setattr("graders.capstone.run.data.load_rows", lambda profile, data_dir: ([], [], None))
    monkeypatch.setattr("graders.capstone.adapter.read_adapter", lambda profile, base, folder: base)
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 8, "lora_alpha": 16}',
                                                              encoding="utf-8")
    profile = capstone_reeval.PROFILES[("grpo", "smoke")]
    measured = capstone_reeval._reevaluate(profile, {"seeds": {"seed": 42}}, tmp_path, "model", None)
    assert moved == ["cuda"] and measured["after"] == {"greedy_accuracy": 0.0}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    capstone_reeval._reevaluate(profile, {"seeds": {"seed": 42}}, tmp_path, "model", None)
    assert moved == ["cuda"]  # on a CPU machine the model stays where it was loaded
