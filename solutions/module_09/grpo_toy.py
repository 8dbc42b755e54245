"""The toy GRPO loop of Module 9: your advantages, clipped updates, evaluation, the experiment.

The policy of ``arithmetic_toy.py`` first learns a little by a supervised
warm-up on correct answers; it is then frozen twice: as the old (behaviour)
policy of each rollout batch, whose log-probabilities are stored at sampling
time, and as the reference policy, used only to measure the teacher-forced
KL. Each update draws groups of G responses per prompt, scores them with the
verifier, turns the rewards into group-relative advantages and takes
``update_epochs`` gradient steps of the loss it is handed.

``run_toy_grpo_experiment(config, loss_fn=...)`` trains with ``loss_fn``;
``module_9_training.run_toy_grpo_experiment`` hands it your ``grpo_loss``.
The loop also calls four functions of YOUR ``module_9_reference``: see
:func:`your_formulas`.
Axes: N responses, G per group, T response tokens, V vocabulary.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

from arithmetic_toy import (MAX_OPERAND, VERIFIER_VERSION, ArithmeticPrompt, GRUPolicy, Vocab, arithmetic_prompts,
                            collect_rollouts, sample_responses, teacher_forced, verify_arithmetic, warmup_pool)
from toy_optim import Adam

# =============================================================================
# GIVEN CODE -- you need not change anything in this file.
# =============================================================================

LOSS_TYPES = ("grpo", "dr_grpo", "dapo")


# ----------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class GRPOConfig:
    """Every knob of the toy GRPO run. ``asdict(config)`` is JSON-serialisable."""

    group_size: int = 8  # G, responses per prompt; 4-16 (DeepSeekMath: 64)
    prompt_batch: int = 8  # prompts per rollout batch; 2-32
    updates: int = 20  # rollout batches (outer iterations); 10-200
    update_epochs: int = 4  # mu, gradient steps on each batch (ratios move after the first); 1-4
    loss_type: str = "dapo"  # reduction: "grpo" (per response), "dr_grpo" (N*L), "dapo" (all tokens)
    eps_low: float = 0.2  # epsilon_low, lower clip 1 - eps_low; 0.2
    eps_high: float = 0.28  # epsilon_high, upper clip 1 + eps_high; DAPO uses 0.28, GRPO 0.2
    learning_rate: float = 3e-3  # Adam step size for the RL updates; 1e-3 - 1e-2 here
    max_new_tokens: int = 6  # L, generation budget; also Dr. GRPO's fixed length
    temperature: float = 1.0  # tau, sampling temperature (the behaviour distribution uses it); 0.7-1.2
    scale_rewards: bool = True  # divide centred rewards by the group std (Dr. GRPO: False)
    dynamic_sampling: bool = False  # drop all-equal (uninformative) groups, DAPO
    mask_truncated: bool = True  # responses without <eos> get no gradient, DAPO
    adv_eps: float = 1e-6  # eps in (r - mean) / (std + eps)
    max_grad_norm: float = 1.0  # gradient clipping; 0.5-1.0
    eval_samples: int = 8  # n, fresh samples per prompt in evaluation (pass@4 needs n >= 4)
    num_train_prompts: int = 16  # RL prompts (the coverage plot shows one bar each); <= 24
    num_heldout_prompts: int = 32  # held-out prompts (operand combinations never trained on)
    warmup_steps: int = 120  # supervised warm-up steps before RL (initial accuracy > 0)
    warmup_learning_rate: float = 1e-2  # Adam step size of the warm-up
    warmup_batch: int = 64  # warm-up examples per step
    embed_dim: int = 24  # token embedding width
    hidden_dim: int = 64  # GRU hidden width
    seed: int = 9  # seeds initialisation, warm-up, rollouts and evaluation

    def __post_init__(self) -> None:
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {self.loss_type!r}")
        for name in ("group_size", "prompt_batch", "updates", "update_epochs", "max_new_tokens",
                     "eval_samples", "num_train_prompts", "num_heldout_prompts", "warmup_batch",
                     "embed_dim", "hidden_dim"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2 for a group baseline, got {self.group_size}")
        if not (0 <= self.eps_low < 1) or self.eps_high < 0:
            raise ValueError(f"eps_low must be in [0, 1) and eps_high >= 0, got {self.eps_low}, {self.eps_high}")
        if self.temperature <= 0 or self.learning_rate <= 0:
            raise ValueError("temperature and learning_rate must be positive")

    @property
    def rollouts_per_batch(self) -> int:
        return self.group_size * self.prompt_batch


PROFILES = {
    "smoke": dict(updates=12, prompt_batch=8, group_size=8, update_epochs=4, eval_samples=16),
    "full": dict(updates=80, prompt_batch=8, group_size=8, update_epochs=4, eval_samples=32),
    # the autograder's run and the public toy test's (about 0.4 s): a shorter warm-up, two updates
    "check": dict(updates=2, prompt_batch=8, group_size=8, update_epochs=4, eval_samples=4, warmup_steps=60,
                  warmup_batch=32, warmup_learning_rate=3e-2, num_heldout_prompts=1),
}


# ----------------------------------------------------------------------------- your module_9_reference
FORMULAS = ("group_relative_advantages", "clip_activity", "categorical_entropy", "pass_at_k_unbiased")


def your_formulas(formulas=None):
    """The module_9_reference functions the toy loop calls: ``formulas`` when given, else YOUR module_9_reference.

    ``formulas`` is any object with the attributes named in ``FORMULAS`` (a
    module, a ``types.SimpleNamespace``). None means your module_9_reference:
    the one already imported from this file's folder (as the course notebook
    does), else ``module_9_reference.py`` of this file's folder, loaded afresh
    (so an edit shows up in the next run), else ``import module_9_reference``.
    """
    if formulas is not None:
        return formulas
    here = Path(__file__).resolve().parent if "__file__" in globals() else None
    imported = sys.modules.get("module_9_reference")
    imported_from = getattr(imported, "__file__", None)
    if imported is not None and (here is None or (imported_from and Path(imported_from).resolve().parent == here)):
        return imported
    if here is not None and (here / "module_9_reference.py").is_file():
        name = "_module_9_reference_of_the_toy_loop"
        spec = importlib.util.spec_from_file_location(name, here / "module_9_reference.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclass resolves its module through sys.modules
        spec.loader.exec_module(module)
        return module
    try:
        import module_9_reference
    except ImportError as error:
        raise ImportError("the toy GRPO loop calls your module_9_reference (" + ", ".join(FORMULAS) + "): put "
                          "module_9_reference.py next to this file or on sys.path, or pass formulas=...") from error
    return module_9_reference


def _as_float64_tensor(values, shape, what: str) -> torch.Tensor:
    array = np.array(values, dtype=np.float64)  # a copy: the tensor never shares memory with your result
    if array.shape != tuple(shape):
        raise ValueError(f"{what} returned shape {array.shape}, expected {tuple(shape)}")
    return torch.from_numpy(array)


def group_advantages(rewards: torch.Tensor, scale: bool, eps: float = 1e-6, formulas=None) -> torch.Tensor:
    """Your module_9_reference.group_relative_advantages on (num_groups, G) rewards, as a float64 tensor."""
    values = your_formulas(formulas).group_relative_advantages(rewards.detach().cpu().numpy(), scale=scale, eps=eps)
    return _as_float64_tensor(values, rewards.shape, "group_relative_advantages")


# ----------------------------------------------------------------------------- the experiment
@torch.no_grad()
def evaluate_policy(policy: GRUPolicy, reference: GRUPolicy, vocab: Vocab, prompts: list[ArithmeticPrompt],
                    config: GRPOConfig, *, seed: int, formulas=None) -> tuple[dict, dict]:
    """Fresh generation on ``prompts`` (config.eval_samples each, a fresh generator seeded ``seed``).

    Returns (metrics, accuracy by prompt id). Metrics: accuracy, mean_reward,
    mean_length (tokens incl. <eos>), entropy (mean per generated token of the
    behaviour distribution, by your categorical_entropy), teacher_forced_kl (mean
    per token of KL(policy || reference) on the policy's own samples), pass_at_4
    (by your pass_at_k_unbiased), intermediate_consistency, truncation_rate.
    ``formulas``: see :func:`your_formulas`.
    """
    formulas = your_formulas(formulas)
    samples = sample_responses(policy, vocab, prompts, config.eval_samples, max_new_tokens=config.max_new_tokens,
                               temperature=config.temperature, generator=torch.Generator().manual_seed(seed))
    verdicts = [verify_arithmetic(tokens, prompt) for prompt, tokens, _, _ in samples]
    batch_prompts, responses = [s[0] for s in samples], [s[1] for s in samples]
    _, log_p, mask = teacher_forced(policy, vocab, batch_prompts, responses, config.temperature)
    _, log_q, _ = teacher_forced(reference, vocab, batch_prompts, responses, config.temperature)
    p = log_p.exp()
    finite = torch.isfinite(log_p)  # disallowed tokens have probability 0 and contribute 0
    entropy = _as_float64_tensor(formulas.categorical_entropy(p.numpy()), p.shape[:-1], "categorical_entropy")  # (N, T)
    kl = torch.where(finite, p * (log_p - log_q), torch.zeros_like(p)).sum(-1)
    tokens = mask.sum()
    correct = np.array([v.correctness for v in verdicts]).reshape(len(prompts), config.eval_samples)
    k = min(4, config.eval_samples)
    metrics = {
        "accuracy": float(correct.mean()),
        "mean_reward": float(np.mean([v.reward for v in verdicts])),
        "mean_length": float(np.mean([len(r) for r in responses])),
        "entropy": float((entropy * mask).sum() / tokens),
        "teacher_forced_kl": float((kl * mask).sum() / tokens),
        "pass_at_4": float(np.mean([formulas.pass_at_k_unbiased(config.eval_samples, int(c), k)
                                    for c in correct.sum(1)])),
        "intermediate_consistency": float(np.mean([v.intermediate_consistent for v in verdicts])),
        "truncation_rate": float(np.mean([v.format_status == "truncated" for v in verdicts])),
    }
    return metrics, {p.prompt_id: float(row.mean()) for p, row in zip(prompts, correct)}


def supervised_warmup(policy: GRUPolicy, vocab: Vocab, pool: list[ArithmeticPrompt], config: GRPOConfig,
                      generator: torch.Generator) -> None:
    """A brief teacher-forced warm-up on correct answers, so RL starts from a partly competent policy."""
    optimizer = Adam(policy.parameters(), lr=config.warmup_learning_rate)
    for _ in range(config.warmup_steps):
        picks = torch.randint(len(pool), (config.warmup_batch,), generator=generator).tolist()
        prompts = [pool[i] for i in picks]
        logprobs, _, mask = teacher_forced(policy, vocab, prompts, [p.target_tokens for p in prompts], 1.0)
        loss = -(logprobs * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# this process's warm-ups by key (runs differing only after it share one); the autograder fills it in advance
WARMED_UP: dict[str, dict] = {}


def warm_up_once(policy: GRUPolicy, vocab: Vocab, pool: list[ArithmeticPrompt], config: GRPOConfig) -> None:
    """``supervised_warmup`` from the seed, or the weights an identical warm-up (same settings, seed, pool and
    initial weights) already reached: bit-identical to warming up again."""
    state = policy.state_dict()
    key = hashlib.sha256(repr((config.warmup_steps, config.warmup_batch, config.warmup_learning_rate, config.seed,
                               pool, [(k, tuple(t.shape), t.dtype) for k, t in state.items()])).encode()
                         + b"".join(t.detach().numpy().tobytes() for t in state.values())).hexdigest()
    if key not in WARMED_UP:
        supervised_warmup(policy, vocab, pool, config, torch.Generator().manual_seed(config.seed))
        WARMED_UP[key] = copy.deepcopy(policy.state_dict())
    policy.load_state_dict(WARMED_UP[key])


def grpo_update(policy: GRUPolicy, optimizer: Adam, vocab: Vocab, groups: list,
                lookup: dict, config: GRPOConfig, loss_fn, *, formulas=None) -> dict:
    """config.update_epochs gradient steps of ``loss_fn`` on one rollout batch.

    The advantages come from your group_relative_advantages. Returns the statistics
    of the ratios rho the loss saw, over the active tokens of all epochs (rho = 1 in
    the first, by construction), the clip fractions (share of those tokens where your
    clip_activity says the lower / upper bound is active) and the mean loss over
    epochs. ``formulas``: see :func:`your_formulas`.
    """
    formulas = your_formulas(formulas)
    rows = [row for group in groups for row in group]
    rewards = torch.tensor([[row.reward for row in group] for group in groups], dtype=torch.float64)
    scale = config.scale_rewards and config.loss_type != "dr_grpo"  # Dr. GRPO never divides by the std
    advantages = group_advantages(rewards, scale, config.adv_eps, formulas).reshape(-1)  # (num_groups, G) -> (N,)
    prompts, responses = [lookup[row.prompt_id] for row in rows], [row.response_tokens for row in rows]
    with torch.no_grad():  # the frozen old policy: behaviour log-probs where real, its pad log-probs elsewhere
        old, _, mask = teacher_forced(policy, vocab, prompts, responses, config.temperature)
    for i, row in enumerate(rows):
        old[i, :len(row.old_logprobs)] = torch.tensor(row.old_logprobs, dtype=torch.float64)
        if config.mask_truncated and not row.terminated:
            mask[i] = 0.0
    ratios, losses, low, high, active = [], [], 0, 0, mask > 0
    for _ in range(config.update_epochs):
        new, _, _ = teacher_forced(policy, vocab, prompts, responses, config.temperature)
        loss = loss_fn(new, old, advantages, mask, loss_type=config.loss_type, eps_low=config.eps_low,
                       eps_high=config.eps_high, max_length=config.max_new_tokens)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
        optimizer.step()
        ratio = torch.exp(new.detach() - old)[active]
        adv = advantages[:, None].expand_as(mask)[active].numpy()
        clipped = np.array(formulas.clip_activity(ratio.numpy(), adv, eps_low=config.eps_low, eps_high=config.eps_high),
                           dtype=bool)  # a negative advantage can only hit the lower bound, a positive one the upper
        low += int((clipped & (adv < 0)).sum())
        high += int((clipped & (adv > 0)).sum())
        ratios.append(ratio)
        losses.append(float(loss.detach()))
    ratio = torch.cat(ratios)
    count = max(len(ratio), 1)
    return {"ratio_min": float(ratio.min()), "ratio_mean": float(ratio.mean()), "ratio_max": float(ratio.max()),
            "clip_fraction_low": low / count, "clip_fraction_high": high / count, "loss": float(np.mean(losses))}


def profile_config(profile: str = "smoke", seed: int = 9, loss_type: str = "dapo") -> GRPOConfig:
    """The pinned configuration of a profile ("smoke", "full", or "check": the autograder's two-update run)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    return replace(GRPOConfig(loss_type=loss_type, seed=seed, dynamic_sampling=True,
                              scale_rewards=loss_type != "dr_grpo"), **PROFILES[profile])


def check_metrics(out: dict) -> dict:
    """What the autograder compares after a "check" run (its toy check and the public toy test)."""
    first = out["history"][0]
    return {"first_update_loss": first["loss"], "first_update_ratio_min": first["ratio_min"],
            "first_update_ratio_max": first["ratio_max"], "after_train_accuracy": out["after_train"]["accuracy"],
            "after_train_kl": out["after_train"]["teacher_forced_kl"]}


def run_toy_grpo_experiment(profile: str = "smoke", seed: int = 9, loss_type: str = "dapo", *,
                            loss_fn, progress: bool = False, formulas=None) -> dict:
    """Warm up, then train the GRU policy with clipped group-relative updates; evaluate before and after.

    ``profile`` is "smoke" (seconds), "full" (a larger budget), "check" (the autograder's two
    updates) or a ready ``GRPOConfig`` (then ``seed`` and ``loss_type`` are taken from it).
    ``loss_fn`` is the loss to minimise, with the signature of
    ``module_9_training.grpo_loss``: this is how your implementation is plugged
    in. ``progress=True`` shows a progress bar.
    ``formulas`` (see :func:`your_formulas`; default: your module_9_reference)
    supplies group_relative_advantages, clip_activity, categorical_entropy and
    pass_at_k_unbiased.

    Returns a dict: ``before_train``, ``after_train``, ``before_heldout``,
    ``after_heldout`` (metrics of ``evaluate_policy``), ``history`` (one dict per
    update: update, eval_accuracy, eval_entropy, eval_kl on the train prompts after
    the update, informative_fraction of the batch, ratio_min/mean/max,
    clip_fraction_low/high, loss), ``before_train_by_prompt`` and
    ``after_train_by_prompt`` (prompt id -> accuracy), ``config``, ``policy``,
    ``reference_policy``, ``vocab``, ``prompts`` (train), ``heldout_prompts``,
    ``verifier_version``. Float64 on one intra-op thread (restored afterwards):
    the same seed gives the same numbers whatever the caller's thread count.
    """
    config = profile if isinstance(profile, GRPOConfig) else profile_config(profile, seed, loss_type)
    formulas = your_formulas(formulas)
    threads = torch.get_num_threads()
    # Tiny tensors gain nothing from intra-op threads, and on a busy machine OpenMP threads
    # thrash; one thread also makes the run independent of the caller's thread count.
    torch.set_num_threads(1)
    try:
        return _run_experiment(config, loss_fn, progress, formulas)
    finally:
        torch.set_num_threads(threads)


def _run_experiment(config: GRPOConfig, loss_fn, progress: bool, formulas) -> dict:
    vocab = Vocab()
    train, heldout = arithmetic_prompts(config.num_train_prompts, config.num_heldout_prompts, seed=config.seed)
    lookup = {p.prompt_id: p for p in train}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        policy = GRUPolicy(len(vocab), config.embed_dim, config.hidden_dim)
    pool = warmup_pool(heldout, MAX_OPERAND)
    warm_up_once(policy, vocab, pool, config)
    reference = copy.deepcopy(policy).requires_grad_(False)  # frozen reference for the KL
    eval_seed = config.seed + 2

    def evaluate(prompts):  # the current policy (trained in place) against the frozen reference
        return evaluate_policy(policy, reference, vocab, prompts, config, seed=eval_seed, formulas=formulas)

    before_train, before_by_prompt = evaluate(train)
    before_heldout, _ = evaluate(heldout)
    optimizer = Adam(policy.parameters(), lr=config.learning_rate)
    rollout_generator = torch.Generator().manual_seed(config.seed + 1)
    history = []
    steps = range(1, config.updates + 1)
    if progress:
        try:
            from tqdm.auto import tqdm
            steps = tqdm(steps, desc=f"toy GRPO ({config.loss_type})")
        except ImportError:  # tqdm is optional for this file
            pass
    for update in steps:
        groups, discarded = collect_rollouts(policy, vocab, train, config, generator=rollout_generator,
                                             generator_version=f"policy-v{update - 1}")
        stats = {"ratio_min": 1.0, "ratio_mean": 1.0, "ratio_max": 1.0, "clip_fraction_low": 0.0,
                 "clip_fraction_high": 0.0, "loss": 0.0}
        if groups:  # without an informative group there is nothing to learn from this batch
            stats = grpo_update(policy, optimizer, vocab, groups, lookup, config, loss_fn, formulas=formulas)
        metrics, _ = evaluate(train)
        history.append({"update": update, "eval_accuracy": metrics["accuracy"], "eval_entropy": metrics["entropy"],
                        "eval_kl": metrics["teacher_forced_kl"], "informative_fraction": 1.0 - discarded, **stats})
    after_train, after_by_prompt = evaluate(train)
    after_heldout, _ = evaluate(heldout)
    return {"before_train": before_train, "after_train": after_train, "before_heldout": before_heldout,
            "after_heldout": after_heldout, "config": config, "history": history,
            "before_train_by_prompt": before_by_prompt, "after_train_by_prompt": after_by_prompt,
            "policy": policy, "reference_policy": reference, "vocab": vocab, "prompts": train,
            "heldout_prompts": heldout, "verifier_version": VERIFIER_VERSION}
