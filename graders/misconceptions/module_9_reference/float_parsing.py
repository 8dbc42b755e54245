"""Parsing answers with float() instead of fractions.Fraction: "3/7" cannot be read, so it scores 0."""

EXERCISE = "module_9_reference.verify_numeric_answer"
NAME = "float_parsing"
HINT = "looks like answers are parsed with float(), which cannot read fractions like 3/7; parse with fractions.Fraction"


def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    def read(answer):
        found, content = _last_box(answer)
        if found:
            token = None if content is None else "".join(content.replace("$", "").split())
        else:
            numbers_found = re.findall(_number_regex(), answer, re.ASCII)
            token = numbers_found[-1] if numbers_found else None
        try:
            value = float(token.replace(",", ""))  # float("3/7") raises ValueError
        except (AttributeError, ValueError):
            return None
        return value if math.isfinite(value) else None

    target = read(reference) if isinstance(reference, str) else float(reference)
    if target is None or not math.isfinite(target):
        raise ValueError(f"reference must hold one finite number, got {reference!r}")
    answer = read(text)
    if answer is None:
        return 0
    return int(abs(answer - target) <= max(abs_tol, rel_tol * abs(target)))
