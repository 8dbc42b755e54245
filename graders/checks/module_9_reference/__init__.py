"""Hidden checks of module_9_reference (see graders/checks/__init__.py for the API).

One spec per exercise: the seed notebook's cases and the rows of the public
learner tests (``hidden=False``: the learner has seen them), hidden fixed cases
aimed at the edge cases and at every catalogued misconception
(``graders/misconceptions/module_9_reference/``), ValueError cases, and
Hypothesis cases drawn with a fixed seed.

Exercises that build on another exercise (the three token-weight reductions on
``group_relative_advantages``, ``expected_draws_for_informative_groups`` on
``informative_group_probability``, ``verify_numeric_answer`` on ``verify_detailed``,
``synthetic_mode_training`` on ``categorical_entropy``) run under an
:class:`~graders.checks.Answered` call mode (``harnesses``): the dependency answers
exactly the case's own calls with the reference's results, as sealed data, so a
mistake is graded (and named) once, on its own exercise; the dependent earns nothing
while its dependency is unimplemented (missing, the stub).


The checks, by topic, in the order their exercises register: ``harnesses``, ``verifier``, ``groups``, ``clipping``, ``reductions``, ``training``; each part's
docstring says what it holds. ``LATEX`` is here.
"""

from __future__ import annotations

from graders.checks.module_9_reference import harnesses  # noqa: F401 - registers its exercises
from graders.checks.module_9_reference import verifier  # noqa: F401 - registers its exercises
from graders.checks.module_9_reference import groups  # noqa: F401 - registers its exercises
from graders.checks.module_9_reference import clipping  # noqa: F401 - registers its exercises
from graders.checks.module_9_reference import reductions  # noqa: F401 - registers its exercises
from graders.checks.module_9_reference import training  # noqa: F401 - registers its exercises

# Each exercise's formula typeset for the notebooks' Markdown (`rl4llm build`); the first line of its
# docstring holds the same formula in plain text.
LATEX = {
    "verify_detailed": (
        r"\text{correct} \iff |x - x_{\mathrm{ref}}| \le \max(\mathrm{abs\_tol},\ "
        r"\mathrm{rel\_tol}\cdot|x_{\mathrm{ref}}|),\quad x = \text{last } \texttt{\textbackslash boxed\{\}} "
        r"\text{, else the last number}"
    ),
    "verify_numeric_answer": (
        r"\mathbb{1}\left[\,|x - x_{\mathrm{ref}}| \le \max(\mathrm{abs\_tol},\ "
        r"\mathrm{rel\_tol}\cdot|x_{\mathrm{ref}}|)\,\right]"
    ),
    "informative_group_probability": r"P_{\mathrm{info}} = 1 - p^G - (1-p)^G",
    "expected_draws_for_informative_groups": r"\mathbb{E}[\text{draws}] = \frac{B}{P_{\mathrm{info}}}",
    "group_relative_advantages": (
        r"A_i = \frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}\quad(\text{without "
        r"scale: } A_i = r_i - \operatorname{mean}(r))"
    ),
    "leave_one_out_baseline": r"b_i = \frac{\sum_j r_j - r_i}{G - 1}",
    "clipped_surrogate_terms": (
        r"\min\!\left(\rho A,\ \operatorname{clip}(\rho,\, 1-\varepsilon_{\mathrm{low}},\, "
        r"1+\varepsilon_{\mathrm{high}})\, A\right)"
    ),
    "clip_activity": (
        r"\text{active} = (A > 0 \wedge \rho > 1+\varepsilon_{\mathrm{high}}) \vee (A < 0 \wedge \rho < "
        r"1-\varepsilon_{\mathrm{low}})"
    ),
    "gspo_sequence_ratios": (
        r"s_i = \exp\!\left(\frac{1}{|o_i|} \sum_{t \in o_i} \left(\log \pi_\theta(o_{i,t}) - \log "
        r"\pi_{\mathrm{old}}(o_{i,t})\right)\right)"
    ),
    "original_grpo_token_weights": r"w_{it} = \frac{A_i}{G\, |o_i|}",
    "dr_grpo_token_weights": r"w_{it} = \frac{r_i - \operatorname{mean}(r)}{G\, L},\quad L = \text{fixed\_length}",
    "dapo_token_weights": r"w_{it} = \frac{A_i}{\sum_j |o_j|}",
    "response_contributions": r"c_i = \sum_t w_{it}",
    "flatten_token_weights": r"[w_{1,1}, \dots, w_{1,|o_1|},\ w_{2,1}, \dots]",
    "overlong_penalty": (
        r"R(|y|) = \begin{cases} 0 & |y| \le L_{\max} - L_{\mathrm{cache}} \\ \frac{L_{\max} - "
        r"L_{\mathrm{cache}} - |y|}{L_{\mathrm{cache}}} & |y| \le L_{\max} \\ -1 & \text{otherwise} "
        r"\end{cases}"
    ),
    "k3_kl": r"k_3 = e^{\log\pi_{\mathrm{ref}} - \log\pi} - (\log\pi_{\mathrm{ref}} - \log\pi) - 1",
    "categorical_entropy": r"H(p) = -\sum_k p_k \log p_k,\quad 0 \log 0 = 0",
    "pass_at_k_independent": r"\text{pass@}k = 1 - (1-p)^k",
    "pass_at_k_unbiased": r"\text{pass@}k = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}",
    "synthetic_mode_training": (
        r"z \leftarrow z + \eta\, \frac{\partial J}{\partial z},\quad \frac{\partial J}{\partial z_k} = \pi_k "
        r"\left(r_k - \sum_j \pi_j r_j\right) - \beta\, \pi_k \left(\log \pi_k + H(\pi)\right),\quad J = "
        r"\sum_k \pi_k r_k + \beta H(\pi)"
    ),
}
