"""The toy task, policy and rollouts of Module 9's GRPO exercise: arithmetic, a grammar, a verifier, a GRU.

A genuine (if small) language model -- embedding -> GRU -> LM head -- reads a
prompt such as ``<bos> 3 + 4 + 5 =`` and writes its answer token by token
under a constrained grammar, ``NUMBER ; NUMBER <eos>``: first the
intermediate sum a + b, then the final sum a + b + c (``7 ; 1 2 <eos>``). A
versioned verifier scores each response with separate components
(correctness, intermediate consistency, format status, total reward).
``sample_responses`` generates under the behaviour distribution (grammar mask,
then temperature), ``teacher_forced`` scores given responses under it, and
``collect_rollouts`` samples a batch of groups and records each response's
verdict and behaviour log-probabilities.

The training loop is ``grpo_toy.py``; the exercise, ``grpo_loss``, is in
``module_9_training.py``.
Axes: N responses, G per group, T response tokens, V vocabulary, P prompt tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Protocol

import numpy as np
import torch
from torch import nn

# =============================================================================
# GIVEN CODE -- you need not change anything in this file.
# =============================================================================


class RolloutConfig(Protocol):
    """The five knobs ``collect_rollouts`` reads: ``grpo_toy.GRPOConfig`` has them (this file imports no loop)."""

    group_size: int
    prompt_batch: int
    max_new_tokens: int
    temperature: float
    dynamic_sampling: bool

DIGITS = tuple(str(d) for d in range(10))
BOS, EOS, PAD, SEP = "<bos>", "<eos>", "<pad>", ";"
MAX_DIGITS = 3  # the grammar allows NUMBERs of 1-3 digits, without leading zeros
MAX_OPERAND = 9  # operands are single digits 0..9
VERIFIER_VERSION = "toy-arithmetic-verifier/1.0"


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


def warmup_pool(heldout: list[ArithmeticPrompt], max_operand: int) -> list[ArithmeticPrompt]:
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


def collect_rollouts(policy: GRUPolicy, vocab: Vocab, prompts: list[ArithmeticPrompt], config: RolloutConfig, *,
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

