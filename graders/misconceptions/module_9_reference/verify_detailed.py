"""Wrong versions of verify_detailed: what the verifier extracted and decided for one response.

Format: graders/engine/misconceptions.py (``_right`` is the reference).
"""


def _replaced(result, **changes):
    """``result`` with some fields changed."""
    return VerifierResult(**{**vars(result), **changes})


def extracted_whole_box(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like 'extracted' holds the whole \boxed{...}; it is the content inside the braces

    ru: похоже, 'extracted' содержит весь \boxed{...}; там должно быть содержимое внутри скобок
    """
    result = _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    found, content = _last_box(text)
    if found and content is not None:  # the whole command is reported, not the content
        return _replaced(result, extracted="\\boxed{" + content + "}")
    return result


def non_finite_as_parse_error(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like nan/inf answers are reported as 'parse_error'; their status is 'non_finite'

    ru: похоже, ответы nan/inf получают статус 'parse_error'; их статус — 'non_finite'
    """
    result = _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    return _replaced(result, status="parse_error") if result.status == "non_finite" else result


def unclosed_box_as_no_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like an unclosed last \boxed{ is reported as 'no_answer';
    a box that never closes is a 'parse_error'

    ru: похоже, незакрытый последний \boxed{ получает статус 'no_answer'; незакрытая рамка — это 'parse_error'
    """
    result = _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    return _replaced(result, status="no_answer") if _last_box(text) == (True, None) else result


def zero_division_as_parse_error(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like a zero denominator is reported as 'parse_error'; its status is 'zero_division'

    ru: похоже, нулевой знаменатель получает статус 'parse_error'; его статус — 'zero_division'
    """
    result = _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    return _replaced(result, status="parse_error") if result.status == "zero_division" else result
