"""C(c, k) / C(n, k): the chance that k samples drawn are ALL correct."""

EXERCISE = "module_9_reference.pass_at_k_unbiased"
NAME = "unbiased_all_correct"
HINT = 'looks like C(c, k) / C(n, k), all k drawn samples correct; pass@k is 1 - C(n - c, k) / C(n, k)'


def pass_at_k_unbiased(n, c, k):
    n, c, k = _integer(n, "n", 1), _integer(c, "c", 0), _integer(k, "k", 1)
    if c > n or k > n:
        raise ValueError(f"c and k must be <= n = {n}, got c = {c}, k = {k}")
    return math.comb(c, k) / math.comb(n, k)
