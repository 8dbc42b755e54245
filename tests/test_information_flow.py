"""Hide mode as an information-flow rule: no hidden input reaches a learner-facing output, by any channel.

A learner who collects hidden inputs over resubmissions can hard-code them. The hostile files below know the
public inputs (a learner does: the public tests show them) and, on every other input, send a fingerprint of
it (a hash of its values) out through one channel each: an exception's message and its class's name, an
answer of a class named after it, a structured dtype with a field named after it, printed output, a global
that the next (public) check raises, a forged result line with a field named after it (on every descriptor),
the fields of a forged kit message, and the process's exit code. Each is graded with ``hide_hidden_inputs``
on the routes a learner reads
(``rl4llm grade``'s outputs and Gradescope's ``results.json``; nbgrader's feedback is ``grade_paths``' report
too, :mod:`graders.engine.nbgrader.notebook_engine`), beside the reference at full marks, and every output
file is searched for every hidden fingerprint. Control: the same batch without hide mode carries them.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.values import codec

STEM = "module_9_reference"
EXIT_MARK = 97  # the exit code the exit channel uses on a hidden input (never on a public one)

CANON = '''
import hashlib as _hashlib


def _canon(value):
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if hasattr(value, "dtype") and getattr(value, "shape", None) == () and hasattr(value, "item"):
        value = value.item()  # a NumPy scalar as the number it holds (the job's files may hand either)
    elif hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "tolist"):
        return ("a", tuple(value.shape), repr(value.tolist()))
    if isinstance(value, (list, tuple)):
        return ("l", tuple(_canon(item) for item in value))
    if isinstance(value, dict):
        return ("d", tuple(sorted((str(key), _canon(item)) for key, item in value.items())))
    if isinstance(value, float):
        return ("f", repr(value))
    return ("s", repr(value))


def _fp(args, kwargs):
    return "FP" + _hashlib.sha256(repr(_canon((list(args), kwargs))).encode()).hexdigest()[:14]
'''
_namespace: dict = {}
exec(CANON, _namespace)  # the test reads inputs with the very function the hostile files use
fingerprint = _namespace["_fp"]

CHANNELS = {  # what a hostile function does with a hidden input's fingerprint ``fp``
    "exception": 'raise type("E" + fp, (ValueError,), {})("message " + fp)',
    "class_name": 'return type("C" + fp, (), {})()',
    "dtype_field": 'import numpy as _np\nreturn _np.zeros(2, dtype=[(fp, "f8")])',
    "printed": 'print("printed " + fp)\nraise RuntimeError("see the output")',
    # a forged kit message (the kit's own words, typed, with the learner's data in a field)
    "kit_field": '_error = ValueError("kit")\n_error.kit_said = {"key": "missing_package", "what": fp}\nraise _error',
    "exit_code": f'import os as _os\n_os._exit({EXIT_MARK})',
    "forged_field": '''import json as _json, os as _os
_line = (_json.dumps({"result": _json.dumps({"cases": [], fp: 1}), "arrays": None}) + "\\n").encode()
for _fd in range(3, 64):
    try:
        _os.write(_fd, _line)
    except OSError:
        pass
return 0.0''',
}


def plain_exercises() -> list[str]:
    """The module's exercises whose checks call the function with the case's own inputs."""
    from graders.checks import spec_for

    return [exercise_id for exercise_id in DEFAULT_KIT.exercises(("9",)) if exercise_id.startswith(STEM + ".")
            and spec_for(exercise_id).call.describe()["kind"] == "returns"]


def inputs_of(case) -> tuple[tuple, dict]:
    """A case's inputs as the worker's child hands them to the function (encoded, then decoded)."""
    encoder = codec.Encoder("i")
    args, kwargs = encoder.encode(tuple(case.args)), encoder.encode(dict(case.kwargs))
    return tuple(codec.decode(args, encoder.arrays)), codec.decode(kwargs, encoder.arrays)


def fingerprints() -> tuple[set[str], set[str]]:
    """``(public, hidden)``: the fingerprints of every plain exercise's check inputs (a hidden one that equals
    a public one counts as public)."""
    from graders.checks import spec_for

    public, hidden = set(), set()
    for exercise_id in plain_exercises():
        for case in spec_for(exercise_id).cases():
            (hidden if case.hidden else public).add(fingerprint(*inputs_of(case)))
    return public, hidden - public


def hostile_file(channel: str, public: set[str]) -> str:
    """A file whose plain exercises answer their public inputs with 0.0 (or, once they have seen a hidden
    input, raise its fingerprints: the process's memory as a channel) and send each hidden input's
    fingerprint through ``channel``."""
    functions = DEFAULT_KIT.functions_by_stem(("9",))[STEM]
    plain = {exercise_id.split(".", 1)[1] for exercise_id in plain_exercises()}
    text = CANON + f"\n_PUBLIC = {sorted(public)!r}\n_SEEN = []\n\n"
    text += textwrap.dedent('''
    def _hostile(args, kwargs):
        fp = _fp(args, kwargs)
        if fp in _PUBLIC:
            if _SEEN:
                raise ValueError("remembered " + " ".join(_SEEN))
            return 0.0
        _SEEN.append(fp)
    ''')
    text += textwrap.indent(CHANNELS[channel], "    ") + "\n"
    for name in functions:
        body = "return _hostile(args, kwargs)" if name in plain else "return 0.0"
        text += f"\n\ndef {name}(*args, **kwargs):\n    {body}\n"
    return text


def _grade(tmp_path: Path, hide: bool, tag: str = "") -> tuple[dict, list[Path], set[str]]:
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    public, hidden = fingerprints()
    assert len(hidden) > 20 and public, (len(public), len(hidden))
    files = {"correct": DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")}
    files |= {channel: hostile_file(channel, public) for channel in CHANNELS}
    paths = []
    for name, text in files.items():
        folder = tmp_path / f"in-{hide}{tag}" / name
        folder.mkdir(parents=True)
        (folder / f"{STEM}.py").write_text(text, encoding="utf-8")
        paths.append(folder)
    out = tmp_path / (("hidden" if hide else "shown") + tag)
    result = grade_paths(paths, out, GradeOptions(modules=("9",), hide_hidden_inputs=hide, timeout=10.0),
                         jobs=2, progress=False, log=lambda _message: None)
    assert not result.internal_errors, result.internal_errors
    reports = dict(zip(result.names, result.reports))
    return reports, [path for path in out.rglob("*") if path.is_file()], hidden


def leaks(paths: list[Path], hidden: set[str]) -> dict[str, set[str]]:
    """Per output file, the hidden fingerprints (and exit-mark lines) found in it."""
    found = {}
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        hits = {fp for fp in hidden if fp in text} | ({"exit"} if f"code {EXIT_MARK}" in text else set())
        if hits:
            found[str(path)] = hits
    return found


def carried(found: dict[str, set[str]]) -> set[str]:
    """The channels whose hostile file's outputs hold a hidden fingerprint (or the exit mark)."""
    return {channel for channel in CHANNELS for path, hits in found.items()
            if f"/{channel}/" in path and hits - ({"exit"} if channel != "exit_code" else set())}


@pytest.mark.slow
def test_no_hidden_input_reaches_any_output_in_hide_mode_and_the_control_shows_them(tmp_path, monkeypatch):
    reports, paths, hidden = _grade(tmp_path, hide=True)
    correct = reports["correct"]
    assert all(e["status"] == "passed" for e in correct["exercises"] if e["id"].startswith(STEM)), correct
    for channel in CHANNELS:  # every hostile file's plain exercises lose their points
        assert all(e["points"] < e["max_points"] for e in reports[channel]["exercises"]
                   if e["id"] in plain_exercises()), channel
    assert leaks(paths, hidden) == {}
    # control: graded for the instructor (hidden inputs shown), the channels do carry the fingerprints
    _, shown_paths, _ = _grade(tmp_path, hide=False)
    assert carried(leaks(shown_paths, hidden)) == set(CHANNELS)
    # and hidden per case, as before the split (hidden checks in the public checks' children): every channel
    # leaks, most through the process's memory (a later public check raises what a hidden one received)
    from graders.engine.routes import grading

    monkeypatch.setattr(grading, "HIDDEN_APART", False)
    _, per_case, _ = _grade(tmp_path, hide=True, tag="-per-case")
    assert carried(leaks(per_case, hidden)) == set(CHANNELS), leaks(per_case, hidden)


@pytest.mark.slow
def test_gradescopes_results_carry_no_hidden_input(tmp_path):
    from graders.engine.routes import gradescope

    public, hidden = fingerprints()
    for channel in ("exception", "class_name", "exit_code"):
        root = tmp_path / channel
        (root / "submission").mkdir(parents=True)
        (root / "submission" / f"{STEM}.py").write_text(hostile_file(channel, public), encoding="utf-8")
        assert gradescope.run(root, ["9"], "en") == 0
        results = root / "results" / "results.json"
        json.loads(results.read_text(encoding="utf-8"))
        assert leaks([results], hidden) == {}, channel


def test_the_parts_split_keeps_every_hidden_input_out_of_the_public_bundle(tmp_path):
    """In hide mode a public part's bundle (what its child holds from its fork) has no hidden case's input:
    each part's cases are encoded on their own, arrays included."""
    from graders.checks import spec_for
    from graders.engine.routes.grading import GradeOptions, prepare_job, write_settings
    from graders.engine.values import bundles

    job = prepare_job(DEFAULT_KIT, GradeOptions(modules=("9",), hide_hidden_inputs=True), tmp_path / "job")
    split = [e for e in job.exercises if e.parts is not None and e.parts[0] and e.parts[1]]
    assert split
    for exercise in split:
        cases = spec_for(exercise.id).cases()
        public_entry, public_arrays = bundles.read_bundle(tmp_path / "job" / f"ex_{exercise.index}")
        hidden_entry, _ = bundles.read_bundle(tmp_path / "job" / f"ex_{exercise.hidden_index}")
        assert public_entry["part"] == "public" and hidden_entry["part"] == "hidden"
        assert len(public_entry["cases"]) == len(exercise.parts[0])
        assert len(hidden_entry["cases"]) == len(exercise.parts[1])
        shown = {fingerprint(*inputs_of(cases[place])) for place in exercise.parts[0]}
        for encoded in public_entry["cases"]:  # each public bundle case is one of the public cases
            args = tuple(codec.decode(encoded["args"], public_arrays))
            assert fingerprint(args, codec.decode(encoded["kwargs"], public_arrays)) in shown, exercise.id
    write_settings(job, {})
    job_json = json.loads((tmp_path / "job" / "job.json").read_text(encoding="utf-8"))
    assert set(job_json["parts"].values()) == {"public", "hidden"}


def test_a_withheld_hidden_run_keeps_only_the_kits_words():
    from graders.engine.judging import parts
    from graders.engine.values.protocol import ExerciseRun

    secret = "FPsecret"
    run = ExerciseRun("done", {"cases": [
        {"outcome": "raised", "output": secret, "exception": {"type": "E" + secret, "mro": ["E" + secret, "ValueError"],
                                                              "message": secret, "where": secret, "sandbox": False,
                                                              "output": secret}},
        {"outcome": "ok", "value": 1.0, "type": {"object": "C" + secret}, "inputs_after": None, "output": secret}],
        "missing": False, "violations": [f"open('/{secret}')"]}, {})
    kept = parts.withheld(run)
    text = json.dumps(kept.payload)
    assert secret not in text.replace('"mro": ["E' + secret, "").replace('"type": {"object": "C' + secret, "")
    assert kept.payload["cases"][0]["exception"]["withheld"] and kept.payload["violations"] == [parts.HIDDEN_REFUSED]
    crashed = parts.withheld(ExerciseRun("crashed", message="the worker process exited with code 97", output=secret))
    assert crashed.message == parts.HIDDEN_STOPPED and crashed.output == ""
    load = parts.withheld(ExerciseRun("load_error", payload={"error": {"type": secret, "message": secret}}))
    assert load.status == "load_crashed" and secret not in json.dumps([load.message, load.payload])


def test_merged_parts_put_cases_back_in_order_and_no_array_name_crosses():
    from graders.engine.judging import parts
    from graders.engine.values.protocol import ExerciseRun

    public = ExerciseRun("done", {"cases": [{"outcome": "ok", "value": {"__ndarray__": "a0"}, "output": ""}],
                                  "missing": False, "violations": []}, {"a0": np.zeros(2)}, inputs_changed=[[1]])
    hidden = ExerciseRun("done", {"cases": [{"outcome": "ok", "value": {"__ndarray__": "a0"}, "output": "x"},
                                            {"outcome": "ok", "value": [{"__tuple__": [{"__ndarray__": "a1"}]}]}],
                                  "missing": False, "violations": []}, {"a0": np.ones(2), "a1": np.ones(3)})
    run = parts.merged(public, hidden, ([1], [0, 2]))
    values = [codec.decode(case["value"], run.arrays) for case in run.payload["cases"]]
    assert np.array_equal(values[1], np.zeros(2)) and np.array_equal(values[0], np.ones(2))
    assert np.array_equal(values[2][0][0], np.ones(3)) and run.inputs_changed == [[], [1], []]
    assert run.payload["cases"][0]["output"] == ""  # the hidden part's printed output is withheld
    crashed = parts.merged(public, ExerciseRun("crashed", message="exited with code 97"), ([1], [0, 2]))
    assert crashed.status == "crashed" and crashed.message == parts.HIDDEN_STOPPED


def test_a_hidden_label_never_spells_its_input_in_hide_mode():
    from graders.checks import spec_for
    from graders.engine.outputs.feedback import shown_label

    for exercise_id in DEFAULT_KIT.exercises():
        spec = spec_for(exercise_id)
        for case in spec.cases() if spec is not None else ():
            if case.hidden and case.label:
                for language in ("en", "ru"):
                    label = shown_label(case, language, hide=True)
                    assert not any(char.isdigit() for char in label.replace("float32", "").replace("float64", "")
                                   .replace("int64", "").replace("int32", "")) or _digits_in_names_only(label), label


def _digits_in_names_only(label: str) -> bool:
    """Every digit of ``label`` is part of a name (``max_length``, ``float32``, ``module_9``)."""
    words = "".join(char if char.isalnum() or char == "_" else " " for char in label).split()
    return all(not any(c.isdigit() for c in word) or word[0].isalpha() or word[0] == "_" for word in words)


def test_a_child_that_writes_outside_the_protocol_ends_at_once(tmp_path):
    """16 MiB of blank lines on the child's own result pipe: before, its parent parsed each one outside every
    budget (57 s for a batch of 7 s); now the first line ends the child, the exercise crashes naming why, and
    the correct file beside it keeps full marks."""
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    solution = DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")
    flood = solution + textwrap.dedent('''
    import os as _os
    _blank = b"\\n" * (1 << 20)
    for _fd in range(3, 64):
        try:
            if _os.fstat(_fd).st_mode & 0o170000 == 0o010000:  # a pipe
                for _ in range(16):
                    _os.write(_fd, _blank)
        except OSError:
            pass
    ''')
    paths = []
    for name, text in {"correct": solution, "flood": flood}.items():
        (tmp_path / "in" / name).mkdir(parents=True)
        (tmp_path / "in" / name / f"{STEM}.py").write_text(text, encoding="utf-8")
        paths.append(tmp_path / "in" / name)
    result = grade_paths(paths, tmp_path / "out", GradeOptions(modules=("9",), load_timeout=20.0), jobs=1,
                         progress=False, log=lambda _message: None)
    reports = dict(zip(result.names, result.reports))
    assert all(e["status"] == "passed" for e in reports["correct"]["exercises"] if e["id"].startswith(STEM))
    flooded = [e for e in reports["flood"]["exercises"] if e["id"].startswith(STEM)]
    assert all(e["points"] == 0 for e in flooded)
    assert all("outside the grading protocol" in e["feedback"] for e in flooded), flooded[0]["feedback"]


@pytest.mark.parametrize("line", [b"\n", b"not json\n", b"[1]\n", b'{"result": "{}"}\n', b'{"served": 0}\n',
                                  b'{"loaded": null, "extra": 1}\n', b"[" * 100_000 + b"\n"])
def test_a_line_outside_the_childs_three_events_is_outside_the_protocol(line):
    from graders.engine.worker.process import OutsideProtocol, complete_events, protocol_events

    honest = b'{"sandbox": {}, "identity": "x"}\n{"loaded": null}\n{"result": "{}", "arrays": null}\n'
    assert [sorted(e) for e in protocol_events(bytearray(honest))] == [["identity", "sandbox"], ["loaded"],
                                                                      ["arrays", "result"]]
    with pytest.raises(OutsideProtocol):
        protocol_events(bytearray(honest + line))
    assert len(complete_events(bytearray(honest + line))) >= 3  # the trusted process's reader skips what it cannot read
