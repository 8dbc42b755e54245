"""k3 with the difference reversed: exp(logp - ref) - (logp - ref) - 1."""

EXERCISE = "module_9_reference.k3_kl"
NAME = "reversed_difference"
HINT = 'looks like d = logp - ref; k3 for KL(pi || pi_ref) uses d = ref_logprobs - logprobs'


def k3_kl(logprobs, ref_logprobs):
    logp = np.asarray(logprobs, dtype=np.float64)
    ref = np.asarray(ref_logprobs, dtype=np.float64)
    return np.exp(logp - ref) - (logp - ref) - 1.0
