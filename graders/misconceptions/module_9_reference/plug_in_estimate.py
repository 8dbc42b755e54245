"""The biased plug-in estimate 1 - (1 - c/n)^k."""

EXERCISE = "module_9_reference.pass_at_k_unbiased"
NAME = "plug_in_estimate"
HINT = 'looks like 1 - (1 - c/n)^k (biased: it treats samples as drawn with replacement); the unbiased estimator is 1 - C(n - c, k) / C(n, k)'


def pass_at_k_unbiased(n, c, k):
    n, c, k = _integer(n, "n", 1), _integer(c, "c", 0), _integer(k, "k", 1)
    if c > n or k > n:
        raise ValueError(f"c and k must be <= n = {n}, got c = {c}, k = {k}")
    return 1.0 - (1.0 - c / n) ** k
