"""Dry runs of the real profiles on CPU with the real architecture and no download: a locally built,
randomly initialised Qwen3-0.6B-architecture model (full widths, vocabulary 151936, Qwen3's special-token
ids and chat template; graders/capstone/run/local_qwen.py) trains one GRPO and one DPO optimizer step through
`rl4llm capstone run --model PATH --data-dir DIR --device cpu --max-steps 1`, on rows in the formats of
DeepMath-103K and ultrafeedback_binarized written here.

Depth: RL4LLM_QWEN3_LAYERS (default 1 decoder layer, to keep the test near 30 s on two cores; Qwen3-0.6B
has 28). RL4LLM_QWEN3_FULL_DEPTH=1 builds all 28 layers (about a minute per GRPO step and 4 GB on a CPU).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from graders import settings
from graders.capstone.passport import check_passport
from graders.cli import main
from graders.paths import SOLUTIONS_DIR

LAYERS = 28 if settings.get("RL4LLM_QWEN3_FULL_DEPTH") else settings.get("RL4LLM_QWEN3_LAYERS")
KIT_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
# DeepMath-103K's columns as TRL's copy has them: a conversational prompt and the LaTeX final answer.
MATH_ROWS = [
    ("Evaluate the limit \\(\\lim_{x\\to 0} \\frac{\\sin 2x}{x}\\).", "2"),
    ("Compute \\(\\int_0^1 x\\,dx\\).", "\\frac{1}{2}"),
    ("How many subsets does a 20-element set have with exactly 3 elements?", "1140"),
    ("Find the radius of convergence of \\(\\sum n! x^n\\).", "0"),
    ("Find the maximum of \\(\\sin x + \\sqrt{3}\\cos x\\).", "2"),
    ("Evaluate \\(\\int_0^{\\infty} e^{-x^2}dx\\).", "\\frac{\\sqrt{\\pi}}{2}"),  # irrational: the verifier decides
    ("Find the interval where \\(x^2 < x\\).", "(0, 1)"),  # an interval: math-verify decides
    ("Compute \\(10^6 / 10^3 \\cdot 10^3\\).", "10^{6}"),
    ("What is \\(\\log_2 1024\\)?", "10"),
    ("Prove that there are infinitely many primes.", "???"),  # nothing the parser reads: dropped
]
PREFERENCE_ROWS = [
    ("Name a prime number.", "2 is a prime number.", "4 is a prime number."),
    ("What colour is the sky on a clear day?", "Blue.", "Green."),
    ("Is 7 odd?", "Yes, 7 is odd.", "No, 7 is even."),
]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def local_model(tmp_path_factory) -> Path:
    from graders.capstone.run.local_qwen import build_local_qwen3

    return build_local_qwen3(tmp_path_factory.mktemp("qwen3") / "model", layers=LAYERS)


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("data")
    math_rows = [{"prompt": [{"role": "user", "content": question}], "solution": answer}
                 for question, answer in MATH_ROWS]
    preference_rows = [{"prompt": [{"role": "user", "content": prompt}],
                        "chosen": [{"role": "assistant", "content": chosen}],
                        "rejected": [{"role": "assistant", "content": rejected}]}
                       for prompt, chosen, rejected in PREFERENCE_ROWS]
    for name, rows in (("math", math_rows), ("preferences", preference_rows)):
        (root / name).mkdir()
        _write_jsonl(root / name / "train.jsonl", rows)
        _write_jsonl(root / name / "test.jsonl", rows[:2])  # two held-out rows keep the before/after greedy short
    return {"grpo": root / "math", "dpo": root / "preferences"}


@pytest.mark.slow  # builds the Qwen3-style tokenizer (about 2 s of CPU); capstone tooling, not an everyday change
def test_the_local_tokenizer_speaks_qwen3():
    from graders.capstone.run.local_qwen import QWEN3_SPECIALS, qwen3_style_tokenizer

    tokenizer = qwen3_style_tokenizer()
    messages = [{"role": "user", "content": "Compute 1/2 + 1/4."}]
    thinking = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    direct = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                           enable_thinking=False)
    assert thinking.endswith("<|im_start|>assistant\n")  # Qwen3 thinks by default: an open think block follows
    assert direct.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # the course's setting
    ids = tokenizer(direct, add_special_tokens=False)["input_ids"]
    assert ids[0] == QWEN3_SPECIALS["<|im_start|>"] and QWEN3_SPECIALS["</think>"] in ids
    assert tokenizer.decode(ids) == direct
    assert tokenizer.eos_token_id == 151645 and tokenizer.pad_token_id == 151643


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["grpo", "dpo"])
def test_one_step_of_the_real_architecture_on_cpu(local_model, data_dirs, tmp_path, capsys, algorithm):
    out = tmp_path / algorithm
    lengths = ["--max-completion-length", "8"] if algorithm == "grpo" else ["--max-length", "64"]
    learner = (["--verifier", str(KIT_VERIFIER)] if algorithm == "grpo"
               else ["--loss", str(KIT_VERIFIER.parents[1] / "module_08" / "module_8_training.py")])
    code = main(["capstone", "run", "--algo", algorithm, "--profile", "smoke", "--out", str(out), "--model",
                 str(local_model), "--data-dir", str(data_dirs[algorithm]), "--device", "cpu", "--max-steps", "1",
                 *lengths, *learner, "--quiet", "--lang", "en"])
    printed = capsys.readouterr()
    assert code == 0, printed.err[-3000:]
    passport = json.loads((out / "passport.json").read_text(encoding="utf-8"))
    assert passport["device"] == "cpu" and passport["precision"]["dtype"] == "float32"
    assert passport["model"]["architecture"] == "Qwen3ForCausalLM"
    assert (passport["model"]["hidden_size"], passport["model"]["vocab_size"]) == (1024, 151936)
    assert passport["model"]["num_hidden_layers"] == LAYERS
    steps = [entry for entry in passport["log_history"] if "loss" in entry]
    assert [entry["step"] for entry in steps] == [1] and math.isfinite(steps[0]["loss"])
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    assert "dry run" in printed.out
    if algorithm == "grpo":
        assert passport["overrides"] == {"max_steps": 1, "max_completion_length": 8}
        assert passport["trainer_args"]["chat_template_kwargs"] == {"enable_thinking": False}
        assert "completions/clipped_ratio" in steps[0]  # what the GPU check reads to decide the length
        assert passport["data"]["filter"]["train"] == {"rows": 10, "kept": 9, "kept_fraction": 0.9,
                                                      "dropped_examples": ["???"], "verifier_decided": 8,
                                                      "verifier_fraction": 8 / 9}
        assert "kept 9 of 10 training rows (90%)" in printed.out and "decides the 8 whose" in printed.out
        assert "completions cut at 8 tokens" in printed.out
    else:
        assert passport["overrides"] == {"max_steps": 1, "max_length": 64}
        assert math.isfinite(passport["metrics"]["after"]["pair_accuracy"])
    failed = {check["name"] for check in check_passport(out)["checks"] if not check["passed"]}
    assert "trainer_args" in failed  # a dry run is never graded as the profile's run
