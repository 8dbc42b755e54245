"""The capstone's machinery around a run: `rl4llm capstone preflight` (with a GPU faked where a check needs
one), the version floors and the constraints file, the accelerate configs and `accelerate launch` with one
CPU process, and the instructor's GPU script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from graders.cli import main
from graders.paths import REPO_ROOT
from graders.capstone.run.preflight import LIBRARY_FLOORS, format_preflight, preflight

CONSTRAINTS = REPO_ROOT / "constraints" / "capstone.txt"
ACCELERATE = REPO_ROOT / "assignments" / "capstone" / "accelerate"
GPU_SCRIPT = REPO_ROOT / "assignments" / "capstone" / "gpu_check.sh"


def _statuses(lines) -> dict[str, str]:
    return {line.key: line.status for line in lines}


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch.cuda answering like a GPU machine; ``set(bf16=..., free_gib=...)`` picks the GPU."""
    import torch

    state = {"bf16": True, "free_gib": 70.0}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "Fake GPU")
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=0: (int(state["free_gib"] * 2**30), 80 * 2**30))
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: state["bf16"])
    return state


def test_preflight_on_this_cpu_fails_a_real_profile_and_passes_tiny(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert main(["capstone", "preflight", "--algo", "grpo", "--profile", "smoke", "--lang", "en"]) == 1
    printed = capsys.readouterr().out
    assert "[FAIL] CUDA: torch" in printed and "sees no GPU" in printed and "preflight failed" in printed
    assert main(["capstone", "preflight", "--algo", "grpo", "--profile", "tiny", "--lang", "ru"]) == 0
    printed = capsys.readouterr().out
    assert "проверка пройдена" in printed and "[ok] trl" in printed


def test_preflight_bf16_fp16_and_memory(fake_gpu, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    statuses = _statuses(preflight("grpo", "smoke", model=str(model), data_dir=str(tmp_path)))
    assert statuses["preflight_cuda"] == "ok" and statuses["preflight_bf16"] == "ok"
    assert statuses["preflight_model"] == "ok" and statuses["error_data_dir"] == "fail"  # --data-dir lacks the files
    fake_gpu.update(bf16=False, free_gib=4.0)  # a T4-like card with little memory left
    lines = preflight("grpo", "smoke", model=str(model))
    statuses = _statuses(lines)
    assert statuses["preflight_fp16"] == "warn" and statuses["preflight_memory_low"] == "fail"
    text = format_preflight(lines, "grpo", "smoke", "en")
    assert "falls back to fp16" in text and "only 4.0 GiB free" in text
    assert "нет bf16" in format_preflight(lines, "grpo", "smoke", "ru")


def test_preflight_offline_without_cache_fails(fake_gpu, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    statuses = _statuses(preflight("dpo", "full"))
    assert statuses["preflight_model_missing"] == "fail" and statuses["preflight_data_missing"] == "fail"
    snapshot = tmp_path / "empty-cache" / "models--Qwen--Qwen3-0.6B" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    assert _statuses(preflight("dpo", "full"))["preflight_model"] == "ok"


def _capstone_extra() -> dict[str, tuple[str, str]]:
    """{name: (floor, upper bound)} of pyproject.toml's `capstone` extra."""
    extra = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]["capstone"]
    bounds = {}
    for requirement in extra:
        name, floor, upper = re.fullmatch(r"([\w-]+)>=([\d.]+),<([\d.]+)", requirement).groups()
        bounds[name] = (floor, upper)
    return bounds


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def test_floors_are_the_first_versions_that_work_and_agree_everywhere():
    extra = _capstone_extra()
    assert {name: floor for name, (floor, _) in extra.items()} == {
        name: floor for name, floor in LIBRARY_FLOORS.items() if name != "torch"}
    assert _version(extra["transformers"][0]) >= (5, 0)  # no token_type_ids from the local Qwen3 tokenizer
    assert _version(extra["peft"][0]) >= (0, 16)  # PEFT's default Qwen3 LoRA targets
    assert _version(extra["trl"][0]) >= (1, 1)  # ships chat_templates/qwen3.jinja
    assert _version(extra["datasets"][0]) >= (4, 7) and _version(extra["accelerate"][0]) >= (1, 4)  # TRL 1.x's


def test_constraints_pin_versions_inside_the_floors():
    pins = dict(line.split("==") for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines()
                if line and not line.startswith("#"))
    for name, (floor, upper) in _capstone_extra().items():
        assert _version(floor) <= _version(pins[name]) < _version(upper), name
    assert pins["torch"] == "2.13.0"  # the CPU wheel the project's machines install from local disk
    assert {"tokenizers", "huggingface_hub"} <= set(pins)


def test_accelerate_configs_parse():
    from accelerate.commands.config.config_args import load_config_from_file

    ddp = load_config_from_file(str(ACCELERATE / "ddp.yaml"))
    zero2 = load_config_from_file(str(ACCELERATE / "zero2.yaml"))
    assert ddp.distributed_type.value == "MULTI_GPU" and ddp.mixed_precision == "no"
    assert zero2.distributed_type.value == "DEEPSPEED" and zero2.deepspeed_config["zero_stage"] == 2


@pytest.mark.slow
def test_accelerate_launch_runs_the_capstone_with_one_cpu_process(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    process = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(ACCELERATE / "ddp.yaml"),
         "--num_processes", "1", "--cpu", "-m", "graders.cli", "capstone", "run", "--algo", "dpo", "--profile",
         "tiny", "--out", str(out), "--loss", str(REPO_ROOT / "solutions" / "module_08" / "module_8_training.py"),
         "--quiet"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-3000:]
    passport = json.loads((out / "passport.json").read_text(encoding="utf-8"))
    assert passport["processes"]["num_processes"] == 1 and passport["lora"]["used"]
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    from graders.capstone.claims import check_trainer_args

    passed, said = check_trainer_args(passport)  # what the launcher sets in the config is bookkeeping only
    assert passed, said


def test_the_instructor_script_is_valid_bash_and_uses_real_flags():
    assert subprocess.run(["bash", "-n", str(GPU_SCRIPT)], capture_output=True).returncode == 0
    script = GPU_SCRIPT.read_text(encoding="utf-8")
    from graders.cli import build_parser

    parser = build_parser()
    commands = re.findall(r"rl4llm capstone (?:run|preflight|grade)[^\n|;&]*", script)
    assert len(commands) == 8  # 2 preflights, 4 runs, 2 grades
    for line in commands:
        words = [word for word in line.replace("\\", " ").split()[1:] if "$" not in word and '"' not in word]
        flags = [word for word in words if word.startswith("--")]
        action = words[1]
        sub = parser._subparsers._group_actions[0].choices["capstone"]._subparsers._group_actions[0].choices[action]
        known = {option for act in sub._actions for option in act.option_strings}
        assert set(flags) <= known, (line, set(flags) - known)
