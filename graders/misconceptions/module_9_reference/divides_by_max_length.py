"""Dividing the soft-zone overshoot by L_max instead of L_cache."""

EXERCISE = "module_9_reference.overlong_penalty"
NAME = "divides_by_max_length"
HINT = 'looks like a division by L_max; the soft zone is L_cache long: (L_max - L_cache - |y|) / L_cache'


def overlong_penalty(length, max_length, cache_length):
    soft_start = max_length - cache_length
    if length <= soft_start:
        return 0.0
    if length <= max_length:
        return (soft_start - length) / max_length
    return -1.0
