"""Hidden grader checks: the API check authors use, and the registry of specs.

This package is instructor-only: the grading worker that runs learner code is
refused any import or read of it (see ``graders/engine/sandbox/layers.py``).

How to write the checks of an exercise
======================================
Each learner file ``<stem>.py`` has its checks under ``graders/checks/``: a module
``<stem>.py`` for a short file (``module_9_training.py``), or a package ``<stem>/`` whose
modules group its exercises by topic (``module_9_reference/groups.py``, ``clipping.py``,
``verifier.py``, ...; the package's ``__init__`` imports them all), with one decorated
*case generator* per exercise. The exercise id is ``"<file stem>.<function>"``
(``graders.course.exercises`` lists them)::

    import numpy as np
    from graders.checks import Case, exercise, hypothesis_cases, st
    from graders.text import Text

    @exercise("module_9_reference.group_relative_advantages", points=2)
    def _cases():
        # public cases (from the seed notebook): the learner has seen these
        yield Case(args=([1.0, 0.0, 0.0, 0.0],), label=Text("one success in G=4", "один успех при G=4"),
                   hidden=False)
        # hidden fixed cases
        yield Case(args=(np.array([[1.0, 0.0], [0.0, 0.0]]),), kwargs={"scale": False},
                   label=Text("two groups, unscaled", "две группы, без масштабирования"))
        yield Case(args=([],), raises=ValueError,
                   label=Text("an empty group is refused", "пустая группа отклоняется"))
        # property-based cases: Hypothesis with a FIXED seed -> the same inputs for everyone
        groups = st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=8)
        yield from hypothesis_cases(groups, count=20, seed=9_001,
                                    to_case=lambda r: Case(args=(np.array(r),)))

What the engine does with a spec
--------------------------------
- Every case is called on the **learner's** function in an isolated worker
  and on the **reference** function (``solutions/``) in the grading process;
  the two normalised results (``graders.engine.values.codec.normalise``: floats,
  float64 arrays, lists, dicts) are compared with ``compare`` (default:
  elementwise ``|got - expected| <= atol + rtol*|expected|``, shapes equal,
  extra dict keys ignored). Size ``rtol``/``atol`` to the values: loose enough
  for a correct float32 implementation (defaults 1e-5 / 1e-6), tight enough
  that every catalogued misconception fails somewhere.
- A case with ``raises=ValueError`` expects the learner to raise that
  exception type (or a subclass); the reference must raise it too.
- Inputs: JSON scalars, strings, ``None``, lists, tuples, dicts with string
  keys, NumPy arrays/scalars (dtype kept), and :class:`Tensor` markers that
  become ``torch.Tensor`` objects in the worker. Each call gets a fresh copy;
  the engine fails a case whose call modified an input in place.
- Types: before values are compared, the learner's result must have the
  type of the reference's (``graders.engine.values.compare.type_problem``: a float
  for a float, an int for an int, an array of the same dtype, a tensor of the
  same dtype that requires grad exactly when the reference's does, the same
  containers); a wrong type fails the case.
- Score: ``points`` x (weight of passed value cases + weight of passed
  ``raises`` cases x the share of the value cases' weight passed) / total
  weight (``graders.engine.judging.judge.earned_share``): refusing bad input is worth
  points only in a function that works, so one that raises on every input
  scores 0. ``weight`` defaults to 1. Status ``passed`` when every case passes, ``failed`` when a
  case returns a wrong answer, ``error`` when a case raises unexpectedly (the
  cases that passed still count), and a 0 for ``timeout``, crashes, sandbox
  violations and ``missing`` functions.
- ``timeout`` (seconds) bounds the whole exercise (all its cases) in the worker.
  A case that raises ``MemoryError`` ends the exercise (the rest count as errors).
- ``float_trap=True`` (an exercise that standardises groups): a wrong value
  where exactly 0 is expected, on an all-equal group whose mean is not
  exactly its value, is explained as floating point in the feedback and
  never taken as evidence for a catalogued mistake.
- Misconception detection runs the catalogue entries in the grading process
  (once per batch, kept on disk): an entry is named only when it reproduces
  every wrong answer and agrees with the learner on every other case where
  both returned a value; several such entries are listed as candidates, none
  named. So every entry must differ from every other entry of its exercise
  on some case, and from the reference on some case. For an expensive harness (a training
  run per entry) pass ``detect_misconceptions=False`` and let a cheaper
  exercise or call mode name the mistake.
- Every label is a :class:`graders.text.Text`, ``label=Text(english, russian)``
  at the call site (its English value is also the case's identity in
  ``report.json``, the reference cache and the tests; a helper that builds
  cases passes the Text through; a plain-string label is refused). Feedback
  shows the label in the report's language; keep numbers,
  formulas, argument names and ``loss_type`` values as in the English one.
- Feedback per failed case: its label, its input (``hidden input`` for
  ``hidden=True`` cases when grading with ``--hide-hidden-inputs``), expected
  vs got, and the catalogued misconception (``graders/misconceptions/``) that
  explains every case, if exactly one does.

Call modes (``call=``)
----------------------
- ``RETURNS`` (default): the function's return value.
- ``LossAndGrads(output=None)``: for torch losses. The result is
  ``{"value": <return value>, "grad": {<arg name>: gradient}}`` where the loss
  is the return value (or ``return[output]`` for a tuple return), and a
  gradient is taken w.r.t. every :class:`Tensor` input with
  ``requires_grad=True``, named by its keyword or ``"arg<i>"`` for positional
  ones. A loss that does not depend on an input gives ``None`` (which fails).
- ``Harness(function)``: custom given-code experiments. ``function`` is a
  TOP-LEVEL function of the checks module, self-contained (imports inside its
  body), with signature ``function(fn, learner, starter, *args, **kwargs)``:
  ``fn`` is the function under test, ``learner`` its module (to reach the
  learner's other exercise functions), ``starter(name)`` returns the PUBLIC
  starter's given module ``name`` (``"dpo_toy"``; declare it in
  ``Harness(given=...)``), loaded for the harness before any learner code
  runs -- never the copy the learner's file imported. It runs
  in the worker with the learner's ``fn`` and in the grader with the
  reference's -- the engine ships its source text to the worker, which never
  imports this package. A harness that holds anything trusted (another
  exercise's formula, a table of reference values, a recorder) puts it in a
  second function, ``Harness(function, trusted=run_toy)``, with signature
  ``run_toy(fn, starter, *args, **kwargs)``: it gets the cases whose ``check``
  keyword is ``trusted_check`` (``"toy experiment"``), runs in the worker's
  trusted process, where no learner code runs, and each call of ``fn`` there
  is answered by the learner's child, gradients included
  (:mod:`graders.engine.worker.served`); ``given`` and ``prelude`` are then
  its own. Return a dict of metrics; use ``compare`` for bands::

      def run_dpo(fn, learner, starter, profile):
          toy = starter("dpo_toy")
          out = toy.run_toy_dpo_experiment(profile, loss_fn=fn,
                                           logprob_fn=learner.sequence_logprobs)
          return {"after_accuracy": out["after"]["pair_accuracy"]}

      @exercise("module_8_training.dpo_loss", points=3, call=Harness(run_dpo, given=("dpo_toy",)), timeout=60,
                compare=band(lambda exp, got: abs(got["after_accuracy"] - 1.0) < 1e-9,
                             Text("pair accuracy should reach 1.0", "точность по парам должна дойти до 1.0")))

Edge classes: ``@exercise(..., edges=declare("extremes", "boundaries", dtypes="why not", ...))`` names
the classes of :mod:`graders.checks.edges` that apply to the exercise and, for each other class, why not;
``Case(..., edge="extremes")`` tags a fixed case as one of its class (docs/design.md, "Edge classes").

Custom comparison: ``compare(expected, got, case) -> None | str`` returns
``None`` on a match, else a one-line reason, in both languages as a
:class:`graders.text.Text` (``Text(en, ru)``: feedback shows the report's language).
:func:`close` builds the default; :func:`band` wraps a predicate (outcome
bands of a training run).

A harness runs once per case per submission, in the worker, and once per case
in the grader for the reference: keep it short, and let a broken ``fn`` fail
fast (call it on a small input before any expensive set-up such as a warm-up).

The misconception catalogue and mutation tests
----------------------------------------------
Catalogue entries live in ``graders/misconceptions/<file stem>/<function>.py``,
one function per entry (format: ``graders/engine/judging/misconceptions.py``). On a wrong answer the grader
runs the entries of the exercise on its cases (the wrong answers first) and
names the one entry that agrees with the learner on every case, if only one
does. A mutation test
grades each entry as a submission in one batch::

    from graders.engine import grade_sources, load_misconceptions, mutant_source

    names = [e.name for e in load_misconceptions(exercise_id)]
    reports = grade_sources({n: {f"{stem}.py": mutant_source(exercise_id, n)} for n in names})
    # each report: points lost on exercise_id only, and n in its "misconceptions"
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from graders.checks.cases import (DEFAULT_ATOL, DEFAULT_RTOL, DEFAULT_TIMEOUT, RETURNS, Answered, Case, Compare,
                                  Harness,
                                  LossAndGrads, Returns, Tensor, band, close, reference_definitions)
from graders.checks.drawn import hypothesis_cases, st
from graders.checks.edges import Edges, declare



@dataclass
class ExerciseSpec:
    """Everything the engine needs to grade one exercise."""

    exercise_id: str
    points: float
    make_cases: Callable[[], Iterable[Case]]
    call: object = RETURNS
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    compare: Compare | None = None
    timeout: float = DEFAULT_TIMEOUT
    detect_misconceptions: bool = True
    float_trap: bool = False  # wrong values floating point may explain (an all-equal group standardised)
    _cases: list[Case] | None = field(default=None, repr=False)
    registered: bool = False  # made by @exercise in a checks file (its cases may be kept on disk)
    edges: Edges | None = None  # the edge classes that apply, and why the others do not (checks/edges.py)

    @property
    def function(self) -> str:
        return self.exercise_id.split(".", 1)[1]

    @property
    def stem(self) -> str:
        return self.exercise_id.split(".", 1)[0]

    def cases(self) -> list[Case]:
        """The fixed, ordered case list (generated once per process, or set from disk by the grader:
        :func:`graders.engine.judging.refcache.kept_cases`)."""
        if self._cases is None:
            cases = list(self.make_cases())
            for case in cases:
                if not isinstance(case, Case):
                    raise TypeError(f"{self.exercise_id}: the case generator yielded {type(case).__name__}")
            self._cases = cases
        return self._cases

    def comparison(self) -> Compare:
        return self.compare or close(self.rtol, self.atol)


REGISTRY: dict[str, ExerciseSpec] = {}


def exercise(exercise_id: str, *, points: float, call=RETURNS, rtol: float = DEFAULT_RTOL,
             atol: float = DEFAULT_ATOL, compare: Compare | None = None,
             timeout: float = DEFAULT_TIMEOUT, detect_misconceptions: bool = True, float_trap: bool = False,
             edges: Edges | None = None):
    """Decorator registering a case generator as the checks of ``exercise_id`` (``edges``: its edge classes,
    :func:`graders.checks.edges.declare`)."""
    if "." not in exercise_id:
        raise ValueError(f"exercise_id must be '<file stem>.<function>', got {exercise_id!r}")
    if points <= 0:
        raise ValueError(f"points must be > 0, got {points!r}")

    def register(make_cases: Callable[[], Iterable[Case]]):
        REGISTRY[exercise_id] = ExerciseSpec(exercise_id, float(points), make_cases, call, rtol, atol,
                                             compare, float(timeout), detect_misconceptions, float_trap,
                                             registered=True, edges=edges)
        return make_cases
    return register


def points(exercise_id: str) -> float | None:
    """The points of ``exercise_id`` (its spec's); ``None`` when the kit has no checks for it. Here, not in the
    registry (``graders.course``): the course knows its exercises, the checks know what each is worth, and the
    registry never imports the checks (no loop between the packages)."""
    spec = spec_for(exercise_id)
    return float(spec.points) if spec is not None else None


def spec_for(exercise_id: str) -> ExerciseSpec | None:
    """The registered spec of an exercise, importing ``graders.checks.<stem>`` on first use."""
    if exercise_id not in REGISTRY:
        stem = exercise_id.split(".", 1)[0]
        try:
            importlib.import_module(f"{__name__}.{stem}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{stem}":
                raise
    return REGISTRY.get(exercise_id)


__all__ = [
    "Case", "Tensor", "RETURNS", "Returns", "Answered", "LossAndGrads", "Harness", "ExerciseSpec", "exercise",
    "spec_for", "hypothesis_cases", "Edges", "declare", "close", "band", "st", "REGISTRY", "reference_definitions",
    "DEFAULT_RTOL", "DEFAULT_ATOL", "DEFAULT_TIMEOUT",
]
