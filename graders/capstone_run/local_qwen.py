"""A Qwen3-0.6B-architecture model and a Qwen3-style tokenizer built locally, for dry runs without weights.

Given code: the capstone student need not change it.

    python -m graders.capstone_run.local_qwen OUT [--layers N] [--seed S]

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
"""

from __future__ import annotations

import argparse
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
# Qwen2/Qwen3's pre-tokenizer split (tokenizer.json of Qwen/Qwen3-0.6B).
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def qwen3_chat_template() -> str:
    """Qwen3's chat template (with its ``enable_thinking`` switch), as TRL ships it."""
    return resources.files("trl").joinpath("chat_templates", "qwen3.jinja").read_text(encoding="utf-8")


def qwen3_style_tokenizer():
    """A PreTrainedTokenizerFast: byte-level BPE over 256 bytes + Qwen3's specials at Qwen3's ids."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    byte_symbols = pre_tokenizers.ByteLevel.alphabet()  # the 256 printable stand-ins of the bytes
    vocab = {symbol: index for index, symbol in enumerate(sorted(byte_symbols))}
    vocab.update(QWEN3_SPECIALS)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=list(QWEN3_SPECIALS))
    tokenizer.chat_template = qwen3_chat_template()
    return tokenizer


def qwen3_model(layers: int | None = None, seed: int = 0):
    """A randomly initialised Qwen3ForCausalLM with Qwen3-0.6B's config (``layers`` deep if given), float32."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(**{**QWEN3_0_6B, **({"num_hidden_layers": layers} if layers else {})})
    return Qwen3ForCausalLM(config)


def build_local_qwen3(out_dir, layers: int | None = None, seed: int = 0) -> Path:
    """Write the model (bfloat16 safetensors) and tokenizer to ``out_dir`` (``save_pretrained``); return it."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    import torch

    qwen3_model(layers, seed).to(torch.bfloat16).save_pretrained(out_dir)  # bf16, as Qwen3-0.6B is published
    qwen3_style_tokenizer().save_pretrained(out_dir)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="folder to write (config.json, model.safetensors, tokenizer)")
    parser.add_argument("--layers", type=int, default=None, help="decoder layers (default 28, Qwen3-0.6B's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"wrote {build_local_qwen3(args.out, args.layers, args.seed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
