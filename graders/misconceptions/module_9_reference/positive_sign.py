"""The soft-zone term with the wrong sign: a bonus that grows with the length."""

EXERCISE = "module_9_reference.overlong_penalty"
NAME = "positive_sign"
HINT = 'looks like (|y| - (L_max - L_cache)) / L_cache, a BONUS; the overlong term is a penalty in [-1, 0]'


def overlong_penalty(length, max_length, cache_length):
    soft_start = max_length - cache_length
    if length <= soft_start:
        return 0.0
    if length <= max_length:
        return (length - soft_start) / cache_length
    return 1.0
