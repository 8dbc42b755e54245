"""The extracted text holds the whole \\boxed{...} command instead of the box content."""

EXERCISE = "module_9_reference.verify_detailed"
NAME = "extracted_whole_box"
HINT = "looks like 'extracted' holds the whole \\boxed{...}; it is the content inside the braces"


_verify_detailed_before_the_mistake = verify_detailed  # the learner module's own definition


def verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    result = _verify_detailed_before_the_mistake(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    found, content = _last_box(text)
    if found and content is not None:  # the mistake: the whole command is reported, not the content
        return VerifierResult(reward=result.reward, accuracy=result.accuracy, status=result.status,
                              extracted="\\boxed{" + content + "}")
    return result
