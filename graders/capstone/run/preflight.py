"""``rl4llm capstone preflight``: can this machine run a profile? One line per check, before any GPU hour.

Given code: the capstone student need not change it.

    lines = preflight("grpo", "smoke", model=None, data_dir=None)
    print(format_preflight(lines, "grpo", "smoke", "en"))   # exit code: 1 if any line is "fail"

Checks: Python; each capstone library against the floors of ``LIBRARY_FLOORS``
(the same as pyproject.toml's ``capstone`` extra); CUDA and its free memory
(``NEED_GIB``); bf16 support (else the fp16 fallback the run takes); the model
(``--model`` folder, else the Hugging Face cache) and the data (``--data-dir``,
else the cache); the offline switch. A missing model or data set is a failure
only when the Hub cannot be reached (``HF_HUB_OFFLINE=1``); otherwise the run
downloads it, and the line says so as a warning.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from graders.capstone.run.data import missing_data_error
from graders.capstone.run.hub_data import cached_snapshot, hub_cache_dir, locate_data, offline
from graders.capstone.run.profiles import get_profile

# The first versions that work, installed together and tested (see README "The capstone", "Versions."):
# TRL 1.1 ships chat_templates/qwen3.jinja; transformers 5.0 stops returning token_type_ids that TRL passes
# to generate; PEFT's Qwen3 LoRA targets in 0.16; TRL >= 1.0 requires datasets 4.7 and accelerate 1.4.
# math-verify 0.9 parses DeepMath's answers for the reward (graders.capstone.run.latex).
LIBRARY_FLOORS = {"torch": "2.4", "transformers": "5.0", "trl": "1.1", "peft": "0.16", "datasets": "4.7",
                  "accelerate": "1.4", "math-verify": "0.9"}
NEED_GIB = {"grpo": 10.0, "dpo": 8.0}  # GPU memory a smoke/full run of Qwen3-0.6B with LoRA takes, with headroom


@dataclass(frozen=True)
class PreflightLine:
    """One check: status "ok", "warn" or "fail", and the text key + values it is written with."""

    status: str
    key: str
    values: dict = field(default_factory=dict)


def _version_tuple(version: str) -> tuple[int, ...]:
    """(major, minor, patch) of "2.13.0+cpu" -> (2, 13, 0); non-numeric parts end the tuple."""
    parts = []
    for part in version.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def library_lines() -> list[PreflightLine]:
    lines = []
    for name, floor in LIBRARY_FLOORS.items():
        spec = f">={floor}"
        try:
            found = metadata.version(name)
        except metadata.PackageNotFoundError:
            lines.append(PreflightLine("fail", "preflight_library_missing", {"name": name, "spec": spec}))
            continue
        status = "ok" if _version_tuple(found) >= _version_tuple(floor) else "fail"
        lines.append(PreflightLine(status, "preflight_library", {"name": name, "found": found, "spec": spec}))
    return lines


def device_lines(algorithm: str, profile_name: str, device: str = "auto") -> list[PreflightLine]:
    """CUDA, free memory and precision for the profile (tiny and --device cpu need no GPU)."""
    profile = get_profile(algorithm, profile_name)
    if not profile.needs_gpu or device == "cpu":
        return [PreflightLine("ok", "preflight_cuda_not_needed"), PreflightLine("ok", "preflight_cpu_precision")]
    import torch

    if not torch.cuda.is_available():
        return [PreflightLine("fail", "preflight_no_cuda", {"torch": torch.__version__, "profile": profile_name})]
    free, total = torch.cuda.mem_get_info(0)
    gib = 1024 ** 3
    lines = [PreflightLine("ok", "preflight_cuda", {"name": torch.cuda.get_device_name(0), "free_gib": free / gib,
                                                    "total_gib": total / gib})]
    if free / gib < NEED_GIB[algorithm]:
        lines.append(PreflightLine("fail", "preflight_memory_low", {"free_gib": free / gib,
                                                                    "need_gib": NEED_GIB[algorithm]}))
    bf16 = torch.cuda.is_bf16_supported()
    lines.append(PreflightLine("ok" if bf16 else "warn", "preflight_bf16" if bf16 else "preflight_fp16"))
    return lines


def _cache_dir() -> str:
    return str(hub_cache_dir())


def _cached_repo(repo_id: str, repo_type: str) -> str | None:
    """The snapshot folder of ``repo_id`` in the Hugging Face cache, or None."""
    snapshot = cached_snapshot(repo_id, repo_type)
    return str(snapshot) if snapshot else None


def data_line(profile, data_dir: str | None = None) -> PreflightLine:
    """The data: what :func:`graders.capstone.run.hub_data.locate_data` finds, as the run will read it."""
    location = locate_data(profile, Path(data_dir) if data_dir else None)
    values = {"dataset": profile.data.dataset, "where": location.where}
    if location.kind in ("data_dir", "snapshot") and not location.missing:
        return PreflightLine("ok", "preflight_data", values)
    error = missing_data_error(location, profile)  # the text the run would stop with, and its fix
    status = "warn" if location.kind == "hub" else "fail"  # online: the run downloads it
    return PreflightLine(status, error.key, error.values)


def resource_lines(algorithm: str, profile_name: str, model: str | None = None,
                   data_dir: str | None = None) -> list[PreflightLine]:
    """The model and the data: found locally, or (offline: fail; online: warn, the run downloads them)."""
    profile = get_profile(algorithm, profile_name)
    lines = [PreflightLine("ok", "preflight_offline", {"value": os.environ.get("HF_HUB_OFFLINE", "0")})]
    if profile.data.dataset.startswith("kit:"):
        return lines + [PreflightLine("ok", "preflight_tiny_data", {"dataset": profile.data.dataset})]
    missing = "fail" if offline() else "warn"
    where = model if model and (Path(model) / "config.json").is_file() else _cached_repo(profile.model, "model")
    lines.append(PreflightLine("ok", "preflight_model", {"model": model or profile.model, "where": where}) if where
                 else PreflightLine(missing, "preflight_model_missing", {"model": model or profile.model,
                                                                          "cache": _cache_dir()}))
    return lines + [data_line(profile, data_dir)]


def preflight(algorithm: str, profile_name: str, model: str | None = None, data_dir: str | None = None,
              device: str = "auto") -> list[PreflightLine]:
    """Every check, in the order they are printed."""
    return [PreflightLine("ok", "preflight_python", {"version": platform.python_version()}),
            *library_lines(), *device_lines(algorithm, profile_name, device),
            *resource_lines(algorithm, profile_name, model, data_dir)]


def format_preflight(lines: list[PreflightLine], algorithm: str, profile_name: str, language: str = "en") -> str:
    """The title, one "[status] text" line per check, and the verdict."""
    from graders.capstone.run.texts import text

    out = [text(language, "preflight_title", algorithm=algorithm, profile=profile_name)]
    for line in lines:
        out.append(f"  [{text(language, 'preflight_' + line.status)}] {text(language, line.key, **line.values)}")
    failures = sum(line.status == "fail" for line in lines)
    out.append(text(language, "preflight_summary_fail", count=failures) if failures
               else text(language, "preflight_summary_ok"))
    return "\n".join(out) + "\n"
