"""Wrong versions of verify_numeric_answer: verify_detailed(...).accuracy, the final answer within tolerance.

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _last_number(text):
    """The last number of ``text`` in the reference's grammar, or "" when there is none."""
    numbers_found = re.findall(_number_regex(), text, re.ASCII)
    return numbers_found[-1] if numbers_found else ""


def absolute_tolerance_only(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like only |x - ref| <= abs_tol is tested; the tolerance is max(abs_tol, rel_tol*|ref|)

    ru: похоже, проверяется только |x - ref| <= abs_tol; допуск равен max(abs_tol, rel_tol*|ref|)
    """
    return _right(text, reference, rel_tol=0.0, abs_tol=abs_tol)


def double_backslash_only(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like only '\\boxed{' with TWO backslashes is found;
    a box may have one or more backslashes (models write \boxed{...})

    ru: похоже, находится только '\\boxed{' с ДВУМЯ обратными слешами; перед рамкой может стоять один или несколько
    обратных слешей (модели пишут \boxed{...})
    """
    start = text.rfind("\\\\boxed{")  # the notebook's raw strings hold two backslashes
    return _right(text[start:] if start >= 0 else _last_number(text), reference, rel_tol=rel_tol, abs_tol=abs_tol)


def exact_equality(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like exact equality (==):
    an answer within max(abs_tol, rel_tol*|ref|) of the reference (3/7 vs 0.428571, 0.30000000000000004 vs 0.3) is correct

    ru: похоже на точное равенство (==): ответ в пределах max(abs_tol, rel_tol*|ref|) от эталона (3/7 и 0.428571,
    0.30000000000000004 и 0.3) верен
    """
    return _right(text, reference, rel_tol=0.0, abs_tol=0.0)  # x == ref


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


def float_parsing(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like answers are parsed with float(), which cannot read fractions like 3/7;
    parse with fractions.Fraction

    ru: похоже, ответы разбираются через float(), который не читает дроби вроде 3/7; разбирайте через
    fractions.Fraction
    """
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


def no_thousands_separators(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like thousands separators are not understood: '1,234,567' is one number, 1234567

    ru: похоже, разделители тысяч не распознаются: '1,234,567' — одно число, 1234567
    """
    found, _content = _last_box(text)
    if not found:
        numbers_found = re.findall(r"[+-]?(?:\d*\.\d+|\d+)(?:[eE][+-]?\d+)?(?:/\d+)?", text)
        text = numbers_found[-1] if numbers_found else ""
    return _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)


def single_backslash_only(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like only '\boxed{' with exactly ONE backslash is found (an escaped '\\boxed{' is skipped);
    one or more backslashes may precede boxed

    ru: похоже, находится только '\boxed{' ровно с ОДНИМ обратным слешем (экранированный '\\boxed{' пропускается);
    перед boxed может стоять один или несколько обратных слешей
    """
    starts = [match.start() for match in re.finditer(r"(?<!\\)\\boxed\{", text)]  # "\\boxed{" looks escaped
    return _right(text[starts[-1]:] if starts else _last_number(text), reference, rel_tol=rel_tol, abs_tol=abs_tol)


def tolerances_ignored(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like rel_tol/abs_tol are not passed on: the caller's tolerances must reach the comparison

    ru: похоже, rel_tol/abs_tol не передаются дальше: допуски вызывающего должны дойти до сравнения
    """
    return _right(text, reference)  # the default tolerances


def unclosed_box_falls_back(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like an unclosed last \boxed{ is skipped and the last number read;
    a truncated box is a parse error (0), never a fallback

    ru: похоже, незакрытый последний \boxed{ пропускается и читается последнее число; обрезанная рамка — ошибка
    разбора (0), а не повод для запасного варианта
    """
    found, content = _last_box(text)
    if found and content is None:  # the box regex needs a closing brace: fall back to numbers
        text = _last_number(text)
    return _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)


def signless_numbers(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like the number regex has no sign: '-3' is read as 3; a number may start with + or -

    ru: похоже, в регулярном выражении числа нет знака: '-3' читается как 3; число может начинаться с + или -
    """
    def unsigned(answer):
        found, _content = _last_box(answer)
        return answer if found else _last_number(answer).lstrip("+-")  # the sign is not part of the match
    return _right(unsigned(text), unsigned(reference) if isinstance(reference, str) else reference,
                  rel_tol=rel_tol, abs_tol=abs_tol)


def dollar_not_stripped(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    r"""looks like '$' is not stripped from a box's content: \boxed{$12$} is the number 12, not a parse error

    ru: похоже, '$' не удаляется из содержимого рамки: \boxed{$12$} — это число 12, а не ошибка разбора
    """
    found, content = _last_box(text)
    if found and content is not None and "$" in content:
        return 0  # "$12$" does not parse
    return _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)


def fixed_tolerance(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):
    """looks like a fixed tolerance |x - ref| <= 1e-3; use max(abs_tol, rel_tol*|ref|) with the caller's tolerances

    ru: похоже на фиксированный допуск |x - ref| <= 1e-3; используйте max(abs_tol, rel_tol*|ref|) с допусками
    вызывающего
    """
    return _right(text, reference, rel_tol=0.0, abs_tol=1e-3)
