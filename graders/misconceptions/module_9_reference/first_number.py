"""With no box, reading the FIRST number of the response instead of the last one."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "first_number"
HINT = "looks like the FIRST number is read; without a box the LAST number is the final answer"


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    found, _content = _last_box(text)
    if not found:
        numbers_found = re.findall(_number_regex(), text, re.ASCII)
        text = numbers_found[0] if numbers_found else ""  # the first number, not the last
    return verify_detailed(text, reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
