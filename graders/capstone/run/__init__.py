"""The capstone: GRPO and DPO with TRL and LoRA, with the learner's verifier as the reward.

Given code: a capstone student runs it (``rl4llm capstone run``) and need not change it. The learner
bundle (``rl4llm bundle``) ships this package with graders/capstone/passport.py (the passport checks) and
graders/capstone/cli.py; nothing here imports the reference solutions (``solutions/``): GRPO's reward is
always the student's own verifier (``--verifier``), never the kit's.

    profiles.py   what each profile prescribes (the grader checks runs against it); the settled decisions
    latex.py      DeepMath's LaTeX answers parsed with math-verify; the reward (numbers: the verifier decides)
    data.py       the tiny in-memory sets, the course's data sets (Hub, cache or --data-dir), filtering, hashes
    hub_data.py   where the data comes from: --data-dir, a Hub snapshot in the cache (read offline), the Hub
    models.py     the tiny Qwen3-architecture model and local tokenizer; the verifier reward
    local_qwen.py a random Qwen3-0.6B-architecture model + Qwen3-style tokenizer for dry runs without weights
    metrics.py    before/after metrics: greedy verifier accuracy (GRPO), pair accuracy (DPO)
    passport.py   the run passport (passport.json) and the figures
    passport_check.py  reading a passport someone else wrote, and checking its structure
    run.py        one run end to end (RunOptions: --model, --data-dir, --max-steps, lengths, --device)
    preflight.py  can this machine run a profile? (``rl4llm capstone preflight``)
    texts.py      every line a student reads, in English and Russian

``profiles``, ``latex``, ``data``, ``hub_data`` and ``texts`` import no ML library (``latex`` imports
math-verify, and with it sympy, only when an answer is read), so the grader stays light.
The grader is graders/capstone/passport.py (passport), graders/capstone/grade.py (a submission) and
graders/capstone/reeval.py (the adapter, re-evaluated with the kit's verifier; instructor only).
"""
