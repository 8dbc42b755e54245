"""A Qwen3-0.6B-architecture model and a Qwen3-style tokenizer built locally, for dry runs without weights.

Given code: the capstone student need not change it.

    python -m graders.capstone.run.local_qwen OUT [--layers N] [--seed S] [--tiktoken PATH]

writes OUT/ (config.json, model.safetensors, tokenizer files) that
``rl4llm capstone run --model OUT --device cpu`` loads exactly as it would load
a downloaded ``Qwen/Qwen3-0.6B`` snapshot. The weights are random: a dry run
proves that the code path (chat template, thinking switch, TRL, PEFT, lengths,
passport, adapter) works with the real widths, vocabulary and special-token
ids, not that anything is learned.

- The config is Qwen3-0.6B's (``QWEN3_0_6B``: hidden 1024, 16 query / 8 KV
  heads of 128, MLP 3072, vocabulary 151936, tied embeddings, 28 layers);
  ``layers`` may reduce the depth to keep a CPU test short.
- The tokenizer is byte-level BPE over the 256 byte symbols only (no merges:
  every byte is one token), with Qwen3's special tokens at Qwen3's ids and
  Qwen3's own chat template (the copy TRL ships as ``trl/chat_templates/qwen3.jinja``,
  kept identical to the Hub's). Text therefore tokenizes longer than with the
  real merges; prompts and special tokens render exactly as Qwen3's.
- ``--tiktoken PATH`` builds the real Qwen2/Qwen3 tokenizer instead, from Qwen's
  ``qwen.tiktoken`` (151643 lines ``base64(token bytes) rank``; the rank is the
  token id). PyPI's ``dashscope`` wheel ships it, so a package registry is
  enough, no model hub::

      pip download dashscope --no-deps -d /tmp/ds
      unzip -j /tmp/ds/dashscope-*.whl dashscope/resources/qwen.tiktoken -d /tmp/ds

  The ranks become a ``tokenizers`` byte-level BPE as in Qwen's tokenizer.json:
  vocab = each token's bytes in the ByteLevel alphabet -> its rank; one merge per
  multi-byte token, in rank order, made of the two parts that tiktoken's own
  byte-pair merge reaches on the token's bytes when only lower ranks may merge
  (so the BPE encodes exactly as tiktoken does with the ranks); Qwen's split
  regex, NFC normaliser, special tokens and chat template. The file is Qwen's
  (its licence): read it where it lies, never copy it into the kit.
"""

from __future__ import annotations

import argparse
import base64
from importlib import resources
from pathlib import Path

# Qwen/Qwen3-0.6B config.json (the fields that shape the network and its special tokens).
QWEN3_0_6B = {
    "vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
    "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
    "attention_bias": False, "tie_word_embeddings": True, "bos_token_id": 151643, "eos_token_id": 151645,
}
# Qwen3's special tokens and their ids (tokenizer_config.json of Qwen/Qwen3-0.6B).
QWEN3_SPECIALS = {
    "<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645, "<|object_ref_start|>": 151646,
    "<|object_ref_end|>": 151647, "<|box_start|>": 151648, "<|box_end|>": 151649, "<|quad_start|>": 151650,
    "<|quad_end|>": 151651, "<|vision_start|>": 151652, "<|vision_end|>": 151653, "<|vision_pad|>": 151654,
    "<|image_pad|>": 151655, "<|video_pad|>": 151656, "<tool_call>": 151657, "</tool_call>": 151658,
    "<|fim_prefix|>": 151659, "<|fim_middle|>": 151660, "<|fim_suffix|>": 151661, "<|fim_pad|>": 151662,
    "<|repo_name|>": 151663, "<|file_sep|>": 151664, "<tool_response>": 151665, "</tool_response>": 151666,
    "<think>": 151667, "</think>": 151668,
}
# The ones Qwen3 marks ``special`` (skipped by ``decode(skip_special_tokens=True)``); from <tool_call> on,
# Qwen3's added tokens are plain text to the tokenizer, so a decoded completion keeps its <think> tags.
QWEN3_SPECIAL_FLAGGED = [token for token, index in QWEN3_SPECIALS.items() if index <= 151656]
QWEN3_EXTRA_SPECIAL_TOKENS = QWEN3_SPECIAL_FLAGGED[1:]  # tokenizer_config's additional_special_tokens
# Qwen2/Qwen3's pre-tokenizer split (tokenizer.json of Qwen/Qwen3-0.6B).
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def qwen3_chat_template() -> str:
    """Qwen3's chat template (with its ``enable_thinking`` switch), as TRL ships it."""
    return resources.files("trl").joinpath("chat_templates", "qwen3.jinja").read_text(encoding="utf-8")


def _with_qwen3_specials(core):
    """Qwen3's added tokens (at Qwen3's ids, special-flagged as Qwen3's) and chat template on a BPE ``core``."""
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast

    core.add_tokens([AddedToken(token, special=token in QWEN3_SPECIAL_FLAGGED, normalized=False)
                     for token in QWEN3_SPECIALS])
    assert all(core.token_to_id(token) == index for token, index in QWEN3_SPECIALS.items())
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=QWEN3_EXTRA_SPECIAL_TOKENS,
                                        clean_up_tokenization_spaces=False)
    tokenizer.chat_template = qwen3_chat_template()
    return tokenizer


def qwen3_style_tokenizer():
    """A PreTrainedTokenizerFast: byte-level BPE over 256 bytes + Qwen3's specials at Qwen3's ids."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    byte_symbols = pre_tokenizers.ByteLevel.alphabet()  # the 256 printable stand-ins of the bytes
    vocab = {symbol: index for index, symbol in enumerate(sorted(byte_symbols))}
    vocab.update(QWEN3_SPECIALS)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    core.decoder = decoders.ByteLevel()
    return _with_qwen3_specials(core)


def read_tiktoken(path) -> dict[bytes, int]:
    """A tiktoken BPE file (one ``base64(token bytes) rank`` per line) as {token bytes: rank}, checked."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(Path(path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError as error:
            raise ValueError(f"{path}:{number}: not a tiktoken line 'base64(bytes) rank': {error}") from None
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise ValueError(f"{path}: the ranks are not 0..{len(ranks) - 1}, each once")
    if any(bytes([byte]) not in ranks for byte in range(256)):
        raise ValueError(f"{path}: not every single byte is a token")
    if len(ranks) > min(QWEN3_SPECIALS.values()):
        raise ValueError(f"{path}: {len(ranks)} tokens overlap Qwen3's special-token ids")
    return ranks


def rank_bpe(ranks: dict[bytes, int], piece: bytes, max_rank: int | None = None) -> list[bytes]:
    """tiktoken's byte-pair merge: merge the adjacent pair whose join has the lowest rank (leftmost on a tie)
    until none is a token (or, with ``max_rank``, none ranks below it)."""
    parts = [piece[index:index + 1] for index in range(len(piece))]
    while len(parts) > 1:
        best, best_rank = None, None
        for index in range(len(parts) - 1):
            rank = ranks.get(parts[index] + parts[index + 1])
            if rank is not None and (best_rank is None or rank < best_rank):
                best, best_rank = index, rank
        if best is None or (max_rank is not None and best_rank >= max_rank):
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


def tiktoken_vocab_and_merges(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The ``tokenizers`` BPE vocab and merges equivalent to tiktoken ``ranks``.

    One merge per multi-byte token, ordered by its rank: the two parts ``rank_bpe`` reaches on the token's bytes
    with only lower ranks allowed, the split tiktoken itself forms the token from (Qwen's merges.txt has this
    form too: one merge per multi-byte token). transformers' ``TikTokenConverter`` lists every two-token split of
    every token instead and needs the ``tiktoken`` package; this needs neither."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    byte_symbol = bytes_to_unicode()  # byte value -> its ByteLevel stand-in character

    def symbols(token: bytes) -> str:
        return "".join(byte_symbol[byte] for byte in token)

    vocab = {symbols(token): rank for token, rank in ranks.items()}
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = rank_bpe(ranks, token, max_rank=rank)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not the merge of two lower-ranked tokens")
        merges.append((symbols(parts[0]), symbols(parts[1])))
    return vocab, merges


def qwen3_tokenizer_from_tiktoken(path):
    """Qwen2/Qwen3's real tokenizer (PreTrainedTokenizerFast) from Qwen's ``qwen.tiktoken`` at ``path``."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab, merges = tiktoken_vocab_and_merges(read_tiktoken(path))
    vocab.update(QWEN3_SPECIALS)  # Qwen3's ids even for a shorter (test) file
    core = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    core.normalizer = normalizers.NFC()
    core.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    core.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    core.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    return _with_qwen3_specials(core)


def qwen3_model(layers: int | None = None, seed: int = 0, dtype=None):
    """A randomly initialised Qwen3ForCausalLM with Qwen3-0.6B's config (``layers`` deep if given), in ``dtype``
    (default float32).

    Built on the meta device and materialised once, in ``dtype``, then given transformers' own initialisation
    (normal, std ``initializer_range``; norms 1) and tied: constructing it on the CPU drew a Kaiming init for an
    output head that tying throws away and filled 155M-entry float32 tables only to cast them to bfloat16 (one
    layer, one thread: about 9-10 s of CPU before, 5 s now; fresh memory is slow to touch on a virtual machine)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(**{**QWEN3_0_6B, **({"num_hidden_layers": layers} if layers else {})})
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype or torch.float32)
    try:
        with torch.device("meta"):
            model = Qwen3ForCausalLM(config)
        model = model.to_empty(device="cpu")
        model.init_weights()  # transformers' initialisation of every module, then the ties
        model.tie_weights()
    finally:
        torch.set_default_dtype(default)
    return model


def build_local_qwen3(out_dir, layers: int | None = None, seed: int = 0, tiktoken=None) -> Path:
    """Write the model (bfloat16 safetensors) and tokenizer to ``out_dir`` (``save_pretrained``); return it.

    The tokenizer is Qwen's real one built from the ``tiktoken`` file if given, else the byte-level one."""
    out_dir = Path(out_dir)
    tokenizer = qwen3_tokenizer_from_tiktoken(tiktoken) if tiktoken else qwen3_style_tokenizer()  # fail early
    out_dir.mkdir(parents=True, exist_ok=True)
    import torch

    qwen3_model(layers, seed, torch.bfloat16).save_pretrained(out_dir)  # bf16, as Qwen3-0.6B is published
    tokenizer.save_pretrained(out_dir)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="folder to write (config.json, model.safetensors, tokenizer)")
    parser.add_argument("--layers", type=int, default=None, help="decoder layers (default 28, Qwen3-0.6B's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tiktoken", metavar="PATH", default=None,
                        help="Qwen's qwen.tiktoken: build the real Qwen3 tokenizer (default: byte-level, no merges)")
    args = parser.parse_args(argv)
    print(f"wrote {build_local_qwen3(args.out, args.layers, args.seed, args.tiktoken)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
