"""Calling verify_detailed without passing rel_tol/abs_tol on, so the defaults always apply."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "tolerances_ignored"
HINT = "looks like rel_tol/abs_tol are not passed on: the caller's tolerances must reach the comparison"


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    return verify_detailed(text, reference).accuracy
