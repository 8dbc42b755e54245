"""Recognising only the seed's spelling \\\\boxed{...} (two backslashes), not the \\boxed{...} models write."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "double_backslash_only"
HINT = (r"looks like only '\\boxed{' with TWO backslashes is found; a box may have one or more "
        r"backslashes (models write \boxed{...})")


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    start = text.rfind("\\\\boxed{")  # the notebook's raw strings hold two backslashes
    if start < 0:  # no box found: fall back to the last number
        numbers_found = re.findall(_number_regex(), text, re.ASCII)
        return verify_detailed(numbers_found[-1] if numbers_found else "", reference,
                               rel_tol=rel_tol, abs_tol=abs_tol).accuracy
    return verify_detailed(text[start:], reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
