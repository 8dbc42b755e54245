"""The extracted text holds the whole \\boxed{...} command instead of the box content."""

EXERCISE = "module_9_reference.verify_detailed"
NAME = "extracted_whole_box"
HINT = "looks like 'extracted' holds the whole \\boxed{...}; it is the content inside the braces"


def verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    rel_tol, abs_tol = _real(rel_tol, "rel_tol"), _real(abs_tol, "abs_tol")

    def read(answer):
        found, content = _last_box(answer)
        if found and content is None:
            return "parse_error", None, None
        if found:
            token, extracted = "".join(content.replace("\\$", "").replace("$", "").split()), "\\boxed{" + content + "}"
        else:
            numbers_found = re.findall(_number_regex(), answer, re.ASCII)
            if not numbers_found:
                return "no_answer", None, None
            token = extracted = numbers_found[-1]
        status, value = _parse_number(token)
        return status, value, extracted

    if isinstance(reference, str):
        ref_status, ref, _ = read(reference)
    elif isinstance(reference, numbers.Integral) and not isinstance(reference, bool):
        ref_status, ref = "ok", Fraction(int(reference))
    elif isinstance(reference, numbers.Real) and not isinstance(reference, bool) and math.isfinite(reference):
        ref_status, ref = "ok", Fraction(repr(float(reference)))
    else:
        ref_status = "not a finite number"
    if ref_status != "ok":
        raise ValueError(f"reference must hold one finite number, got {reference!r} ({ref_status})")

    status, value, extracted = read(text)
    if status == "ok":
        tolerance = max(Fraction(abs_tol), Fraction(rel_tol) * abs(ref))
        status = "correct" if abs(value - ref) <= tolerance else "wrong"
    accuracy = int(status == "correct")
    return VerifierResult(reward=float(accuracy), accuracy=accuracy, status=status, extracted=extracted)
