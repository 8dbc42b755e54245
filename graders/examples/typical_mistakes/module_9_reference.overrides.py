# Typical mistakes, appended to the reference module_9_reference.py by `rl4llm demo`.


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    # mistake: numpy's ddof=1 "because TRL does it" -- the lecture uses population std
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=-1, keepdims=True)
    if not scale:
        return centred
    return centred / (r.std(axis=-1, ddof=1, keepdims=True) + eps)


def informative_group_probability(p, group_size):
    # mistake: forgets that an all-wrong group is uninformative too
    return 1.0 - p ** group_size
