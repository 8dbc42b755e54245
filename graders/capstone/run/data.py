"""The rows a capstone run trains and evaluates on, and their canonical hash.

Given code: the capstone student need not change it.

The tiny sets live in memory (digits, so the tiny tokenizer's alphabet
covers them). The course's sets come from a folder ``--data-dir DIR``
holding ``DIR/train.jsonl`` and ``DIR/test.jsonl`` (the Hub's columns, one
JSON row per line; the profile's split slices apply), from a Hub snapshot in
the Hugging Face cache (its files read directly, offline), or from the Hub
through ``datasets`` (imported only then); :mod:`graders.capstone.run.hub_data`
decides which, for ``preflight`` too.

GRPO rows go through :func:`prepare_math_rows`: a reference math-verify
cannot parse is dropped, and the kept fraction and the share of numeric
references (those the learner's verifier decides) are recorded. The passport records
``sha256(canonical JSON of the rows)`` of the rows actually used, which the
grader recomputes for the tiny profiles.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from graders.capstone.run.hub_data import DataLocation, hub_cache_dir, locate_data, read_snapshot_split, split_name
from graders.capstone.run.latex import parse_answer
from graders.capstone.run.profiles import CapstoneError, Profile

TINY_HELD_OUT = 20  # of the 100 pairs "a b =", the last 20 of a fixed shuffle are never trained on


def tiny_digit_pairs() -> list[tuple[int, int]]:
    """The 100 pairs (a, b) of digits in a fixed order (random.Random(0).shuffle): 80 train, then 20 held out."""
    import random

    pairs = [(a, b) for a in range(10) for b in range(10)]
    random.Random(0).shuffle(pairs)
    return pairs


def tiny_second_digit_rows(split: str = "train") -> list[dict]:
    """GRPO rows {"prompt": "a b =", "solution": "b"}: the 80 training pairs, or the 20 held-out ones."""
    pairs = tiny_digit_pairs()
    chosen = pairs[:-TINY_HELD_OUT] if split == "train" else pairs[-TINY_HELD_OUT:]
    return [{"prompt": f"{a} {b} =", "solution": str(b)} for a, b in chosen]


TINY_PREFERENCE_ODDS = 3  # each training pair is shown 3 times as (b over a) and once as (a over b): p = 3/4


def tiny_preference_rows(split: str = "train") -> list[dict]:
    """DPO rows on the prompts "a b =" (a != b): the second digit " b" is preferred to the first " a".

    Training: the 71 pairs of :func:`tiny_digit_pairs`' first 80 with a != b, each as
    TINY_PREFERENCE_ODDS rows {"chosen": " b", "rejected": " a"} and one row the other way round
    (284 rows, shuffled with random.Random(0)): a preference of probability p = 3/4, so the DPO loss at
    beta is lowest at the margin h* = log(p / (1 - p)) / beta = log 3 / 0.1 ~ 11 nats (Bradley-Terry;
    the KL-regularised optimum of Module 8), while a loss without beta stops at log 3 ~ 1.1 and a
    sign-flipped one drives h below 0. Eval: the 19 held-out pairs (the last TINY_HELD_OUT) with a != b, as (b over a): never
    trained on, so the measured margin is the rule learned, not the rows memorised.
    """
    import random

    pairs = tiny_digit_pairs()
    held_out = pairs[-TINY_HELD_OUT:]
    if split != "train":
        return [{"prompt": f"{a} {b} =", "chosen": f" {b}", "rejected": f" {a}"} for a, b in held_out if a != b]
    rows = []
    for a, b in pairs[:-TINY_HELD_OUT]:
        if a == b:
            continue
        rows += [{"prompt": f"{a} {b} =", "chosen": f" {b}", "rejected": f" {a}"}] * TINY_PREFERENCE_ODDS
        rows.append({"prompt": f"{a} {b} =", "chosen": f" {a}", "rejected": f" {b}"})
    random.Random(0).shuffle(rows)
    return rows


# data set -> (train rows, eval rows) builders
TINY_ROWS = {"kit:tiny-second-digit": (tiny_second_digit_rows, lambda: tiny_second_digit_rows("eval")),
             "kit:tiny-second-digit-preferences": (tiny_preference_rows, lambda: tiny_preference_rows("eval"))}


def canonical_hash(rows: list[dict]) -> str:
    """sha256 of the rows as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tiny_rows(profile: Profile) -> list[dict]:
    """The in-memory training rows of a tiny profile."""
    if profile.data.dataset not in TINY_ROWS:
        raise ValueError(f"profile {profile.name!r} has no in-memory data set")
    return TINY_ROWS[profile.data.dataset][0]()


def tiny_eval_rows(profile: Profile) -> list[dict]:
    """The eval rows of a tiny profile: the held-out pairs (GRPO: prompts; DPO: preference pairs)."""
    if profile.data.dataset not in TINY_ROWS:
        raise ValueError(f"profile {profile.name!r} has no in-memory data set")
    return TINY_ROWS[profile.data.dataset][1]()


BOX_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."  # Qwen's math prompt


def with_box_instruction(prompt):
    """A conversational prompt whose last user message asks for a boxed answer (unless some message already
    mentions ``boxed``); a plain-text prompt the same way. The verifier reads the last box first."""
    if isinstance(prompt, str):
        return prompt if "boxed" in prompt else f"{prompt}\n\n{BOX_INSTRUCTION}"
    if any("boxed" in str(message.get("content", "")) for message in prompt):
        return prompt
    last_user = max(index for index, message in enumerate(prompt) if message.get("role") == "user")
    return [{**message, "content": f"{message['content']}\n\n{BOX_INSTRUCTION}"} if index == last_user else message
            for index, message in enumerate(prompt)]


def prepare_math_rows(rows: list[dict]) -> tuple[list[dict], dict]:
    """(kept rows, report): rows whose ``solution`` math-verify can parse (:func:`parse_answer`), with the prompt
    asking for a boxed answer (:func:`with_box_instruction`); ``solution`` is kept as written (the reward
    parses it).

    report = {"rows": n, "kept": k, "kept_fraction": k / n, "dropped_examples": up to 5 dropped references,
    "verifier_decided": kept rows whose reference is a number (the learner's verifier compares them),
    "verifier_fraction": verifier_decided / k}. Every other column is kept as it was.
    """
    kept, dropped, numeric = [], [], 0
    for row in rows:
        answer = parse_answer(str(row.get("solution", "")))
        if answer is None:
            dropped.append(str(row.get("solution", "")))
            continue
        numeric += answer.number is not None
        kept.append({**row, "prompt": with_box_instruction(row["prompt"])})
    total = len(rows)
    return kept, {"rows": total, "kept": len(kept), "kept_fraction": len(kept) / total if total else 0.0,
                  "dropped_examples": dropped[:5], "verifier_decided": numeric,
                  "verifier_fraction": numeric / len(kept) if kept else 0.0}


def missing_data_error(location: DataLocation, profile: Profile) -> CapstoneError:
    """The error (with its fix) of a data set that is not where the run may read it."""
    if location.kind == "data_dir":
        name = location.missing[0]
        split = next(s for s in (profile.data.train_split, profile.data.eval_split) if split_name(s) == name)
        return CapstoneError("error_data_dir", data_dir=location.where, name=name, split=split,
                             dataset=profile.data.dataset)
    names = [split_name(profile.data.train_split), split_name(profile.data.eval_split)]
    files = ", ".join(f"{name}.jsonl" for name in dict.fromkeys(names))
    if location.where:
        return CapstoneError("preflight_data_incomplete", where=location.where, dataset=profile.data.dataset,
                             missing=", ".join(location.missing), files=files)
    return CapstoneError("preflight_data_missing", dataset=profile.data.dataset, cache=hub_cache_dir(), files=files)


def _load_split(profile: Profile, split: str, location: DataLocation) -> list[dict]:
    """The rows of ``split`` ("train[:128]"): a snapshot's files read directly, DATA_DIR/<name>.jsonl, or the Hub."""
    if location.kind == "snapshot":
        return read_snapshot_split(location, split)
    from datasets import load_dataset

    if location.kind == "data_dir":
        path = location.files[split_name(split)][0]
        return [dict(row) for row in load_dataset("json", data_files={split_name(split): path}, split=split)]
    return [dict(row) for row in load_dataset(profile.data.dataset, split=split)]


def load_rows(profile: Profile, data_dir: Path | None = None) -> tuple[list[dict], list[dict], dict | None]:
    """(train rows, eval rows, filter report or None) for ``profile``.

    Tiny profiles: the in-memory rows. Real profiles: ``data_dir``, the Hub cache's snapshot, or the Hub
    (:func:`graders.capstone.run.hub_data.locate_data`; CapstoneError with the fix when offline and absent);
    GRPO rows are filtered by :func:`prepare_math_rows`
    (the report covers the training rows; eval rows are filtered the same way).
    """
    if profile.data.dataset.startswith("kit:"):
        return tiny_rows(profile), tiny_eval_rows(profile), None
    location = locate_data(profile, data_dir)  # the same answer preflight prints
    if location.kind == "missing" or location.missing and location.kind == "data_dir":
        raise missing_data_error(location, profile)
    train = _load_split(profile, profile.data.train_split, location)
    evaluation = _load_split(profile, profile.data.eval_split, location)
    if profile.algorithm != "grpo":
        return train, evaluation, None
    train, report = prepare_math_rows(train)
    evaluation, eval_report = prepare_math_rows(evaluation)
    if not train or not evaluation:
        raise CapstoneError("error_no_rows", dataset=profile.data.dataset, kept=report["kept"], rows=report["rows"],
                            eval_kept=eval_report["kept"], eval_rows=eval_report["rows"],
                            examples=report["dropped_examples"])
    return train, evaluation, {"train": report, "eval": eval_report}
