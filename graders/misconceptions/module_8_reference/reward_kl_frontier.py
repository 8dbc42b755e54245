"""Wrong versions of E_{pi*}[r] and KL(pi* || pi_ref) = sum_y pi*(y) log(pi*(y)/pi_ref(y))
for each beta (reward_kl_frontier).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _with_kl(reference, rewards, betas, kl):
    """The reference frontier with "kl" = kl(policies (M, K), pi_ref (K,)) instead."""
    frontier = _right(reference, rewards, betas)
    return {**frontier, "kl": kl(frontier["policies"], np.asarray(reference, dtype=np.float64))}


def frontier_kl_in_bits(reference, rewards, betas):
    """the KL is off by a factor 1/ln 2 = 1.4427: use natural logarithms (nats), not log2

    ru: KL отличается множителем 1/ln 2 = 1.4427: используйте натуральные логарифмы (наты), а не log2
    """
    def kl(policies, pi_ref):
        ratio = np.divide(policies, pi_ref, out=np.ones_like(policies), where=policies > 0)
        return np.maximum((policies * np.log2(ratio)).sum(axis=1), 0.0)
    return _with_kl(reference, rewards, betas, kl)


def frontier_kl_ratio_inverted(reference, rewards, betas):
    """the KL is negative: the log-ratio is upside down; KL(pi* || pi_ref) = sum pi* log(pi* / pi_ref) >= 0

    ru: KL отрицательна: логарифм отношения перевёрнут; KL(pi* || pi_ref) = sum pi* log(pi* / pi_ref) >= 0
    """
    def kl(policies, pi_ref):
        inverted = np.divide(pi_ref, policies, out=np.ones_like(policies), where=policies > 0)
        return (policies * np.log(inverted)).sum(axis=1)
    return _with_kl(reference, rewards, betas, kl)


def frontier_reverse_kl(reference, rewards, betas):
    """looks like the reverse KL(pi_ref || pi*); the regulariser is KL(pi* || pi_ref) = sum pi* log(pi* / pi_ref)

    ru: похоже на обратную KL(pi_ref || pi*); регуляризатор — KL(pi* || pi_ref) = sum pi* log(pi* / pi_ref)
    """
    def kl(policies, pi_ref):
        support = pi_ref > 0
        return (pi_ref[support] * np.log(pi_ref[support] / policies[:, support])).sum(axis=1)
    return _with_kl(reference, rewards, betas, kl)


def frontier_reward_under_reference(reference, rewards, betas):
    """the expected reward does not change with beta: take E[r] under pi* (policies @ rewards), not under pi_ref

    ru: ожидаемая награда не меняется с beta: берите E[r] по pi* (policies @ rewards), а не по pi_ref
    """
    frontier = _right(reference, rewards, betas)
    expected = float(np.asarray(reference, dtype=np.float64) @ np.asarray(rewards, dtype=np.float64))
    return {**frontier, "reward": np.full(frontier["beta"].shape, expected)}
