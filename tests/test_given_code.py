"""Given code answers no exercise (docs/security.md, the threat model; docs/design.md, "The grading contract").

A learner file ships everything outside its ``### BEGIN SOLUTION`` /
``### END SOLUTION`` fences verbatim (``starter/``), and a given module
(``grpo_toy.py``, ``arithmetic_toy.py``, ``dpo_toy.py``: the toys the training
files import) ships whole, so nothing there may compute an exercise's answer:
the toy loops call the learner's own functions (``grpo_toy.your_formulas``,
``dpo_toy.supervised_warmup``'s ``logprob_fn``, the ``loss_fn`` the training
file hands its toy) instead of carrying a formula. Two checks, over all four
learner files and every given module at once (a module 8 helper could answer a
module 9 exercise):

- **Graded.** Every top-level function of the starter's given code is graded
  in this process (:func:`graders.engine.routes.inline.grade_exercise`, the hidden
  checks) as the learner's answer to every exercise whose cases its signature
  accepts (keywords it lacks are dropped; a call in which it would take none
  of the case's inputs -- so that only its defaults, e.g. a whole toy run,
  would work -- counts as a miss; every case of the kit passes some input): as
  it is, and -- for the PyTorch files' functions against the NumPy exercises --
  through an adapter that feeds it float64 tensors and turns tensors back into
  arrays, so a torch copy of a NumPy formula is caught too. The PyTorch
  exercises are graded through their loss's gradient, which a NumPy function
  cannot produce, so only the PyTorch files' functions are tried on them. None
  may pass, and none may score more than behaviour that knows nothing of the
  exercise: the exercise's ValueError cases (the given helpers validate inputs
  on purpose: ``_positive``, ``_real``, a toy experiment refusing an unknown
  profile) plus the best score of "return argument i unchanged"
  (``_out``/``_real``/``_float_array`` return an input, and pass@1 = p,
  B / P_info = B when P_info = 1, ...).
- **Textual.** No statement of the given code (the learner files' and the
  given modules') equals a statement of a fenced body (all four files;
  comments dropped, whitespace normalised) unless it is shorter than 12
  characters (``else :``, ``continue``, ``return {``).

A detector test grades the reference solutions through the same machinery: it
must flag them. And the toy loops are checked to compute with the functions
they are handed (the learner's by default), the grading harness with its own.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import io
import tokenize
import warnings
from pathlib import Path

import numpy as np
import pytest

from graders.build import solution_files
from graders.checks import spec_for
from graders.engine.routes.inline import grade_exercise
from graders.engine.judging.kit import DEFAULT_KIT
from graders.fences import exercises_in, find_fences
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

import public_sweep as sweep

GIVEN_MODULES = DEFAULT_KIT.given_modules()  # name -> module folder: grpo_toy, arithmetic_toy, dpo_toy
TORCH_FILES = ("module_8_training", "module_9_training", *GIVEN_MODULES)  # the given toys are PyTorch too
POINTS_SLACK = 1e-3  # report points are rounded to 4 decimals
MIN_STATEMENT = 12  # characters of normalised code; shorter statements are syntax (``else :``, ``continue``)

EXERCISES = [exercise for path in solution_files() for exercise in exercises_in(path)]


# ----------------------------------------------------------------------------- the given functions
def _body_without_docstring(node: ast.FunctionDef) -> list[ast.stmt]:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _is_stub(node: ast.FunctionDef) -> bool:
    """A fenced function in the starter: its body is one ``raise NotImplementedError(...)``."""
    body = _body_without_docstring(node)
    return (len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None
            and "NotImplementedError" in ast.unparse(body[0].exc))


def _starter_path(solution):
    return STARTER_DIR / solution.parent.name / solution.name


def given_module_paths(root=STARTER_DIR) -> list:
    """The given modules' files under ``root`` (starter or solutions)."""
    return [root / folder / f"{name}.py" for name, folder in GIVEN_MODULES.items()]


def load_with_given(path, name: str):
    """The file at ``path`` loaded with fresh copies of the given modules of its folder."""
    given = {other.stem: other for other in given_module_paths(path.parent.parent) if other.parent == path.parent}
    return load_module(path, name, given=given)


@functools.lru_cache(maxsize=None)
def given_functions() -> tuple[tuple[str, str, object], ...]:
    """(file stem, function name, function) for every top-level given function of the starter files
    and of the given modules."""
    exercise_names = {exercise.split(".", 1)[1] for exercise in EXERCISES}
    found = []
    for path in [_starter_path(solution) for solution in solution_files()] + given_module_paths():
        module = load_with_given(path, f"_given_code_{path.stem}")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not _is_stub(node) and node.name not in exercise_names:
                found.append((path.stem, node.name, getattr(module, node.name)))
    return tuple(found)


# ----------------------------------------------------------------------------- grading a function as an answer
def _accepted(fn, kwargs: dict) -> dict:
    """The keywords ``fn`` accepts (all of them when it takes ``**kwargs``)."""
    parameters = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(kwargs)
    return {key: value for key, value in kwargs.items() if key in parameters}


def _binds(fn, case) -> bool:
    """Whether ``fn`` accepts the case's arguments and takes at least one of them."""
    kwargs = _accepted(fn, case.kwargs)
    if not case.args and not kwargs:
        return False
    try:
        inspect.signature(fn).bind(*case.args, **kwargs)
    except TypeError:
        return False
    return True


def _to_tensor(value):
    import torch

    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return torch.tensor(value, dtype=torch.float64)
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return torch.tensor(value, dtype=torch.float64)
    return value


def _from_tensor(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().numpy() if value.ndim else float(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_from_tensor(v) for v in value)
    if isinstance(value, dict):
        return {key: _from_tensor(v) for key, v in value.items()}
    return value


def _as_answer(fn, torch_io: bool = False):
    """``fn`` called the way an exercise is called: unknown keywords dropped, optionally through torch."""
    @functools.wraps(fn)
    def answer(*args, **kwargs):
        kwargs = _accepted(fn, kwargs)
        if not args and not kwargs:
            raise TypeError(f"{fn.__name__} takes none of this case's inputs")
        if torch_io:
            args, kwargs = [_to_tensor(a) for a in args], {k: _to_tensor(v) for k, v in kwargs.items()}
            return _from_tensor(fn(*args, **kwargs))
        return fn(*args, **kwargs)
    return answer


def _grade(exercise: str, fn) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return grade_exercise(exercise, fn, namespace={}, detect_misconceptions=False, hide_hidden_inputs=False)


def _argument(index: int, convert):
    def answer(*args, **kwargs):  # noqa: ARG001 - knows nothing of the exercise
        return convert(args[index])
    return answer


def _as_float(value):
    return float(value)


def _as_array(value):
    return np.array(value, dtype=np.float64)


def _identity(value):
    return value


def validation_points(exercise: str) -> float:
    """The points of the exercise's cases that expect an exception (ValueError for invalid arguments)."""
    spec = spec_for(exercise)
    cases = spec.cases()
    return spec.points * sum(c.weight for c in cases if c.raises) / sum(c.weight for c in cases)


@functools.lru_cache(maxsize=None)
def knowledge_free_points(exercise: str) -> float:
    """What behaviour that knows nothing of the exercise scores: its ValueError cases, plus the best
    "return argument i" (as it is, as a float, as a float64 array)."""
    arity = max((len(case.args) for case in spec_for(exercise).cases()), default=0)
    best = 0.0
    for index in range(arity):
        for convert in (_identity, _as_float, _as_array):
            best = max(best, _grade(exercise, _argument(index, convert))["points"])
    return validation_points(exercise) + best


def excess(exercise: str, fn, torch_io: bool = False) -> str | None:
    """Why ``fn`` (graded as the answer to ``exercise``) answers too much, or None."""
    entry = _grade(exercise, _as_answer(fn, torch_io))
    if entry["status"] == "passed":
        return f"passes every check ({entry['points']:g}/{entry['max_points']:g})"
    if entry["points"] <= validation_points(exercise) + POINTS_SLACK:
        return None
    allowed = knowledge_free_points(exercise)  # graded only when needed: a dozen gradings
    if entry["points"] > allowed + POINTS_SLACK:
        return (f"scores {entry['points']:.4g}/{entry['max_points']:g}, more than knowledge-free behaviour "
                f"({allowed:.4g}: the ValueError cases plus returning an argument)")
    return None


def test_given_functions_are_collected_and_stubs_are_not():
    names = {(stem, name) for stem, name, _ in given_functions()}
    for expected in [("grpo_toy", "group_advantages"), ("grpo_toy", "evaluate_policy"),
                     ("grpo_toy", "your_formulas"), ("dpo_toy", "supervised_warmup"),
                     ("arithmetic_toy", "teacher_forced"), ("module_9_training", "run_toy_grpo_experiment"),
                     ("module_9_training", "_check_loss_inputs"), ("module_8_training", "run_toy_dpo_experiment"),
                     ("module_9_reference", "_float_array"), ("module_8_reference", "_out")]:
        assert expected in names
    for not_given in [("module_9_reference", "_last_box"), ("module_9_reference", "group_relative_advantages"),
                      ("module_9_training", "grpo_loss"), ("module_8_training", "sequence_logprobs")]:
        assert not_given not in names


def given_code_problems(exercise: str) -> list[str]:
    """Every given function that, graded as the answer to ``exercise``, scores what it should not."""
    cases = spec_for(exercise).cases()
    numpy_exercise = exercise.split(".", 1)[0] not in TORCH_FILES
    problems = []
    for stem, name, fn in given_functions():
        if (not numpy_exercise and stem not in TORCH_FILES) or not any(_binds(fn, case) for case in cases):
            continue
        for torch_io in (False, True) if numpy_exercise and stem in TORCH_FILES else (False,):
            why = excess(exercise, fn, torch_io)
            if why:
                problems.append(f"{stem}.{name}{' (through torch)' if torch_io else ''} {why}")
    return problems


# The whole sweep (every exercise, the PyTorch ones' toy experiments included): the README's suite runs the PyTorch
# exercises' (no record holds them) and the exhaustive tier the NumPy ones' too (about 14 s of CPU), whose
# guarantee the suite holds by the record below: the fast tier sweeps every NumPy exercise whose inputs changed
# since its sweep last passed.
@pytest.mark.slow
@pytest.mark.parametrize("exercise", [pytest.param(exercise, marks=pytest.mark.exhaustive)
                                      if exercise.split(".", 1)[0] not in TORCH_FILES else exercise
                                      for exercise in EXERCISES])
def test_no_given_function_answers_the_exercise(exercise):
    problems = given_code_problems(exercise)
    assert not problems, f"given code answers {exercise}:\n" + "\n".join(problems)


# ----------------------------------------------------------------------------- the fast tier's record
# tests/given_record.json, kept as tests/sweep_record.json is (tests/public_sweep.py's record helpers): for each
# NumPy exercise, the digest of what its sweep reads, exercise by exercise (issue 54, point 2): the given code
# (every starter learner file and given module, whole but for its stubs, which answer nothing); the top-level code
# of the exercise's reference that its function reaches by name; its own checks (what its ``@exercise``
# registration reaches by name in its learner file's checks) with the checks' shared API. What the digest leaves
# out (the engine that grades) is covered by the engine's own tests and by the exhaustive sweep.
GIVEN_RECORD = Path(__file__).with_name("given_record.json")
NUMPY_EXERCISES = [exercise for exercise in EXERCISES if exercise.split(".", 1)[0] not in TORCH_FILES]
RECORD_UPDATE = "run `pytest tests/test_given_code.py --update-sweep-record` and commit tests/given_record.json"
CHECKS_DIR = REPO_ROOT / "graders" / "checks"


def _given_text(text: str) -> str:
    """A given file's top-level statements, its stubs (``raise NotImplementedError`` only) left out."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    segment = sweep._segmenter(text)
    return "\n\0".join(segment(node) for node in tree.body
                        if not (isinstance(node, ast.FunctionDef) and _is_stub(node)))


def _own_checks(text: str, function: str) -> str:
    """What the ``@exercise(...)`` registration of ``function`` reaches by name in a checks file (any definition
    whose text names ``<module>.function`` as a string: over-inclusive, as the slice is)."""
    try:
        items, _ = sweep._parsed(text)
    except SyntaxError:
        return text
    marks = (f'.{function}"', f".{function}'")
    return sweep.name_slice(text, {name for defined, _, segment in items if defined
                                   for name in defined if any(mark in segment for mark in marks)})


def given_digest(exercise: str, read=lambda path: path.read_text(encoding="utf-8")) -> str:
    """sha256 of what ``exercise``'s sweep reads (the comment above), by kit path and contents; ``read`` a
    kit file's text (planted by tests)."""
    stem, function = exercise.split(".", 1)
    own = CHECKS_DIR / stem
    parts = [exercise.encode()]
    for path in sorted(CHECKS_DIR.glob("*.py")):  # the checks' shared API
        parts.append(path.name.encode() + b"\0" + read(path).encode())
    for path in sorted(own.glob("*.py")) if own.is_dir() else [CHECKS_DIR / f"{stem}.py"]:
        parts.append(path.name.encode() + b"\0" + _own_checks(read(path), function).encode())
    parts.append(sweep.name_slice(read(DEFAULT_KIT.solution_path(stem)), {function}).encode())
    for path in [_starter_path(solution) for solution in solution_files()] + given_module_paths():
        parts.append(path.name.encode() + b"\0" + _given_text(read(path)).encode())
    return hashlib.sha256(b"\0\0".join(parts)).hexdigest()


def test_no_given_function_answers_an_exercise_a_change_touches(request):
    current = {exercise: given_digest(exercise) for exercise in NUMPY_EXERCISES}
    record = sweep.read_record(GIVEN_RECORD)
    changed = sweep.stale(record, current)
    problems = {exercise: given_code_problems(exercise) for exercise in changed}
    problems = {exercise: found for exercise, found in problems.items() if found}
    assert not problems, "given code answers:\n" + "\n".join(f"{e}: {p}" for e, p in problems.items())
    gone = sorted(set(record) - set(current))
    if (changed or gone) and request.config.getoption("--update-sweep-record"):
        sweep.write_record(current, GIVEN_RECORD)  # the changed exercises passed just now; the others' digests match
        return
    assert not changed, f"the sweep passed for {changed}, which tests/given_record.json does not hold: {RECORD_UPDATE}"
    assert not gone, f"tests/given_record.json names exercises that no longer exist {gone}: {RECORD_UPDATE}"


def test_the_given_record_follows_what_the_sweep_reads():
    before = {e: given_digest(e) for e in NUMPY_EXERCISES}
    assert sweep.stale(before, before) == []  # control: the current digests vouch for themselves

    def planted(changes):
        return lambda path: changes[path] if path in changes else path.read_text(encoding="utf-8")

    # a given module's edit changes every exercise's digest
    edited = STARTER_DIR / "module_09" / "grpo_toy.py"
    after = {e: given_digest(e, planted({edited: "# edited\n"})) for e in NUMPY_EXERCISES}
    assert sweep.stale(before, after) == sorted(NUMPY_EXERCISES)
    # a new exercise (its stub in the starter, its function in the reference, its checks): no other digest moves
    stub, reference = STARTER_DIR / "module_09" / "module_9_reference.py", DEFAULT_KIT.solution_path("module_9_reference")
    checks = CHECKS_DIR / "module_9_reference" / "groups.py"
    added = planted({
        stub: stub.read_text(encoding="utf-8") + "\n\ndef rloo_baseline(rewards):\n    \"\"\"Doc.\"\"\"\n"
                                                 "    raise NotImplementedError(\"rloo_baseline\")\n",
        reference: reference.read_text(encoding="utf-8") + "\n\ndef rloo_baseline(rewards):\n    return rewards\n",
        checks: checks.read_text(encoding="utf-8") + "\n\n@exercise(f\"{M}.rloo_baseline\", points=1)\n"
                                                     "def _rloo_cases():\n    return []\n"})
    assert {e: given_digest(e, added) for e in NUMPY_EXERCISES} == before
    # a constant of the checks that one exercise's registration reaches: that exercise (and any other reaching it)
    text = checks.read_text(encoding="utf-8")
    assert "SEED_REWARDS = np.array([1.0, 1.0, 0.0, 0.0])" in text
    changed = planted({checks: text.replace("SEED_REWARDS = np.array([1.0, 1.0, 0.0, 0.0])",
                                            "SEED_REWARDS = np.array([1.0, 0.0, 0.0, 0.0])", 1)})
    moved = sweep.stale(before, {e: given_digest(e, changed) for e in NUMPY_EXERCISES})
    assert "module_9_reference.group_relative_advantages" in moved, moved
    assert "module_9_reference.informative_group_probability" not in moved, moved


@pytest.mark.parametrize("exercise", ["module_9_reference.pass_at_k_unbiased",
                                      "module_9_reference.categorical_entropy", "module_8_reference.ipo_loss"])
def test_the_detector_flags_a_real_answer(exercise):
    stem, name = exercise.split(".", 1)
    folder = {"8": "module_08", "9": "module_09"}[stem.split("_")[1]]
    reference = load_module(SOLUTIONS_DIR / folder / f"{stem}.py", f"_given_code_reference_{stem}")
    assert excess(exercise, getattr(reference, name)) is not None


def test_the_torch_adapter_flags_a_torch_copy_of_a_numpy_answer():
    import torch

    reference = load_module(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", "_given_code_reference_torch")

    def torch_only(rewards, scale=True, *, eps=1e-6, ddof=0):  # accepts tensors only, returns a tensor
        assert isinstance(rewards, torch.Tensor)
        return torch.from_numpy(reference.group_relative_advantages(rewards.numpy(), scale, eps=eps, ddof=ddof))

    assert excess("module_9_reference.group_relative_advantages", torch_only, torch_io=False) is None  # arrays in
    assert excess("module_9_reference.group_relative_advantages", torch_only, torch_io=True) is not None


# ----------------------------------------------------------------------------- the toy loops call the learner's code
def test_the_toy_grpo_loop_computes_with_the_formulas_it_is_handed():
    from dataclasses import replace
    from types import SimpleNamespace

    import torch

    training = load_with_given(SOLUTIONS_DIR / "module_09" / "module_9_training.py", "_given_code_m9_training")
    reference = load_module(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", "_given_code_m9_formulas")
    calls = dict.fromkeys(training.grpo_toy.FORMULAS, 0)

    def spy(name):
        def call(*args, **kwargs):
            calls[name] += 1
            return getattr(reference, name)(*args, **kwargs)
        return call

    config = replace(training.grpo_toy.profile_config("smoke"), updates=2, warmup_steps=20, eval_samples=4,
                     num_heldout_prompts=1)
    spied = training.run_toy_grpo_experiment(config, formulas=SimpleNamespace(**{n: spy(n) for n in calls}))
    assert all(count > 0 for count in calls.values()), calls
    # by default: module_9_reference.py of the given loop's own folder (here: the reference solution)
    default = training.run_toy_grpo_experiment(config)
    assert spied["history"] == default["history"] and spied["after_train"] == default["after_train"]
    # the public starter's loop calls the starter's module_9_reference, whose formulas are stubs
    starter = load_with_given(STARTER_DIR / "module_09" / "grpo_toy.py", "_given_code_m9_starter")
    with pytest.raises(NotImplementedError, match="module_9_reference"):
        starter.group_advantages(torch.zeros((1, 2), dtype=torch.float64), scale=True)


def test_the_toy_dpo_warmup_scores_tokens_with_the_logprob_function_it_is_handed():
    from dataclasses import replace

    training = load_with_given(SOLUTIONS_DIR / "module_08" / "module_8_training.py", "_given_code_m8_training")
    calls = []

    def spy(logits, input_ids, mask):
        calls.append(logits.requires_grad)
        return training.sequence_logprobs(logits, input_ids, mask)

    config = replace(training.dpo_toy.PROFILES["smoke"], sft_steps=5, steps=1, stress_steps=1)
    training.run_toy_dpo_experiment(config, logprob_fn=spy)
    assert calls[:5] == [True] * 5  # the five warm-up steps, with gradient


# slow: grading a PyTorch exercise, its toy experiment included (about 2.3 s); the given-code record test stays fast
@pytest.mark.slow
def test_grading_the_toy_grpo_step_never_calls_the_learners_module_9_reference():
    # the harness hands the starter's loop its own formulas: the starter's module_9_reference (stubs) is never
    # consulted, so the reference grpo_loss passes, toy experiment included
    reference = load_with_given(SOLUTIONS_DIR / "module_09" / "module_9_training.py", "_given_code_m9_graded")
    entry = _grade("module_9_training.grpo_loss", reference.grpo_loss)
    assert entry["status"] == "passed", entry["feedback"]


# ----------------------------------------------------------------------------- the text of the given code
def statements(source: str) -> list[tuple[int, str]]:
    """(first line, code) per logical line: tokens joined by one space; comments and docstrings
    (statements made of string literals only) dropped."""
    found, parts, start, strings_only = [], [], None, True
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if parts and not strings_only:
                found.append((start, " ".join(parts)))
            parts, start, strings_only = [], None, True
        elif token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
            start = token.start[0] if start is None else start
            parts.append(token.string)
            strings_only = strings_only and token.type == tokenize.STRING
    return found


def fenced_statements() -> dict[str, str]:
    """Normalised statement -> where, for every statement inside a fence of a solution file."""
    found = {}
    for path in solution_files():
        source = path.read_text(encoding="utf-8")
        inside = {line + 1 for fence in find_fences(source, str(path)) for line in range(fence.begin + 1, fence.end)}
        for line, code in statements(source):
            if line in inside:
                found.setdefault(code, f"{path.stem}:{line}")
    return found


def test_statements_normalise_whitespace_and_drop_comments():
    source = 'def f(x):\n    """Doc."""\n    y = (x +\n         1)  # note\n    """A\n    b"""\n    return  y\n'
    assert statements(source) == [(1, "def f ( x ) :"), (3, "y = ( x + 1 )"), (7, "return y")]


def test_no_given_statement_copies_a_fenced_one():
    fenced = fenced_statements()
    assert len(fenced) > 200  # every fenced body of the four files
    copies = []
    for path in [_starter_path(solution) for solution in solution_files()] + given_module_paths():
        for line, code in statements(path.read_text(encoding="utf-8")):
            if len(code) >= MIN_STATEMENT and code in fenced and not code.startswith("raise NotImplementedError"):
                copies.append(f"{path.relative_to(STARTER_DIR)}:{line} repeats {fenced[code]}: {code}")
    assert not copies, "given code repeats fenced statements:\n" + "\n".join(copies)
