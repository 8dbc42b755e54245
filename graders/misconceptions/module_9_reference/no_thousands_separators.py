"""A number pattern without thousands groups: "1,234,567" is read as its last group, 567."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "no_thousands_separators"
HINT = "looks like thousands separators are not understood: '1,234,567' is one number, 1234567"


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    found, _content = _last_box(text)
    if not found:
        numbers_found = re.findall(r"[+-]?(?:\d*\.\d+|\d+)(?:[eE][+-]?\d+)?(?:/\d+)?", text)
        text = numbers_found[-1] if numbers_found else ""
    return verify_detailed(text, reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
