"""Wrong versions of k3 = exp(d) - d - 1, d = ref - logp (k3_kl).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def k1_estimator(logprobs, ref_logprobs):
    """looks like the k1 estimator logp - ref (unbiased, but can be negative);
    k3 = exp(d) - d - 1 with d = ref - logp

    ru: похоже на оценку k1 logp - ref (несмещённую, но она может быть отрицательной); k3 = exp(d) - d - 1, где d =
    ref - logp
    """
    logp, ref = np.asarray(logprobs, dtype=np.float64), np.asarray(ref_logprobs, dtype=np.float64)
    return logp - ref


def k2_estimator(logprobs, ref_logprobs):
    """looks like k2 = d^2 / 2; the exercise asks for k3 = exp(d) - d - 1 with d = ref - logp

    ru: похоже на k2 = d^2 / 2; упражнение требует k3 = exp(d) - d - 1, где d = ref - logp
    """
    logp, ref = np.asarray(logprobs, dtype=np.float64), np.asarray(ref_logprobs, dtype=np.float64)
    return 0.5 * (ref - logp) ** 2


def missing_minus_one(logprobs, ref_logprobs):
    """looks like exp(d) - d without the -1; k3 = exp(d) - d - 1 is 0 when the policies agree

    ru: похоже на exp(d) - d без -1; k3 = exp(d) - d - 1 равна 0, когда политики совпадают
    """
    logp, ref = np.asarray(logprobs, dtype=np.float64), np.asarray(ref_logprobs, dtype=np.float64)
    return np.exp(ref - logp) - (ref - logp)


def reversed_difference(logprobs, ref_logprobs):
    """looks like d = logp - ref; k3 for KL(pi || pi_ref) uses d = ref_logprobs - logprobs

    ru: похоже на d = logp - ref; k3 для KL(pi || pi_ref) использует d = ref_logprobs - logprobs
    """
    logp, ref = np.asarray(logprobs, dtype=np.float64), np.asarray(ref_logprobs, dtype=np.float64)
    return np.exp(logp - ref) - (logp - ref) - 1.0
