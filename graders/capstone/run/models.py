"""The tiny model and tokenizer, and the learner's verifier as a TRL reward function.

Given code: the capstone student need not change it.

The tiny profile needs no download: a character-level tokenizer built with
``tokenizers`` (digits, space, "+", "-", "=" and three special tokens) and a
randomly initialised ``Qwen3ForCausalLM`` of a few thousand parameters, so
TRL, PEFT and the chat-free prompt path run exactly as they would on
Qwen3-0.6B, only in seconds on a CPU.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType

from graders.loader import load_module
from graders.capstone.run import latex
from graders.capstone.run.profiles import CapstoneError

TINY_ALPHABET = "0123456789 +-="
TINY_SPECIALS = ("<pad>", "<bos>", "<eos>")  # ids 0, 1, 2
TINY_CONFIG = {  # Qwen3Config keyword arguments of the tiny model (recorded in the passport)
    "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "head_dim": 16, "max_position_embeddings": 64,
    "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": True,
    # std of the random weights: with Qwen3's 0.02 the frozen tied embeddings are so small that no
    # adapter can make one of 17 tokens likely (logit gaps stay below ~1.3); 0.1 leaves room to learn
    "initializer_range": 0.1,
}
VERIFIER_MODULE_NAME = "_rl4llm_capstone_verifier"  # private: never clashes with an imported module_9_reference


def tiny_tokenizer():
    """A character-level PreTrainedTokenizerFast over TINY_ALPHABET with <pad>/<bos>/<eos>."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate([*TINY_SPECIALS, *TINY_ALPHABET])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")  # one token per character
    core.decoder = decoders.Fuse()  # characters join without spaces
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<bos>", eos_token="<eos>",
                                   pad_token="<pad>", unk_token="<pad>")


def tiny_model(seed: int):
    """A randomly initialised Qwen3ForCausalLM of TINY_CONFIG, initialised under torch.manual_seed(seed)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(vocab_size=len(TINY_SPECIALS) + len(TINY_ALPHABET), **TINY_CONFIG)
    return Qwen3ForCausalLM(config)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_verifier(path: Path) -> tuple[ModuleType, dict]:
    """Import the verifier file at ``path`` privately; (module, passport entry {path, version, sha256})."""
    path = Path(path).resolve()
    try:
        module = load_module(path, VERIFIER_MODULE_NAME)
    except Exception as error:  # the learner's file: any import failure is theirs to read
        raise CapstoneError("error_verifier_import", path=path, error=f"{type(error).__name__}: {error}") from error
    if not callable(getattr(module, "verify_numeric_answer", None)):
        raise CapstoneError("error_verifier_missing", path=path)
    try:  # a smoke test before any training: an unimplemented or crashing verifier stops here, in one line
        probe = module.verify_numeric_answer("so the answer is \\boxed{7}", "7")
    except Exception as error:  # noqa: BLE001 - the learner's code
        raise CapstoneError("error_verifier_raised", path=path, error=type(error).__name__,
                            message=str(error).splitlines()[0] if str(error) else "") from error
    if probe not in (0, 1):
        raise CapstoneError("error_verifier_value", path=path, value=probe)
    version = getattr(module, "VERIFIER_VERSION", None)
    return module, {"path": str(path), "version": version, "sha256": sha256_file(path)}


def completion_text(completion) -> str:
    """The text of one completion: a str, or the last message's content of a conversational one."""
    if isinstance(completion, list):
        return str(completion[-1]["content"]) if completion else ""
    return str(completion)


def verifier_reward_function(module: ModuleType):
    r"""A TRL reward function: :func:`graders.capstone.run.latex.reward` of each completion against its solution,
    with the learner's ``verify_numeric_answer`` deciding every numeric comparison.

    The completion's final answer (its last ``\boxed{...}``) and the DeepMath
    reference are parsed with math-verify; numbers go to the learner's verifier
    in exact or 30-digit form (integers compared exactly), other answers
    (intervals, sets, expressions, text) are compared by math-verify. A
    reference the parser cannot read, or that the verifier refuses
    (ValueError), gives None, which TRL skips, as its own ``accuracy_reward``
    does for an unparseable gold answer; a step whose rewards are all None is
    logged as NaN and never stops a run (:func:`graders.capstone.run.passport.step_series`).
    """
    verify = module.verify_numeric_answer

    def verifier_reward(prompts, completions, solution, **kwargs) -> list[float | None]:
        return [latex.reward(completion_text(completion), str(reference), verify)
                for completion, reference in zip(completions, solution, strict=True)]

    return verifier_reward
