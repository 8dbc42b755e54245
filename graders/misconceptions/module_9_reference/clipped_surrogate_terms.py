"""Wrong versions of min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A) (clipped_surrogate_terms).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def clipped_term_only(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like clip(rho, 1 - eps_low, 1 + eps_high)*A alone; take the min with the unclipped rho*A

    ru: похоже на один лишь clip(rho, 1 - eps_low, 1 + eps_high)*A; возьмите min с неотсечённым rho*A
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.clip(ratio, 1.0 - eps_low, 1.0 + eps_high) * advantage


def clips_the_product(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like clip(rho*A, 1 - eps, 1 + eps); clip the RATIO, then multiply by A

    ru: похоже на clip(rho*A, 1 - eps, 1 + eps); отсекайте ОТНОШЕНИЕ, а затем умножайте на A
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.minimum(ratio * advantage, np.clip(ratio * advantage, 1.0 - eps_low, 1.0 + eps_high))


def eps_swapped(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like eps_low and eps_high swapped; the range is [1 - eps_low, 1 + eps_high]

    ru: похоже, eps_low и eps_high перепутаны; диапазон равен [1 - eps_low, 1 + eps_high]
    """
    return _right(ratios, advantages, eps_high, eps_low)


def max_instead_of_min(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like max instead of min: the clipped objective takes the pessimistic MIN of the two branches

    ru: похоже на max вместо min: отсечённая цель берёт пессимистичный MIN из двух ветвей
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.maximum(ratio * advantage, np.clip(ratio, 1.0 - eps_low, 1.0 + eps_high) * advantage)


def no_clip(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like rho * A without clipping;
    the PPO/GRPO term is min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A)

    ru: похоже на rho * A без отсечения; член PPO/GRPO равен min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A)
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return ratio * advantage


def symmetric_eps_low(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like eps_low used on both sides; the upper bound is 1 + eps_high (DAPO's clip-higher)

    ru: похоже, eps_low использован с обеих сторон; верхняя граница равна 1 + eps_high (clip-higher из DAPO)
    """
    return _right(ratios, advantages, eps_low, eps_low)


def minimum_for_maximum(ratios, advantages, eps_low=0.2, eps_high=0.2):
    """looks like clip written as np.minimum(np.minimum(rho, 1 + eps_high), 1 - eps_low), which caps every ratio at
    1 - eps_low; the clip is np.maximum(np.minimum(rho, 1 + eps_high), 1 - eps_low) (or np.clip)

    ru: похоже, clip записан как np.minimum(np.minimum(rho, 1 + eps_high), 1 - eps_low), что ограничивает каждое
    отношение сверху значением 1 - eps_low; clip — это np.maximum(np.minimum(rho, 1 + eps_high), 1 - eps_low) (или
    np.clip)
    """
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    clipped = np.minimum(np.minimum(ratio, 1.0 + eps_high), 1.0 - eps_low)  # np.minimum where np.maximum belongs
    return np.minimum(ratio * advantage, clipped * advantage)
