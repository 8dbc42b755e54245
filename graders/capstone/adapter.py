"""The submitted LoRA adapter as the capstone's re-evaluation loads it: the profile's config, checked tensors.

    check_config(profile, folder)          # the learner's few LoRA fields against the profile's
    model = read_adapter(profile, base, folder)

The learner's ``adapter_config.json`` is never given to PEFT (its ``exclude_modules`` or
``target_modules`` may be a regular expression that PEFT runs over every module name, its
other fields choose code paths): it is read by the one reader
(:func:`graders.engine.intake.reader.read_file`, at most :data:`MAX_CONFIG_BYTES`) and only
compared with the profile (``peft_type``, ``r``, ``lora_alpha``); a mismatch is refused.
The LoRA layers are made from the kit's profile (:func:`graders.capstone.run.run.lora_config`),
and ``adapter_model.safetensors`` (at most :data:`MAX_ADAPTER_BYTES`) must hold exactly
their tensors: its header is parsed here, every name and shape compared with the layers',
every tensor's bytes with its shape and dtype, before ``safetensors`` decodes a byte.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from graders.capstone.run.profiles import CapstoneError
from graders.engine.intake.reader import UnsafeSubmission, read_file

MAX_CONFIG_BYTES = 64 << 10
MAX_ADAPTER_BYTES = 64 << 20  # graders.capstone.grade.ZIP_MAX_MEMBER_BYTES
MAX_HEADER_BYTES = 1 << 20
DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2}
COMPARED = ("lora_alpha",)  # beside peft_type and r (reeval_not_lora)


def _read(path: Path, limit: int) -> bytes:
    try:
        return read_file(path, limit)
    except UnsafeSubmission as why:
        raise CapstoneError("reeval_unreadable", reason=str(why)) from None


def check_config(profile, folder: Path) -> None:
    """Refuse (CapstoneError) an adapter_config.json that is not the profile's LoRA in its few fields."""
    try:
        config = json.loads(_read(Path(folder) / "adapter_config.json", MAX_CONFIG_BYTES).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise CapstoneError("reeval_unreadable", reason=f"adapter_config.json is not JSON ({error})"[:200]) from None
    if not isinstance(config, dict):
        raise CapstoneError("reeval_unreadable", reason="adapter_config.json is not a JSON object")
    if config.get("peft_type") != "LORA" or config.get("r") != profile.lora["r"]:
        raise CapstoneError("reeval_not_lora", rank=profile.lora["r"], peft_type=str(config.get("peft_type"))[:40],
                            found=str(config.get("r"))[:40])
    for field in COMPARED:
        if config.get(field) != profile.lora[field]:
            raise CapstoneError("reeval_lora_field", field=field, found=str(config.get(field))[:40],
                                wanted=profile.lora[field])


def header(data: bytes) -> dict[str, tuple[str, tuple[int, ...]]]:
    """``{tensor name: (dtype, shape)}`` of a safetensors file whose header and offsets are sound; else
    CapstoneError ("reeval_tensors") saying what is not."""
    def refuse(problem: str):
        return CapstoneError("reeval_tensors", problem=problem)

    if len(data) < 8:
        raise refuse("shorter than a safetensors header")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEADER_BYTES or 8 + size > len(data):
        raise refuse(f"a header of {size} bytes (at most {MAX_HEADER_BYTES}, within the file)")
    try:
        entries = json.loads(data[8:8 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise refuse("its header is not JSON") from None
    if not isinstance(entries, dict):
        raise refuse("its header is not a JSON object")
    found, body = {}, len(data) - 8 - size
    for name, entry in entries.items():
        if name == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(shape, list) and len(shape) <= 4 and all(type(n) is int and 0 <= n <= 1 << 24 for n in shape)
                and entry.get("dtype") in DTYPE_BYTES and isinstance(offsets, list) and len(offsets) == 2
                and all(type(n) is int for n in offsets) and 0 <= offsets[0] <= offsets[1] <= body
                and offsets[1] - offsets[0] == math.prod(shape) * DTYPE_BYTES[entry["dtype"]]):
            raise refuse(f"the entry {ascii(name)[:80]} is not a tensor of a known dtype within the file")
        found[name] = (entry["dtype"], tuple(shape))
    return found


def tensor_problem(found: dict, expected: dict[str, tuple[int, ...]]) -> str | None:
    """What differs between the file's tensors and the LoRA layers' (names, then shapes); None when nothing."""
    missing, extra = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
    if missing or extra:
        return (f"{len(missing)} expected tensor(s) missing (e.g. {ascii(missing[:1])[:120]}), "
                f"{len(extra)} unexpected (e.g. {ascii(extra[:1])[:120]})")
    for name, shape in expected.items():
        if found[name][1] != shape:
            return f"{ascii(name)[:120]} has shape {list(found[name][1])}, the profile's LoRA {list(shape)}"
    return None


def read_adapter(profile, base, folder: Path):
    """``base`` with the profile's LoRA layers holding the submitted tensors (checked by :func:`header` and
    :func:`tensor_problem`), in eval mode; CapstoneError for an adapter that does not fit."""
    from peft import get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict
    from safetensors.torch import load

    from graders.capstone.run.run import lora_config

    data = _read(Path(folder) / "adapter_model.safetensors", MAX_ADAPTER_BYTES)
    found = header(data)
    model = get_peft_model(base, lora_config(profile))
    expected = {name: tuple(tensor.shape) for name, tensor in get_peft_model_state_dict(model).items()}
    problem = tensor_problem(found, expected)
    if problem is not None:
        raise CapstoneError("reeval_tensors", problem=problem)
    set_peft_model_state_dict(model, load(data))
    model.eval()
    return model
