"""One capstone run end to end: trainer arguments, data, model, TRL trainer with LoRA, adapter, passport.

Given code: the capstone student need not change it.

    run_capstone(RunOptions("grpo", "tiny", "runs/grpo", verifier="my/module_9_reference.py"))  # CPU, seconds
    run_capstone(RunOptions("dpo", "tiny", "runs/dpo", loss="my/module_8_training.py"))            # CPU, seconds
    run_capstone(RunOptions("grpo", "smoke", "runs/q", verifier=...))                             # CUDA
    run_capstone(RunOptions("grpo", "smoke", "runs/dry", verifier=..., model="local/qwen3",
                            device="cpu", max_steps=1, max_completion_length=16))                 # a dry run

GRPO uses TRL's GRPOTrainer with the learner's ``verify_numeric_answer`` as
the only reward function; DPO uses DPOTrainer with the learner's Module 8
``sequence_logprobs`` and ``dpo_loss`` as its loss (:mod:`graders.capstone.run.learner_loss`). Both wrap the model in a PEFT
LoRA adapter (``peft_config``), exactly as the course notebooks do. The run
folder gets ``passport.json``, the adapter (``adapter/``, PEFT's
``save_pretrained``) and the figures.
"""

from __future__ import annotations

import contextlib
import datetime
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from graders.capstone.run.data import canonical_hash, load_rows
from graders.capstone.run.passport import (ACCURACY_FIGURE_NAME, CURVES_FIGURE_NAME, FIGURE_NAME, library_versions,
                                         plot_before_after, plot_reward_curve, plot_training_curves, reward_curve,
                                         sha256_tree, write_passport)
from graders.capstone.run.profiles import DEFAULT_SEED, DEVICES, PASSPORT_SCHEMA, CapstoneError, Profile, get_profile

ADAPTER_DIR = "adapter"


@dataclass(frozen=True)
class RunOptions:
    """One run: what to train and every override a dry run or an air-gapped machine needs.

    algorithm: "grpo" or "dpo". profile: "tiny", "smoke" or "full". out_dir: the run folder.
    verifier: the learner's module_9_reference.py (GRPO; required).
    loss: the learner's module_8_training.py (DPO; required): its dpo_loss is DPO's loss.
    seed: the trainer's seed and data_seed (42 = TRL's default, as the notebooks ran).
    model: a local folder (or Hub id) that replaces the profile's model, e.g. a cached snapshot.
    data_dir: a folder with <split>.jsonl files that replaces the Hub (see graders.capstone.run.data).
    max_steps, max_completion_length (GRPO), max_length (DPO): trainer overrides for a dry run;
        any of them set makes the run a dry run (recorded under "overrides"; the grader refuses it).
    device: "auto" (tiny: CPU; smoke/full: CUDA required), "cpu" (a dry run of a real profile) or "cuda".
    language: the figures' labels ("en" or "ru").
    """

    algorithm: str
    profile: str
    out_dir: Path
    verifier: Path | None = None
    loss: Path | None = None
    seed: int = DEFAULT_SEED
    model: str | None = None
    data_dir: Path | None = None
    max_steps: int | None = None
    max_completion_length: int | None = None
    max_length: int | None = None
    device: str = "auto"
    progress: bool = True
    language: str = "en"

    @property
    def overrides(self) -> dict:
        """The trainer settings this run changes from its profile ({} for a profile's own run)."""
        pairs = {"max_steps": self.max_steps, "max_completion_length": self.max_completion_length,
                 "max_length": self.max_length}
        return {key: value for key, value in pairs.items() if value is not None}


def resolve_device(profile: Profile, device: str) -> tuple[str, dict]:
    """(device description, precision settings) of a run.

    tiny, or device "cpu": ("cpu", use_cpu, float32). Otherwise CUDA must be
    there: bf16 where the GPU supports it, else fp16 mixed precision with
    float32 weights (T4, V100), and CapstoneError naming ``--device cpu`` when
    torch sees no GPU.
    """
    if device not in DEVICES:
        raise CapstoneError("error_device", choices=DEVICES, got=device)
    if device == "cpu" or (device == "auto" and not profile.needs_gpu):
        return "cpu", {"use_cpu": True, "bf16": False, "fp16": False, "dtype": "float32"}
    import torch

    if not torch.cuda.is_available():
        raise CapstoneError("error_no_gpu", profile=profile.name, model=profile.model, torch=torch.__version__)
    name = f"cuda: {torch.cuda.get_device_name(0)}"
    if torch.cuda.is_bf16_supported():
        return name, {"use_cpu": False, "bf16": True, "fp16": False, "dtype": "bfloat16"}
    return name, {"use_cpu": False, "bf16": False, "fp16": True, "dtype": "float32"}


def trainer_arguments(profile: Profile, out_dir: Path, seed: int = DEFAULT_SEED, progress: bool = True,
                      precision: dict | None = None, overrides: dict | None = None):
    """The TRL GRPOConfig / DPOConfig of ``profile``: its prescribed settings, then ``overrides``,
    plus run bookkeeping and ``precision`` (:func:`resolve_device`; default: CPU float32).
    Builds no model and touches no network."""
    from trl import DPOConfig, GRPOConfig

    config_class = GRPOConfig if profile.algorithm == "grpo" else DPOConfig
    precision = precision or {"use_cpu": True, "bf16": False, "fp16": False}
    settings = {**profile.trainer_settings, **(overrides or {})}
    if profile.algorithm != "grpo":
        settings.pop("max_completion_length", None)
    else:
        settings.pop("max_length", None)
    return config_class(
        output_dir=str(Path(out_dir) / "trainer"), report_to="none", seed=seed, data_seed=seed,
        save_strategy="no", disable_tqdm=not progress, use_cpu=precision["use_cpu"], bf16=precision["bf16"],
        fp16=precision["fp16"], **settings,
    )


def lora_config(profile: Profile):
    from peft import LoraConfig

    return LoraConfig(task_type="CAUSAL_LM", **profile.lora)


def load_model_and_tokenizer(profile: Profile, options: RunOptions, dtype: str):
    """(model, tokenizer, passport entry). Tiny: built here. Real: from ``options.model`` (a folder) or the
    profile's Hub id, through transformers (offline when HF_HUB_OFFLINE=1: then only the cache is read)."""
    if profile.name == "tiny" and options.model is None:
        from graders.capstone.run.models import TINY_CONFIG, tiny_model, tiny_tokenizer

        tokenizer = tiny_tokenizer()
        return tiny_model(options.seed), tokenizer, {"id": profile.model, "tiny_config": dict(TINY_CONFIG),
                                                     "vocab_size": len(tokenizer)}
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = options.model or profile.model
    try:
        model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype))
        tokenizer = AutoTokenizer.from_pretrained(source)
    except OSError as error:
        raise CapstoneError("error_model", source=source, reason=str(error).splitlines()[0]) from error
    config = model.config
    return model, tokenizer, {"id": profile.model, "source": str(source), "architecture": type(model).__name__,
                              "num_hidden_layers": config.num_hidden_layers, "hidden_size": config.hidden_size,
                              "vocab_size": config.vocab_size}


def _build_trainer(profile: Profile, args, model, tokenizer, train_rows, eval_rows, learner_module):
    """GRPOTrainer with the learner's verifier as its reward, or the DPOTrainer with the learner's loss."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from graders.capstone.run.learner_loss import learner_dpo_trainer
    from graders.capstone.run.models import verifier_reward_function

    common = {"model": model, "args": args, "train_dataset": Dataset.from_list(train_rows),
              "processing_class": tokenizer, "peft_config": lora_config(profile)}
    if profile.algorithm == "grpo":
        return GRPOTrainer(reward_funcs=verifier_reward_function(learner_module), **common)
    return learner_dpo_trainer(learner_module)(eval_dataset=Dataset.from_list(eval_rows), **common)


def measure(algorithm: str, model, tokenizer, eval_rows, verifier_module, args, eval_dataset=None) -> dict:
    """The before/after metrics: greedy verifier accuracy (GRPO, ``verifier_module`` the reward) or pair accuracy
    (DPO; ``verifier_module`` unused)."""
    from graders.capstone.run.metrics import greedy_metrics, preference_metrics
    from graders.capstone.run.models import verifier_reward_function

    if algorithm == "grpo":
        return greedy_metrics(model, tokenizer, eval_rows, verifier_reward_function(verifier_module),
                              args.max_completion_length, getattr(args, "chat_template_kwargs", None))
    return preference_metrics(model, eval_dataset)


@contextlib.contextmanager
def torch_threads(profile: Profile):
    """One intra-op thread for the tiny model (its 32-wide matrix products are 5x faster without thread
    hand-offs, above all on a shared machine); torch's default for real models. Restored afterwards."""
    import torch

    saved = torch.get_num_threads()
    if profile.name == "tiny":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def peak_memory(device: str) -> dict | None:
    """This process's peak CUDA memory (torch's allocator: model, training and both measurements); None on CPU."""
    if not device.startswith("cuda"):
        return None
    import torch

    return {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved()}


def run_capstone(options: RunOptions) -> dict:
    """Train; write OUT/passport.json, OUT/adapter/ and the figures. Returns the passport (see :func:`_run`)."""
    with torch_threads(get_profile(options.algorithm, options.profile)):
        return _run(options)


def _run(options: RunOptions) -> dict:
    """Train; write OUT/passport.json, OUT/adapter/ and the figures. Returns the passport.

    CapstoneError (before anything is downloaded or trained) when the profile
    needs a GPU and there is none, the verifier (GRPO) or the loss (DPO) is missing or
    unusable, or the model or data cannot be found.
    """
    started = time.perf_counter()
    profile = get_profile(options.algorithm, options.profile)
    device, precision = resolve_device(profile, options.device)
    verifier, loss = None, None  # the passport's entry of the learner's file (GRPO: verifier; DPO: loss)
    if profile.algorithm == "grpo":
        if options.verifier is None:
            raise CapstoneError("error_no_verifier")
        from graders.capstone.run.models import load_verifier

        learner_module, verifier = load_verifier(Path(options.verifier))
    else:
        if options.loss is None:
            raise CapstoneError("error_no_loss")
        from graders.capstone.run.learner_loss import load_loss

        learner_module, loss = load_loss(Path(options.loss))
    out_dir = Path(options.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    args = trainer_arguments(profile, out_dir, seed=options.seed, progress=options.progress, precision=precision,
                             overrides=options.overrides)
    train_rows, eval_rows, kept = load_rows(profile, options.data_dir)
    model, tokenizer, described = load_model_and_tokenizer(profile, options, precision["dtype"])
    trainer = _build_trainer(profile, args, model, tokenizer, train_rows, eval_rows, learner_module)
    if not options.progress:  # quiet: no per-step log dicts either
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)
    peft_used = type(trainer.model).__name__.startswith("Peft")
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    eval_dataset = getattr(trainer, "eval_dataset", None)
    before = measure(profile.algorithm, trainer.model, trainer.processing_class, eval_rows, learner_module, args,
                     eval_dataset)
    train_started = time.perf_counter()
    trainer.train()
    train_seconds = time.perf_counter() - train_started
    after = measure(profile.algorithm, trainer.model, trainer.processing_class, eval_rows, learner_module, args,
                    eval_dataset)
    main_process = trainer.accelerator.is_main_process  # under `accelerate launch` one process writes the files
    if main_process:
        trainer.model.save_pretrained(out_dir / ADAPTER_DIR)
    curve = reward_curve(trainer.state.log_history, profile.algorithm)
    passport = {
        "schema": PASSPORT_SCHEMA, "algorithm": profile.algorithm, "profile": profile.name, "device": device,
        "precision": precision, "overrides": options.overrides,
        "processes": {"num_processes": trainer.accelerator.num_processes,  # > 1 under `accelerate launch`
                      "distributed_type": str(trainer.accelerator.distributed_type)},
        "command": sys.argv, "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "seeds": {"seed": args.seed, "data_seed": args.data_seed},
        "versions": library_versions(), "model": described,
        "trainer_class": type(trainer).__name__, "trainer_args": args.to_dict(),
        "lora": {"used": peft_used, "trainable_parameters": trainable, **profile.lora},
        "adapter": {"path": ADAPTER_DIR, "files": sha256_tree(out_dir / ADAPTER_DIR) if main_process else {}},
        "verifier": verifier, "loss": loss,
        "data": {"dataset": profile.data.dataset, "train_split": profile.data.train_split,
                 "eval_split": profile.data.eval_split, "train_rows": len(train_rows),
                 "eval_rows": len(eval_rows), "train_sha256": canonical_hash(train_rows),
                 "eval_sha256": canonical_hash(eval_rows), "filter": kept},
        "metrics": {"before": before, "after": after},
        "reward_curve": curve, "log_history": trainer.state.log_history,
        "wall_time_s": {"train": train_seconds, "total": time.perf_counter() - started},
        "memory": peak_memory(device),
    }
    if not main_process:
        return passport
    write_passport(out_dir, passport)
    title = f"{profile.algorithm.upper()} ({profile.name}): {curve['metric']}"
    plot_reward_curve(curve, out_dir / FIGURE_NAME, title, options.language)
    plot_training_curves(trainer.state.log_history, profile.algorithm, profile.name, out_dir / CURVES_FIGURE_NAME,
                         options.language, beta=getattr(args, "beta", None))
    plot_before_after(passport["metrics"], profile.algorithm, profile.name, out_dir / ACCURACY_FIGURE_NAME,
                      options.language)
    return passport
