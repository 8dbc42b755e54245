"""An unclosed last box is skipped and the last number decides, so a truncated answer can score."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "unclosed_box_falls_back"
HINT = (r"looks like an unclosed last \boxed{ is skipped and the last number read; a truncated box is "
        "a parse error (0), never a fallback")


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    found, content = _last_box(text)
    if found and content is None:  # the box regex needs a closing brace: fall back to numbers
        numbers_found = re.findall(_number_regex(), text, re.ASCII)
        text = numbers_found[-1] if numbers_found else ""
    return verify_detailed(text, reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
