"""Accepting |x - ref| <= abs_tol only, forgetting the relative tolerance for large references."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "absolute_tolerance_only"
HINT = "looks like only |x - ref| <= abs_tol is tested; the tolerance is max(abs_tol, rel_tol*|ref|)"


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    return verify_detailed(text, reference, rel_tol=0.0, abs_tol=abs_tol).accuracy
