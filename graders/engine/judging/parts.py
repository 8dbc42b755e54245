"""Hide mode as a rule about information flow: hidden checks run in processes of their own.

The rule (``docs/security.md``, "What is hidden stays hidden"): once a learner process has held a hidden
input, nothing it produces reaches a learner-facing output in a form the learner chose. A worker's child
holds every input of its exercises from its fork (its parent reads them before it forks), so the rule is
made true by where checks run, not by what feedback leaves out case by case:

- with ``--hide-hidden-inputs`` (always on Gradescope and nbgrader), :func:`split` gives each exercise's
  public checks and its hidden checks job entries of their own, and the worker's parent never puts the
  two parts in one child (``job.json``'s ``parts``; :meth:`graders.engine.worker.parent.Parent.groups`);
  a public part's bundle holds no hidden case's input, not even an array of one;
- :func:`merged` puts the two parts' runs back into the exercise's one run, in the checks' order, for the
  judge; everything of the hidden part passes through :func:`withheld` first, which keeps what the judge
  needs to decide (each check's outcome kind, its value, the exception's class names for "is refused") and
  replaces every field a learner could word (exception types and messages, printed output, the worker's
  exit code or signal, a load error, the sandbox's refusal text) with the kit's own words;
- feedback renders a hidden check's verdict only (:func:`graders.engine.outputs.feedback._verdict_only`).

What the rule does not hide: which checks pass, how many points, which catalogued misconception the
answers match, and whether the hidden part crashed, timed out or wrote outside the protocol (each a
verdict from a fixed set of the kit's, never a learner's text).
"""

from __future__ import annotations

from dataclasses import replace

from graders.engine.values import codec
from graders.engine.values.protocol import (CPU_BUDGET_MESSAGE, OUTSIDE_PROTOCOL_MESSAGE, TOO_MUCH_MESSAGE,
                                            WALL_CAP_MESSAGE, ExerciseRun)
from graders.text import Text

PUBLIC, HIDDEN, WHOLE = "public", "hidden", ""  # an entry's part ("": not split, hide mode off)

HIDDEN_STOPPED = Text(
    "the process of the hidden checks stopped (details withheld: hidden checks)",
    "процесс скрытых проверок остановился (подробности не показываются: скрытые проверки)")
HIDDEN_LOAD_FAILED = Text(
    "the file could not be loaded for the hidden checks (details withheld: hidden checks)",
    "файл не загрузился для скрытых проверок (подробности не показываются: скрытые проверки)")
HIDDEN_REFUSED = Text(
    "something the sandbox refuses, in the hidden checks (details withheld)",
    "то, что песочница запрещает, в скрытых проверках (подробности не показываются)")
# the runner's own words for a stopped part (their English forms): a verdict from the kit's fixed set, kept as it is
KIT_VERDICTS = frozenset(str(message) for message in (CPU_BUDGET_MESSAGE, OUTSIDE_PROTOCOL_MESSAGE, TOO_MUCH_MESSAGE,
                                                      WALL_CAP_MESSAGE, HIDDEN_STOPPED))


def split(cases) -> tuple[list[int], list[int]]:
    """``(public positions, hidden positions)`` of an exercise's cases (:class:`graders.checks.Case`)."""
    public = [position for position, case in enumerate(cases) if not case.hidden]
    return public, [position for position, case in enumerate(cases) if case.hidden]


def withheld(run: ExerciseRun | None) -> ExerciseRun | None:
    """``run`` (a hidden part's) with nothing a learner could word: see the module's docstring."""
    if run is None:
        return None
    message = run.message if str(run.message) in KIT_VERDICTS else HIDDEN_STOPPED
    if run.status == "load_error":  # the hidden part's child did not load the file: the kit's words only
        return ExerciseRun("load_crashed", message=HIDDEN_LOAD_FAILED)
    if run.status != "done" or not isinstance(run.payload, dict):
        return ExerciseRun(run.status, message=message)
    cases = []
    for case in run.payload.get("cases", []):
        if not isinstance(case, dict):
            cases.append({})
            continue
        kept = {key: case[key] for key in ("outcome", "value", "type", "inputs_after", "changed") if key in case}
        if isinstance(case.get("exception"), dict):  # the class names decide "is refused"; they are never shown
            error = case["exception"]
            kept["exception"] = {"type": "", "mro": list(error.get("mro") or []), "message": "", "where": "",
                                 "sandbox": bool(error.get("sandbox")), "output": "", "withheld": True}
        kept["output"] = ""
        cases.append(kept)
    payload = {"cases": cases, "missing": run.payload.get("missing") is True,
               "violations": [HIDDEN_REFUSED] if run.payload.get("violations") else []}
    return replace(run, payload=payload, message="", output="")


def merged(public: ExerciseRun | None, hidden: ExerciseRun | None, positions: tuple[list[int], list[int]],
           ) -> ExerciseRun | None:
    """One run of an exercise from its two parts' (``positions``: :func:`split`'s), the hidden one
    :func:`withheld` first. A public part that did not finish decides alone (the learner may read all of
    it); then a hidden part that did not finish; else the cases go back to their places, each part's arrays
    under a prefix of its own (``p:``, ``h:``) so that no name of one can stand for an array of the other."""
    hidden = withheld(hidden)
    if public is None or hidden is None:
        return public or hidden
    for run in (public, hidden):
        if run.status != "done" or not isinstance(run.payload, dict):
            return run
    total = len(positions[0]) + len(positions[1])
    cases: list = [{} for _ in range(total)]
    changed: list | None = None
    arrays: dict = {}
    for run, places, prefix in ((public, positions[0], "p:"), (hidden, positions[1], "h:")):
        for place, case in zip(places, run.payload.get("cases", [])):
            cases[place] = _renamed_case(case, prefix) if isinstance(case, dict) else {}
        arrays.update({prefix + name: array for name, array in run.arrays.items()})
        if isinstance(run.inputs_changed, list):
            changed = changed if changed is not None else [[] for _ in range(total)]
            for place, nodes in zip(places, run.inputs_changed):
                changed[place] = nodes
    payload = {"cases": cases, "missing": bool(public.payload.get("missing") or hidden.payload.get("missing")),
               "violations": [*(public.payload.get("violations") or []), *(hidden.payload.get("violations") or [])]}
    return ExerciseRun("done", payload=payload, arrays=arrays, inputs_changed=changed)


def _renamed_case(case: dict, prefix: str) -> dict:
    return {key: renamed(value, prefix) if key in ("value", "inputs_after") else value for key, value in case.items()}


_NAMED = (codec.ARRAY_TAG, codec.SCALAR_TAG, codec.TENSOR_TAG)  # the tags whose value names an array


def renamed(value, prefix: str):
    """An encoded value (:class:`graders.engine.values.codec.Encoder`'s form, as the door let it through, so
    nested at most :data:`graders.engine.values.door.MAX_DEPTH`) with every array name under ``prefix``."""
    if isinstance(value, list):
        return [renamed(item, prefix) for item in value]
    if not isinstance(value, dict):
        return value
    if codec.TUPLE_TAG in value:
        return {codec.TUPLE_TAG: renamed(value[codec.TUPLE_TAG], prefix)}
    if codec.DICT_TAG in value:
        return {codec.DICT_TAG: [[key, renamed(item, prefix)] for key, item in value[codec.DICT_TAG]]}
    tag = next((tag for tag in _NAMED if tag in value), None)
    if tag is not None and isinstance(value[tag], str):
        return {**value, tag: prefix + value[tag]}
    return value
