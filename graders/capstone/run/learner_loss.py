"""The learner's Module 8 DPO loss as the capstone's DPO loss, inside TRL's DPOTrainer.

Given code: the capstone student need not change it.

GRPO's only reward is the learner's verifier; DPO's loss is the learner's
``module_8_training.py`` (``--loss PATH/module_8_training.py``), both functions of it:

    log pi(y|x)  = sequence_logprobs(logits, input_ids, completion_mask[:, 1:])   # (2B,), chosen rows then rejected
    loss, r_w, r_l = dpo_loss(pi_w, pi_l, ref_w, ref_l, beta=args.beta)           # Rafailov et al. 2023, eq. 7

on TRL's own batches (:class:`trl.trainer.dpo_trainer.DataCollatorForPreference`:
``input_ids`` holds the chosen sequences, then the rejected ones; ``completion_mask`` marks the
answer tokens, so its shift ``[:, 1:]`` is aligned with the targets ``input_ids[:, 1:]``, as
``sequence_logprobs`` expects). The reference log-probabilities are the same model with its LoRA
adapter disabled, without gradient (what TRL does for a PEFT model), or TRL's precomputed ones
when ``precompute_ref_log_probs`` is set. The logits are cast to float32 first (a bf16 log-softmax
over Qwen3's 151936 tokens loses the margin's digits). TRL's ``loss_type`` is recorded but not used:
the learner's function is the loss. The trainer logs what TRL's DPOTrainer logs
(``rewards/chosen``, ``rewards/rejected``, ``rewards/accuracies``, ``rewards/margins``,
``logps/chosen``, ``logps/rejected``) from the rewards the learner's ``dpo_loss`` returns, so the
curves, the passport and the figures read the same as with TRL's loss.

A wrong loss shows in the tiny DPO task (graders/capstone/run/data.py): a sign-flipped loss lowers the
held-out margin, a loss without beta stops it near log 3 (tests/test_capstone_dpo.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

from graders.capstone.run.profiles import CapstoneError
from graders.loader import load_module
from graders.paths import STARTER_DIR

LOSS_FILE = "module_8_training.py"
LOSS_FUNCTIONS = ("sequence_logprobs", "dpo_loss")
LOSS_MODULE_NAME = "_rl4llm_capstone_loss"  # private: never clashes with an imported module_8_training
GIVEN_MODULE = "dpo_toy"  # module_8_training.py imports the given toy experiment
TRAINER_CLASS = "LearnerLossDPOTrainer"


def _given_toy(path: Path) -> Path:
    """The given dpo_toy.py the learner's file imports: the kit's copy (starter/module_08), else the file's
    neighbour."""
    kit = STARTER_DIR / "module_08" / f"{GIVEN_MODULE}.py"
    return kit if kit.is_file() else path.parent / f"{GIVEN_MODULE}.py"


def load_loss(path: Path) -> tuple[ModuleType, dict]:
    """Import the learner's module_8_training.py privately and try both functions on a tiny batch;
    (module, passport entry {path, sha256}). CapstoneError naming the problem otherwise."""
    from graders.capstone.run.models import sha256_file

    path = Path(path).resolve()
    try:
        module = load_module(path, LOSS_MODULE_NAME, given={GIVEN_MODULE: _given_toy(path)})
    except Exception as error:  # the learner's file: any import failure is theirs to read
        raise CapstoneError("error_loss_import", path=path, error=f"{type(error).__name__}: {error}") from error
    missing = [name for name in LOSS_FUNCTIONS if not callable(getattr(module, name, None))]
    if missing:
        raise CapstoneError("error_loss_missing", path=path, names=", ".join(missing))
    _probe(module, path)
    return module, {"path": str(path), "sha256": sha256_file(path)}


def _probe(module: ModuleType, path: Path) -> None:
    """Both functions on a batch of two before any training: a stub or a crash stops here, in one line."""
    import torch

    logits = torch.randn(2, 3, 5, requires_grad=True)
    ids, mask = torch.tensor([[0, 1, 2], [3, 4, 0]]), torch.tensor([[False, True], [True, False]])
    logps = torch.tensor([-1.0, -2.0], requires_grad=True)
    try:
        sequence = module.sequence_logprobs(logits, ids, mask)
        loss, chosen, rejected = module.dpo_loss(logps, logps.flip(0), logps.detach() - 0.5, logps.detach().flip(0),
                                                 beta=0.1)
    except Exception as error:  # noqa: BLE001 - the learner's code
        raise CapstoneError("error_loss_raised", path=path, error=type(error).__name__,
                            message=str(error).splitlines()[0] if str(error) else "") from error
    problem = _shape_problem(sequence, loss, chosen, rejected)
    if problem:
        raise CapstoneError("error_loss_value", path=path, problem=problem)


def _shape_problem(sequence, loss, chosen, rejected) -> str | None:
    """What is wrong with the functions' outputs on the probe (English: a type or a shape), or None."""
    import torch

    if not isinstance(sequence, torch.Tensor) or tuple(sequence.shape) != (2,):
        return f"sequence_logprobs returned {_described(sequence)}, a (B,) tensor expected"
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0 or not loss.requires_grad:
        return f"dpo_loss returned the loss {_described(loss)}, a scalar tensor with gradient expected"
    if not math.isfinite(float(loss.detach())):
        return f"dpo_loss returned the loss {float(loss.detach())}"
    for name, value in (("chosen_rewards", chosen), ("rejected_rewards", rejected)):
        if not isinstance(value, torch.Tensor) or tuple(value.shape) != (2,):
            return f"dpo_loss returned {name} {_described(value)}, a (B,) tensor expected"
    return None


def _described(value) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else type(value).__name__


def learner_dpo_trainer(loss_module: ModuleType):
    """A DPOTrainer subclass whose loss is ``loss_module``'s (see the module docstring); TRL imported here."""
    import torch
    from trl import DPOTrainer

    class LearnerLossDPOTrainer(DPOTrainer):
        """TRL's DPOTrainer with the learner's sequence_logprobs and dpo_loss as its loss."""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            mode = "train" if self.model.training else "eval"
            ids, attention = inputs["input_ids"], inputs["attention_mask"]
            mask = inputs["completion_mask"][:, 1:].bool()
            outputs = model(input_ids=ids, attention_mask=attention, use_cache=False)
            logps = loss_module.sequence_logprobs(outputs.logits.float(), ids, mask)
            if "ref_chosen_logps" in inputs:
                ref_chosen, ref_rejected = inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
            else:
                with torch.no_grad():
                    ref_logps = loss_module.sequence_logprobs(self._reference_logits(model, ids, attention), ids,
                                                              mask)
                ref_chosen, ref_rejected = ref_logps.chunk(2)
            chosen, rejected = logps.chunk(2)
            loss, chosen_rewards, rejected_rewards = loss_module.dpo_loss(
                chosen, rejected, ref_chosen, ref_rejected, beta=self.beta)
            self._log_rewards(mode, chosen, rejected, chosen_rewards, rejected_rewards)
            return (loss, outputs) if return_outputs else loss

        def _reference_logits(self, model, ids, attention):
            if self.ref_model is not None:
                return self.ref_model(input_ids=ids, attention_mask=attention, use_cache=False).logits.float()
            with self.accelerator.unwrap_model(self.model).disable_adapter():  # PEFT: the base model is pi_ref
                return model(input_ids=ids, attention_mask=attention, use_cache=False).logits.float()

        def _log_rewards(self, mode, chosen, rejected, chosen_rewards, rejected_rewards):
            gather = self.accelerator.gather_for_metrics
            chosen_rewards, rejected_rewards = chosen_rewards.detach(), rejected_rewards.detach()
            values = {"rewards/chosen": chosen_rewards, "rewards/rejected": rejected_rewards,
                      "rewards/accuracies": (chosen_rewards > rejected_rewards).float(),
                      "rewards/margins": chosen_rewards - rejected_rewards,
                      "logps/chosen": chosen.detach(), "logps/rejected": rejected.detach()}
            for key, value in values.items():
                self._metrics[mode][key].append(gather(value).float().mean().item())

    LearnerLossDPOTrainer.__name__ = LearnerLossDPOTrainer.__qualname__ = TRAINER_CLASS
    return LearnerLossDPOTrainer
