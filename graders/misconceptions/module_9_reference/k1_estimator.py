"""The naive k1 estimator logp - ref instead of k3."""

EXERCISE = "module_9_reference.k3_kl"
NAME = "k1_estimator"
HINT = 'looks like the k1 estimator logp - ref (unbiased, but can be negative); k3 = exp(d) - d - 1 with d = ref - logp'


def k3_kl(logprobs, ref_logprobs):
    logp = np.asarray(logprobs, dtype=np.float64)
    ref = np.asarray(ref_logprobs, dtype=np.float64)
    return logp - ref
