"""Reading the FIRST \\boxed{...} of a response instead of the last one."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "first_box"
HINT = r"looks like the FIRST \boxed{} is read; a later box overrules an earlier one (use the LAST)"


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    start = text.find("boxed{")
    if start > 0 and text[start - 1] == "\\":
        depth, open_at = 1, start + len("boxed{")
        for index in range(open_at, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                text = text[:index + 1]  # cut after the first box: the reference rules then read it as last
                break
    return verify_detailed(text, reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
