"""Wrong versions of A_i = (r_i - mean(r)) / (std(r) + eps) within each group (group_relative_advantages).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _advantages(rewards, scale, eps, ddof, *, axis=-1, spread=np.std):
    """(r - mean) / (spread + eps) as first written: no exact zeros for an all-equal group, unlike _right."""
    r = np.asarray(rewards, dtype=np.float64)
    centred = r - r.mean(axis=axis, keepdims=True)
    return centred / (spread(r, axis=axis, ddof=ddof, keepdims=True) + eps) if scale else centred


def batch_statistics(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like the mean/std of the whole batch; GRPO standardises within each group (last axis)

    ru: похоже на mean/std всего батча; GRPO стандартизует внутри каждой группы (последняя ось)
    """
    return _advantages(rewards, scale, eps, ddof, axis=None)


def ddof_ignored(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like the ddof argument is ignored; ddof=1 (TRL's convention) must give the sample std

    ru: похоже, аргумент ddof игнорируется; ddof=1 (соглашение TRL) должен давать выборочное std
    """
    return _advantages(rewards, scale, eps, 0)


def divides_by_variance(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like a division by the variance; GRPO divides by the standard deviation (its square root) + eps

    ru: похоже на деление на дисперсию; GRPO делит на стандартное отклонение (корень из неё) + eps
    """
    return _advantages(rewards, scale, eps, ddof, spread=np.var)


def no_eps(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like eps is not added to the std: an all-equal group gives NaN (0/0); its advantages are zeros

    ru: похоже, eps не прибавлен к std: группа из равных наград даёт NaN (0/0); её преимущества — нули
    """
    return _advantages(rewards, scale, 0.0, ddof)


def sample_std(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like sample std (ddof=1); the lecture uses population std (ddof=0)

    ru: похоже на выборочное std (ddof=1); в лекции используется std генеральной совокупности (ddof=0)
    """
    return _advantages(rewards, scale, eps, 1)


def statistics_along_axis_0(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like mean/std along axis 0 (across groups); groups run along the LAST axis of (num_groups, G)

    ru: похоже на mean/std по оси 0 (поперёк групп); группы идут вдоль ПОСЛЕДНЕЙ оси массива (num_groups, G)
    """
    return _advantages(rewards, scale, eps, ddof, axis=0)


def unscaled_not_centred(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like scale=False returns the raw rewards; without scaling the advantages are still centred:
    r_i - mean(r)

    ru: похоже, scale=False возвращает сырые награды; без масштабирования преимущества всё равно центрированы: r_i -
    mean(r)
    """
    return _advantages(rewards, scale, eps, ddof) if scale else np.array(rewards, dtype=np.float64)


def eps_inside_sqrt(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like (r - mean) / sqrt(var + eps); eps is added to the std itself: (r - mean) / (std + eps)

    ru: похоже на (r - mean) / sqrt(var + eps); eps прибавляется к самому std: (r - mean) / (std + eps)
    """
    return _advantages(rewards, scale, eps, ddof,
                       spread=lambda r, axis, ddof, keepdims: np.sqrt(np.var(r, axis=axis, ddof=ddof,
                                                                             keepdims=keepdims) + eps) - eps)


def batch_std(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like the group mean but the std of the whole batch; each group is divided by its OWN std (last axis)

    ru: похоже на среднее по группе, но std всего батча; каждая группа делится на СВОЁ std (последняя ось)
    """
    return _advantages(rewards, scale, eps, ddof,
                       spread=lambda r, axis, ddof, keepdims: np.std(r, ddof=ddof))  # one std for the batch


def sample_std_guarded(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like sample std (ddof=1), the all-equal group kept at zeros; the lecture uses population std (ddof=0)

    ru: похоже на выборочное std (ddof=1), группа из равных наград верно даёт нули; в лекции используется std
    генеральной совокупности (ddof=0)
    """
    return _right(rewards, scale, eps=eps, ddof=1)


def ddof_ignored_guarded(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like the ddof argument is ignored (the all-equal group kept at zeros); ddof=1 (TRL's convention) must
    give the sample std

    ru: похоже, аргумент ddof игнорируется (группа из равных наград верно даёт нули); ddof=1 (соглашение TRL) должен
    давать выборочное std
    """
    return _right(rewards, scale, eps=eps, ddof=0)


def divides_by_variance_guarded(rewards, scale=True, *, eps=1e-6, ddof=0):
    """looks like a division by the variance (the all-equal group kept at zeros); GRPO divides by the standard
    deviation (its square root) + eps

    ru: похоже на деление на дисперсию (группа из равных наград верно даёт нули); GRPO делит на стандартное
    отклонение (корень из неё) + eps
    """
    r = np.asarray(rewards, dtype=np.float64)
    all_equal = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    centred = np.where(all_equal, 0.0, r - r.mean(axis=-1, keepdims=True))
    if not scale:
        return centred
    variance = r.var(axis=-1, ddof=ddof, keepdims=True)
    return np.divide(centred, variance + eps, out=np.zeros_like(centred), where=~all_equal)
