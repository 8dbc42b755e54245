"""The toys' optimiser: ``torch.optim.Adam`` written out (PyTorch, CPU).

Given code shared by the toy experiments of Module 8 (``dpo_toy``) and Module 9
(``grpo_toy``): each module folder links this one file (``solutions/module_0X/toy_optim.py``),
so each folder, its notebooks and a grading worker find it beside the toy that imports it.
"""

from __future__ import annotations

import torch


# ---------------------------------------------------------------------------
# GIVEN CODE -- the optimiser. You need not change anything in this file.
# ---------------------------------------------------------------------------
class Adam:
    """``torch.optim.Adam(parameters, lr)`` with its defaults, written out (Kingma & Ba 2015, Algorithm 1):
    per parameter θ with gradient g, at its step t:  m ← β1 m + (1 - β1) g,  v ← β2 v + (1 - β2) g²,
    θ ← θ - lr / (1 - β1^t) · m / (√v / √(1 - β2^t) + ε)  (β1 = 0.9, β2 = 0.999, ε = 1e-8), in the operations
    of torch's single-tensor Adam, so bit-identical to it. Written out because ``torch.optim`` imports
    ``torch._dynamo`` on first use: a second in every fresh process (each graded submission's worker)."""

    def __init__(self, parameters, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.parameters = [p for p in parameters if p.requires_grad]
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.steps = [0.0] * len(self.parameters)  # t per parameter, counted when it has a gradient
        self.moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in self.parameters]  # (m, v)

    def zero_grad(self) -> None:
        """Forget every parameter's gradient (``p.grad = None``, as ``torch.optim``'s default)."""
        for p in self.parameters:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam update of every parameter that has a gradient (the others keep their step count)."""
        for i, (p, (m, v)) in enumerate(zip(self.parameters, self.moments)):
            if p.grad is not None:
                self.steps[i] += 1.0
                m.lerp_(p.grad, 1 - self.beta1)
                v.mul_(self.beta2).addcmul_(p.grad, p.grad, value=1 - self.beta2)
                denom = (v.sqrt() / (1 - self.beta2 ** self.steps[i]) ** 0.5).add_(self.eps)
                p.addcdiv_(m, denom, value=-self.lr / (1 - self.beta1 ** self.steps[i]))
