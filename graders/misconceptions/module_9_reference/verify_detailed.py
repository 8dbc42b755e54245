"""Wrong versions of verify_detailed: what the verifier extracted and decided for one response.

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
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


def first_box(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like the FIRST \boxed{} is read; a later box overrules an earlier one (use the LAST)

    ru: похоже, читается ПЕРВЫЙ \boxed{}; более поздняя рамка отменяет более раннюю (берите ПОСЛЕДНЮЮ)
    """
    start = text.find("boxed{")
    if start > 0 and text[start - 1] == "\\":
        depth, open_at = 1, start + len("boxed{")
        for index in range(open_at, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                text = text[:index + 1]  # cut after the first box: the reference rules then read it as last
                break
    return _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)


def first_number(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like the FIRST number is read; without a box the LAST number is the final answer

    ru: похоже, читается ПЕРВОЕ число; без рамки окончательный ответ — ПОСЛЕДНЕЕ число
    """
    found, _content = _last_box(text)
    if not found:
        numbers_found = re.findall(_number_regex(), text, re.ASCII)
        text = numbers_found[0] if numbers_found else ""  # the first number, not the last
    return _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)


def exact_equality(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like exact equality (==):
    an answer within max(abs_tol, rel_tol*|ref|) of the reference (3/7 vs 0.428571) is 'correct'

    ru: похоже на точное равенство (==): ответ в пределах max(abs_tol, rel_tol*|ref|) от эталона (3/7 и 0.428571)
    получает статус 'correct'
    """
    return _right(text, reference, rel_tol=0.0, abs_tol=0.0)  # x == ref
