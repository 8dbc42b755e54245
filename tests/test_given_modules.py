"""Given modules in grading: the toys the training files import come from the kit, never from the learner.

``module_9_training.py`` imports ``grpo_toy`` (and it ``arithmetic_toy``);
``module_8_training.py`` imports ``dpo_toy``. In the worker a learner file
imports the KIT's copies (shipped in the job), and the harness runs copies of
its own, loaded before any learner code and kept out of ``sys.modules``. So:

- a submission that brings its own ``grpo_toy.py`` / ``dpo_toy.py`` (toys that
  report perfect outcomes whatever loss they train with) grades exactly as the
  same learner file without them;
- a learner file that patches the toys at import -- the experiment replaced by
  one that reports perfect outcomes, or every copy of the update step it can
  name in ``sys.modules`` made to train with a correct loss -- grades exactly
  as the same file without the patch (positive controls: the same patches DO
  change the harness's outcome when it runs the learner's own copy);
- a learner file from before the toys moved out (everything inline, no import
  of a given module) grades exactly as the split one.

Plus the pieces: :func:`graders.loader.load_module`'s ``given``, the kit's
given modules, and the job that ships them.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import types

import pytest

from graders import course
from graders.checks import spec_for
from graders.engine.values import codec
from graders.engine.routes.batch import grade_sources
from graders.engine.routes.grading import GradeOptions, prepare_job, write_settings
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import entry_source
from graders.engine.judging.references import scored
from graders.loader import LEARNER_PREFIX, load_module
from graders.paths import SOLUTIONS_DIR, STARTER_DIR

M9, M8 = SOLUTIONS_DIR / "module_09", SOLUTIONS_DIR / "module_08"
GIVEN = {"module_9_training": ("arithmetic_toy", "grpo_toy"), "module_8_training": ("dpo_toy",)}
LOSS = {"module_9_training": "grpo_loss", "module_8_training": "dpo_loss"}
TRAINING_EXERCISES = [e for e in course.exercises() if e.split(".", 1)[0].endswith("_training")]


# ----------------------------------------------------------------------------- learner files
def _solution(stem: str) -> str:
    return DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")


def _given_source(name: str) -> str:
    return (SOLUTIONS_DIR / DEFAULT_KIT.given_modules()[name] / f"{name}.py").read_text(encoding="utf-8")


def _flipped(stem: str, patch: str = "") -> str:
    """The reference file with its loss's sign flipped (the catalogue's entry), the correct loss kept as
    ``_correct_loss``, and ``patch`` appended."""
    entry = entry_source(f"{stem}.{LOSS[stem]}", "sign_flipped")
    return f"{_solution(stem).rstrip()}\n\n_correct_loss = {LOSS[stem]}\n\n{entry.rstrip()}\n\n{patch}"


def _inline(stem: str) -> str:
    """The learner file as it was before the toy moved out: the given modules' code inline, then the
    exercises; no import of a given module (and no wrapper, which would call one)."""
    given = set(GIVEN[stem])
    parts = ["from __future__ import annotations\n"]
    for text in [_given_source(name) for name in GIVEN[stem]] + [_solution(stem)]:
        lines = text.splitlines(keepends=True)
        for node in ast.parse(text).body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if isinstance(node, ast.ImportFrom) and (node.module == "__future__" or node.module in given):
                continue
            if isinstance(node, ast.Import) and any(alias.name in given for alias in node.names):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.FunctionDef) and node.name.startswith("run_toy_") and text == _solution(stem):
                continue
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            parts.append("".join(lines[start - 1:node.end_lineno]) + "\n\n")
    return "".join(parts)


PERFECT_GRPO = '''
def _perfect_grpo(*args, **kwargs):  # perfect outcomes, whatever loss the loop is handed
    row = {"update": 1, "loss": 0.0, "ratio_min": 1.0, "ratio_mean": 1.0, "ratio_max": 1.0, "eval_accuracy": 1.0}
    metrics = {"accuracy": 1.0, "mean_reward": 1.0, "teacher_forced_kl": 0.0, "entropy": 0.0, "pass_at_4": 1.0}
    return {"history": [row], "before_train": metrics, "after_train": metrics, "before_heldout": metrics,
            "after_heldout": metrics}
'''
PERFECT_DPO = '''
def _perfect_dpo(*args, **kwargs):  # perfect outcomes, whatever functions the toy is handed
    metrics = {"loss": 0.0, "pair_accuracy": 1.0, "mean_margin": 9.0, "mean_chosen_logp": 0.0,
               "mean_rejected_logp": -9.0}
    return {"before": metrics, "after": metrics, "stress": metrics, "policy_generation_match": 1.0,
            "stress_generation_match": 1.0, "reference_generation_match": 1.0}
'''
PATCH_EXPERIMENT = {  # at import: the experiment of the toy the learner file imported reports perfect outcomes
    "module_9_training": PERFECT_GRPO + "grpo_toy.run_toy_grpo_experiment = _perfect_grpo\n",
    "module_8_training": PERFECT_DPO + "dpo_toy.run_toy_dpo_experiment = _perfect_dpo\n",
}
PATCH_EVERY_COPY = {  # at import: every copy of the toy this process can name trains with a correct loss
    "module_9_training": '''
import sys as _sys


def _cheat(real_update):
    def update(policy, optimizer, vocab, groups, lookup, config, loss_fn, **kwargs):
        return real_update(policy, optimizer, vocab, groups, lookup, config, _correct_loss, **kwargs)
    return update


for _module in list(_sys.modules.values()):
    try:
        if callable(getattr(_module, "grpo_update", None)) and hasattr(_module, "run_toy_grpo_experiment"):
            _module.grpo_update = _cheat(_module.grpo_update)
    except Exception:
        pass
''',
    "module_8_training": '''
import sys as _sys


def _cheat(real_train):
    def train(*args, loss_fn, **kwargs):
        return real_train(*args, loss_fn=_correct_loss, **kwargs)
    return train


for _module in list(_sys.modules.values()):
    try:
        if callable(getattr(_module, "train_dpo", None)) and hasattr(_module, "run_toy_dpo_experiment"):
            _module.train_dpo = _cheat(_module.train_dpo)
    except Exception:
        pass
''',
}
FAKE_TOYS = {  # a submission's own copies: the real code, then an experiment that reports perfect outcomes
    "grpo_toy.py": _given_source("grpo_toy") + PERFECT_GRPO + "run_toy_grpo_experiment = _perfect_grpo\n",
    "arithmetic_toy.py": _given_source("arithmetic_toy") + (
        "\n\ndef verify_arithmetic(response_tokens, prompt):  # every answer is right\n"
        "    return ArithmeticVerdict(1, 1, 'ok', 1.0, 'correct')\n"),
    "dpo_toy.py": _given_source("dpo_toy") + PERFECT_DPO + "run_toy_dpo_experiment = _perfect_dpo\n",
}


def _files(make) -> dict[str, str]:
    return {f"{stem}.py": make(stem) for stem in GIVEN}


SUBMISSIONS = {
    "split": _files(_solution),
    "split_with_the_toys": {**_files(_solution), **{f"{n}.py": _given_source(n) for g in GIVEN.values() for n in g}},
    "before_the_split": _files(_inline),
    "flipped": _files(_flipped),
    "flipped_with_fake_toys": {**_files(_flipped), **FAKE_TOYS},
    "flipped_patching_the_experiment": _files(lambda stem: _flipped(stem, PATCH_EXPERIMENT[stem])),
    "flipped_patching_every_copy": _files(lambda stem: _flipped(stem, PATCH_EVERY_COPY[stem])),
}


# ----------------------------------------------------------------------------- one batch
@pytest.fixture(scope="module")
def reports():
    return grade_sources(SUBMISSIONS, GradeOptions(modules=("8", "9")), jobs=2)


def _training(report: dict) -> list[dict]:
    entries = [e for e in report["exercises"] if e["id"] in TRAINING_EXERCISES]
    assert [e["id"] for e in entries] == sorted(TRAINING_EXERCISES, key=TRAINING_EXERCISES.index)
    return entries


@pytest.mark.slow
def test_the_split_file_and_the_one_from_before_the_split_get_full_marks(reports):
    for name in ("split", "split_with_the_toys", "before_the_split"):
        for entry in _training(reports[name]):
            assert entry["status"] == "passed" and entry["points"] == entry["max_points"], (name, entry)
    assert _training(reports["before_the_split"]) == _training(reports["split"])


@pytest.mark.slow
def test_the_flipped_losses_fail_in_the_toy_experiments(reports):
    # the teeth of the tests below: a fake or a patched toy that the harness believed would change this
    # (the controls below show the flipped losses' toy outcomes differ from the correct ones)
    entries = {e["id"]: e for e in _training(reports["flipped"])}
    # a flipped sign cannot show where the loss is refused or is 0 (no active token): every other check fails,
    # the toy runs too
    blind = sum(1 for case in spec_for("module_9_training.grpo_loss").cases()
                if case.raises is not None or "no active token" in str(case.label))
    assert blind and re.match(rf"{blind}/\d+ checks passed\.", entries["module_9_training.grpo_loss"]["feedback"])
    assert entries["module_8_training.dpo_loss"]["status"] == "failed"
    assert entries["module_8_training.sequence_logprobs"]["status"] == "passed"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["flipped_with_fake_toys", "flipped_patching_the_experiment",
                                  "flipped_patching_every_copy"])
def test_hostile_toys_change_nothing(reports, name):
    assert _training(reports[name]) == _training(reports["flipped"])


# ----------------------------------------------------------------------------- positive controls
def _load_learner(stem: str, text: str, tmp_path) -> tuple[types.ModuleType, dict]:
    """A learner file loaded in this process with fresh copies of the KIT's given modules (as a learner
    process would import them): returns the module and those copies."""
    tmp_path.mkdir(parents=True)
    path = tmp_path / f"{stem}.py"
    path.write_text(text, encoding="utf-8")
    prefix = f"_control_{tmp_path.parent.name}_{tmp_path.name}"
    folder = DEFAULT_KIT.given_modules()
    files = {name: STARTER_DIR / folder[name] / f"{name}.py" for name in GIVEN[stem]}
    copies: dict[str, types.ModuleType] = {}
    for name in GIVEN[stem]:  # arithmetic_toy before grpo_toy
        copies[name] = load_module(files[name], f"{prefix}_{name}", given={**files, **copies})
    return load_module(path, f"{prefix}_{stem}", given=copies), copies


def _toy_outcome(stem: str, fn, learner, toy) -> dict:
    spec = spec_for(f"{stem}.{LOSS[stem]}")
    case = next(c for c in spec.cases() if c.kwargs.get("check") == "toy experiment")
    harness = spec.call.run
    # measured as the grader measures it (the parameters the run trained, by the kit's own code)
    return scored(spec, codec.normalise(harness(fn, learner, lambda name: toy, *case.args, **case.kwargs)), case,
                  DEFAULT_KIT)


@pytest.fixture
def undo_patches():
    """Puts back whatever a hostile file's import patched in this process's modules."""
    names = ("grpo_update", "train_dpo", "run_toy_grpo_experiment", "run_toy_dpo_experiment")
    saved = []
    for module in list(sys.modules.values()):
        for name in names:
            try:
                if isinstance(module, types.ModuleType) and name in vars(module):
                    saved.append((module, name, vars(module)[name]))
            except Exception:  # noqa: BLE001 - an exotic module: the patch code skips it too
                pass
    yield
    for module, name, value in saved:
        setattr(module, name, value)


@pytest.mark.slow
@pytest.mark.parametrize("stem", list(GIVEN))
@pytest.mark.parametrize("patch", [PATCH_EXPERIMENT, PATCH_EVERY_COPY], ids=["experiment", "every_copy"])
def test_control_the_patches_work_on_the_copy_the_learner_imported(stem, patch, tmp_path, undo_patches):
    toy = GIVEN[stem][-1]
    plain, plain_toys = _load_learner(stem, _flipped(stem), tmp_path / "plain")
    honest = _toy_outcome(stem, plain._correct_loss, plain, plain_toys[toy])
    flipped = _toy_outcome(stem, plain.__dict__[LOSS[stem]], plain, plain_toys[toy])
    patched, patched_toys = _load_learner(stem, _flipped(stem, patch[stem]), tmp_path / "patched")
    try:
        cheated = _toy_outcome(stem, patched.__dict__[LOSS[stem]], patched, patched_toys[toy])
    except KeyError:  # an experiment that reports numbers and trains no policy: the harness has none to send
        cheated = "raised"
    assert flipped != honest
    if patch is PATCH_EVERY_COPY:
        assert cheated == honest  # the flipped loss, yet the correct loss's outcome
    else:
        assert cheated != flipped and cheated != honest


# ----------------------------------------------------------------------------- the pieces
def test_load_module_gives_fresh_copies_and_leaves_the_plain_names_alone(tmp_path):
    sentinel = types.ModuleType("grpo_toy")
    sys.modules["grpo_toy"] = sentinel  # a learner's copy in this process must not leak into a kit load
    plain_toy = sys.modules.get("arithmetic_toy")  # another test in this worker may have imported it plainly
    try:
        files = {name: M9 / f"{name}.py" for name in GIVEN["module_9_training"]}
        one = load_module(M9 / "module_9_training.py", "_given_test_one", given=files)
        two = load_module(M9 / "module_9_training.py", "_given_test_two", given=files)
        assert sys.modules["grpo_toy"] is sentinel and sys.modules.get("arithmetic_toy") is plain_toy
    finally:
        del sys.modules["grpo_toy"]
    assert one.grpo_toy is not two.grpo_toy and one.grpo_toy is not sentinel
    assert one.grpo_toy.__file__ == str(M9 / "grpo_toy.py")
    assert one.GRPOConfig is one.grpo_toy.GRPOConfig  # the file and its given module share one copy
    assert sys.modules["_given_test_one__grpo_toy"] is one.grpo_toy
    plain_dpo_toy = sys.modules.get("dpo_toy")
    toy = load_module(M8 / "dpo_toy.py", "_given_test_toy", given={"toy_optim": M8 / "toy_optim.py"})
    training = load_module(M8 / "module_8_training.py", "_given_test_m8", given={"dpo_toy": toy})
    assert training.dpo_toy is toy and sys.modules.get("dpo_toy") is plain_dpo_toy


def test_the_kit_knows_its_given_modules_and_loads_them_with_their_files():
    assert DEFAULT_KIT.given_modules() == {"dpo_toy": "module_08", "toy_optim": "module_08",
                                           "arithmetic_toy": "module_09", "grpo_toy": "module_09"}
    assert DEFAULT_KIT.given_modules(("9",)) == {"arithmetic_toy": "module_09", "grpo_toy": "module_09",
                                                 "toy_optim": "module_09"}
    assert DEFAULT_KIT.starter_path("grpo_toy") == STARTER_DIR / "module_09" / "grpo_toy.py"
    reference = DEFAULT_KIT.reference_module("module_9_training")
    assert reference.grpo_toy.__file__ == str(M9 / "grpo_toy.py")  # the reference with the solutions' toy
    starter_toy = DEFAULT_KIT.starter_module("grpo_toy")  # a harness's toy in the grader: the starter's
    assert starter_toy.__file__ == str(STARTER_DIR / "module_09" / "grpo_toy.py")


def test_the_job_ships_the_starters_given_modules_and_harnesses_declare_theirs(tmp_path):
    options = GradeOptions(modules=("8", "9"))
    job = prepare_job(DEFAULT_KIT, options, tmp_path / "job")
    write_settings(job, {})
    payload = json.loads((tmp_path / "job" / "job.json").read_text(encoding="utf-8"))
    assert set(payload["given_sources"]) == {"arithmetic_toy", "grpo_toy", "dpo_toy", "toy_optim"}
    for name, text in payload["given_sources"].items():
        assert text == DEFAULT_KIT.starter_path(name).read_text(encoding="utf-8")
    # a harness with a trusted part declares its given modules there (the trusted process loads them)
    declared = {entry["id"]: entry["call"].get("trusted", entry["call"]).get("given")
                for entry in job.entries if entry["call"]["kind"] == "harness"}
    assert declared["module_9_training.grpo_loss"] == ["grpo_toy"]
    assert declared["module_8_training.dpo_loss"] == declared["module_8_training.sequence_logprobs"] == ["dpo_toy"]


# ----------------------------------------------------------------------------- a given module shared by modules
def test_a_shared_given_module_is_written_once_and_every_folder_holds_it():
    # the toys' Adam: one file (solutions/common/toy_optim.py) that each module folder links, so the folder, its
    # starter copy, its notebooks' copies and a worker's given/ all hold what dpo_toy / grpo_toy import
    shared = SOLUTIONS_DIR / "common" / "toy_optim.py"
    for folder in ("module_08", "module_09"):
        assert (SOLUTIONS_DIR / folder / "toy_optim.py").resolve() == shared.resolve()
    copies = [STARTER_DIR / folder / "toy_optim.py" for folder in ("module_08", "module_09")]
    copies += sorted((SOLUTIONS_DIR.parent / "assignments" / "source").glob("module_*/toy_optim.py"))
    assert len(copies) == 6 and len({path.read_text(encoding="utf-8") for path in copies}) == 1
    assert copies[0].read_text(encoding="utf-8").startswith(
        "# GENERATED by `rl4llm build` from solutions/common/toy_optim.py")  # names the file to edit
    m8, m9 = DEFAULT_KIT.reference_module("module_8_training"), DEFAULT_KIT.reference_module("module_9_training")
    assert m8.dpo_toy.Adam.__module__ == m9.grpo_toy.Adam.__module__ == "toy_optim"
    written = [path.name for path in SOLUTIONS_DIR.glob("module_*/*.py") if "class Adam" in path.read_text("utf-8")]
    assert written == ["toy_optim.py", "toy_optim.py"]  # no second copy left in a toy


def test_a_given_module_brings_its_neighbours_and_never_a_learner_file(tmp_path, monkeypatch):
    # a caller that names only dpo_toy (the goldens, the capstone's loss loader) still loads it: its own import
    # of toy_optim, beside it, is a fresh copy of that file for this load alone
    plain = sys.modules.get("toy_optim")
    training = load_module(M8 / "module_8_training.py", "_given_test_neighbour", given={"dpo_toy": M8 / "dpo_toy.py"})
    assert training.dpo_toy.Adam.__module__ == "toy_optim" and sys.modules.get("toy_optim") is plain
    assert sys.modules["_given_test_neighbour__toy_optim"].__file__ == str(M8 / "toy_optim.py")
    # a learner file beside a given one is never given: its name goes to the ordinary import system
    assert all(stem.startswith(LEARNER_PREFIX) for stem in course.STEMS)  # the loader's rule covers every one
    (tmp_path / "helper.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tmp_path / "module_9_reference.py").write_text("VALUE = 'beside the given file'\n", encoding="utf-8")
    (tmp_path / "user.py").write_text("import helper\nimport module_9_reference\n", encoding="utf-8")
    sentinel = types.ModuleType("module_9_reference")
    monkeypatch.setitem(sys.modules, "module_9_reference", sentinel)
    monkeypatch.delitem(sys.modules, "helper", raising=False)
    user = load_module(tmp_path / "user.py", "_given_test_user", given={"toy": tmp_path / "helper.py"})
    assert user.helper.VALUE == 1 and user.module_9_reference is sentinel
    monkeypatch.delitem(sys.modules, "module_9_reference")
    with pytest.raises(ModuleNotFoundError, match="module_9_reference"):
        load_module(tmp_path / "user.py", "_given_test_user_two", given={"toy": tmp_path / "helper.py"})
    # control: without the neighbour rule, naming only dpo_toy fails on its import of toy_optim
    monkeypatch.delitem(sys.modules, "toy_optim", raising=False)
    monkeypatch.setattr("graders.loader._GivenImports.neighbour", lambda self, fullname: None)
    with pytest.raises(ModuleNotFoundError, match="toy_optim"):
        load_module(M8 / "module_8_training.py", "_given_test_control", given={"dpo_toy": M8 / "dpo_toy.py"})
