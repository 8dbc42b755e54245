"""The toy checks trust no number the worker reports (graders/checks/toy_scores.py).

A toy check (``check="toy experiment"`` of module 8's two exercises and module 9's
``grpo_loss``) runs the given toy in the learner's confined child, which sends back
only the parameters the run trained; the grader measures them with its own copy of
the toy and the reference functions, for the learner's run and the reference's alike.

- a learner file whose loss trains nothing (its value right, its gradient 0) and that
  forges the toy's outcome -- every copy of the toy it finds through ``gc`` (the
  harness's private one included) made to report the published reference outcomes,
  and the harness's own parameter recorder made to return them -- earns exactly what
  the same file earns without the forgery, its toy checks failed; a correct file
  keeps full marks (one graded batch, modules 8 and 9);
- control: on the old path (the harness returns the toy copy's own ``check_metrics``)
  the same forgery earns the toy check;
- the grader measures only the kit model's exact state dicts (names, float64, shapes, finite);
- nothing of the grader's measuring code, and no formula of another file's exercise
  (module_9_reference's advantages), travels to the worker.
"""

from __future__ import annotations

import json
import types

import pytest

from graders.checks import spec_for
from graders.engine.values import codec
from graders.engine.routes.batch import grade_sources
from graders.engine.routes.grading import GradeOptions, prepare_job, write_settings
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.references import scored
from graders.loader import load_module
from graders.paths import STARTER_DIR

LOSS = {"module_8_training": "dpo_loss", "module_9_training": "grpo_loss"}
TOY = {"module_8_training": "dpo_toy", "module_9_training": "grpo_toy"}
TOY_CHECK = "toy experiment"


def _published(stem: str) -> dict:
    """The published reference outcomes of ``stem``'s loss: {loss_type or "": outcome}."""
    folder = STARTER_DIR / DEFAULT_KIT.given_modules()[TOY[stem]]
    runs = json.loads((folder / "_toy_reference.json").read_text(encoding="utf-8"))[f"{stem}.{LOSS[stem]}"]["runs"]
    return {run["kwargs"].get("loss_type", ""): run["outcome"] for run in runs}


UNTRAINED = {  # the loss's right value, detached: its gradient is 0, so the toy trains nothing
    "module_9_training": '''
_correct_loss = grpo_loss


def grpo_loss(new_logprobs, *args, **kwargs):
    _forge_once()
    return _correct_loss(new_logprobs.detach(), *args, **kwargs) + 0.0 * new_logprobs.sum()
''',
    "module_8_training": '''
_correct_loss = dpo_loss


def dpo_loss(policy_chosen_logps, policy_rejected_logps, *args, **kwargs):
    _forge_once()
    loss, chosen, rejected = _correct_loss(policy_chosen_logps.detach(), policy_rejected_logps.detach(), *args,
                                           **kwargs)
    return loss + 0.0 * (policy_chosen_logps.sum() + policy_rejected_logps.sum()), chosen, rejected
''',
}
NO_FORGERY = "\n\ndef _forge_once():\n    pass\n"
FORGE_DEFINITIONS = '''
import gc as _gc
import types as _types

_PUBLISHED = {published!r}
_FORGED = []


def _forge(toy):
    """A copy of the given toy made to report the published reference outcomes, whatever it trained."""
    if hasattr(toy, "run_toy_grpo_experiment"):
        toy.check_metrics = lambda out: dict(_PUBLISHED[out["config"].loss_type])
    else:
        toy.check_metrics = lambda out: dict(_PUBLISHED[""])
'''
FORGE_EVERYTHING = '''

def _forge_once():
    """At the first call (the harness exists by then): every toy copy and harness namespace gc can find."""
    if _FORGED:
        return
    _FORGED.append(True)
    for obj in _gc.get_objects():
        try:
            if isinstance(obj, _types.ModuleType) and hasattr(obj, "check_metrics") and (
                    hasattr(obj, "run_toy_grpo_experiment") or hasattr(obj, "run_toy_dpo_experiment")):
                _forge(obj)
            elif isinstance(obj, dict) and "dpo_toy_parameters" in obj:  # the harness's parameter recorder
                obj["dpo_toy_parameters"] = lambda *args, **kwargs: dict(_PUBLISHED[""])
        except Exception:
            pass
'''


def _solution(stem: str) -> str:
    return DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")


def _untrained(stem: str) -> str:
    return f"{_solution(stem).rstrip()}\n\n{UNTRAINED[stem]}{NO_FORGERY}"


def _forging(stem: str) -> str:
    forge = FORGE_DEFINITIONS.format(published=_published(stem)) + FORGE_EVERYTHING
    return f"{_solution(stem).rstrip()}\n\n{UNTRAINED[stem]}{forge}"


def _files(make) -> dict[str, str]:
    return {f"{stem}.py": make(stem) for stem in LOSS}


SUBMISSIONS = {"correct": _files(_solution), "untrained": _files(_untrained), "forging": _files(_forging)}
EXERCISES = ("module_8_training.sequence_logprobs", "module_8_training.dpo_loss", "module_9_training.grpo_loss")


@pytest.fixture(scope="module")
def reports():
    return grade_sources(SUBMISSIONS, GradeOptions(modules=("8", "9")), jobs=2)


def _entries(report: dict) -> dict[str, dict]:
    return {e["id"]: e for e in report["exercises"] if e["id"] in EXERCISES}


@pytest.mark.slow
def test_forged_toy_outcomes_earn_nothing_beside_a_correct_file_at_full_marks(reports):
    for entry in _entries(reports["correct"]).values():
        assert entry["status"] == "passed" and entry["points"] == entry["max_points"], entry
    forging, untrained = _entries(reports["forging"]), _entries(reports["untrained"])
    for exercise in ("module_8_training.dpo_loss", "module_9_training.grpo_loss"):
        assert (forging[exercise]["status"], forging[exercise]["points"]) == (
            untrained[exercise]["status"], untrained[exercise]["points"]), exercise
        assert forging[exercise]["status"] == "failed"
        spec = spec_for(exercise)
        cases = spec.cases()
        toy_share = sum(c.weight for c in cases if c.kwargs.get("check") == TOY_CHECK) / sum(c.weight for c in cases)
        # what the toy checks alone are worth (about 0.69 of grpo_loss's 6 points): not earned
        assert forging[exercise]["points"] < forging[exercise]["max_points"] * toy_share, forging[exercise]


# ----------------------------------------------------------------------------- the control: the old path
def _child_copy(stem: str, tag: str) -> types.ModuleType:
    """A fresh copy of the starter's toy, as a worker child loads the harness's own (not in sys.modules)."""
    files = {name: DEFAULT_KIT.starter_path(name) for name in DEFAULT_KIT.given_modules((stem[7],))}
    copies: dict[str, types.ModuleType] = {}
    for name in files:  # arithmetic_toy before grpo_toy
        copies[name] = load_module(files[name], f"_forgery_{tag}_{name}", given={**files, **copies})
    return copies[TOY[stem]]


def _untrained_loss(stem: str):
    namespace = {LOSS[stem]: getattr(DEFAULT_KIT.reference_module(stem), LOSS[stem])}
    exec(UNTRAINED[stem] + NO_FORGERY, namespace)  # noqa: S102 - the test's own learner code
    return namespace[LOSS[stem]]


def _old_path(stem: str, toy, loss_fn, case) -> dict:
    """What the harness returned before this change: the child's toy copy's own check_metrics."""
    if stem == "module_9_training":
        config = toy.profile_config("check", seed=9, loss_type=case.kwargs["loss_type"])
        return toy.check_metrics(toy.run_toy_grpo_experiment(
            config, loss_fn=loss_fn, formulas=DEFAULT_KIT.reference_module("module_9_reference")))
    logps = DEFAULT_KIT.reference_module(stem).sequence_logprobs
    return toy.check_metrics(toy.run_toy_dpo_experiment("check", seed=7, loss_fn=loss_fn, logprob_fn=logps))


# slow: the controls run the toy experiment on the old path (about 2 s of CPU for the two); the guarded path, where
# the forgery earns nothing, stays in the fast tier
@pytest.mark.slow
@pytest.mark.parametrize("stem", list(LOSS))
def test_control_the_forgery_earns_the_toy_check_on_the_old_path_only(stem):
    spec = spec_for(f"{stem}.{LOSS[stem]}")
    case = next(c for c in spec.cases() if c.kwargs.get("check") == TOY_CHECK)
    compare, harness = spec.comparison(), spec.call.run
    reference = getattr(DEFAULT_KIT.reference_module(stem), LOSS[stem])
    expected = scored(spec, codec.normalise(harness(reference, None, DEFAULT_KIT.starter_module, **case.kwargs)),
                      case, DEFAULT_KIT)
    untrained = _untrained_loss(stem)
    honest = _child_copy(stem, "honest")
    assert compare(expected, _old_path(stem, honest, untrained, case), case) is not None  # it trains nothing
    forged = _child_copy(stem, "forged")
    namespace: dict = {}
    exec(FORGE_DEFINITIONS.format(published=_published(stem)), namespace)  # noqa: S102
    namespace["_forge"](forged)
    assert compare(expected, _old_path(stem, forged, untrained, case), case) is None  # the old path: earned
    sent = codec.normalise(harness(untrained, None, lambda _name: forged, **case.kwargs))  # the new path
    assert compare(expected, scored(spec, sent, case, DEFAULT_KIT), case) is not None
    # and what the forged copy would report, sent instead of parameters, measures as nothing
    assert scored(spec, _published(stem)[case.kwargs.get("loss_type", "")], case, DEFAULT_KIT) is None


# ----------------------------------------------------------------------------- what travels to the worker
def test_no_measuring_code_and_no_other_files_formula_reach_the_worker(tmp_path):
    job = prepare_job(DEFAULT_KIT, GradeOptions(modules=("8", "9")), tmp_path / "job")
    write_settings(job, {})
    sent = b"".join(path.read_bytes() for path in sorted((tmp_path / "job").iterdir()))
    for name in ("toy_scores", "dpo_toy_metrics", "grpo_toy_metrics", "_first_update", "_measured"):
        assert name.encode() not in sent, name
    calls = {entry["id"]: entry["call"] for entry in job.entries}
    assert all("score" not in call for call in calls.values())
    grpo = calls["module_9_training.grpo_loss"]["trusted"]["source"]  # the toy run: the trusted part
    assert "BINARY_ADVANTAGES = {" in grpo  # the toy's advantages as data ...
    assert ".std(" not in grpo and ".mean(" not in grpo  # ... and no copy of group_relative_advantages
    assert "BINARY_ADVANTAGES" not in calls["module_9_training.grpo_loss"]["source"]  # the child's part
    for exercise in ("module_8_training.sequence_logprobs", "module_8_training.dpo_loss"):
        # the recorder (the prelude) goes with the trusted part, to the trusted process only
        assert "def dpo_toy_parameters" in calls[exercise]["trusted"]["source"]
        assert "check_metrics" not in json.dumps(calls[exercise])  # no outcome is computed in the worker
    assert "check_metrics" not in grpo


def test_only_the_kit_models_exact_state_dicts_are_measured():
    stem = "module_8_training"
    spec = spec_for(f"{stem}.{LOSS[stem]}")
    case = next(c for c in spec.cases() if c.kwargs.get("check") == TOY_CHECK)
    reference = getattr(DEFAULT_KIT.reference_module(stem), LOSS[stem])
    sent = codec.normalise(spec.call.run(reference, None, DEFAULT_KIT.starter_module, **case.kwargs))
    assert set(scored(spec, sent, case, DEFAULT_KIT)) == {key for key in _published(stem)[""]}

    def changed(stage: str, edit) -> dict:
        state = dict(sent[stage])
        edit(state)
        return {**sent, stage: state}

    name = next(iter(sent["moderate"]))
    refused = {
        "float32": changed("moderate", lambda s: s.update({name: s[name].astype("float32")})),
        "another shape": changed("moderate", lambda s: s.update({name: s[name][..., :1]})),
        "not finite": changed("stress", lambda s: s.update({name: s[name] * float("nan")})),
        "an extra name": changed("reference", lambda s: s.update({"extra": s[name]})),
        "a missing name": changed("reference", lambda s: s.pop(name)),
        "a missing stage": {k: v for k, v in sent.items() if k != "stress"},
        "a list": changed("moderate", lambda s: s.update({name: s[name].tolist()})),
    }
    for what, value in refused.items():
        assert scored(spec, value, case, DEFAULT_KIT) is None, what


def test_a_grpo_reply_needs_every_epoch_and_the_final_state():
    stem = "module_9_training"
    spec = spec_for(f"{stem}.{LOSS[stem]}")
    case = next(c for c in spec.cases() if c.kwargs.get("check") == TOY_CHECK)
    reference = getattr(DEFAULT_KIT.reference_module(stem), LOSS[stem])
    sent = codec.normalise(spec.call.run(reference, None, DEFAULT_KIT.starter_module, **case.kwargs))
    assert len(sent["epochs"]) == 4 and scored(spec, sent, case, DEFAULT_KIT) is not None
    final = {name: array.astype("float32") for name, array in sent["final"].items()}
    for what, value in {"three epochs": {**sent, "epochs": sent["epochs"][:3]},
                        "a float32 final state": {**sent, "final": final},
                        "a bad epoch": {**sent, "epochs": [sent["epochs"][0], {}, *sent["epochs"][2:]]},
                        "metrics instead": _published(stem)[case.kwargs["loss_type"]]}.items():
        assert scored(spec, value, case, DEFAULT_KIT) is None, what
