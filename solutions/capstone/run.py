"""One capstone run end to end: trainer arguments, data, model, TRL trainer with LoRA, passport.

Given code: the capstone student need not change it.

    run_capstone("grpo", "tiny", "runs/grpo")                       # CPU, seconds
    run_capstone("grpo", "smoke", "runs/q", verifier_path="my/module_9_reference.py")  # CUDA

GRPO uses TRL's GRPOTrainer with the learner's ``verify_numeric_answer`` as
the only reward function; DPO uses DPOTrainer. Both wrap the model in a PEFT
LoRA adapter (``peft_config``), exactly as the course notebooks do.
"""

from __future__ import annotations

import datetime
import sys
import time
from pathlib import Path

from graders.paths import SOLUTIONS_DIR
from solutions.capstone.data import canonical_hash, load_rows
from solutions.capstone.passport import (FIGURE_NAME, library_versions, plot_reward_curve, reward_curve,
                                         write_passport)
from solutions.capstone.profiles import PASSPORT_SCHEMA, CapstoneError, Profile, get_profile

DEFAULT_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"


def trainer_arguments(profile: Profile, out_dir: Path, seed: int = 0, progress: bool = True,
                      use_cpu: bool | None = None):
    """The TRL GRPOConfig / DPOConfig of ``profile``: its prescribed settings plus run bookkeeping.

    Builds no model and touches no network. ``use_cpu`` defaults to the
    profile's device (tiny: CPU, float32; smoke/full: CUDA with TRL's default
    bf16, as in the notebooks); ``use_cpu=True`` lets a CPU machine build a
    real profile's arguments to inspect them.
    """
    from trl import DPOConfig, GRPOConfig

    config_class = GRPOConfig if profile.algorithm == "grpo" else DPOConfig
    use_cpu = not profile.needs_gpu if use_cpu is None else use_cpu
    precision = {} if profile.needs_gpu else {"bf16": False}
    return config_class(
        output_dir=str(Path(out_dir) / "trainer"), report_to="none", seed=seed, data_seed=seed,
        save_strategy="no", disable_tqdm=not progress, use_cpu=use_cpu, **precision,
        **profile.trainer_settings,
    )


def lora_config(profile: Profile):
    from peft import LoraConfig

    return LoraConfig(task_type="CAUSAL_LM", **profile.lora)


def require_device(profile: Profile) -> str:
    """"cpu" for tiny; the CUDA device name for smoke/full, or CapstoneError saying what is missing."""
    if not profile.needs_gpu:
        return "cpu"
    import torch

    if not torch.cuda.is_available():
        raise CapstoneError(
            f"profile {profile.name!r} trains {profile.model} and needs a CUDA GPU, but torch sees none "
            f"(torch {torch.__version__}, torch.cuda.is_available() is False). Run it on a GPU machine "
            f"(it downloads the model and {profile.data.dataset} from the Hugging Face Hub), or use "
            f"--profile tiny on a CPU.")
    return f"cuda: {torch.cuda.get_device_name(0)}"


def _build_trainer(profile: Profile, args, train_rows, eval_rows, verifier_module, seed: int):
    """(trainer, model description) for ``profile``; the tiny model is built here, real ones by TRL."""
    from datasets import Dataset
    from trl import DPOTrainer, GRPOTrainer

    from solutions.capstone.models import TINY_CONFIG, tiny_model, tiny_tokenizer, verifier_reward_function

    if profile.name == "tiny":
        model, tokenizer = tiny_model(seed), tiny_tokenizer()
        described = {"id": profile.model, "tiny_config": dict(TINY_CONFIG), "vocab_size": len(tokenizer)}
    else:
        model, tokenizer = profile.model, None  # TRL loads model and tokenizer by id, as the notebooks do
        described = {"id": profile.model}
    common = {"model": model, "args": args, "train_dataset": Dataset.from_list(train_rows),
              "processing_class": tokenizer, "peft_config": lora_config(profile)}
    if profile.algorithm == "grpo":
        trainer = GRPOTrainer(reward_funcs=verifier_reward_function(verifier_module), **common)
    else:
        trainer = DPOTrainer(eval_dataset=Dataset.from_list(eval_rows), **common)
    return trainer, described


def _measure(profile: Profile, trainer, eval_rows, verifier_module) -> dict:
    from solutions.capstone.metrics import greedy_metrics, preference_metrics
    from solutions.capstone.models import verifier_reward_function

    if profile.algorithm == "grpo":
        return greedy_metrics(trainer.model, trainer.processing_class, eval_rows,
                              verifier_reward_function(verifier_module), trainer.args.max_completion_length)
    return preference_metrics(trainer.model, trainer.eval_dataset)


def run_capstone(algorithm: str, profile_name: str, out_dir, verifier_path=None, seed: int = 0,
                 progress: bool = True) -> dict:
    """Train ``algorithm`` under ``profile_name``; write OUT/passport.json and OUT/reward_curve.png.

    Returns the passport. CapstoneError (before anything is downloaded) when
    the profile needs a GPU and there is none, or the verifier cannot be used.
    """
    started = time.perf_counter()
    profile = get_profile(algorithm, profile_name)
    device = require_device(profile)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    verifier_module, verifier = None, None
    if algorithm == "grpo":
        from solutions.capstone.models import load_verifier

        verifier_module, verifier = load_verifier(Path(verifier_path) if verifier_path else DEFAULT_VERIFIER)
    args = trainer_arguments(profile, out_dir, seed=seed, progress=progress)
    train_rows, eval_rows = load_rows(profile)
    trainer, model = _build_trainer(profile, args, train_rows, eval_rows, verifier_module, seed)
    if not progress:  # quiet: no per-step log dicts either
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)
    peft_used = type(trainer.model).__name__.startswith("Peft")
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    before = _measure(profile, trainer, eval_rows, verifier_module)
    train_started = time.perf_counter()
    trainer.train()
    train_seconds = time.perf_counter() - train_started
    after = _measure(profile, trainer, eval_rows, verifier_module)
    curve = reward_curve(trainer.state.log_history, algorithm)
    passport = {
        "schema": PASSPORT_SCHEMA, "algorithm": algorithm, "profile": profile_name, "device": device,
        "command": sys.argv, "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "seeds": {"seed": args.seed, "data_seed": args.data_seed},
        "versions": library_versions(), "model": model,
        "trainer_class": type(trainer).__name__, "trainer_args": args.to_dict(),
        "lora": {"used": peft_used, "trainable_parameters": trainable, **profile.lora},
        "verifier": verifier,
        "data": {"dataset": profile.data.dataset, "train_split": profile.data.train_split,
                 "eval_split": profile.data.eval_split, "train_rows": len(train_rows),
                 "eval_rows": len(eval_rows), "train_sha256": canonical_hash(train_rows),
                 "eval_sha256": canonical_hash(eval_rows)},
        "metrics": {"before": before, "after": after},
        "reward_curve": curve, "log_history": trainer.state.log_history,
        "wall_time_s": {"train": train_seconds, "total": time.perf_counter() - started},
    }
    write_passport(out_dir, passport)
    plot_reward_curve(curve, out_dir / FIGURE_NAME, f"{algorithm.upper()} ({profile_name}): {curve['metric']}")
    return passport
