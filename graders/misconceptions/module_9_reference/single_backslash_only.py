"""Recognising only \\boxed{...} with exactly one backslash: the seed's \\\\boxed{...} is read as plain text."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "single_backslash_only"
HINT = (r"looks like only '\boxed{' with exactly ONE backslash is found (an escaped '\\boxed{' is skipped); "
        r"one or more backslashes may precede boxed")


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    starts = [match.start() for match in re.finditer(r"(?<!\\)\\boxed\{", text)]  # "\\boxed{" looks escaped
    if not starts:  # no box found: fall back to the last number
        numbers_found = re.findall(_number_regex(), text, re.ASCII)
        return verify_detailed(numbers_found[-1] if numbers_found else "", reference,
                               rel_tol=rel_tol, abs_tol=abs_tol).accuracy
    return verify_detailed(text[starts[-1]:], reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
