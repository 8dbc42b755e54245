"""NaN and infinity reported as parse errors (Fraction('nan') raises ValueError)."""

EXERCISE = "module_9_reference.verify_detailed"
NAME = "non_finite_as_parse_error"
HINT = "looks like nan/inf answers are reported as 'parse_error'; their status is 'non_finite'"


_verify_detailed_before_the_mistake = verify_detailed  # the learner module's own definition


def verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    result = _verify_detailed_before_the_mistake(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    if result.status == "non_finite":  # the mistake: this status is lumped in with unreadable answers
        return VerifierResult(reward=result.reward, accuracy=result.accuracy, status="parse_error",
                              extracted=result.extracted)
    return result
