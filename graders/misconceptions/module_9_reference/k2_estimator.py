"""The k2 estimator (ref - logp)^2 / 2 instead of k3."""

EXERCISE = "module_9_reference.k3_kl"
NAME = "k2_estimator"
HINT = 'looks like k2 = d^2 / 2; the exercise asks for k3 = exp(d) - d - 1 with d = ref - logp'


def k3_kl(logprobs, ref_logprobs):
    logp = np.asarray(logprobs, dtype=np.float64)
    ref = np.asarray(ref_logprobs, dtype=np.float64)
    return 0.5 * (ref - logp) ** 2
