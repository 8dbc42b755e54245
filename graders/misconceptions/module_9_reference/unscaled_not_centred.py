"""With scale=False, returning the raw rewards instead of the centred ones."""

EXERCISE = "module_9_reference.group_relative_advantages"
NAME = "unscaled_not_centred"
HINT = 'looks like scale=False returns the raw rewards; without scaling the advantages are still centred: r_i - mean(r)'


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=np.float64)
    if not scale:
        return r.copy()
    centred = r - r.mean(axis=-1, keepdims=True)
    return centred / (r.std(axis=-1, ddof=ddof, keepdims=True) + eps)
