"""The rows a capstone run trains and evaluates on, and their canonical hash.

Given code: the capstone student need not change it.

The tiny sets live in memory (single-digit sums, so the tiny tokenizer's
alphabet covers them). The course's sets come from the Hub through
``datasets`` (imported only when a real profile asks). Either way the
passport records ``sha256(canonical JSON of the rows)``, which the grader
recomputes for the tiny profiles.
"""

from __future__ import annotations

import hashlib
import json

from solutions.capstone.profiles import Profile

TINY_OPERANDS = range(5)  # a, b in 0..4: every sum is one digit


def tiny_arithmetic_rows() -> list[dict]:
    """GRPO rows: {"prompt": "a + b =", "solution": "a+b"} for a, b in 0..4 (25 rows)."""
    return [{"prompt": f"{a} + {b} =", "solution": str(a + b)} for a in TINY_OPERANDS for b in TINY_OPERANDS]


def tiny_preference_rows() -> list[dict]:
    """DPO rows: the right sum is chosen, the sum plus one (mod 10) rejected (25 rows)."""
    return [{"prompt": f"{a} + {b} =", "chosen": f" {a + b}", "rejected": f" {(a + b + 1) % 10}"}
            for a in TINY_OPERANDS for b in TINY_OPERANDS]


TINY_ROWS = {"kit:tiny-arithmetic": tiny_arithmetic_rows, "kit:tiny-preferences": tiny_preference_rows}


def canonical_hash(rows: list[dict]) -> str:
    """sha256 of the rows as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tiny_rows(profile: Profile) -> list[dict]:
    """The in-memory rows of a tiny profile; its eval set is its training set (a fit check)."""
    if profile.data.dataset not in TINY_ROWS:
        raise ValueError(f"profile {profile.name!r} has no in-memory data set")
    return TINY_ROWS[profile.data.dataset]()


def load_rows(profile: Profile) -> tuple[list[dict], list[dict]]:
    """(train rows, eval rows) for ``profile``; real profiles load from the Hub (may download)."""
    if profile.data.dataset.startswith("kit:"):
        return tiny_rows(profile), tiny_rows(profile)
    from datasets import load_dataset

    train = load_dataset(profile.data.dataset, split=profile.data.train_split)
    evaluation = load_dataset(profile.data.dataset, split=profile.data.eval_split)
    return [dict(row) for row in train], [dict(row) for row in evaluation]
