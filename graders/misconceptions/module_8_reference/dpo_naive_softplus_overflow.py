"""log(1 + exp(-beta h)) with a plain exp: inf for beta h = -1e4 (exp overflows)."""

EXERCISE = "module_8_reference.dpo_loss_from_margin"
NAME = "dpo_naive_softplus_overflow"
HINT = "inf at large negative beta h: exp(-beta h) overflows; use softplus(x) = logaddexp(0, x) (or max(x, 0) + log1p(exp(-|x|)))"


def dpo_loss_from_margin(h, beta):
    h = _as_array("h", h)
    beta = _positive("beta", beta)
    with np.errstate(over="ignore"):
        return _out(np.log(1.0 + np.exp(-beta * h)), h, beta)
