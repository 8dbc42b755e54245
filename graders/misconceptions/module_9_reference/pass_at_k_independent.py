"""Wrong versions of pass@k = 1 - (1 - p)^k (pass_at_k_independent).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def all_attempts_correct(p, k):
    """looks like p^k (all k right); pass@k needs at least ONE right: 1 - (1 - p)^k

    ru: похоже на p^k (все k верны); pass@k требует хотя бы ОДНОЙ верной попытки: 1 - (1 - p)^k
    """
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return p ** k


def all_attempts_wrong(p, k):
    """looks like (1 - p)^k, the chance that all k fail; pass@k is one minus that

    ru: похоже на (1 - p)^k, вероятность того, что все k попыток неудачны; pass@k — единица минус это
    """
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return (1.0 - p) ** k


def union_bound(p, k):
    """looks like min(1, k p), a union bound; independent attempts give 1 - (1 - p)^k

    ru: похоже на min(1, k p), оценку объединения (union bound); независимые попытки дают 1 - (1 - p)^k
    """
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return min(1.0, k * p)
