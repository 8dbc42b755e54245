"""What each capstone profile prescribes: model, data, trainer settings, LoRA.

Given code: the capstone student need not change it. The grader
(graders/capstone/passport.py) checks a run's passport against these tables, so they
are the single source of truth for "the course's configuration".

- ``tiny``: a randomly initialised Qwen3-architecture model and a local
  tokenizer, in-memory data (GRPO: answer the second digit of "a b =", 80
  training and 20 held-out pairs; DPO: prefer " b" to " a" after "a b =", 3 times
  in 4), CPU, seconds, no download. Both tasks are learnable in seconds, so the
  tiny runs tell a working reward (GRPO) or loss (DPO) from a broken one.
- ``smoke`` / ``full``: ``Qwen/Qwen3-0.6B`` on the course's data sets with the
  TRL configurations of the Module 9 (GRPO) and Module 8 (DPO) notebooks;
  smoke = 2 optimizer steps, full = the notebooks' step counts (80 GRPO; 20
  DPO, the Module 8 notebook's own "smoke" run). A CUDA GPU, unless a dry
  run asks for ``--device cpu`` (then the passport says so and the grader
  does not accept it as the profile's run).

Decisions the notebooks left open, settled here:

- Seed 42, TRL's default (the notebooks never set one, so they ran with 42).
- Thinking mode OFF (``chat_template_kwargs={"enable_thinking": False}``):
  Qwen3's template thinks by default, and a thinking answer to a DeepMath
  problem runs far past the notebook's 192 tokens; with
  ``mask_truncated_completions=True`` a clipped completion adds nothing to
  the loss. Without thinking the model answers directly; 512 completion
  tokens leave room for a short derivation and the box. That they suffice is
  not yet measured (no GPU so far): the instructor's GPU script
  (``assignments/capstone/gpu_check.sh``) measures the clipped ratio of a
  smoke run and fails above ``MAX_CLIPPED_RATIO``.
- GRPO evaluates on DeepMath's ``test`` split (held out), not on ``train``.

Pure Python: importing this module loads no ML library.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.capstone.run.texts import text

ALGORITHMS = ("grpo", "dpo")
PROFILE_NAMES = ("tiny", "smoke", "full")
COURSE_MODEL = "Qwen/Qwen3-0.6B"
TINY_MODEL = "tiny-random-qwen3"
PASSPORT_SCHEMA = "rl4llm-capstone-passport-1"
DEFAULT_SEED = 42  # TRL's default seed; the notebooks never set one
MAX_CLIPPED_RATIO = 0.5  # a smoke run whose completions are clipped more often than this is misconfigured
DEVICES = ("auto", "cpu", "cuda")
# The VERIFIER_VERSION a GRPO run's reward must report: the Module 9 file's (module_9_reference.py, the
# line the stub keeps). Here, not read from solutions/, so the learner bundle's `capstone check` knows it
# too; tests/test_capstone_bundle.py checks that it is the reference's.
VERIFIER_VERSION = "m9-numeric-verifier-1.0"


class CapstoneError(RuntimeError):
    """A capstone run that cannot start (no GPU, unknown profile, unreadable verifier, ...).

    ``key`` names its text in :mod:`graders.capstone.run.texts` and ``values`` fill it: ``str(error)``
    is the English text, ``error.text(language)`` the text in any language of the course.
    """

    def __init__(self, key: str, **values):
        self.key, self.values = key, values
        super().__init__(self.text("en"))

    def text(self, language: str) -> str:
        return text(language, self.key, **self.values)


# The Module 9 notebook's GRPOConfig (real-model branch), minus output_dir / max_steps / report_to,
# with thinking off and 512 completion tokens instead of 192 (see the module docstring).
COURSE_GRPO = {
    "learning_rate": 5e-6, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
    "max_completion_length": 512, "chat_template_kwargs": {"enable_thinking": False}, "num_generations": 4, "num_iterations": 1, "loss_type": "dapo",
    "scale_rewards": "group", "importance_sampling_level": "token", "epsilon": 0.2,
    "epsilon_high": 0.28, "beta": 0.0, "mask_truncated_completions": True, "logging_steps": 1,
}
# The Module 8 notebook's DPOConfig; beta and loss_type are TRL's defaults, pinned so a run cannot drift.
COURSE_DPO = {
    "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8, "learning_rate": 1e-5,
    "logging_steps": 1, "beta": 0.1, "loss_type": ["sigmoid"],
}
# Both notebooks: LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05); PEFT picks Qwen3's target modules.
COURSE_LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.05, "target_modules": None}
# Tiny: every linear layer (what PEFT's Qwen3 default adapts is attention only; a 32-wide model needs the MLP too).
TINY_LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.05,
             "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]}


@dataclass(frozen=True)
class DataSource:
    """Where a profile's rows come from: ``dataset`` is "kit:<name>" (in memory) or a Hub id."""

    dataset: str
    train_split: str
    eval_split: str


@dataclass(frozen=True)
class Profile:
    """One (algorithm, profile) configuration.

    trainer_settings: TRL config values the run must use (the grader compares them).
    lora: LoraConfig values (r, lora_alpha, lora_dropout, target_modules; None = PEFT's default).
    """

    algorithm: str
    name: str
    model: str
    data: DataSource
    trainer_settings: dict = field(default_factory=dict)
    lora: dict = field(default_factory=dict)

    @property
    def needs_gpu(self) -> bool:
        return self.name != "tiny"


def _course(algorithm: str, name: str, max_steps: int) -> Profile:
    if algorithm == "grpo":
        eval_rows = 8 if name == "smoke" else 32
        data = DataSource("trl-lib/DeepMath-103K", "train[:128]", f"test[:{eval_rows}]")
        settings = {**COURSE_GRPO, "max_steps": max_steps}
    else:
        eval_rows = 8 if name == "smoke" else 32
        data = DataSource("trl-lib/ultrafeedback_binarized", "train[:64]", f"test[:{eval_rows}]")
        settings = {**COURSE_DPO, "max_steps": max_steps}
    return Profile(algorithm, name, COURSE_MODEL, data, settings, dict(COURSE_LORA))


# Tiny profiles keep the algorithmic settings of the course (G, loss, clipping, beta) and shrink the rest.
# GRPO: "a b =" -> the digit b, one completion token, G = 8, 4 prompts a step; with the right reward the
# held-out greedy accuracy rises from about 0 to well above 0.3 in 120 steps (seconds on a CPU); with a
# sign-flipped or constant reward it does not (tests/test_capstone_learning.py).
TINY_GRPO = {**COURSE_GRPO, "learning_rate": 5e-3, "per_device_train_batch_size": 32,
             "gradient_accumulation_steps": 1, "num_generations": 8,
             "max_completion_length": 1,  # one token: the answer digit
             "mask_truncated_completions": False,  # every one-token completion is "truncated": masking would zero the loss
             "max_steps": 120}
# DPO: "a b =", " b" preferred to " a" 3 times in 4 (graders/capstone/run/data.py), the learner's loss
# (graders/capstone/run/learner_loss.py), 64 pairs a step, 100 steps (about 10 s on one CPU thread). Measured
# on the held-out margin (seeds 0, 1, 7, 42): the right loss gains 3.6-5.8 nats (its optimum log 3 / beta ~ 11),
# a loss without beta 0.7-0.9 (optimum log 3 ~ 1.1), a sign-flipped one loses 6.6 (tests/test_capstone_dpo.py).
TINY_DPO = {**COURSE_DPO, "learning_rate": 1e-2, "per_device_train_batch_size": 64,
            "gradient_accumulation_steps": 1, "max_steps": 100}

PROFILES: dict[tuple[str, str], Profile] = {
    ("grpo", "tiny"): Profile("grpo", "tiny", TINY_MODEL, DataSource("kit:tiny-second-digit", "train", "eval"),
                              TINY_GRPO, dict(TINY_LORA)),
    ("dpo", "tiny"): Profile("dpo", "tiny", TINY_MODEL, DataSource("kit:tiny-second-digit-preferences", "train", "eval"),
                             TINY_DPO, dict(TINY_LORA)),
    ("grpo", "smoke"): _course("grpo", "smoke", 2),
    ("grpo", "full"): _course("grpo", "full", 80),
    ("dpo", "smoke"): _course("dpo", "smoke", 2),
    ("dpo", "full"): _course("dpo", "full", 20),
}


def get_profile(algorithm: str, name: str) -> Profile:
    """The profile for (algorithm, name); CapstoneError naming the bad argument otherwise."""
    if algorithm not in ALGORITHMS:
        raise CapstoneError("error_algorithm", choices=ALGORITHMS, got=algorithm)
    if name not in PROFILE_NAMES:
        raise CapstoneError("error_profile", choices=PROFILE_NAMES, got=name)
    return PROFILES[(algorithm, name)]
