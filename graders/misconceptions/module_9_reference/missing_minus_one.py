"""exp(d) - d without the -1: always 1 too large."""

EXERCISE = "module_9_reference.k3_kl"
NAME = "missing_minus_one"
HINT = 'looks like exp(d) - d without the -1; k3 = exp(d) - d - 1 is 0 when the policies agree'


def k3_kl(logprobs, ref_logprobs):
    logp = np.asarray(logprobs, dtype=np.float64)
    ref = np.asarray(ref_logprobs, dtype=np.float64)
    return np.exp(ref - logp) - (ref - logp)
