"""An unclosed last box reported as no answer at all."""

EXERCISE = "module_9_reference.verify_detailed"
NAME = "unclosed_box_as_no_answer"
HINT = "looks like an unclosed last \\boxed{ is reported as 'no_answer'; a box that never closes is a 'parse_error'"


_verify_detailed_before_the_mistake = verify_detailed  # the learner module's own definition


def verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    result = _verify_detailed_before_the_mistake(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    found, content = _last_box(text)
    if found and content is None:  # the mistake: a box that never closes counts as no box at all
        return VerifierResult(reward=0.0, accuracy=0, status="no_answer", extracted=None)
    return result
