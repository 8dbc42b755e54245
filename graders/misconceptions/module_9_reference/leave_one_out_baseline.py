"""Wrong versions of b_i = (sum_j r_j - r_i) / (G - 1), the mean reward of the other answers
(leave_one_out_baseline).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def batch_leave_one_out(rewards):
    """looks like the other answers of the whole BATCH;
    RLOO averages the other answers of the same group (last axis)

    ru: похоже, взяты остальные ответы всего БАТЧА; RLOO усредняет остальные ответы той же группы (последняя ось)
    """
    return _right(np.reshape(rewards, -1)).reshape(np.shape(rewards))  # one big group


def divides_by_group_size(rewards):
    """looks like (sum - r_i) / G; G - 1 other answers remain, so divide by G - 1

    ru: похоже на (sum - r_i) / G; остаётся G - 1 других ответов, поэтому делите на G - 1
    """
    r = np.asarray(rewards, dtype=np.float64)
    return (r.sum(axis=-1, keepdims=True) - r) / r.shape[-1]


def includes_self(rewards):
    """looks like the plain group mean; the leave-one-out baseline excludes the answer itself:
    (sum - r_i) / (G - 1)

    ru: похоже на обычное среднее по группе; базовая линия leave-one-out исключает сам ответ: (sum - r_i) / (G - 1)
    """
    r = np.asarray(rewards, dtype=np.float64)
    return np.broadcast_to(r.mean(axis=-1, keepdims=True), r.shape).copy()


def returns_rloo_advantage(rewards):
    """looks like r_i - b_i (the RLOO advantage); this function returns the baseline b_i itself

    ru: похоже на r_i - b_i (преимущество RLOO); эта функция возвращает саму базовую линию b_i
    """
    return np.asarray(rewards, dtype=np.float64) - _right(rewards)
