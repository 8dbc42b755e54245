"""Re-evaluation of a submitted capstone adapter: the grader's own measurement, not the passport's claim.

    measured = reevaluate(passport, submission)   # {"before": {...}, "after": {...}}
    checks = check_reevaluation(passport, measured)

The base model is the kit's (tiny: rebuilt from the passport's seed; smoke/full:
``--model`` or the profile's Hub id from the cache); the LoRA config is the profile's
(:mod:`graders.capstone.adapter`: the learner's adapter_config.json is only compared with it),
the adapter's tensors are read from ``adapter/adapter_model.safetensors`` only, under a size
cap, each checked by name and shape (no pickle, no student code runs);
GRPO is scored with the KIT's verifier on the profile's held-out rows, DPO by
pair accuracy and mean margin on the eval pairs tokenized as DPOTrainer tokenizes them.

- ``reevaluation`` (1 point): the passport's claimed "after" metric equals the
  measurement (greedy decoding is deterministic);
- ``improvement`` (1 point, or 0 of 0 where a profile requires none): the
  measured after - measured before of ``MIN_IMPROVEMENT``'s metric reaches its minimum
  (GRPO: greedy accuracy; tiny DPO: the mean margin log pi(chosen) - log pi(rejected) on
  held-out pairs, which only a loss with beta raises far: see graders/capstone/run/data.py).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from graders.capstone.passport import GradeCheck
from graders.paths import SOLUTIONS_DIR
from graders.capstone.run.passport import HEADLINE_METRIC
from graders.capstone.run.profiles import PROFILES, CapstoneError
from graders.capstone.run.texts import text

KIT_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
# (metric, least gain) a profile's run must show, as the grader measures it; None: not required (smoke:
# 2 steps prove the pipeline, not learning; full DPO: 20 steps of the notebook, no gain known yet).
# tiny GRPO learns its task (held-out greedy accuracy 0 -> 0.7..1.0); tiny DPO's held-out margin gains
# 3.6-5.8 nats with the right loss, under 1.1 (log 3, its optimum) without beta, below 0 with the sign
# flipped (graders/capstone/run/profiles.py, TINY_DPO): 2 nats lies between.
MIN_IMPROVEMENT = {("grpo", "tiny"): ("greedy_accuracy", 0.2), ("dpo", "tiny"): ("mean_margin", 2.0),
                   ("grpo", "smoke"): None, ("dpo", "smoke"): None,
                   ("grpo", "full"): ("greedy_accuracy", 0.02), ("dpo", "full"): None}
CLAIM_TOLERANCE = 1e-6  # greedy decoding is deterministic: the claim must be what was measured


def _kit_verifier():
    from graders.loader import load_module

    return load_module(KIT_VERIFIER, "_rl4llm_capstone_kit_verifier")


def reevaluate(passport: dict, submission: Path, model: str | None = None, data_dir=None) -> dict:
    """{"before": base metric, "after": metric with the submitted adapter} measured by the grader.

    The base model is the kit's (tiny: rebuilt from the passport's seed; else ``model`` or the profile's
    Hub id); the adapter is read from adapter_model.safetensors; GRPO is scored by the kit's verifier.
    """
    from graders.capstone.run.run import torch_threads

    profile = PROFILES[(passport["algorithm"], passport["profile"])]
    with torch_threads(profile):
        return _reevaluate(profile, passport, submission, model, data_dir)


def _reevaluate(profile, passport: dict, submission: Path, model: str | None, data_dir) -> dict:
    import torch

    from graders.capstone.run.data import load_rows
    from graders.capstone.run.run import RunOptions, load_model_and_tokenizer, measure, trainer_arguments

    from graders.capstone.adapter import check_config, read_adapter

    extra = [p.name for p in (submission / "adapter").iterdir() if p.name not in ADAPTER_FILES and p.name != "README.md"]
    if extra:
        raise CapstoneError("reeval_extra_files", extra=extra, allowed=ADAPTER_FILES)
    check_config(profile, submission / "adapter")  # compared with the profile, never given to PEFT
    options = RunOptions(profile.algorithm, profile.name, submission, seed=int(passport["seeds"]["seed"]),
                         model=model, data_dir=data_dir)
    dtype = "float32" if not torch.cuda.is_available() else "bfloat16"
    base, tokenizer, _ = load_model_and_tokenizer(profile, options, dtype)
    if torch.cuda.is_available():  # the run measured on the GPU (its trainer moved the model there): so does this
        base = base.to("cuda")
    _, eval_rows, _ = load_rows(profile, data_dir)
    with tempfile.TemporaryDirectory(prefix="rl4llm-reeval-") as temp:
        args = trainer_arguments(profile, Path(temp))
        verifier = _kit_verifier() if profile.algorithm == "grpo" else None
        eval_dataset = _preference_eval(profile, base, tokenizer, eval_rows, args) if profile.algorithm == "dpo" else None
        before = measure(profile.algorithm, base, tokenizer, eval_rows, verifier, args, eval_dataset)
        adapted = read_adapter(profile, base, submission / "adapter")
        after = measure(profile.algorithm, adapted, tokenizer, eval_rows, verifier, args, eval_dataset)
    return {"before": before, "after": after}


def _preference_eval(profile, model, tokenizer, eval_rows, args):
    """The eval rows tokenized exactly as the run's DPOTrainer tokenized them (prompt_ids, chosen_ids, ...)."""
    from datasets import Dataset
    from trl import DPOTrainer

    from graders.capstone.run.run import lora_config

    trainer = DPOTrainer(model=model, args=args, train_dataset=Dataset.from_list(eval_rows[:1]),
                         eval_dataset=Dataset.from_list(eval_rows), processing_class=tokenizer,
                         peft_config=lora_config(profile))
    dataset = trainer.eval_dataset
    trainer.model.unload()  # PEFT: take out the LoRA layers the trainer put in, the base model is as it was
    return dataset


def check_reevaluation(passport: dict, measured: dict, language: str = "en") -> list[GradeCheck]:
    """[``reevaluation``, ``improvement``] as GradeChecks (the claim equals the measurement; the gain)."""

    metric = HEADLINE_METRIC[passport["algorithm"]]
    before, after = measured["before"][metric], measured["after"][metric]
    claimed = ((passport.get("metrics") or {}).get("after") or {}).get(metric)
    same = isinstance(claimed, (int, float)) and math.isfinite(claimed) and abs(claimed - after) <= CLAIM_TOLERANCE
    checks = [GradeCheck("reevaluation", float(same), 1.0,
                         text(language, "reeval_claim_ok" if same else "reeval_claim_wrong", metric=metric,
                              before=before, after=after, claimed=claimed))]
    required = MIN_IMPROVEMENT[(passport["algorithm"], passport["profile"])]
    if required is None:
        checks.append(GradeCheck("improvement", 0.0, 0.0, text(language, "improvement_not_required",
                                                               profile=passport["profile"], gain=after - before)))
    else:
        metric, minimum = required
        gain = measured["after"][metric] - measured["before"][metric]
        checks.append(GradeCheck("improvement", float(gain >= minimum), 1.0,
                                 text(language, "improvement", metric=metric, gain=gain, minimum=minimum)))
    return checks
