"""The toy DPO experiment of Module 8: preference pairs, a tiny GRU policy, two DPO regimes (PyTorch, CPU).

Pipeline: eight preference templates -> a vocabulary -> padded pair batches
-> an embedding -> GRU -> LM-head policy -> supervised warm-up on the chosen
responses, frozen as the reference pi_ref -> DPO against pi_ref in two regimes:
a moderate one and a high-pressure one (small beta, large steps, long run).
The high-pressure run keeps every pair "correct" (h > 0) while the chosen
responses lose likelihood and greedy generation drifts away from them.

``run_toy_dpo_experiment(config, loss_fn=..., logprob_fn=...)`` runs it with
the DPO loss and the sequence log-probability it is handed;
``module_8_training.run_toy_dpo_experiment`` hands it your ``dpo_loss`` and
``sequence_logprobs``. Axis glossary: B pairs, T tokens, V vocabulary.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from toy_optim import Adam


# ---------------------------------------------------------------------------
# GIVEN CODE -- data, model, training loops. You need not change anything in this file.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PreferenceExample:
    """One preference pair: a prompt, the chosen response y_w and the rejected one y_l (token tuples)."""

    prompt: tuple[str, ...]
    chosen: tuple[str, ...]
    rejected: tuple[str, ...]


def toy_preference_examples() -> list[PreferenceExample]:
    """Eight templates. Chosen and rejected share most tokens and differ in one content word;
    paired templates swap the roles of that word, so only the prompt tells which is preferred."""
    rows = [
        ("sky colour ?", "the sky is blue .", "the sky is green ."),
        ("grass colour ?", "the grass is green .", "the grass is blue ."),
        ("two plus two ?", "it is four .", "it is five ."),
        ("two plus three ?", "it is five .", "it is four ."),
        ("capital of france ?", "paris is the capital .", "rome is the capital ."),
        ("capital of italy ?", "rome is the capital .", "paris is the capital ."),
        ("is fire hot ?", "yes fire is hot .", "no fire is hot ."),
        ("is ice hot ?", "no ice is cold .", "yes ice is cold ."),
    ]
    return [PreferenceExample(tuple(p.split()), tuple(c.split()), tuple(r.split())) for p, c, r in rows]


SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>")
MARGIN_TOL = 1e-9  # nats: a smaller DPO margin is floating-point rounding, not a ranking


@dataclass(frozen=True)
class Vocabulary:
    """Token <-> id maps: the special tokens first (<pad>=0, <bos>=1, <eos>=2), then the rest sorted."""

    tokens: tuple[str, ...]

    @property
    def token_to_id(self) -> dict[str, int]:
        return {token: index for index, token in enumerate(self.tokens)}

    @property
    def pad_id(self) -> int:
        return 0

    @property
    def bos_id(self) -> int:
        return 1

    @property
    def eos_id(self) -> int:
        return 2

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens) -> list[int]:
        """Ids of ``tokens``; an unknown token raises KeyError naming it."""
        table = self.token_to_id
        missing = [t for t in tokens if t not in table]
        if missing:
            raise KeyError(f"unknown token(s) {missing} (not in the vocabulary)")
        return [table[t] for t in tokens]

    def decode(self, ids) -> list[str]:
        return [self.tokens[int(i)] for i in ids]


def build_vocabulary(examples) -> Vocabulary:
    """The vocabulary of every prompt, chosen and rejected token; deterministic (sorted)."""
    words = {t for ex in examples for part in (ex.prompt, ex.chosen, ex.rejected) for t in part}
    clash = words & set(SPECIAL_TOKENS)
    if clash:
        raise ValueError(f"examples use reserved tokens {sorted(clash)}")
    return Vocabulary(SPECIAL_TOKENS + tuple(sorted(words)))


def _encode_rows(vocab: Vocabulary, prompts, responses) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) ids ``<bos> prompt response <eos> <pad>...`` and the (B, T-1) shifted response mask."""
    rows = [[vocab.bos_id, *vocab.encode(p), *vocab.encode(r), vocab.eos_id] for p, r in zip(prompts, responses)]
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), vocab.pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width - 1), dtype=torch.bool)
    for i, (row, prompt) in enumerate(zip(rows, prompts)):
        ids[i, : len(row)] = torch.tensor(row)
        # target ids[:, t+1] sits at mask[:, t]: response tokens start at ids index 1 + len(prompt)
        mask[i, len(prompt): len(row) - 1] = True
    return ids, mask


def pair_batch(examples, vocab: Vocabulary) -> dict:
    """Padded pair tensors: ``chosen_ids``, ``rejected_ids`` (B, T) long, ``chosen_mask``,
    ``rejected_mask`` (B, T-1) bool aligned with the shifted targets ``ids[:, 1:]``
    (True on the response tokens and eos, so ``chosen_mask[i].sum() == len(chosen) + 1``)."""
    examples = list(examples)
    if not examples:
        raise ValueError("examples must not be empty")
    prompts = [ex.prompt for ex in examples]
    chosen_ids, chosen_mask = _encode_rows(vocab, prompts, [ex.chosen for ex in examples])
    rejected_ids, rejected_mask = _encode_rows(vocab, prompts, [ex.rejected for ex in examples])
    return {"chosen_ids": chosen_ids, "rejected_ids": rejected_ids,
            "chosen_mask": chosen_mask, "rejected_mask": rejected_mask}


class TinyPolicy(nn.Module):
    """Embedding -> one GRU layer -> LM head: logits (B, T, V) for ids (B, T)."""

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding_dim)
        self.gru = nn.GRU(embedding_dim, hidden_dim, batch_first=True)
        self.head = nn.Linear(hidden_dim, vocab_size)

    def forward(self, input_ids: torch.Tensor, state: torch.Tensor | None = None):
        hidden, state = self.gru(self.embed(input_ids), state)
        return self.head(hidden), state


@dataclass(frozen=True)
class ToyDPOConfig:
    """Budget of the toy experiment. Learning rates are Adam's."""

    embedding_dim: int = 16  # token embedding size
    hidden_dim: int = 32  # GRU state size
    sft_steps: int = 150  # supervised warm-up steps on the chosen responses (full batch)
    sft_learning_rate: float = 1e-2
    beta: float = 0.1  # moderate DPO: beta, typically 0.1
    learning_rate: float = 1e-3  # moderate DPO learning rate
    steps: int = 40  # moderate DPO updates
    stress_beta: float = 0.05  # high-pressure DPO: a small beta ...
    stress_learning_rate: float = 3e-2  # ... a large step ...
    stress_steps: int = 150  # ... and a long run
    label_smoothing: float = 0.0  # cDPO eps for both regimes


PROFILES = {
    "smoke": ToyDPOConfig(),
    "full": ToyDPOConfig(embedding_dim=24, hidden_dim=48, sft_steps=300, steps=60, learning_rate=5e-4, stress_steps=300),
    # the autograder's run and the public toy test's (about 0.15 s): a shorter warm-up and both regimes
    "check": ToyDPOConfig(sft_steps=40, steps=5, stress_steps=10),
}


def supervised_warmup(model: nn.Module, batch: dict, config: ToyDPOConfig, logprob_fn) -> list[float]:
    """Fit the chosen responses by masked next-token NLL; returns the loss per step.

    The NLL per token is minus ``logprob_fn``'s sequence log-probability (the run's:
    your ``sequence_logprobs``) summed over the batch, divided by the number of masked tokens.
    """
    optimiser = Adam(model.parameters(), lr=config.sft_learning_rate)
    ids, mask = batch["chosen_ids"], batch["chosen_mask"]
    losses = []
    for _ in range(config.sft_steps):
        logits, _ = model(ids)
        loss = -logprob_fn(logits, ids, mask).sum() / mask.sum()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


def teacher_forced_token_kl(policy: nn.Module, reference: nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean over sequences of sum_t KL(pi(.|y_<t) || pi_ref(.|y_<t)) on the masked positions, exact over V."""
    with torch.no_grad():
        log_p = F.log_softmax(policy(ids)[0][:, :-1], dim=-1)  # (B, T-1, V)
        log_q = F.log_softmax(reference(ids)[0][:, :-1], dim=-1)
        kl = (log_p.exp() * (log_p - log_q)).sum(-1)  # (B, T-1)
        return float((kl * mask).sum(-1).mean())


def greedy_generate(model: nn.Module, vocab: Vocabulary, prompt, max_new_tokens: int) -> tuple[str, ...]:
    """Argmax decoding after ``<bos> prompt`` until ``<eos>`` or ``max_new_tokens``."""
    with torch.no_grad():
        ids = torch.tensor([[vocab.bos_id, *vocab.encode(prompt)]])
        logits, state = model(ids)
        out: list[str] = []
        for _ in range(max_new_tokens):
            next_id = int(logits[0, -1].argmax())
            if next_id == vocab.eos_id:
                break
            out.append(vocab.tokens[next_id])
            logits, state = model(torch.tensor([[next_id]]), state)
    return tuple(out)


def generation_match(model: nn.Module, vocab: Vocabulary, examples) -> tuple[float, list[dict]]:
    """Fraction of templates whose greedy generation equals the chosen response, and the generations."""
    rows = []
    for ex in examples:
        generated = greedy_generate(model, vocab, ex.prompt, max_new_tokens=len(ex.chosen) + 3)
        rows.append({"prompt": " ".join(ex.prompt), "chosen": " ".join(ex.chosen),
                     "generated": " ".join(generated)})
    return sum(r["chosen"] == r["generated"] for r in rows) / len(rows), rows


def _sequence_pair_logps(model, batch, logprob_fn):
    chosen = logprob_fn(model(batch["chosen_ids"])[0], batch["chosen_ids"], batch["chosen_mask"])
    rejected = logprob_fn(model(batch["rejected_ids"])[0], batch["rejected_ids"], batch["rejected_mask"])
    return chosen, rejected


def train_dpo(policy, reference_logps, batch, *, beta, learning_rate, steps, label_smoothing,
              loss_fn, logprob_fn) -> list[dict]:
    """Full-batch DPO with Adam; history row ``step`` holds the metrics after ``step`` updates."""
    optimiser = Adam(policy.parameters(), lr=learning_rate)
    ref_chosen, ref_rejected = reference_logps
    history = []
    for step in range(steps + 1):
        chosen, rejected = _sequence_pair_logps(policy, batch, logprob_fn)
        loss, _, _ = loss_fn(chosen, rejected, ref_chosen, ref_rejected, beta=beta, label_smoothing=label_smoothing)
        with torch.no_grad():
            margin = (chosen - ref_chosen) - (rejected - ref_rejected)  # h, (B,)
            # a pair counts as ranked right when its margin is above MARGIN_TOL: at step 0 the policy IS the
            # reference, and margins of 1e-17 nats are rounding (which CPUs differ in), not a preference
            history.append({"step": step, "loss": loss.item(),
                            "pair_accuracy": (margin > MARGIN_TOL).double().mean().item(),
                            "mean_margin": margin.mean().item(), "mean_chosen_logp": chosen.mean().item(),
                            "mean_rejected_logp": rejected.mean().item()})
        if step == steps:
            break
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return history


def _metrics(row: dict) -> dict:
    return {key: value for key, value in row.items() if key != "step"}


def check_metrics(out: dict) -> dict:
    """What the autograder compares after a "check" run (its toy checks and the public toy test): the two
    generation matches, then per stage (before, after, stress) the loss, pair accuracy, mean margin and
    mean log-likelihoods."""
    metrics = {"policy_generation_match": out["policy_generation_match"],
               "stress_generation_match": out["stress_generation_match"]}
    for part in ("before", "after", "stress"):
        for key in ("loss", "pair_accuracy", "mean_margin", "mean_chosen_logp", "mean_rejected_logp"):
            metrics[f"{part}_{key}"] = out[part][key]
    return metrics


def run_toy_dpo_experiment(profile="smoke", seed: int = 7, *, loss_fn, logprob_fn, progress: bool = False) -> dict:
    """Warm up a reference, then run moderate and high-pressure DPO from it; see the module docstring.

    Args:
        profile: "smoke", "full", "check" (the autograder's short run) or a ``ToyDPOConfig``.
        seed: torch seed of the initial weights (the caller's RNG state is restored afterwards).
        loss_fn, logprob_fn: the DPO loss and the sequence log-probability, with the signatures of
            ``module_8_training.dpo_loss`` / ``sequence_logprobs`` (which
            ``module_8_training.run_toy_dpo_experiment`` passes: yours).
        progress: print one line per phase.
    Returns:
        dict: "before" (the reference), "after" (moderate), "stress" (high pressure), each with
        loss, pair_accuracy, mean_margin (h in nats), mean_chosen_logp, mean_rejected_logp;
        the three *_generation_match fractions; "history" and "stress_history"; the moderate
        policy's "teacher_forced_kl_chosen"/"_rejected"; and "stress_generations".
    """
    config = PROFILES.get(profile) if isinstance(profile, str) else profile
    if not isinstance(config, ToyDPOConfig):
        raise ValueError(f"profile must be one of {sorted(PROFILES)} or a ToyDPOConfig, got {profile!r}")
    examples = toy_preference_examples()
    vocab = build_vocabulary(examples)
    batch = pair_batch(examples, vocab)
    say = print if progress else (lambda *_: None)
    threads = torch.get_num_threads()
    # One thread: the tensors are tiny, so extra threads only add synchronisation (and spin badly on a
    # busy machine); it also makes the numbers independent of the caller's thread count.
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return _run(config, vocab, examples, batch, loss_fn, logprob_fn, say)
    finally:
        torch.set_num_threads(threads)


def _run(config: ToyDPOConfig, vocab: Vocabulary, examples, batch: dict, loss_fn, logprob_fn, say) -> dict:
    """The experiment proper: warm-up, both DPO regimes, evaluation (seeded by the caller)."""
    reference = TinyPolicy(len(vocab), config.embedding_dim, config.hidden_dim).double()
    sft_losses = supervised_warmup(reference, batch, config, logprob_fn)
    say(f"supervised warm-up: loss {sft_losses[0]:.3f} -> {sft_losses[-1]:.3f}")
    reference.requires_grad_(False)
    with torch.no_grad():
        reference_logps = _sequence_pair_logps(reference, batch, logprob_fn)
    runs = {}
    for name, beta, lr, steps in (("moderate", config.beta, config.learning_rate, config.steps),
                                  ("stress", config.stress_beta, config.stress_learning_rate, config.stress_steps)):
        policy = copy.deepcopy(reference).requires_grad_(True)
        history = train_dpo(policy, reference_logps, batch, beta=beta, learning_rate=lr, steps=steps,
                            label_smoothing=config.label_smoothing, loss_fn=loss_fn, logprob_fn=logprob_fn)
        runs[name] = (policy, history)
        say(f"{name} DPO: loss {history[0]['loss']:.3f} -> {history[-1]['loss']:.3f}")
    (policy, history), (stressed, stress_history) = runs["moderate"], runs["stress"]
    reference_match, _ = generation_match(reference, vocab, examples)
    policy_match, _ = generation_match(policy, vocab, examples)
    stress_match, stress_generations = generation_match(stressed, vocab, examples)
    return {
        "before": _metrics(history[0]), "after": _metrics(history[-1]), "stress": _metrics(stress_history[-1]),
        "reference_generation_match": reference_match, "policy_generation_match": policy_match,
        "stress_generation_match": stress_match, "history": history, "stress_history": stress_history,
        "teacher_forced_kl_chosen": teacher_forced_token_kl(policy, reference, batch["chosen_ids"], batch["chosen_mask"]),
        "teacher_forced_kl_rejected": teacher_forced_token_kl(policy, reference, batch["rejected_ids"],
                                                              batch["rejected_mask"]),
        "stress_generations": stress_generations,
    }
