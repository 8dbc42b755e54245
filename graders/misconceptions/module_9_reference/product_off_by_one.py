"""The stable product over i = n - c .. n - 1 instead of n - c + 1 .. n."""

EXERCISE = "module_9_reference.pass_at_k_unbiased"
NAME = "product_off_by_one"
HINT = 'looks like the product over i = n-c .. n-1; 1 - C(n-c, k)/C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)'


def pass_at_k_unbiased(n, c, k):
    n, c, k = _integer(n, "n", 1), _integer(c, "c", 0), _integer(k, "k", 1)
    if c > n or k > n:
        raise ValueError(f"c and k must be <= n = {n}, got c = {c}, k = {k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c, n, dtype=np.float64)))
