"""The call modes of module_9_reference's dependent exercises: a mistake is graded once, on its own exercise.

Each dependent runs under :class:`graders.checks.Answered`: the learner module's dependencies answer
exactly this case's own calls with the reference's results, sent to the worker as sealed data
(:mod:`graders.engine.judging.answers`); no reference code travels, and a dependent earns nothing while its
dependency earns nothing.
"""

from __future__ import annotations

from graders.checks import Answered

M = "module_9_reference"

ADVANTAGES = Answered(("group_relative_advantages",))  # the three token-weight reductions
INFORMATIVE = Answered(("informative_group_probability",))  # expected_draws_for_informative_groups
VERIFIER = Answered(("verify_detailed",))  # verify_numeric_answer (= verify_detailed(...).accuracy)
ENTROPY = Answered(("categorical_entropy",))  # synthetic_mode_training
