"""C(n - c, k) / C(n, k) without the 1 - : the chance that every drawn sample fails."""

EXERCISE = "module_9_reference.pass_at_k_unbiased"
NAME = "unbiased_all_wrong"
HINT = 'looks like C(n - c, k) / C(n, k), the chance that all k drawn samples fail; pass@k is one minus that'


def pass_at_k_unbiased(n, c, k):
    n, c, k = _integer(n, "n", 1), _integer(c, "c", 0), _integer(k, "k", 1)
    if c > n or k > n:
        raise ValueError(f"c and k must be <= n = {n}, got c = {c}, k = {k}")
    return math.comb(n - c, k) / math.comb(n, k)
