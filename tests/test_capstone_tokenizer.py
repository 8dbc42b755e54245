"""The real Qwen tokenizer built offline from a tiktoken rank file (graders/capstone/run/local_qwen.py,
``--tiktoken``), checked against tiktoken's own algorithm written out here: a synthetic rank file whose merges
must come out in rank order and split the tiktoken way, and (when RL4LLM_QWEN_TIKTOKEN names Qwen's
``qwen.tiktoken``, e.g. from ``pip download dashscope --no-deps``) the real file against known Qwen3 ids."""

from __future__ import annotations

import base64
import os
import random
import unicodedata
from pathlib import Path

import pytest
import regex

from graders import settings
from graders.capstone.run.local_qwen import (QWEN3_SPECIALS, QWEN_SPLIT, qwen3_style_tokenizer,
                                             qwen3_tokenizer_from_tiktoken, read_tiktoken)

# slow: the capstone's tooling; the module's fixture builds a tokenizer with transformers (about 2 s a worker). Not a
# risk of everyday changes (exercises, checks, hints, texts, docs).
pytestmark = pytest.mark.slow

# Merged tokens of the synthetic file, by rank (the 256 single bytes take ranks 0..255 in a shuffled order).
# Each is chosen so that a wrong derivation of the merges changes some encoding below:
MERGED = [
    b"bc", b"ab", b"abc",  # abc = a + bc (bc ranks before ab), not ab + c
    b" t", b"he", b" the",
    b"aa", b"aaaa",
    b"yz", b"xy", b"xyz",  # xyz = x + yz
    b"12",  # never used: Qwen's split isolates each digit
    "л".encode(), "о".encode(), "ло".encode(),  # multi-byte characters
    b"\\f", b"ra", b"rac", b"\\frac",  # \frac = \f + rac
    b"pq", b"qr", b"pqr",  # pqr = pq + r, not the leftmost split p + qr
    b"no", b"mn", b"op", b"nop", b"mnop",  # mnop = m + nop, though mn + op ranks lower: tiktoken merges no first
    b"\n\n", "é".encode(),
]
STRINGS = [
    "abc", "abcabc", "ab bc abc", "zabcx", "aabc", "a", "aaaaaaa", "aaaa", " the the", "the", "xyzxy", "xyz",
    "12 123", "ло", "лол", "Поло", "\\frac{1}{2}", "\\dfrac12", "\n\n\n", "x\n\ny", "e\u0301cole", "école",
    "pqr", "pqrs", "mnop", "mnopqr", "I'm here", "  spaced   out  ", "<|im_start|>abc<|im_end|>", "<think>\nabc\n</think>\n\n", "",
]
SPECIAL_SPLIT = regex.compile("(" + "|".join(regex.escape(token) for token in QWEN3_SPECIALS) + ")")
WORD_SPLIT = regex.compile(QWEN_SPLIT)


def _reference_encode(ranks: dict[bytes, int], text: str) -> list[int]:
    """tiktoken's encoding, written out: special tokens whole; else NFC, Qwen's split, and per piece the
    piece's rank if it is a token, else merge the adjacent pair of lowest joined rank (leftmost) while any is."""
    ids = []
    for chunk in SPECIAL_SPLIT.split(text):
        if chunk in QWEN3_SPECIALS:
            ids.append(QWEN3_SPECIALS[chunk])
            continue
        for piece in WORD_SPLIT.findall(unicodedata.normalize("NFC", chunk)):
            piece = piece.encode("utf-8")
            parts = [piece] if piece in ranks else [bytes([byte]) for byte in piece]
            while True:
                joined = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1)
                          if parts[i] + parts[i + 1] in ranks]
                if not joined:
                    break
                _, i = min(joined)
                parts[i:i + 2] = [parts[i] + parts[i + 1]]
            ids.extend(ranks[part] for part in parts)
    return ids


def _write_tiktoken(path: Path, ranks: dict[bytes, int], seed: int = 0) -> Path:
    lines = [f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items()]
    random.Random(seed).shuffle(lines)  # the file's line order must not matter, only the ranks
    path.write_text("".join(lines), encoding="ascii")
    return path


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    singles = list(range(256))
    random.Random(1).shuffle(singles)
    ranks = {bytes([byte]): rank for rank, byte in enumerate(singles)}
    ranks.update({token: 256 + index for index, token in enumerate(MERGED)})
    path = _write_tiktoken(tmp_path_factory.mktemp("tiktoken") / "synthetic.tiktoken", ranks)
    return ranks, path, qwen3_tokenizer_from_tiktoken(path)


@pytest.mark.parametrize("text", STRINGS)
def test_encodings_equal_tiktoken_rank_bpe(synthetic, text):
    ranks, _, tokenizer = synthetic
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids == _reference_encode(ranks, text)
    assert tokenizer.decode(ids) == unicodedata.normalize("NFC", text)


def test_the_merges_are_used_and_split_the_tiktoken_way(synthetic):
    ranks, _, tokenizer = synthetic
    encode = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    assert encode("abc") == [ranks[b"abc"]] and encode("xyzxy") == [ranks[b"xyz"], ranks[b"xy"]]
    assert encode(" the") == [ranks[b" the"]] and encode("\\frac") == [ranks[b"\\frac"]]
    assert encode("ло") == [ranks["ло".encode()]] and encode("e\u0301") == [ranks["é".encode()]]  # NFC
    assert encode("pqr") == [ranks[b"pqr"]] and encode("mnop") == [ranks[b"mnop"]]
    assert encode("12") == [ranks[b"1"], ranks[b"2"]]  # digits one by one, as Qwen splits them


def test_random_strings_over_the_merged_alphabet(synthetic):
    ranks, _, tokenizer = synthetic
    rng = random.Random(2)
    alphabet = "abcxyz the12\\frac лоé\n' mnopqr"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        assert tokenizer(text, add_special_tokens=False)["input_ids"] == _reference_encode(ranks, text), text


def test_special_tokens_sit_at_qwen3_ids_with_qwen3_flags(synthetic):
    _, _, tokenizer = synthetic
    assert all(tokenizer.convert_tokens_to_ids(token) == index for token, index in QWEN3_SPECIALS.items())
    assert tokenizer.eos_token_id == 151645 and tokenizer.pad_token_id == 151643
    ids = tokenizer("<think>\nabc\n</think>\n\nabc<|im_end|>", add_special_tokens=False)["input_ids"]
    assert ids[0] == 151667 and 151668 in ids and ids[-1] == 151645
    # Qwen3 flags <|endoftext|>..<|video_pad|> special; <think>, <tool_call>, ... are text to decode()
    assert tokenizer.decode(ids, skip_special_tokens=True) == "<think>\nabc\n</think>\n\nabc"
    assert tokenizer.decode([151667, 151645], skip_special_tokens=True) == "<think>"


def test_the_chat_template_renders_qwen3_prompts(synthetic):
    _, _, tokenizer = synthetic
    messages = [{"role": "user", "content": "Compute \\frac{1}{2} + abc."}]
    direct = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                           enable_thinking=False)
    assert direct == ("<|im_start|>user\nCompute \\frac{1}{2} + abc.<|im_end|>\n"
                      "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    ids = tokenizer(direct, add_special_tokens=False)["input_ids"]
    assert ids[0] == QWEN3_SPECIALS["<|im_start|>"] and tokenizer.decode(ids) == direct


def test_auto_tokenizer_loads_the_saved_folder(synthetic, tmp_path):
    from transformers import AutoTokenizer

    ranks, _, tokenizer = synthetic
    tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    for text in STRINGS:
        assert loaded(text, add_special_tokens=False)["input_ids"] == _reference_encode(ranks, text)
    assert loaded.chat_template == tokenizer.chat_template
    assert loaded.convert_tokens_to_ids("</think>") == 151668


def test_the_byte_tokenizer_flags_specials_as_qwen3():
    tokenizer = qwen3_style_tokenizer()
    assert tokenizer.decode([151667, 151645, 151668], skip_special_tokens=True) == "<think></think>"


@pytest.mark.parametrize("ranks, message", [
    ({bytes([byte]): byte for byte in range(255)}, "not every single byte"),
    ({**{bytes([byte]): byte for byte in range(256)}, b"ab": 257}, "not 0..256"),
    ({**{bytes([byte]): byte for byte in range(256)}, b"abc": 256}, "not the merge of two"),
])
def test_malformed_rank_files_are_refused(tmp_path, ranks, message):
    path = _write_tiktoken(tmp_path / "bad.tiktoken", ranks)
    with pytest.raises(ValueError, match=message):
        qwen3_tokenizer_from_tiktoken(path)
    if message != "not the merge of two":
        with pytest.raises(ValueError):
            read_tiktoken(path)


# Qwen3-0.6B's ids (llama.cpp and transformers fixtures of Qwen2/2.5/3, which share this vocabulary).
KNOWN_QWEN_IDS = {
    "Hello, world! 123": [9707, 11, 1879, 0, 220, 16, 17, 18],
    "the cat sat on the mat": [1782, 8251, 7578, 389, 279, 5517],
    "こんにちは世界": [89015, 99489],
    'def main():\n    print("hi")': [750, 1887, 3932, 262, 1173, 445, 6023, 899],
    "How many r in strawberry.": [4340, 1657, 435, 304, 72600, 13],
    "您好, 请从 1 数到 10000000.": [111308, 11, 220, 14880, 45181, 220, 16, 47685, 26939, 220, 16, 15, 15, 15, 15,
                                 15, 15, 15, 13],
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n":
        [151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198, 151644, 872, 198],
    "<|im_start|>assistant\n<think>\n\n</think>\n\n": [151644, 77091, 198, 151667, 271, 151668, 271],
}


@pytest.mark.skipif(not settings.get("RL4LLM_QWEN_TIKTOKEN"),
                    reason="set RL4LLM_QWEN_TIKTOKEN to Qwen's qwen.tiktoken (pip download dashscope --no-deps)")
def test_the_real_qwen_tiktoken_gives_qwen3_ids(tmp_path):
    from transformers import AutoTokenizer

    path = settings.get("RL4LLM_QWEN_TIKTOKEN")
    ranks = read_tiktoken(path)
    assert len(ranks) == 151643
    qwen3_tokenizer_from_tiktoken(path).save_pretrained(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    assert len(tokenizer) == 151643 + len(QWEN3_SPECIALS) == 151669
    for text, ids in KNOWN_QWEN_IDS.items():
        assert tokenizer(text, add_special_tokens=False)["input_ids"] == ids, text
        assert _reference_encode(ranks, text) == ids, text
    latex = "Evaluate \\(\\lim_{x\\to 0} \\frac{\\sin 2x}{x}\\), \\boxed{2}. Привет, 12345!"
    assert tokenizer(latex, add_special_tokens=False)["input_ids"] == _reference_encode(ranks, latex)
