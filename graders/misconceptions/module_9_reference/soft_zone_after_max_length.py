"""Putting the soft zone beyond L_max: no penalty up to L_max."""

EXERCISE = "module_9_reference.overlong_penalty"
NAME = "soft_zone_after_max_length"
HINT = 'looks like the soft zone starts AT L_max; it is the last L_cache tokens BEFORE L_max, from L_max - L_cache'


def overlong_penalty(length, max_length, cache_length):
    soft_start = max_length - cache_length
    if length <= max_length:
        return 0.0
    return max(-1.0, (max_length - length) / cache_length)
