"""The linear soft-zone penalty continued beyond L_max instead of capping at -1."""

EXERCISE = "module_9_reference.overlong_penalty"
NAME = "no_hard_cap"
HINT = 'looks like the linear penalty keeps falling beyond L_max; past L_max the penalty is exactly -1'


def overlong_penalty(length, max_length, cache_length):
    soft_start = max_length - cache_length
    if length <= soft_start:
        return 0.0
    return (soft_start - length) / cache_length
