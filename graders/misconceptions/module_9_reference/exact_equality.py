"""Comparing the answer with the reference by exact equality, without any tolerance."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "exact_equality"
HINT = ("looks like exact equality (==): an answer within max(abs_tol, rel_tol*|ref|) of the reference "
        "(3/7 vs 0.428571, 0.30000000000000004 vs 0.3) is correct")


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    return verify_detailed(text, reference, rel_tol=0.0, abs_tol=0.0).accuracy  # x == ref
