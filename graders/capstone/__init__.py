"""The capstone: fine-tuning Qwen3-0.6B with TRL and grading the run.

- :mod:`.run` (a package): the given runner the learner bundle ships (data, profiles, the passport);
- :mod:`.passport`: the passport checks (shipped in the learner bundle too);
- :mod:`.cli`: the ``rl4llm capstone`` commands;
- :mod:`.grade`, :mod:`.reeval`, :mod:`.adapter`, :mod:`.claims`: the instructor's side (grading a submission,
  re-evaluating its adapter, loading it by the profile's LoRA config, checking the self-reported fields);
- :mod:`.smoke`: the CPU dry run of ``gpu_smoke.sh``.
"""
