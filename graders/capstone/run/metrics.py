"""Metrics measured on a fixed eval set before and after training.

Given code: the capstone student need not change it.

GRPO: greedy completions of the eval prompts, scored by the same verifier
reward the trainer used: ``greedy_accuracy`` = mean reward over the prompts
whose solution the verifier can read.
DPO: sequence log-probabilities log pi(y|x) = sum_t log pi(y_t | x, y_<t) of
the chosen and rejected answers under the current policy (Module 8's table):
``pair_accuracy`` = fraction with log pi(chosen) > log pi(rejected),
``mean_margin`` = mean of their difference.
"""

from __future__ import annotations

import math


def _prompt_ids(tokenizer, prompt, template_kwargs: dict | None = None) -> list[int]:
    """Token ids of a prompt: plain text as is; a conversation through the chat template (as TRL renders it)."""
    if isinstance(prompt, list):  # conversational rows (the course's data sets)
        text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True,
                                             **(template_kwargs or {}))
        return tokenizer(text, add_special_tokens=False)["input_ids"]
    return tokenizer(prompt, add_special_tokens=False)["input_ids"]


def greedy_metrics(model, tokenizer, rows: list[dict], reward_function, max_new_tokens: int,
                   template_kwargs: dict | None = None) -> dict:
    """Greedy completions of rows' prompts.

    greedy_accuracy = mean reward over the prompts whose solution the verifier reads;
    mean_completion_length = mean new tokens; truncated_fraction = fraction of
    completions that used all ``max_new_tokens`` without an end-of-sequence token
    (what ``mask_truncated_completions`` would mask); scored, prompts = counts.
    ``template_kwargs`` (e.g. ``{"enable_thinking": False}``) go to the chat template.
    """
    import torch

    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    rewards, lengths, truncated = [], [], []
    with torch.no_grad():
        for row in rows:
            ids = torch.tensor([_prompt_ids(tokenizer, row["prompt"], template_kwargs)], device=device)
            output = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                    max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id,
                                    eos_token_id=tokenizer.eos_token_id)
            new_tokens = output[0, ids.shape[1]:]
            lengths.append(int(new_tokens.shape[0]))
            truncated.append(len(new_tokens) >= max_new_tokens and tokenizer.eos_token_id not in new_tokens.tolist())
            text = tokenizer.decode(new_tokens, skip_special_tokens=True)
            completion = [{"role": "assistant", "content": text}] if isinstance(row["prompt"], list) else text
            rewards.extend(reward_function(prompts=[row["prompt"]], completions=[completion],
                                           solution=[row["solution"]]))
    model.train(was_training)
    scored = [reward for reward in rewards if reward is not None]
    return {
        "greedy_accuracy": sum(scored) / len(scored) if scored else math.nan,
        "mean_completion_length": sum(lengths) / len(lengths) if lengths else math.nan,
        "truncated_fraction": sum(truncated) / len(truncated) if truncated else math.nan,
        "scored": len(scored),
        "prompts": len(rows),
    }


def _sequence_logp(model, prompt_ids: list[int], answer_ids: list[int]) -> float:
    """log pi(answer | prompt): the sum of the answer tokens' log-probabilities."""
    import torch

    device = next(model.parameters()).device
    ids = torch.tensor([list(prompt_ids) + list(answer_ids)], device=device)
    # logits only where they predict an answer token (positions P-1 .. T-2): the vocabulary projection of
    # the prompt's positions is the most expensive part of the forward pass and is never read
    logits = model(input_ids=ids, logits_to_keep=len(answer_ids) + 1).logits[0, :-1].float()  # (T_answer, V)
    logprobs = torch.log_softmax(logits, dim=-1)
    return float(logprobs.gather(1, ids[0, len(prompt_ids):, None]).sum())


def preference_metrics(model, tokenized_rows) -> dict:
    """pair_accuracy, mean_margin, mean_chosen_logp, mean_rejected_logp over rows with
    prompt_ids / chosen_ids / rejected_ids (as DPOTrainer tokenizes them)."""
    import torch

    was_training = model.training
    model.eval()
    chosen, rejected = [], []
    with torch.no_grad():
        for row in tokenized_rows:
            chosen.append(_sequence_logp(model, row["prompt_ids"], row["chosen_ids"]))
            rejected.append(_sequence_logp(model, row["prompt_ids"], row["rejected_ids"]))
    model.train(was_training)
    count = len(chosen)
    if count == 0:
        return {"pair_accuracy": math.nan, "mean_margin": math.nan, "mean_chosen_logp": math.nan,
                "mean_rejected_logp": math.nan, "pairs": 0}
    return {
        "pair_accuracy": sum(c > r for c, r in zip(chosen, rejected)) / count,
        "mean_margin": sum(c - r for c, r in zip(chosen, rejected)) / count,
        "mean_chosen_logp": sum(chosen) / count,
        "mean_rejected_logp": sum(rejected) / count,
        "pairs": count,
    }

