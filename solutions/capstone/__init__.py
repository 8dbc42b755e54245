"""The capstone: GRPO and DPO with TRL and LoRA, with the learner's verifier as the reward.

Given code: a capstone student runs it (``rl4llm capstone run``) and need not change it.

    profiles.py  what each profile prescribes (the grader checks runs against it)
    data.py      the tiny in-memory arithmetic sets, the course's data sets, canonical hashes
    models.py    the tiny Qwen3-architecture model and local tokenizer; the verifier reward
    metrics.py   before/after metrics: greedy verifier accuracy (GRPO), pair accuracy (DPO)
    passport.py  the run passport (passport.json) and the reward-curve figure
    run.py       one run end to end

``profiles`` and ``data`` import no ML library, so the grader stays light.
"""
