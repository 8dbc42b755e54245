"""What one check is: a :class:`Case` (its inputs, its label: a :class:`graders.text.Text`), how the
exercise is called on it (:class:`Returns`, :class:`LossAndGrads`, :class:`Harness`, with
:func:`reference_definitions`) and how its result is compared (:func:`close`, :func:`band`).

Part of the check authors' API, :mod:`graders.checks` (which re-exports every name here).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from graders.checks.edges import edge_tags
from graders.engine.values.codec import TensorSpec
from graders.engine.values.compare import mismatch
from graders.text import Text

DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-6
DEFAULT_TIMEOUT = 10.0


def Tensor(data, dtype: str = "float64", requires_grad: bool = False) -> TensorSpec:  # noqa: N802
    """An input that the worker turns into ``torch.tensor(data, dtype=torch.<dtype>)``."""
    return TensorSpec(np.asarray(data), dtype, requires_grad)


@dataclass(frozen=True)
class Case:
    """One call of the exercise function.

    ``label`` is a :class:`graders.text.Text`: its English value is the case's identity
    (``report.json``, the reference cache and the tests know it by it) and its English
    name in feedback; feedback in another language reads it through :meth:`label_in`.
    A label that is a plain string (no Russian) is refused when the case is made.
    """

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    label: str = ""
    hidden: bool = True
    raises: type[BaseException] | None = None
    weight: float = 1.0
    rtol: float | None = None  # None: the exercise's
    atol: float | None = None
    edge: tuple[str, ...] = ()  # edge classes (graders/checks/edges.py) this fixed case stands for

    def __post_init__(self) -> None:
        object.__setattr__(self, "edge", edge_tags(self.edge))
        if self.label and not isinstance(self.label, Text):
            raise TypeError(f"the check labelled {str(self.label)!r} has no Russian label: write "
                            f"label=Text({str(self.label)!r}, \"<the same in Russian>\")")

    def label_in(self, language: str) -> str:
        """The label a learner reads in ``language`` (through the Text's accessor)."""
        return self.label.in_(language) if isinstance(self.label, Text) else self.label


@dataclass(frozen=True)
class Returns:
    """Call mode: compare the return value."""

    uses_torch = False  # by itself: tensor inputs still need torch

    def describe(self) -> dict:
        """The call mode as the worker reads it (JSON; :func:`graders.engine.judging.calls.call_case` dispatches on it)."""
        return {"kind": "returns"}


@dataclass(frozen=True)
class LossAndGrads:
    """Call mode: the loss value and its gradients w.r.t. the ``requires_grad`` tensor inputs."""

    output: int | None = None
    uses_torch = True

    def describe(self) -> dict:
        return {"kind": "loss_and_grads", "output": self.output}


@dataclass(frozen=True)
class Harness:
    """Call mode: ``function(fn, learner, starter, *args, **kwargs)`` run on both sides.

    ``torch=False`` declares that the harness never touches torch, so a worker
    grading only NumPy exercises need not import it (about 0.8 s per worker).
    ``given`` names the given modules the harness asks ``starter`` for
    (``("grpo_toy",)``): both sides load them before any learner code runs.
    ``prelude`` is source text run before the harness's own, in its namespace:
    trusted copies of reference definitions the harness swaps in
    (:func:`reference_definitions` reads them from the solutions).
    ``score`` (grader-side only, it never travels): ``score(value, case, kit)`` turns what the harness
    returned for a case into what is compared, on both sides alike (the reference's value and the
    learner's, decoded), with the kit's own trusted code: the toy checks return trained parameters, and
    ``score`` measures them (:mod:`graders.checks.toy_scores`), so no metric the worker reports is compared.
    ``trusted``: ``trusted(fn, starter, **kwargs)``, a TOP-LEVEL function (self-contained like ``function``)
    that runs the cases whose ``check`` keyword is ``trusted_check`` (the toy experiments). In a worker it
    runs in a trusted process of its own, where no learner code runs: each call of ``fn`` is answered by
    the learner's child, gradients included (:mod:`graders.engine.worker.served`), so the trusted copies it
    holds (another exercise's formula) and its given modules are never in the learner's process; with
    ``trusted``, ``prelude`` and ``given`` are its own, and ``function`` gets the other cases.
    ``observed_grads``: the returned tensors (their places in the order ``starter/conftest.grad_signature``
    reads them) whose ``requires_grad`` the harness's checks see themselves (``dpo_loss``'s detached
    rewards); every harness folds the rest into a gradient (a loss without one has gradient 0), so the
    learner's pytest compares only these places of a gradient signature (:func:`observed_signature`).
    """

    function: Callable
    torch: bool = True
    given: tuple[str, ...] = ()
    prelude: str = ""  # source run before the harness's, in its namespace (trusted copies it calls)
    score: Callable | None = None  # grader-side: (value, case, kit) -> what is compared (never sent)
    trusted: Callable | None = None  # the cases of ``trusted_check``, in a process without learner code
    trusted_check: str = "toy experiment"
    observed_grads: tuple[int, ...] = ()  # returned tensors whose requires_grad the checks see (see above)

    @property
    def uses_torch(self) -> bool:
        return self.torch

    def run(self, fn, learner, starter, *args, **kwargs):
        """The harness called here, in the grader's process (as ``call_case`` calls it from its source)."""
        if self.trusted is not None and kwargs.get("check") == self.trusted_check:
            return self.trusted(fn, starter, *args, **kwargs)
        return self.function(fn, learner, starter, *args, **kwargs)

    def describe(self) -> dict:
        """The call mode as it travels: ``source`` the function's; with ``trusted``, ``trusted`` holds the
        trusted part (its prelude, given modules and source), which the grader writes to a file of its own
        that only the trusted process reads (:func:`graders.engine.judging.calls.learner_call`)."""
        if self.trusted is None:
            source = inspect.getsource(self.function)
            if self.prelude:
                source = f"{self.prelude}\n\n{source}"
            return {"kind": "harness", "name": self.function.__name__, "source": source, "torch": self.torch,
                    "given": list(self.given)}
        trusted = inspect.getsource(self.trusted)
        return {"kind": "harness", "name": self.function.__name__, "source": inspect.getsource(self.function),
                "torch": self.torch, "given": [], "trusted_check": self.trusted_check,
                "trusted": {"name": self.trusted.__name__, "given": list(self.given),
                            "source": f"{self.prelude}\n\n{trusted}" if self.prelude else trusted}}


def observed_signature(signature: list[bool] | None, call) -> list[bool | None] | None:
    """A gradient signature (``starter/conftest.grad_signature``: which returned tensors require a gradient) as
    the grader sees it under the call mode ``call``: a harness sees only its ``observed_grads`` (the other places
    None, and no signature at all when it sees none); any other call mode, the whole signature."""
    if signature is None or not isinstance(call, Harness):
        return signature
    seen = [flag if place in call.observed_grads else None for place, flag in enumerate(signature)]
    return seen if any(flag is not None for flag in seen) else None


@dataclass(frozen=True)
class Answered:
    """Call mode: the return value, while the learner module's dependencies ``answers`` (other exercises of
    the same file that this one calls) answer this case's own calls with the reference's results, sent as
    sealed data (:mod:`graders.engine.judging.answers`); any other call goes to the learner's own function. A
    mistake in a dependency is so charged once, on the dependency; and the dependent earns nothing while
    a dependency is unimplemented (:func:`graders.engine.judging.answers.gate`). No code travels."""

    answers: tuple[str, ...]
    uses_torch = False

    def describe(self) -> dict:
        return {"kind": "answered", "names": list(self.answers)}


def reference_definitions(relpath: str, names: tuple[str, ...], imports: str) -> str:
    """The source of some top-level definitions of a reference file (``solutions/<relpath>``), decorators
    included, in file order, below ``imports``: a self-contained program for a harness's ``prelude``."""
    import ast

    from graders.paths import SOLUTIONS_DIR

    text = (SOLUTIONS_DIR / relpath).read_text(encoding="utf-8")
    lines = text.splitlines()
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found[node.name] = "\n".join(lines[first - 1:node.end_lineno])
    missing = [name for name in names if name not in found]
    if missing:
        raise ValueError(f"solutions/{relpath} defines no {missing}")
    return "\n\n\n".join([imports.strip(), *found.values()])


RETURNS = Returns()
Compare = Callable[[object, object, Case], "str | None"]


def close(rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL) -> Compare:
    """The default comparison at the given tolerances (a case's own rtol/atol win)."""
    def compare(expected, got, case: Case) -> str | None:
        return mismatch(expected, got, rtol=case.rtol if case.rtol is not None else rtol,
                        atol=case.atol if case.atol is not None else atol)
    return compare


def band(predicate: Callable[[object, object], bool], message: Text) -> Compare:
    """A comparison that passes when ``predicate(expected, got)`` is true, else says ``message`` (a Text)."""
    if not isinstance(message, Text):
        raise TypeError(f"band's message {message!r} has no Russian: pass Text(english, russian)")

    def compare(expected, got, case: Case) -> str | None:
        try:
            return None if predicate(expected, got) else message
        except Exception as error:  # noqa: BLE001 - a malformed answer fails the band
            name = type(error).__name__
            return Text(f"{message} (could not evaluate: {name})",
                        f"{message.in_('ru')} (не удалось вычислить: {name})")
    return compare
