"""Hidden grader checks: the API check authors use, and the registry of specs.

This package is instructor-only: the grading worker that runs learner code is
refused any import or read of it (see ``graders/engine/sandbox.py``).

How to write the checks of an exercise
======================================
Each learner file ``<stem>.py`` has a checks module ``graders/checks/<stem>.py``
with one decorated *case generator* per exercise. The exercise id is
``"<file stem>.<function>"`` (``graders.course.exercises`` lists them)::

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
  the two normalised results (``graders.engine.codec.normalise``: floats,
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
  type of the reference's (``graders.engine.compare.type_problem``: a float
  for a float, an int for an int, an array of the same dtype, a tensor of the
  same dtype that requires grad exactly when the reference's does, the same
  containers); a wrong type fails the case.
- Score: ``points`` x (weight of passed value cases + weight of passed
  ``raises`` cases x the share of the value cases' weight passed) / total
  weight (``graders.engine.judge.earned_share``): refusing bad input is worth
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
  imports this package. Return a dict of metrics; use ``compare`` for bands::

      def run_dpo(fn, learner, starter, profile):
          toy = starter("dpo_toy")
          out = toy.run_toy_dpo_experiment(profile, loss_fn=fn,
                                           logprob_fn=learner.sequence_logprobs)
          return {"after_accuracy": out["after"]["pair_accuracy"]}

      @exercise("module_8_training.dpo_loss", points=3, call=Harness(run_dpo, given=("dpo_toy",)), timeout=60,
                compare=band(lambda exp, got: abs(got["after_accuracy"] - 1.0) < 1e-9,
                             Text("pair accuracy should reach 1.0", "точность по парам должна дойти до 1.0")))

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
one function per entry (format: ``graders/engine/misconceptions.py``). On a wrong answer the grader
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
import inspect
import threading
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from graders.engine.codec import TensorSpec
from graders.engine.compare import mismatch
from graders.text import Text

try:  # re-exported for check authors
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a core dependency
    st = None

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

    def __post_init__(self) -> None:
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
        """The call mode as the worker reads it (JSON; :func:`graders.engine.calls.call_case` dispatches on it)."""
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
    """

    function: Callable
    torch: bool = True
    given: tuple[str, ...] = ()
    prelude: str = ""  # source run before the harness's, in its namespace (trusted copies it calls)

    @property
    def uses_torch(self) -> bool:
        return self.torch

    def describe(self) -> dict:
        source = inspect.getsource(self.function)
        if self.prelude:
            source = f"{self.prelude}\n\n{source}"
        return {"kind": "harness", "name": self.function.__name__, "source": source, "torch": self.torch,
                "given": list(self.given)}


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

    @property
    def function(self) -> str:
        return self.exercise_id.split(".", 1)[1]

    @property
    def stem(self) -> str:
        return self.exercise_id.split(".", 1)[0]

    def cases(self) -> list[Case]:
        """The fixed, ordered case list (generated once per process, or set from disk by the grader:
        :func:`graders.engine.refcache.kept_cases`)."""
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
             timeout: float = DEFAULT_TIMEOUT, detect_misconceptions: bool = True, float_trap: bool = False):
    """Decorator registering a case generator as the checks of ``exercise_id``."""
    if "." not in exercise_id:
        raise ValueError(f"exercise_id must be '<file stem>.<function>', got {exercise_id!r}")
    if points <= 0:
        raise ValueError(f"points must be > 0, got {points!r}")

    def register(make_cases: Callable[[], Iterable[Case]]):
        REGISTRY[exercise_id] = ExerciseSpec(exercise_id, float(points), make_cases, call, rtol, atol,
                                             compare, float(timeout), detect_misconceptions, float_trap,
                                             registered=True)
        return make_cases
    return register


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


@contextmanager
def _seed_alone():
    """Hypothesis draws as if no module of the kit were loaded.

    Hypothesis (since 6.131) biases generation towards constants it harvests
    from every *local* module in ``sys.modules`` -- here the kit's own code --
    so one seed drew different examples depending on which of the kit's
    modules a process had imported (the grader, the build, a test run, the
    layout of the files). With that harvest empty, the examples depend on the
    seed alone. Internal API: when a Hypothesis release renames it, this
    changes nothing and ``tests/test_engine_units.py`` says so.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the harvest
        yield
        return
    harvest = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if harvest is None or cache is None:  # pragma: no cover
        yield
        return
    empty = providers.Constants()
    with _SEED_ALONE_LOCK:
        providers._get_local_constants = lambda: empty
        cache.cache.clear()
        try:
            yield
        finally:
            providers._get_local_constants = harvest
            cache.cache.clear()


_SEED_ALONE_LOCK = threading.RLock()


def hypothesis_cases(strategy, *, count: int, seed: int, to_case: Callable[[object], Case]) -> list[Case]:
    """``count`` (or fewer, if the space is small) examples of ``strategy``, identical on every run.

    Hypothesis draws with a fixed ``seed``, no example database and none of
    the constants it would harvest from the modules a process has imported
    (:func:`_seed_alone`), so every submission meets the same inputs. Each example becomes a case via
    ``to_case``; cases without a label get ``"property case #<i>"`` (in Russian ``"случайная проверка #<i>"``).
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    drawn: list = []

    @_seed_alone()
    @fixed_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def collect(example) -> None:
        drawn.append(example)

    collect()
    cases = []
    for index, example in enumerate(drawn[:count]):
        case = to_case(example)
        if not case.label:
            case = replace(case, label=Text(f"property case #{index + 1}", f"случайная проверка #{index + 1}"))
        cases.append(case)
    return cases


__all__ = [
    "Case", "Tensor", "RETURNS", "Returns", "LossAndGrads", "Harness", "ExerciseSpec", "exercise",
    "spec_for", "hypothesis_cases", "close", "band", "st", "REGISTRY", "reference_definitions",
    "DEFAULT_RTOL", "DEFAULT_ATOL", "DEFAULT_TIMEOUT",
]
