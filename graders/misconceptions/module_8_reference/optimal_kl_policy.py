"""Wrong versions of pi*(y) = pi_ref(y) exp(r(y)/beta) / Z (optimal_kl_policy).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def optimum_beta_times_reward(reference, rewards, beta):
    """looks like exp(beta * r); the KL-regularised optimum tilts pi_ref by exp(r / beta)

    ru: похоже на exp(beta * r); оптимум с KL-регуляризацией наклоняет pi_ref множителем exp(r / beta)
    """
    pi_ref, r = np.asarray(reference, dtype=np.float64), np.asarray(rewards, dtype=np.float64)
    support = pi_ref > 0
    logits = np.full(pi_ref.shape, -np.inf)
    logits[support] = np.log(pi_ref[support]) + float(beta) * r[support]
    weights = np.exp(logits - logits[support].max())
    return weights / weights.sum()


def optimum_exp_overflow(reference, rewards, beta):
    """NaN for large r / beta: exp overflows; subtract the largest logit first (log-sum-exp),
    pi* is shift invariant

    ru: NaN при большом r / beta: exp переполняется; сначала вычтите наибольший логит (log-sum-exp), pi* не меняется
    от сдвига
    """
    pi_ref, r = np.asarray(reference, dtype=np.float64), np.asarray(rewards, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        weights = pi_ref * np.exp(r / float(beta))
        return weights / weights.sum()


def optimum_not_normalised(reference, rewards, beta):
    """the result does not sum to 1: divide pi_ref * exp(r / beta) by Z = sum_y pi_ref(y) exp(r(y) / beta)

    ru: результат не даёт в сумме 1: разделите pi_ref * exp(r / beta) на Z = sum_y pi_ref(y) exp(r(y) / beta)
    """
    pi_ref, r = np.asarray(reference, dtype=np.float64), np.asarray(rewards, dtype=np.float64)
    return pi_ref * np.exp(r / float(beta))


def optimum_without_reference(reference, rewards, beta):
    """looks like softmax(r / beta) alone; the optimum is pi_ref(y) exp(r(y) / beta) / Z (weighted by pi_ref)

    ru: похоже на один лишь softmax(r / beta); оптимум равен pi_ref(y) exp(r(y) / beta) / Z (с весом pi_ref)
    """
    logits = np.asarray(rewards, dtype=np.float64) / float(beta)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()
