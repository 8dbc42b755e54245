"""Wrong versions of DAPO's R(|y|): 0, then (L_max - L_cache - |y|) / L_cache, then -1 (overlong_penalty).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def divides_by_max_length(length, max_length, cache_length):
    """looks like a division by L_max; the soft zone is L_cache long: (L_max - L_cache - |y|) / L_cache

    ru: похоже на деление на L_max; мягкая зона имеет длину L_cache: (L_max - L_cache - |y|) / L_cache
    """
    if max_length - cache_length < length <= max_length:  # the soft zone
        return (max_length - cache_length - length) / max_length
    return _right(length, max_length, cache_length)


def no_hard_cap(length, max_length, cache_length):
    """looks like the linear penalty keeps falling beyond L_max; past L_max the penalty is exactly -1

    ru: похоже, линейный штраф продолжает убывать после L_max; за L_max штраф равен ровно -1
    """
    soft_start = max_length - cache_length
    return 0.0 if length <= soft_start else (soft_start - length) / cache_length


def positive_sign(length, max_length, cache_length):
    """looks like (|y| - (L_max - L_cache)) / L_cache, a BONUS; the overlong term is a penalty in [-1, 0]

    ru: похоже на (|y| - (L_max - L_cache)) / L_cache, то есть БОНУС; член за превышение длины — штраф из [-1, 0]
    """
    return 0.0 - _right(length, max_length, cache_length)  # 0.0 - x: no -0.0


def soft_zone_after_max_length(length, max_length, cache_length):
    """looks like the soft zone starts AT L_max; it is the last L_cache tokens BEFORE L_max, from L_max - L_cache

    ru: похоже, мягкая зона начинается В L_max; это последние L_cache токенов ДО L_max, начиная с L_max - L_cache
    """
    return _right(length, max_length + cache_length, cache_length)  # the zone moved past L_max
