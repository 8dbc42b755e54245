"""Module 9 toy GRPO loop: a tiny autoregressive policy learns arithmetic from a verifier.

A genuine (if small) language model -- embedding -> GRU -> LM head -- reads a
prompt such as ``<bos> 3 + 4 + 5 =`` and writes its answer token by token
under a constrained grammar, ``NUMBER ; NUMBER <eos>``: first the
intermediate sum a + b, then the final sum a + b + c (``7 ; 1 2 <eos>``). A
versioned verifier scores each response with separate components
(correctness, intermediate consistency, format status, total reward). The
update is the clipped group-relative objective of GRPO with a frozen old
policy (its log-probabilities stored at sampling time) and, separately, a
frozen reference policy used only to measure the teacher-forced KL.

Your exercise is ``grpo_loss`` (the "toy GRPO step"). Everything else is
given: ``run_toy_grpo_experiment(loss_fn=your_grpo_loss)`` trains with yours.
The given loop also calls four functions of YOUR ``module_9_reference`` (the
file next to this one, as the course notebook imports it):
``group_relative_advantages`` (the advantages it trains on), ``clip_activity``
(the clip fractions it logs), ``categorical_entropy`` (the token entropy) and
``pass_at_k_unbiased`` (pass@4); see :func:`your_formulas`.
Axes: N responses, G per group, T response tokens, V vocabulary, P prompt tokens.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import sys
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import nn

# =============================================================================
# GIVEN CODE -- you need not change anything in this file except grpo_loss.
# =============================================================================

DIGITS = tuple(str(d) for d in range(10))
BOS, EOS, PAD, SEP = "<bos>", "<eos>", "<pad>", ";"
MAX_DIGITS = 3  # the grammar allows NUMBERs of 1-3 digits, without leading zeros
MAX_OPERAND = 9  # operands are single digits 0..9
VERIFIER_VERSION = "toy-arithmetic-verifier/1.0"
LOSS_TYPES = ("grpo", "dr_grpo", "dapo")


@dataclass(frozen=True)
class Vocab:
    """The token inventory; ``index`` maps a token to its id (V = len(tokens))."""

    tokens: tuple[str, ...] = (PAD, BOS, EOS) + DIGITS + ("+", "=", SEP)

    @cached_property
    def index(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens) -> list[int]:
        return [self.index[token] for token in tokens]


@lru_cache(maxsize=None)
def allowed_next_tokens(response_prefix: tuple[str, ...]) -> tuple[str, ...]:
    """Tokens the grammar ``NUMBER ; NUMBER <eos>`` allows after ``response_prefix``."""
    if EOS in response_prefix:
        return ()
    digits = 0  # digits of the number being written
    for token in reversed(response_prefix):
        if token == SEP:
            break
        digits += 1
    allowed: list[str] = []
    if digits < MAX_DIGITS and response_prefix[len(response_prefix) - digits:] != ("0",):
        allowed += DIGITS
    if digits >= 1:
        allowed.append(SEP if SEP not in response_prefix else EOS)
    return tuple(allowed)


@lru_cache(maxsize=None)
def _grammar_row(vocab: Vocab, response_prefix: tuple[str, ...]) -> torch.Tensor:
    row = torch.zeros(len(vocab), dtype=torch.bool)
    row[vocab.encode(allowed_next_tokens(response_prefix) or (EOS,))] = True
    return row


# ----------------------------------------------------------------------------- prompts
@dataclass(frozen=True)
class ArithmeticPrompt:
    """A two-step sum ``a + b + c =``; ``prompt_id`` is the stable string "a+b+c"."""

    prompt_id: str
    operands: tuple[int, int, int]

    @property
    def tokens(self) -> tuple[str, ...]:
        a, b, c = (str(x) for x in self.operands)
        return (BOS, a, "+", b, "+", c, "=")

    @property
    def text(self) -> str:
        return " ".join(self.tokens[1:])

    @property
    def intermediate(self) -> int:
        return self.operands[0] + self.operands[1]

    @property
    def answer(self) -> int:
        return sum(self.operands)

    @property
    def target_tokens(self) -> tuple[str, ...]:
        """The correct response: intermediate ; answer <eos>."""
        return tuple(str(self.intermediate)) + (SEP,) + tuple(str(self.answer)) + (EOS,)


def _prompt(a: int, b: int, c: int) -> ArithmeticPrompt:
    return ArithmeticPrompt(f"{a}+{b}+{c}", (a, b, c))


def arithmetic_prompts(num_train: int = 16, num_heldout: int = 32, *, seed: int = 0,
                       max_operand: int = MAX_OPERAND) -> tuple[list[ArithmeticPrompt], list[ArithmeticPrompt]]:
    """Disjoint train and held-out prompts ``a + b + c =`` with operands in 0..max_operand.

    All (max_operand + 1)^3 operand combinations are shuffled by ``seed``; the
    first ``num_train`` are the RL prompts, the next ``num_heldout`` are held
    out: those combinations are never used for training (not in the warm-up either).
    """
    if max_operand < 1 or max_operand > 9:
        raise ValueError(f"max_operand must be in 1..9 (one digit), got {max_operand}")
    combos = [(a, b, c) for a in range(max_operand + 1) for b in range(max_operand + 1)
              for c in range(max_operand + 1)]
    if num_train < 1 or num_heldout < 1 or num_train + num_heldout > len(combos):
        raise ValueError(f"num_train={num_train} and num_heldout={num_heldout} must be >= 1 "
                         f"and fit in {len(combos)} combinations")
    order = np.random.default_rng(seed).permutation(len(combos))
    chosen = [_prompt(*combos[i]) for i in order[:num_train + num_heldout]]
    return chosen[:num_train], chosen[num_train:]


def _warmup_pool(heldout: list[ArithmeticPrompt], max_operand: int) -> list[ArithmeticPrompt]:
    """Every operand combination except the held-out ones (the supervised warm-up data)."""
    excluded = {p.operands for p in heldout}
    return [_prompt(a, b, c) for a in range(max_operand + 1) for b in range(max_operand + 1)
            for c in range(max_operand + 1) if (a, b, c) not in excluded]


# ----------------------------------------------------------------------------- verifier
@dataclass(frozen=True)
class ArithmeticVerdict:
    """The verifier's components, kept apart so a dashboard can show each.

    correctness: 1 when the final NUMBER equals a + b + c (the only rewarded part);
    intermediate_consistent: 1 when the first NUMBER equals a + b (logged, not rewarded);
    format_status: "ok", "truncated" (no <eos> within the budget) or "malformed";
    reward: total reward = correctness when the format is ok, else 0.0;
    status: "correct", "wrong", "truncated" or "malformed".
    """

    correctness: int
    intermediate_consistent: int
    format_status: str
    reward: float
    status: str
    version: str = VERIFIER_VERSION


def verify_arithmetic(response_tokens, prompt: ArithmeticPrompt) -> ArithmeticVerdict:
    """Score one response (a sequence of token strings) against ``prompt``; never raises."""
    tokens = list(response_tokens)
    if EOS not in tokens:
        body, fmt = tokens, "truncated"
    else:
        body, fmt = tokens[:tokens.index(EOS)], "ok" if tokens[-1] == EOS and tokens.count(EOS) == 1 else "malformed"
    text = "".join(body)
    parts = text.split(SEP)
    numbers = [int(p) if p.isdigit() else None for p in parts]
    intermediate = int(numbers[0] == prompt.intermediate) if numbers else 0
    if fmt == "ok" and (len(parts) != 2 or None in numbers):
        fmt = "malformed"
    if fmt != "ok":
        return ArithmeticVerdict(0, intermediate, fmt, 0.0, fmt)
    correct = int(numbers[1] == prompt.answer)
    return ArithmeticVerdict(correct, intermediate, "ok", float(correct), "correct" if correct else "wrong")


# ----------------------------------------------------------------------------- policy
class GRUPolicy(nn.Module):
    """Embedding -> GRU -> LM head; float64 so that sampling is reproducible across thread counts."""

    def __init__(self, vocab_size: int, embed_dim: int = 24, hidden_dim: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, dtype=torch.float64)
        self.gru = nn.GRU(embed_dim, hidden_dim, batch_first=True, dtype=torch.float64)
        self.head = nn.Linear(hidden_dim, vocab_size, dtype=torch.float64)

    def forward(self, token_ids: torch.Tensor, hidden: torch.Tensor | None = None):
        """token_ids: (N, L) -> logits (N, L, V), hidden state (1, N, H)."""
        output, hidden = self.gru(self.embed(token_ids), hidden)
        return self.head(output), hidden


def _masked_log_softmax(logits: torch.Tensor, allowed: torch.Tensor, temperature: float) -> torch.Tensor:
    """The behaviour distribution: grammar mask, then temperature, then log-softmax (last axis V)."""
    return torch.log_softmax(logits.masked_fill(~allowed, -math.inf) / temperature, dim=-1)


@torch.no_grad()
def sample_responses(policy: GRUPolicy, vocab: Vocab, prompts: list[ArithmeticPrompt], samples_per_prompt: int,
                     *, max_new_tokens: int, temperature: float, generator: torch.Generator):
    """Sample ``samples_per_prompt`` responses per prompt (prompt-major order).

    Returns a list of (prompt, tokens, logprobs, terminated); logprobs are those of
    the sampled tokens under the behaviour distribution (mask and temperature applied).
    """
    batch = [p for p in prompts for _ in range(samples_per_prompt)]
    logits, hidden = policy(torch.tensor([vocab.encode(p.tokens) for p in batch]))
    last = logits[:, -1]  # (N, V)
    responses: list[list[str]] = [[] for _ in batch]
    logprobs: list[list[float]] = [[] for _ in batch]
    done = [False] * len(batch)
    for _ in range(max_new_tokens):
        allowed = torch.stack([_grammar_row(vocab, tuple(r)) for r in responses])  # (N, V)
        logp = _masked_log_softmax(last, allowed, temperature)
        ids = torch.multinomial(logp.exp(), 1, generator=generator)  # (N, 1)
        chosen = logp.gather(1, ids).squeeze(1).tolist()
        for i, token_id in enumerate(ids.squeeze(1).tolist()):
            if not done[i]:
                responses[i].append(vocab.tokens[token_id])
                logprobs[i].append(chosen[i])
                done[i] = vocab.tokens[token_id] == EOS
        if all(done):
            break
        logits, hidden = policy(ids, hidden)
        last = logits[:, -1]
    return [(p, r, lp, r[-1] == EOS) for p, r, lp in zip(batch, responses, logprobs)]


def teacher_forced(policy: GRUPolicy, vocab: Vocab, prompts: list[ArithmeticPrompt], responses: list,
                   temperature: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Teacher-forced log-probabilities of N responses.

    Returns token_logprobs (N, T), log_dists (N, T, V) and mask (N, T) float 0/1.
    Real positions use the behaviour distribution (grammar + temperature). Positions
    after a response's end are padded with <eos> (pad = eos, as in many LLM tokenizers)
    and hold the model's log-probability of it WITHOUT the grammar: finite numbers
    that only the mask keeps out of a loss.
    """
    lengths = [len(r) for r in responses]
    width = max(lengths)
    rows, allowed = [], []
    everything = torch.ones(len(vocab), dtype=torch.bool)
    for prompt, response in zip(prompts, responses):
        rows.append(vocab.encode(prompt.tokens) + vocab.encode(list(response) + [EOS] * (width - len(response))))
        allowed.append(torch.stack([_grammar_row(vocab, tuple(response[:t])) if t < len(response) else everything
                                    for t in range(width)]))
    ids = torch.tensor(rows)  # (N, P + T)
    start = len(prompts[0].tokens) - 1
    logits, _ = policy(ids[:, :-1])
    log_dists = _masked_log_softmax(logits[:, start:], torch.stack(allowed), temperature)  # (N, T, V)
    token_logprobs = log_dists.gather(2, ids[:, start + 1:, None]).squeeze(2)
    mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).to(torch.float64)
    return token_logprobs, log_dists, mask


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
}


# ----------------------------------------------------------------------------- rollouts
@dataclass(frozen=True)
class Rollout:
    """One sampled response with its verifier components and behaviour log-probabilities."""

    prompt_id: str
    response_tokens: list[str]
    reward: float
    accuracy: int
    intermediate_consistent: int
    verifier_status: str
    terminated: bool
    generator_version: str
    old_logprobs: list[float]  # per token, behaviour distribution (mask + temperature)
    verifier_version: str = VERIFIER_VERSION


def collect_rollouts(policy: GRUPolicy, vocab: Vocab, prompts: list[ArithmeticPrompt], config: GRPOConfig, *,
                     generator: torch.Generator, generator_version: str):
    """Sample G = config.group_size responses for each of config.prompt_batch prompts.

    The prompts are drawn without replacement from ``prompts`` with ``generator``
    (all of them when prompt_batch >= len(prompts)). ``policy`` acts as the frozen
    old policy: nothing here tracks gradients. Returns (groups, discarded_fraction):
    a list of groups (lists of ``Rollout``), and the fraction of drawn groups dropped
    because all their rewards were equal (only with config.dynamic_sampling).
    """
    if not prompts:
        raise ValueError("prompts must not be empty")
    order = torch.randperm(len(prompts), generator=generator)[:config.prompt_batch].tolist()
    drawn = [prompts[i] for i in order]
    samples = sample_responses(policy, vocab, drawn, config.group_size, max_new_tokens=config.max_new_tokens,
                               temperature=config.temperature, generator=generator)
    groups, discarded = [], 0
    for start in range(0, len(samples), config.group_size):
        group = []
        for prompt, tokens, logprobs, terminated in samples[start:start + config.group_size]:
            verdict = verify_arithmetic(tokens, prompt)
            group.append(Rollout(prompt.prompt_id, list(tokens), verdict.reward, verdict.correctness,
                                 verdict.intermediate_consistent, verdict.status, bool(terminated),
                                 str(generator_version), [float(x) for x in logprobs]))
        if config.dynamic_sampling and len({row.reward for row in group}) == 1:
            discarded += 1
            continue
        groups.append(group)
    return groups, discarded / len(drawn)


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


# ============================================================================= exercise
def _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length):
    """Given validation for grpo_loss: ValueError naming the offending argument."""
    if new_logprobs.ndim != 2:
        raise ValueError(f"new_logprobs must be (N, T), got shape {tuple(new_logprobs.shape)}")
    for name, value in (("old_logprobs", old_logprobs), ("mask", mask)):
        if value.shape != new_logprobs.shape:
            raise ValueError(f"{name} must have shape {tuple(new_logprobs.shape)}, got {tuple(value.shape)}")
    if advantages.shape != new_logprobs.shape[:1]:
        raise ValueError(f"advantages must have shape ({new_logprobs.shape[0]},), got {tuple(advantages.shape)}")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    if not (0 <= eps_low < 1) or eps_high < 0:
        raise ValueError(f"eps_low must be in [0, 1) and eps_high >= 0, got {eps_low}, {eps_high}")
    longest = int((mask > 0).sum(dim=1).max()) if mask.numel() else 0
    if max_length is not None and max_length < longest:
        raise ValueError(f"max_length={max_length} is shorter than the longest response ({longest} tokens)")


def grpo_loss(new_logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor,
              mask: torch.Tensor, *, loss_type: str, eps_low: float, eps_high: float,
              max_length: int | None = None) -> torch.Tensor:
    """loss = -reduce over active tokens of min(rho*A, clip(rho, 1-eps_low, 1+eps_high)*A), rho = exp(new - old) (GRPO, DeepSeekMath 2024; Dr. GRPO 2025; DAPO 2025).

    The scalar to MINIMISE: the negative clipped surrogate objective, reduced as
    ``loss_type`` says (N responses, o_i = active tokens of response i):
      - "grpo":    mean over responses of the token-mean over that response's
                   active tokens: (1/N) sum_i (1/|o_i|) sum_t s_it;
      - "dr_grpo": sum over all active tokens divided by N * max_length;
      - "dapo":    sum over all active tokens divided by the number of active tokens.
    With all ratios 1, d loss / d new_logprobs[i, t] is minus the token weight of
    module_9_reference's original_grpo / dr_grpo / dapo token weights.

    Args:
        new_logprobs: (N, T) log-probabilities of the sampled tokens under the policy
            being trained (carries gradient).
        old_logprobs: (N, T) the same under the frozen old (behaviour) policy.
        advantages: (N,) one advantage per response, shared by its tokens.
        mask: (N, T) 1.0 for active response tokens, 0.0 for padding; masked
            positions must receive exactly zero gradient, whatever finite values they hold.
        loss_type: "grpo", "dr_grpo" or "dapo".
        eps_low, eps_high: clip range [1 - eps_low, 1 + eps_high] of the ratio.
        max_length: L for "dr_grpo" (the generation budget); None means T.

    Returns:
        A 0-dim tensor. A response with no active token contributes 0 (and, for
        "grpo", still counts in N).
    """
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    ### BEGIN SOLUTION
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    # where(), not multiplication: a masked position holding garbage (inf) must not leak NaN gradients
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))  # rho, (N, T)
    adv = advantages.to(new_logprobs.dtype)[:, None]  # (N,) -> (N, 1)
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    surrogate = torch.where(active, torch.minimum(ratio * adv, clipped * adv), zeros)  # (N, T)
    counts = active.sum(dim=1).to(new_logprobs.dtype)  # |o_i|
    if loss_type == "grpo":
        objective = (surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    elif loss_type == "dr_grpo":
        length = new_logprobs.shape[1] if max_length is None else max_length
        objective = surrogate.sum() / (new_logprobs.shape[0] * length)
    else:  # dapo
        objective = surrogate.sum() / counts.sum().clamp(min=1.0)
    loss = -objective
    ### END SOLUTION
    return loss


# ============================================================================= given: the experiment
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
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.warmup_learning_rate)
    for _ in range(config.warmup_steps):
        picks = torch.randint(len(pool), (config.warmup_batch,), generator=generator).tolist()
        prompts = [pool[i] for i in picks]
        logprobs, _, mask = teacher_forced(policy, vocab, prompts, [p.target_tokens for p in prompts], 1.0)
        loss = -(logprobs * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def grpo_update(policy: GRUPolicy, optimizer: torch.optim.Optimizer, vocab: Vocab, groups: list,
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
    """The pinned configuration of a profile ("smoke" or "full")."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    return replace(GRPOConfig(loss_type=loss_type, seed=seed, dynamic_sampling=True,
                              scale_rewards=loss_type != "dr_grpo"), **PROFILES[profile])


def run_toy_grpo_experiment(profile: str = "smoke", seed: int = 9, loss_type: str = "dapo", *,
                            loss_fn=None, progress: bool = False, formulas=None) -> dict:
    """Warm up, then train the GRU policy with clipped group-relative updates; evaluate before and after.

    ``profile`` is "smoke" (seconds) or "full" (a larger budget), or a ready
    ``GRPOConfig`` (then ``seed`` and ``loss_type`` are taken from it).
    ``loss_fn`` replaces ``grpo_loss`` (same signature): this is how your
    implementation is plugged in. ``progress=True`` shows a progress bar.
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
        return _run_experiment(config, grpo_loss if loss_fn is None else loss_fn, progress, formulas)
    finally:
        torch.set_num_threads(threads)


def _run_experiment(config: GRPOConfig, loss_fn, progress: bool, formulas) -> dict:
    vocab = Vocab()
    train, heldout = arithmetic_prompts(config.num_train_prompts, config.num_heldout_prompts, seed=config.seed)
    lookup = {p.prompt_id: p for p in train}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        policy = GRUPolicy(len(vocab), config.embed_dim, config.hidden_dim)
    pool = _warmup_pool(heldout, MAX_OPERAND)
    supervised_warmup(policy, vocab, pool, config, torch.Generator().manual_seed(config.seed))
    reference = copy.deepcopy(policy).requires_grad_(False)  # frozen reference for the KL
    eval_seed = config.seed + 2

    def evaluate(prompts):  # the current policy (trained in place) against the frozen reference
        return evaluate_policy(policy, reference, vocab, prompts, config, seed=eval_seed, formulas=formulas)

    before_train, before_by_prompt = evaluate(train)
    before_heldout, _ = evaluate(heldout)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate)
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
