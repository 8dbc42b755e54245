"""Hidden checks of module_8_reference (see graders/checks/__init__.py for the API).

Per exercise: the seed notebook's cases (``hidden=False``), hidden fixed cases
(extreme margins +-1e4, broadcasting, zero-probability reference entries,
masks with gaps), ``ValueError`` cases and Hypothesis cases with a fixed seed.
Every catalogued misconception (graders/misconceptions/module_8_reference/)
fails at least one case of its exercise; the default tolerances (rtol 1e-5,
atol 1e-6) admit a correct float32 implementation.

``reward_kl_frontier`` is graded on its own: while it runs, the learner's
``optimal_kl_policy`` answers the case's own calls with the reference's optimum,
sent as sealed data (``optimum.OPTIMUM``, an :class:`~graders.checks.Answered`
call mode), so a mistake in the optimum costs points on ``optimal_kl_policy``
only; the frontier earns nothing while the optimum is unimplemented.

Comparisons are the default ones plus one rule (:func:`_strict_close`): an
infinity matches only the same infinity, so an overflowing misconception is
not named for every wrong finite answer.


The checks, by topic, in the order their exercises register: ``common``, ``optimum``, ``constraints``, ``dpo``; each part's
docstring says what it holds. ``LATEX`` is here.
"""

from __future__ import annotations

from graders.checks.module_8_reference import common  # noqa: F401 - registers its exercises
from graders.checks.module_8_reference import optimum  # noqa: F401 - registers its exercises
from graders.checks.module_8_reference import constraints  # noqa: F401 - registers its exercises
from graders.checks.module_8_reference import dpo  # noqa: F401 - registers its exercises

# Each exercise's formula typeset for the notebooks' Markdown (`rl4llm build`); the first line of its
# docstring holds the same formula in plain text.
LATEX = {
    "optimal_kl_policy": (
        r"\pi^*(y) = \frac{\pi_{\mathrm{ref}}(y)\, e^{r(y)/\beta}}{Z},\quad Z = \sum_{y} "
        r"\pi_{\mathrm{ref}}(y)\, e^{r(y)/\beta}"
    ),
    "reward_kl_frontier": (
        r"\mathbb{E}_{\pi^*}[r],\quad \mathrm{KL}(\pi^* \,\|\, \pi_{\mathrm{ref}}) = \sum_y \pi^*(y) \log "
        r"\frac{\pi^*(y)}{\pi_{\mathrm{ref}}(y)} \quad \text{for each } \beta"
    ),
    "shape_token_rewards": (
        r"r_t = -\beta \left(\log \pi(y_t \mid \cdot) - \log \pi_{\mathrm{ref}}(y_t \mid \cdot)\right) \;+\; "
        r"R\,[t = \text{last active token}]"
    ),
    "constrained_lagrangian": (
        r"\mathcal{L} = \mathbb{E}[R] - \sum_j \lambda_j \left(\mathbb{E}[C_j] - d_j\right),\quad \lambda_j "
        r"\ge 0"
    ),
    "dual_ascent_step": r"\lambda_j \leftarrow \max\!\left(0,\; \lambda_j + \eta\,(\hat C_j - d_j)\right)",
    "two_action_constrained_optimum": (
        r"\max_q\, (1-q)\, r_{\mathrm{safe}} + q\, r_{\mathrm{risky}} \ \text{ s.t. } q\, c_{\mathrm{risky}} "
        r"\le d:\quad q^* = \min\!\left(1, \frac{d}{c_{\mathrm{risky}}}\right) \text{ if } r_{\mathrm{risky}} "
        r"> r_{\mathrm{safe}} \text{ else } 0"
    ),
    "dpo_loss_from_margin": r"\mathcal{L} = -\log \sigma(\beta h) = \operatorname{softplus}(-\beta h)",
    "dpo_gradient_weight": r"\left|\frac{\partial \mathcal{L}}{\partial h}\right| = \beta\, \sigma(-\beta h)",
    "conservative_dpo_loss": (
        r"\mathcal{L} = (1-\varepsilon)\operatorname{softplus}(-\beta h) + \varepsilon "
        r"\operatorname{softplus}(\beta h)"
    ),
    "ipo_loss": r"\mathcal{L} = \left(h - \frac{1}{2\tau}\right)^2",
    "simpo_loss": (
        r"\mathcal{L} = \operatorname{softplus}(-z),\quad z = \frac{\beta}{|y_w|}\log \pi(y_w) - "
        r"\frac{\beta}{|y_l|}\log \pi(y_l) - \gamma"
    ),
    "orpo_total_loss": (
        r"\mathcal{L} = \mathrm{NLL}_w + \lambda \operatorname{softplus}\!\left(-(\operatorname{logodds}(m_w) "
        r"- \operatorname{logodds}(m_l))\right),\quad \operatorname{logodds}(m) = m - \log(1 - e^m)"
    ),
    "likelihood_displacement_curve": (
        r"p = \operatorname{softmax}(-t, -3t, 4t),\quad \log p_{\mathrm{chosen}} - \log p_{\mathrm{rejected}} "
        r"= 2t"
    ),
}
