r"""Each exercise's formula in LaTeX, for the notebooks' Markdown (Jupyter renders ``$$ ... $$``).

The first line of each docstring holds the same formula in plain text (what a terminal, pytest and
the stubs show); this table is its typeset form, written once here. ``tests/test_build.py`` checks
that every exercise has one, and ``rl4llm build`` puts it above the docstring in both languages
(LaTeX is the same in every language).
"""

from __future__ import annotations

LATEX: dict[str, str] = {
    # --- module 8: RLHF and direct preference optimisation -----------------------------------------
    "module_8_reference.optimal_kl_policy":
        r"\pi^*(y) = \frac{\pi_{\mathrm{ref}}(y)\, e^{r(y)/\beta}}{Z},\quad "
        r"Z = \sum_{y} \pi_{\mathrm{ref}}(y)\, e^{r(y)/\beta}",
    "module_8_reference.reward_kl_frontier":
        r"\mathbb{E}_{\pi^*}[r],\quad \mathrm{KL}(\pi^* \,\|\, \pi_{\mathrm{ref}}) = "
        r"\sum_y \pi^*(y) \log \frac{\pi^*(y)}{\pi_{\mathrm{ref}}(y)} \quad \text{for each } \beta",
    "module_8_reference.shape_token_rewards":
        r"r_t = -\beta \left(\log \pi(y_t \mid \cdot) - \log \pi_{\mathrm{ref}}(y_t \mid \cdot)\right)"
        r" \;+\; R\,[t = \text{last active token}]",
    "module_8_reference.constrained_lagrangian":
        r"\mathcal{L} = \mathbb{E}[R] - \sum_j \lambda_j \left(\mathbb{E}[C_j] - d_j\right),\quad \lambda_j \ge 0",
    "module_8_reference.dual_ascent_step":
        r"\lambda_j \leftarrow \max\!\left(0,\; \lambda_j + \eta\,(\hat C_j - d_j)\right)",
    "module_8_reference.two_action_constrained_optimum":
        r"\max_q\, (1-q)\, r_{\mathrm{safe}} + q\, r_{\mathrm{risky}} \ \text{ s.t. } q\, c_{\mathrm{risky}} \le d:"
        r"\quad q^* = \min\!\left(1, \frac{d}{c_{\mathrm{risky}}}\right) \text{ if } r_{\mathrm{risky}} > "
        r"r_{\mathrm{safe}} \text{ else } 0",
    "module_8_reference.dpo_loss_from_margin":
        r"\mathcal{L} = -\log \sigma(\beta h) = \operatorname{softplus}(-\beta h)",
    "module_8_reference.dpo_gradient_weight":
        r"\left|\frac{\partial \mathcal{L}}{\partial h}\right| = \beta\, \sigma(-\beta h)",
    "module_8_reference.conservative_dpo_loss":
        r"\mathcal{L} = (1-\varepsilon)\operatorname{softplus}(-\beta h) + \varepsilon \operatorname{softplus}(\beta h)",
    "module_8_reference.ipo_loss":
        r"\mathcal{L} = \left(h - \frac{1}{2\tau}\right)^2",
    "module_8_reference.simpo_loss":
        r"\mathcal{L} = \operatorname{softplus}(-z),\quad z = \frac{\beta}{|y_w|}\log \pi(y_w) - "
        r"\frac{\beta}{|y_l|}\log \pi(y_l) - \gamma",
    "module_8_reference.orpo_total_loss":
        r"\mathcal{L} = \mathrm{NLL}_w + \lambda \operatorname{softplus}\!\left(-(\operatorname{logodds}(m_w) - "
        r"\operatorname{logodds}(m_l))\right),\quad \operatorname{logodds}(m) = m - \log(1 - e^m)",
    "module_8_reference.likelihood_displacement_curve":
        r"p = \operatorname{softmax}(-t, -3t, 4t),\quad \log p_{\mathrm{chosen}} - \log p_{\mathrm{rejected}} = 2t",
    "module_8_training.sequence_logprobs":
        r"\log \pi(y \mid x) = \sum_t m_t \log \operatorname{softmax}(\ell_t)[y_{t+1}]",
    "module_8_training.dpo_loss":
        r"\mathcal{L} = \operatorname{mean}\left[(1-\varepsilon)\operatorname{softplus}(-\beta h) + "
        r"\varepsilon \operatorname{softplus}(\beta h)\right],\quad h = (\log\pi_w - \log\pi^{\mathrm{ref}}_w) - "
        r"(\log\pi_l - \log\pi^{\mathrm{ref}}_l)",
    # --- module 9: RLVR and GRPO ---------------------------------------------------------------------
    "module_9_reference.verify_detailed":
        r"\text{correct} \iff |x - x_{\mathrm{ref}}| \le \max(\mathrm{abs\_tol},\ \mathrm{rel\_tol}\cdot|x_{\mathrm{ref}}|),"
        r"\quad x = \text{last } \texttt{\textbackslash boxed\{\}} \text{, else the last number}",
    "module_9_reference.verify_numeric_answer":
        r"\mathbb{1}\left[\,|x - x_{\mathrm{ref}}| \le \max(\mathrm{abs\_tol},\ \mathrm{rel\_tol}\cdot|x_{\mathrm{ref}}|)\,\right]",
    "module_9_reference.informative_group_probability":
        r"P_{\mathrm{info}} = 1 - p^G - (1-p)^G",
    "module_9_reference.expected_draws_for_informative_groups":
        r"\mathbb{E}[\text{draws}] = \frac{B}{P_{\mathrm{info}}}",
    "module_9_reference.group_relative_advantages":
        r"A_i = \frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}"
        r"\quad(\text{without scale: } A_i = r_i - \operatorname{mean}(r))",
    "module_9_reference.leave_one_out_baseline":
        r"b_i = \frac{\sum_j r_j - r_i}{G - 1}",
    "module_9_reference.clipped_surrogate_terms":
        r"\min\!\left(\rho A,\ \operatorname{clip}(\rho,\, 1-\varepsilon_{\mathrm{low}},\, 1+\varepsilon_{\mathrm{high}})\, A\right)",
    "module_9_reference.clip_activity":
        r"\text{active} = (A > 0 \wedge \rho > 1+\varepsilon_{\mathrm{high}}) \vee (A < 0 \wedge \rho < 1-\varepsilon_{\mathrm{low}})",
    "module_9_reference.gspo_sequence_ratios":
        r"s_i = \exp\!\left(\frac{1}{|o_i|} \sum_{t \in o_i} \left(\log \pi_\theta(o_{i,t}) - "
        r"\log \pi_{\mathrm{old}}(o_{i,t})\right)\right)",
    "module_9_reference.original_grpo_token_weights":
        r"w_{it} = \frac{A_i}{G\, |o_i|}",
    "module_9_reference.dr_grpo_token_weights":
        r"w_{it} = \frac{r_i - \operatorname{mean}(r)}{G\, L},\quad L = \text{fixed\_length}",
    "module_9_reference.dapo_token_weights":
        r"w_{it} = \frac{A_i}{\sum_j |o_j|}",
    "module_9_reference.response_contributions":
        r"c_i = \sum_t w_{it}",
    "module_9_reference.flatten_token_weights":
        r"[w_{1,1}, \dots, w_{1,|o_1|},\ w_{2,1}, \dots]",
    "module_9_reference.overlong_penalty":
        r"R(|y|) = \begin{cases} 0 & |y| \le L_{\max} - L_{\mathrm{cache}} \\ "
        r"\frac{L_{\max} - L_{\mathrm{cache}} - |y|}{L_{\mathrm{cache}}} & |y| \le L_{\max} \\ -1 & \text{otherwise} \end{cases}",
    "module_9_reference.k3_kl":
        r"k_3 = e^{\log\pi_{\mathrm{ref}} - \log\pi} - (\log\pi_{\mathrm{ref}} - \log\pi) - 1",
    "module_9_reference.categorical_entropy":
        r"H(p) = -\sum_k p_k \log p_k,\quad 0 \log 0 = 0",
    "module_9_reference.pass_at_k_independent":
        r"\text{pass@}k = 1 - (1-p)^k",
    "module_9_reference.pass_at_k_unbiased":
        r"\text{pass@}k = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}",
    "module_9_reference.synthetic_mode_training":
        r"z \leftarrow z + \eta\, \frac{\partial J}{\partial z},\quad \frac{\partial J}{\partial z_k} = "
        r"\pi_k \left(r_k - \sum_j \pi_j r_j\right) - \beta\, \pi_k \left(\log \pi_k + H(\pi)\right),\quad "
        r"J = \sum_k \pi_k r_k + \beta H(\pi)",
    "module_9_training.grpo_loss":
        r"\mathcal{L} = -\operatorname{reduce}_{t \text{ active}} \min\!\left(\rho_t A,\ "
        r"\operatorname{clip}(\rho_t,\, 1-\varepsilon_{\mathrm{low}},\, 1+\varepsilon_{\mathrm{high}})\, A\right),"
        r"\quad \rho_t = e^{\log\pi_\theta - \log\pi_{\mathrm{old}}}",
}


def display_math(exercise_id: str) -> str:
    """The exercise's formula as a Markdown display-math block, or ``""`` when the table has none."""
    formula = LATEX.get(exercise_id)
    return f"$$\n{formula}\n$$" if formula else ""
