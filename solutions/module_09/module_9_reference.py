"""Module 9 reference: RLVR and GRPO, one formula per function.

Pure NumPy (no torch), natural logarithms, float64. Inputs are never modified.
Scalars come back as Python ``float``/``int``, arrays as float64 ``np.ndarray``.
Invalid arguments raise ``ValueError`` naming the argument; the verifier never
raises on a ``str`` response.

Axis glossary: N responses, G responses per prompt (a group), T tokens.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

# ---------------------------------------------------------------------------
# Given: the verifier's result type and input checks. You need not change them.
# ---------------------------------------------------------------------------
VERIFIER_VERSION = "m9-numeric-verifier-1.0"


@dataclass(frozen=True)
class VerifierResult:
    """What the verifier extracted and decided for one response.

    reward: the scalar an RL trainer receives (1.0 or 0.0: accuracy is the only component).
    accuracy: 1 when the final answer equals the reference within tolerance, else 0.
    status: "correct", "wrong", "no_answer", "parse_error", "zero_division" or "non_finite".
    extracted: the answer text that was parsed (box content or last number); None when none.
    """

    reward: float
    accuracy: int
    status: str
    extracted: str | None


def _float_array(values, name: str, ndims: tuple[int, ...] | None = None, finite: bool = True) -> np.ndarray:
    """A float64 COPY of ``values``; ValueError naming ``name`` if not numeric, finite, of rank ``ndims``."""
    try:
        array = np.array(values, dtype=np.float64)  # np.array copies: the caller's data stays untouched
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric, got {type(values).__name__}") from error
    if ndims is not None and array.ndim not in ndims:
        raise ValueError(f"{name} must have {' or '.join(map(str, ndims))} dimension(s), got shape {array.shape}")
    if finite and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def _integer(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _real(value, name: str, low: float = 0.0, high: float = math.inf) -> float:
    """A finite Python float in [low, high]; ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low}, {high}], got {value!r}")
    return float(value)


def _lengths(lengths, count: int) -> list[int]:
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__iter__"):
        raise ValueError(f"lengths must be a sequence of positive ints, got {type(lengths).__name__}")
    values = [_integer(length, "lengths", 1) for length in lengths]
    if len(values) != count:
        raise ValueError(f"lengths has {len(values)} entries but rewards has {count}")
    return values


# ---------------------------------------------------------------------------
# The verifier: the reward of RLVR
# verify_detailed and verify_numeric_answer are graded. The three private helpers below are the
# suggested way to build them, part of the same exercise and not graded on their own: write them,
# or replace them with your own (nothing else in the course calls them).
# Оцениваются verify_detailed и verify_numeric_answer. Три закрытые функции ниже -- предлагаемый
# способ их построить; это часть того же задания, отдельно они не оцениваются: напишите их или
# замените своими (больше ничто в курсе их не вызывает).
# ---------------------------------------------------------------------------
def _last_box(text: str) -> tuple[bool, str | None]:
    r"""(found, content) of the LAST \boxed{...}; content None when that box never closes.

    ``rfind`` walks back over "boxed{" until one is preceded by a backslash (one
    or more: ``\boxed`` and ``\\boxed`` both count), then one forward pass over
    the braces finds its partner. Both passes are linear in len(text).
    """
    ### BEGIN SOLUTION
    start = text.rfind("boxed{")
    while start > 0 and text[start - 1] != "\\":
        start = text.rfind("boxed{", 0, start)
    if start <= 0:
        return False, None
    depth, open_at = 1, start + len("boxed{")
    for brace in re.finditer(r"[{}]", text[open_at:]):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return True, text[open_at:open_at + brace.start()]
    return True, None  # unclosed: a truncated answer is no answer we can grade
    ### END SOLUTION


def _number_regex() -> str:
    """The number grammar as a regex without nested quantifiers, so matching stays linear in the text.

    [sign] unsigned [/ unsigned]; unsigned = an integer, with or without
    thousands groups ("1,234,567"; "1,2" is two numbers), or a decimal ("2.5",
    ".5"), then an optional exponent ("1.5e3"). Digits are ASCII (use re.ASCII).
    A sign directly after a letter, digit or ")" is an operator: "5-3" holds 5 and 3.
    """
    ### BEGIN SOLUTION
    unsigned = r"(?:\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d*\.\d+|\d+)(?:[eE][+-]?\d+)?"
    return rf"(?:(?<![\w)])[+-])?{unsigned}(?:/{unsigned})?"
    ### END SOLUTION


def _parse_number(token: str) -> tuple[str, Fraction | None]:
    """(status, exact value) of one canonical token: status "ok", "parse_error", "zero_division" or "non_finite".

    The token must match ``_number_regex()`` as a whole; thousands commas are
    dropped and the value is an exact Fraction ("0.1" is 1/10). A magnitude
    beyond 10^+-1000 ("1e999999") is "non_finite", decided from digit counts
    without ever building the number; more than 1000 significant digits is
    "parse_error". "inf", "infinity", "nan", "\\infty" are "non_finite".
    """
    ### BEGIN SOLUTION
    if re.fullmatch(r"[+-]?(?:inf(?:inity)?|nan|\\+infty|\u221e)", token, re.IGNORECASE):
        return "non_finite", None
    if not re.fullmatch(_number_regex(), token, re.ASCII):
        return "parse_error", None
    sign = -1 if token.startswith("-") else 1
    numerator, _, denominator = token.lstrip("+-").partition("/")
    values = []
    for part in (numerator, denominator or "1"):
        mantissa, _, exponent = part.replace(",", "").lower().partition("e")
        whole, _, fraction = mantissa.partition(".")
        whole, fraction = whole.lstrip("0"), fraction.rstrip("0")
        digits = (whole + fraction).lstrip("0")
        if not digits:
            values.append(Fraction(0))
            continue
        exponent_digits = exponent.lstrip("+-").lstrip("0") or "0"
        if len(exponent_digits) > 6:
            return "non_finite", None
        power = int(exponent_digits) * (-1 if exponent.startswith("-") else 1)
        leading = len(whole) - 1 if whole else -(len(fraction) - len(fraction.lstrip("0"))) - 1
        if abs(power + leading) > 1000:  # decimal exponent of the leading digit
            return "non_finite", None
        if len(digits) > 1000:
            return "parse_error", None
        values.append(Fraction(int(digits)) * Fraction(10) ** (power - len(fraction)))
    if values[1] == 0:
        return "zero_division", None
    return "ok", sign * values[0] / values[1]
    ### END SOLUTION


def verify_detailed(text: str, reference: str | int | float, *, rel_tol: float = 1e-6,
                    abs_tol: float = 1e-6) -> VerifierResult:
    r"""Final answer x (last \boxed{...}, else last number) is correct iff |x - ref| <= max(abs_tol, rel_tol*|ref|) (RLVR; Tulu 3, DeepSeek-R1).

    Extraction: the content of the LAST ``\boxed{`` (braces may nest; a later
    box overrules an earlier one); with no box, the LAST number in the text, so
    a gold number inside a wrong derivation does not count. Box content is
    canonicalised (whitespace and ``$`` removed) and must be ONE number, else
    "parse_error" (deliberately strict: no ``\frac``, no units); an unclosed
    last box is "parse_error" too. No box and no number is "no_answer".
    Comparison is exact Fraction arithmetic. Linear time; never raises on a str.

    Args:
        text: the model's response (any str).
        reference: the gold answer, read by the same rules ("3/7", 0.428571, 42);
            one that yields no finite number raises ValueError.
        rel_tol, abs_tol: non-negative tolerances.

    Returns:
        VerifierResult(reward, accuracy, status, extracted).
    """
    ### BEGIN SOLUTION
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    rel_tol, abs_tol = _real(rel_tol, "rel_tol"), _real(abs_tol, "abs_tol")

    def read(answer: str) -> tuple[str, Fraction | None, str | None]:
        """(status, value, extracted) of the final answer in ``answer``."""
        found, content = _last_box(answer)
        if found and content is None:
            return "parse_error", None, None
        if found:
            token, extracted = "".join(content.replace("\\$", "").replace("$", "").split()), content
        else:
            numbers_found = re.findall(_number_regex(), answer, re.ASCII)  # the regex has no groups
            if not numbers_found:
                return "no_answer", None, None
            token = extracted = numbers_found[-1]
        return (*_parse_number(token), extracted)

    if isinstance(reference, str):
        ref_status, ref, _ = read(reference)
    elif isinstance(reference, numbers.Integral) and not isinstance(reference, bool):
        ref_status, ref = "ok", Fraction(int(reference))
    elif isinstance(reference, numbers.Real) and not isinstance(reference, bool) and math.isfinite(reference):
        ref_status, ref = "ok", Fraction(repr(float(reference)))  # repr: 0.1 is 1/10, not its binary expansion
    else:
        ref_status = "not a finite number"
    if ref_status != "ok":
        raise ValueError(f"reference must hold one finite number, got {reference!r} ({ref_status})")

    status, value, extracted = read(text)
    if status == "ok":
        tolerance = max(Fraction(abs_tol), Fraction(rel_tol) * abs(ref))
        status = "correct" if abs(value - ref) <= tolerance else "wrong"
    accuracy = int(status == "correct")
    return VerifierResult(reward=float(accuracy), accuracy=accuracy, status=status, extracted=extracted)
    ### END SOLUTION


def verify_numeric_answer(text: str, reference: str | int | float, *, rel_tol: float = 1e-6,
                          abs_tol: float = 1e-6) -> int:
    """1 if the final answer of ``text`` equals ``reference`` within tolerance, else 0 (= verify_detailed(...).accuracy).

    Never raises on a str ``text``; see ``verify_detailed`` for the rules.
    """
    ### BEGIN SOLUTION
    return verify_detailed(text, reference, rel_tol=rel_tol, abs_tol=abs_tol).accuracy
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Informative groups: only a group with mixed rewards carries a learning signal
# ---------------------------------------------------------------------------
def informative_group_probability(p: float, group_size: int) -> float:
    """P_info = 1 - p^G - (1 - p)^G: chance that a group of G answers is neither all right nor all wrong (DAPO dynamic sampling).

    Computed as -expm1(G*log1p(-s)) - s^G with s = min(p, 1 - p): the same
    number, accurate for tiny P_info and exactly symmetric in p <-> 1 - p.

    Args:
        p: success probability of one answer, in [0, 1].
        group_size: G >= 1 (a group of one is never informative: 0.0).

    Returns:
        P_info as a float in [0, 1].
    """
    ### BEGIN SOLUTION
    p, group_size = _real(p, "p", 0.0, 1.0), _integer(group_size, "group_size", 1)
    if group_size == 1:
        return 0.0
    small = min(p, 1.0 - p)
    return max(0.0, -math.expm1(group_size * math.log1p(-small)) - small ** group_size)
    ### END SOLUTION


def expected_draws_for_informative_groups(num_informative: int, p: float, group_size: int) -> float:
    """E[draws] = B / P_info prompts to sample until B groups are informative (geometric waiting time; DAPO).

    Args:
        num_informative: B >= 0 informative groups wanted (B = 0 needs 0.0 draws).
        p: success probability of one answer, in [0, 1].
        group_size: G >= 1.

    Returns:
        The expected number of sampled prompts; math.inf when P_info is 0.
    """
    ### BEGIN SOLUTION
    wanted = _integer(num_informative, "num_informative", 0)
    informative = informative_group_probability(p, group_size)
    if wanted == 0:
        return 0.0
    return math.inf if informative == 0.0 else wanted / informative
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Advantages: each answer is judged against its own group
# ---------------------------------------------------------------------------
def group_relative_advantages(rewards, scale: bool = True, *, eps: float = 1e-6, ddof: int = 0) -> np.ndarray:
    """A_i = (r_i - mean(r)) / (std(r) + eps) within each group; without ``scale`` only r_i - mean(r) (GRPO; DeepSeekMath).

    Population std (ddof=0) by default, so one success in a binary group of G
    gets exactly sqrt(G - 1) (up to eps); ddof=1 is TRL's convention. A group
    whose rewards are all equal gets exact zeros (no NaN even with eps=0).

    Args:
        rewards: (G,) one group or (num_groups, G); groups run along the last axis.
        scale: divide by the group std (Dr. GRPO turns this off).
        eps: >= 0, added to the std.
        ddof: delta degrees of freedom of the std, 0 <= ddof < G.

    Returns:
        Advantages, float64, the shape of ``rewards``; each group sums to 0.
    """
    ### BEGIN SOLUTION
    r = _float_array(rewards, "rewards", ndims=(1, 2))
    eps, ddof = _real(eps, "eps"), _integer(ddof, "ddof", 0)
    if r.shape[-1] == 0:
        raise ValueError("rewards: a group needs at least one response")
    if scale and ddof >= r.shape[-1]:
        raise ValueError(f"ddof must be smaller than the group size {r.shape[-1]}, got {ddof}")
    all_equal = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    centred = np.where(all_equal, 0.0, r - r.mean(axis=-1, keepdims=True))
    if not scale:
        return centred
    std = r.std(axis=-1, ddof=ddof, keepdims=True)  # (num_groups, 1) or (1,)
    return np.divide(centred, std + eps, out=np.zeros_like(centred), where=~all_equal)
    ### END SOLUTION


def leave_one_out_baseline(rewards) -> np.ndarray:
    """b_i = (sum_j r_j - r_i) / (G - 1): the mean reward of the OTHER answers in the group (RLOO; Ahmadian et al. 2024).

    Args:
        rewards: (G,) or (num_groups, G), G >= 2.

    Returns:
        Baselines, float64, the shape of ``rewards``.
    """
    ### BEGIN SOLUTION
    r = _float_array(rewards, "rewards", ndims=(1, 2))
    if r.shape[-1] < 2:
        raise ValueError(f"rewards: leave-one-out needs groups of G >= 2, got G = {r.shape[-1]}")
    return (r.sum(axis=-1, keepdims=True) - r) / (r.shape[-1] - 1)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Clipping: how far one update may move the policy
# ---------------------------------------------------------------------------
def _ratios_and_advantages(ratios, advantages, eps_low, eps_high) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Given: checked float64 copies, broadcast together. You need not change it."""
    ratio, advantage = _float_array(ratios, "ratios"), _float_array(advantages, "advantages")
    if np.any(ratio < 0):
        raise ValueError("ratios must be >= 0 (they are exp of log-ratios)")
    try:
        ratio, advantage = np.broadcast_arrays(ratio, advantage)
    except ValueError as error:
        raise ValueError(f"ratios {ratio.shape} and advantages {advantage.shape} do not broadcast") from error
    return ratio, advantage, _real(eps_low, "eps_low"), _real(eps_high, "eps_high")


def clipped_surrogate_terms(ratios, advantages, eps_low: float = 0.2, eps_high: float = 0.2) -> np.ndarray:
    """min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A), elementwise (PPO clip, Schulman et al. 2017; clip-higher, DAPO).

    Args:
        ratios: rho = pi_new / pi_old, >= 0, any shape broadcasting with ``advantages``.
        advantages: A, same or broadcastable shape.
        eps_low, eps_high: >= 0; DAPO uses eps_high = 0.28.

    Returns:
        The per-element surrogate (to be maximised), float64, the broadcast shape.
    """
    ### BEGIN SOLUTION
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    clipped = np.clip(ratio, 1.0 - eps_low, 1.0 + eps_high)
    return np.asarray(np.minimum(ratio * advantage, clipped * advantage), dtype=np.float64)
    ### END SOLUTION


def clip_activity(ratios, advantages, eps_low: float = 0.2, eps_high: float = 0.2) -> np.ndarray:
    """active = (A > 0 and rho > 1 + eps_high) or (A < 0 and rho < 1 - eps_low): where the min picks the clipped branch and it differs.

    Exactly there the clipped term is constant in rho, so the token gets no gradient.

    Args:
        ratios, advantages, eps_low, eps_high: as in ``clipped_surrogate_terms``.

    Returns:
        Boolean array of the broadcast shape.
    """
    ### BEGIN SOLUTION
    ratio, advantage, eps_low, eps_high = _ratios_and_advantages(ratios, advantages, eps_low, eps_high)
    return np.asarray(((advantage > 0) & (ratio > 1.0 + eps_high)) | ((advantage < 0) & (ratio < 1.0 - eps_low)))
    ### END SOLUTION


def gspo_sequence_ratios(new_logprobs, old_logprobs, mask) -> np.ndarray:
    """s_i = exp(mean over active tokens t of (new_logprobs[i, t] - old_logprobs[i, t])): geometric mean of token ratios (GSPO; Zheng et al. 2025).

    Masked positions are ignored whatever they hold (padding may be -inf). A
    response with no active token has s_i = 1 (no evidence that it moved).

    Args:
        new_logprobs: (N, T) log-probabilities under the current policy.
        old_logprobs: (N, T) log-probabilities under the behaviour policy.
        mask: (N, T) with entries 0/1 (or bool); 1 marks a response token.

    Returns:
        (N,) sequence-level ratios, float64.
    """
    ### BEGIN SOLUTION
    new = _float_array(new_logprobs, "new_logprobs", ndims=(2,), finite=False)
    old = _float_array(old_logprobs, "old_logprobs", ndims=(2,), finite=False)
    weights = _float_array(mask, "mask", ndims=(2,))
    if not new.shape == old.shape == weights.shape:
        raise ValueError(f"shapes must match: new_logprobs{new.shape}, old_logprobs{old.shape}, mask{weights.shape}")
    if not np.all((weights == 0) | (weights == 1)):
        raise ValueError("mask must contain only 0 and 1")
    active = weights == 1
    if not (np.all(np.isfinite(new[active])) and np.all(np.isfinite(old[active]))):
        raise ValueError("new_logprobs and old_logprobs must be finite on active tokens")
    log_ratio = np.where(active, new, 0.0) - np.where(active, old, 0.0)  # (N, T), 0 where masked
    counts = active.sum(axis=1)  # (N,)
    return np.exp(log_ratio.sum(axis=1) / np.maximum(counts, 1))
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Loss reductions: who receives gradient. A token weight is the coefficient of
# that token's log-probability in the objective that is maximised.
# ---------------------------------------------------------------------------
def original_grpo_token_weights(rewards, lengths, *, eps: float = 1e-6) -> list[np.ndarray]:
    """w_it = A_i / (G * |o_i|), A standardised with population std: mean over tokens, then over responses (GRPO; DeepSeekMath).

    Every response gets the same total weight A_i / G whatever its length, so a
    long wrong answer is penalised less per token than a short one.

    Args:
        rewards: (G,) one group's rewards.
        lengths: G positive ints, |o_i|.
        eps: >= 0, added to the std.

    Returns:
        G arrays; array i has lengths[i] equal entries.
    """
    ### BEGIN SOLUTION
    advantages = group_relative_advantages(_float_array(rewards, "rewards", ndims=(1,)), eps=eps)
    sizes = _lengths(lengths, advantages.size)
    return [np.full(size, a / (advantages.size * size)) for a, size in zip(advantages, sizes)]
    ### END SOLUTION


def dr_grpo_token_weights(rewards, lengths, fixed_length: int, *, eps: float = 1e-6) -> list[np.ndarray]:
    """w_it = (r_i - mean(r)) / (G * L), L = fixed_length: no std, no per-response length (Dr. GRPO; Liu et al. 2025).

    Args:
        rewards: (G,) one group's rewards.
        lengths: G positive ints, |o_i|.
        fixed_length: L, the generation budget; must be >= max(lengths).
        eps: accepted for a signature shared with the other reductions; unused (no std).

    Returns:
        G arrays; array i has lengths[i] equal entries.
    """
    ### BEGIN SOLUTION
    _real(eps, "eps")
    centred = group_relative_advantages(_float_array(rewards, "rewards", ndims=(1,)), scale=False)
    sizes = _lengths(lengths, centred.size)
    budget = _integer(fixed_length, "fixed_length", 1)
    if budget < max(sizes):
        raise ValueError(f"fixed_length must be >= max(lengths) = {max(sizes)}, got {budget}")
    return [np.full(size, c / (centred.size * budget)) for c, size in zip(centred, sizes)]
    ### END SOLUTION


def dapo_token_weights(rewards, lengths, *, eps: float = 1e-6) -> list[np.ndarray]:
    """w_it = A_i / sum_j |o_j|, A standardised with population std: every token of the group counts once (DAPO token-level loss; Yu et al. 2025).

    Args:
        rewards: (G,) one group's rewards.
        lengths: G positive ints, |o_i|.
        eps: >= 0, added to the std.

    Returns:
        G arrays; array i has lengths[i] equal entries.
    """
    ### BEGIN SOLUTION
    advantages = group_relative_advantages(_float_array(rewards, "rewards", ndims=(1,)), eps=eps)
    sizes = _lengths(lengths, advantages.size)
    return [np.full(size, a / sum(sizes)) for a, size in zip(advantages, sizes)]
    ### END SOLUTION


def _weight_arrays(token_weights) -> list[np.ndarray]:
    """Given: checked float64 copies of a list of 1-D weight arrays. You need not change it."""
    return [_float_array(w, f"token_weights[{i}]", ndims=(1,)) for i, w in enumerate(token_weights)]


def response_contributions(token_weights) -> np.ndarray:
    """c_i = sum_t w_it: the total weight each response receives.

    Args:
        token_weights: G 1-D arrays, as returned by the reductions above.

    Returns:
        (G,) float64.
    """
    ### BEGIN SOLUTION
    return np.array([w.sum() for w in _weight_arrays(token_weights)], dtype=np.float64)
    ### END SOLUTION


def flatten_token_weights(token_weights) -> np.ndarray:
    """[w_11, ..., w_1|o_1|, w_21, ...]: all token weights of the group concatenated in order.

    Args:
        token_weights: G 1-D arrays.

    Returns:
        (sum_i |o_i|,) float64.
    """
    ### BEGIN SOLUTION
    arrays = _weight_arrays(token_weights)
    return np.concatenate(arrays) if arrays else np.zeros(0)
    ### END SOLUTION


def overlong_penalty(length: int, max_length: int, cache_length: int) -> float:
    """R(|y|) = 0 if |y| <= L_max - L_cache; (L_max - L_cache - |y|) / L_cache if |y| <= L_max; -1 beyond (DAPO soft overlong punishment).

    Args:
        length: |y| >= 0, the response length in tokens.
        max_length: L_max >= 1.
        cache_length: L_cache, 1 <= L_cache <= L_max: the soft zone before L_max.

    Returns:
        The length reward, a float in [-1, 0], added to the task reward.
    """
    ### BEGIN SOLUTION
    length = _integer(length, "length", 0)
    max_length = _integer(max_length, "max_length", 1)
    cache_length = _integer(cache_length, "cache_length", 1)
    if cache_length > max_length:
        raise ValueError(f"cache_length must be <= max_length = {max_length}, got {cache_length}")
    soft_start = max_length - cache_length
    if length <= soft_start:
        return 0.0
    if length <= max_length:
        return (soft_start - length) / cache_length
    return -1.0
    ### END SOLUTION


def k3_kl(logprobs, ref_logprobs) -> np.ndarray:
    """k3 = exp(ref - logp) - (ref - logp) - 1, elementwise; >= 0, unbiased for KL(pi || pi_ref) under samples of pi (Schulman 2020; DeepSeekMath).

    Computed as expm1(d) - d, d = ref - logp, which stays accurate for tiny d.

    Args:
        logprobs: log pi of the sampled tokens, any shape, e.g. (N, T).
        ref_logprobs: log pi_ref of the same tokens, same shape.

    Returns:
        float64 array of that shape.
    """
    ### BEGIN SOLUTION
    logp, ref = _float_array(logprobs, "logprobs"), _float_array(ref_logprobs, "ref_logprobs")
    if logp.shape != ref.shape:
        raise ValueError(f"shapes must match: logprobs{logp.shape}, ref_logprobs{ref.shape}")
    difference = ref - logp
    return np.asarray(np.expm1(difference) - difference, dtype=np.float64)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Entropy, pass@k and exact training on a toy policy over answer modes
# ---------------------------------------------------------------------------
def categorical_entropy(probabilities) -> float | np.ndarray:
    """H(p) = -sum_k p_k log p_k along the last axis, with 0 log 0 = 0 (nats).

    Args:
        probabilities: (K,) or (..., K), entries in [0, 1], each row summing to 1 (within 1e-6).

    Returns:
        A float for one distribution, else a float64 array of shape (...).
    """
    ### BEGIN SOLUTION
    p = _float_array(probabilities, "probabilities")
    if p.ndim == 0 or p.shape[-1] == 0:
        raise ValueError(f"probabilities needs a non-empty last axis, got shape {p.shape}")
    if np.any((p < 0) | (p > 1)) or np.any(np.abs(p.sum(axis=-1) - 1.0) > 1e-6):
        raise ValueError("probabilities must lie in [0, 1] and sum to 1 along the last axis")
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)  # 0 log 0 = 0
    entropy = 0.0 - terms.sum(axis=-1)  # 0.0 - x: an entropy of zero prints as 0.0, not -0.0
    return float(entropy) if p.ndim == 1 else entropy
    ### END SOLUTION


def pass_at_k_independent(p: float, k: int) -> float:
    """pass@k = 1 - (1 - p)^k: at least one of k independent answers is right (Chen et al. 2021, Codex).

    Args:
        p: success probability of one answer, in [0, 1].
        k: number of attempts, >= 1.

    Returns:
        A float in [0, 1].
    """
    ### BEGIN SOLUTION
    p, k = _real(p, "p", 0.0, 1.0), _integer(k, "k", 1)
    return 1.0 if p == 1.0 else -math.expm1(k * math.log1p(-p))
    ### END SOLUTION


def pass_at_k_unbiased(n: int, c: int, k: int) -> float:
    """pass@k = 1 - C(n - c, k) / C(n, k), from n samples with c correct; 1.0 when n - c < k (Chen et al. 2021, Codex).

    Computed stably as 1 - prod_{i = n-c+1}^{n} (1 - k / i), never forming the
    huge binomial coefficients.

    Args:
        n: samples drawn, >= 1.
        c: correct samples, 0 <= c <= n.
        k: 1 <= k <= n.

    Returns:
        A float in [0, 1].
    """
    ### BEGIN SOLUTION
    n = _integer(n, "n", 1)
    c, k = _integer(c, "c", 0), _integer(k, "k", 1)
    if c > n:
        raise ValueError(f"c must be <= n = {n}, got {c}")
    if k > n:
        raise ValueError(f"k must be <= n = {n}, got {k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, dtype=np.float64)))
    ### END SOLUTION


# Module defaults of synthetic_mode_training: two rewarded answer modes that start
# equally likely (full credit 1.0 and partial credit 0.6) and two unrewarded ones.
DEFAULT_MODE_REWARDS = (1.0, 0.6, 0.0, 0.0)
DEFAULT_MODE_LOGITS = (1.5, 1.5, 0.0, 0.0)


def synthetic_mode_training(beta_entropy: float = 0.0, learning_rate: float = 0.18, steps: int = 60, *,
                            rewards=None, initial_logits=None) -> dict:
    """z <- z + lr * dJ/dz, dJ/dz_k = pi_k (r_k - sum_j pi_j r_j) - beta pi_k (log pi_k + H(pi)), for J = sum_k pi_k r_k + beta H(pi), pi = softmax(z).

    Exact expected gradient ascent: no sampling. With the module defaults
    (DEFAULT_MODE_REWARDS, DEFAULT_MODE_LOGITS) and beta_entropy = 0, 60 steps
    of lr 0.18 raise the expected reward from 0.654 to 0.889 while the entropy
    falls from 1.168 to 0.645 nats and the full-credit mode grows from 0.41 to
    0.81 of the mass: the policy concentrates on one mode (entropy collapse;
    Cui et al. 2025). A positive beta_entropy slows that collapse.

    Args:
        beta_entropy: beta >= 0, the entropy bonus.
        learning_rate: lr >= 0.
        steps: full gradient steps, >= 0 (0 returns the initial state).
        rewards: (K,) reward per mode; None uses DEFAULT_MODE_REWARDS.
        initial_logits: (K,) starting logits z; None uses DEFAULT_MODE_LOGITS.

    Returns:
        {"probabilities": (K,) pi, "expected_reward": sum pi r, "successful_mass":
        total pi of modes with r > 0, "entropy": H(pi), "logits": (K,) z}.
    """
    ### BEGIN SOLUTION
    beta = _real(beta_entropy, "beta_entropy")
    lr, steps = _real(learning_rate, "learning_rate"), _integer(steps, "steps", 0)
    r = _float_array(DEFAULT_MODE_REWARDS if rewards is None else rewards, "rewards", ndims=(1,))
    z = _float_array(DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits, "initial_logits", ndims=(1,))
    if r.size == 0 or r.shape != z.shape:
        raise ValueError(f"rewards{r.shape} and initial_logits{z.shape} must be non-empty and of equal shape")

    def log_softmax(logits: np.ndarray) -> np.ndarray:
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum())

    for _ in range(steps):
        log_pi = log_softmax(z)
        pi = np.exp(log_pi)
        entropy = categorical_entropy(pi)  # the exercise above (graded there, answered for this one)
        z = z + lr * (pi * (r - pi @ r) - beta * pi * (log_pi + entropy))
    log_pi = log_softmax(z)
    pi = np.exp(log_pi)
    return {
        "probabilities": pi,
        "expected_reward": float(pi @ r),
        "successful_mass": min(1.0, float(pi[r > 0].sum())),
        "entropy": categorical_entropy(pi),
        "logits": z,
    }
    ### END SOLUTION
