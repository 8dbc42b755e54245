"""The door out of a worker (graders/engine/values/door.py) and the linear rewrites (graders/engine/values/scrub.py).

Hostile learner code can write any line on the pipe its child reports on; its parent relays the ``loaded``
error, the ``result`` text and the ``arrays`` as they came. Each attack of issue 31 is tried against the
door (refused, never an exception) and, as a control, against the path the grader took before the door
(it raises, copies, or backtracks). The batch test grades the attacks beside a correct submission.
"""

from __future__ import annotations

import base64
import json
import textwrap
import time
import tracemalloc

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.engine.values import codec, door, scrub
from graders.engine.worker import runner
from graders.engine.values.bundles import pack_blob, unpack_blob
from graders.engine.values.compare import mismatch
from graders.engine.values.learner_text import clean_text

MIB = 1 << 20


def _raw(value) -> msgspec.Raw:
    return msgspec.Raw(json.dumps(value).encode())


def _honest_result() -> tuple[str, msgspec.Raw]:
    encoder = codec.Encoder()
    value = codec.normalise(np.arange(6.0).reshape(2, 3))
    cases = [{"outcome": "ok", "value": encoder.encode(value), "type": codec.type_of(np.zeros((2, 3))),
              "inputs_after": encoder.encode(codec.as_input_specs(((np.ones(3, np.int32), "text", 2), {"k": 1.5}))),
              "output": "printed"},
             {"outcome": "raised", "exception": {"type": "ValueError", "mro": ["ValueError", "Exception"],
                                                 "message": "bad", "where": "m.py, line 3, in f"}, "output": ""}]
    text = json.dumps({"cases": cases, "missing": False, "violations": []}, sort_keys=True)
    return text, _raw(pack_blob(encoder.arrays))


# ---------------------------------------------------------------------------
# The four forged messages: refused by the door; the old path raises or copies
# ---------------------------------------------------------------------------
def test_an_honest_result_passes_the_door_unchanged():
    text, packed = _honest_result()
    payload, arrays = door.read_result(text, packed, cases=2)
    value = codec.decode(payload["cases"][0]["value"], arrays)
    assert np.array_equal(value, np.arange(6.0).reshape(2, 3))
    assert payload["cases"][1]["exception"]["type"] == "ValueError" and "value" not in payload["cases"][1]
    assert door.read_result(text, packed, cases=1) == "2 cases where the exercise has 1"  # never more than asked


def test_a_load_error_without_a_type_is_refused_and_broke_the_old_path():
    forged = {"message": "x", "mro": []}
    event = door.read_event(json.dumps({"loaded": "m", "error": forged}).encode())
    refusal = door.read_error(event.error)
    assert isinstance(refusal, door.Refusal) and "type" in refusal
    honest = door.read_error(_raw({"type": "E", "mro": ["E"], "message": "m", "where": ""}))
    assert honest == {"type": "E", "mro": ["E"], "message": "m", "where": "", "sandbox": False, "output": ""}
    from graders.engine.outputs.feedback import _exception_text  # control: the old path handed the dict on as it came

    with pytest.raises(KeyError):
        _exception_text(forged)


@pytest.mark.slow  # a 300,000-item list (about 1.7 s); a security control, not a risk of everyday changes
def test_a_list_past_the_node_cap_is_refused_before_any_of_its_items_is_checked(monkeypatch):
    counted = []
    real_count = door._count
    monkeypatch.setattr(door, "_count", lambda walk, depth: (counted.append(depth), real_count(walk, depth)))
    many = json.dumps({"cases": [{"outcome": "ok", "value": [0.5] * door.MAX_NODES, "type": "float"}]})
    refusal = door.read_result(many, _raw(pack_blob({})), cases=1)
    assert isinstance(refusal, door.Refusal) and f"more than {door.MAX_NODES} values" in refusal
    assert counted == [0], counted[:5]  # the list itself, none of its items
    counted.clear()  # a list is taken item by item: refused at its second item, the rest is never touched
    twice = json.dumps({"cases": [{"outcome": "ok", "value": [{"__ndarray__": "a0"}] * 300_000, "type": "float"}]})
    refusal = door.read_result(twice, _raw(pack_blob({"a0": np.zeros(3)})), cases=1)
    assert isinstance(refusal, door.Refusal) and "more than once" in refusal and counted == [0, 1, 1]
    counted.clear()  # control: at the cap (the list, its items, inputs_after and the type) it passes, all checked
    few = json.dumps({"cases": [{"outcome": "ok", "value": [0.5] * (door.MAX_NODES - 3), "type": "float"}]})
    assert not isinstance(door.read_result(few, _raw(pack_blob({})), cases=1), door.Refusal)
    assert len(counted) >= door.MAX_NODES - 1


def test_a_string_array_where_a_number_is_expected_is_refused_and_broke_the_comparator():
    strings = np.array(["a", "b", "c"])
    text = json.dumps({"cases": [{"outcome": "ok", "value": {"__ndarray__": "a0"}, "type": "float"}]})
    refusal = door.read_result(text, _raw(pack_blob({"a0": strings})), cases=1)
    assert isinstance(refusal, door.Refusal) and "dtype" in refusal
    with pytest.raises(TypeError):  # control: the comparator meets the string array the old path let through
        mismatch(np.zeros(3), strings, rtol=1e-6, atol=1e-6)


@pytest.mark.slow  # a many-megabyte forgery (about 1 s); a security control, not a risk of everyday changes
def test_one_array_named_many_times_is_refused_before_a_copy():
    blob = _raw(pack_blob({"a0": np.zeros(MIB // 8)}))
    many = json.dumps({"cases": [{"outcome": "ok", "value": [{"__ndarray__": "a0"}] * 300_000, "type": "float"}]})
    assert len(many) > 6_500_000  # about 7 MB
    tracemalloc.start()
    started = time.perf_counter()
    refusal = door.read_result(many, blob, cases=1)
    seconds, peak = time.perf_counter() - started, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert isinstance(refusal, door.Refusal) and "more than once" in refusal
    assert peak < 200 * MIB and seconds < 30, (peak, seconds)
    # control: the old decoder copies the array once per reference (64 references: 64 MiB and more)
    arrays = {"a0": np.zeros(MIB // 8)}
    tracemalloc.start()
    decoded = codec.decode([{"__ndarray__": "a0"}] * 64, arrays)
    copied = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(decoded) == 64 and copied >= 64 * MIB


@pytest.mark.slow  # a linearity sweep over megabytes (about 2.5 s); the door's fuzz tests stay fast
def test_a_huge_error_message_is_refused_and_the_old_expression_was_quadratic():
    message = "/" * (6 * MIB)
    event = door.read_event(json.dumps({"loaded": "m", "error": {"type": "E", "mro": ["E"], "message": message,
                                                                 "where": ""}}).encode())
    refusal = door.read_error(event.error)
    assert isinstance(refusal, door.Refusal) and "4000" in refusal
    import re  # control: the expression feedback used on it grows as the square of its length

    old = re.compile(r"/[^\s'\"]*?rl4llm-grade-[A-Za-z0-9_]+(?:/sub_\d+)?")
    assert _ratio(lambda n: old.sub("", "/" * n), 1500) > 8.0  # quadratic: about 16


def test_every_event_kind_is_typed_and_a_line_of_two_kinds_is_refused():
    lines = {b'{"sandbox": {"landlock": true}, "identity": "u"}': "sandbox", b'{"load": "m"}': "load",
             b'{"loaded": "m", "error": null}': "loaded", b'{"start": 2}': "start",
             b'{"done": 1, "result": "{}", "arrays": null}': "done",
             b'{"crashed": 0, "stem": "m", "during": "load", "code": -9, "cpu_timeout": false}': "crashed",
             b'{"finished": true}': "finished"}
    for line, kind in lines.items():
        assert door.read_event(line).kind == kind
    for bad in (b'{"start": 1, "done": 1, "result": "{}"}', b'{"start": "1"}', b'{"done": 1}', b"{}", b"[]",
                b'{"start": 1, "extra": 2}', b'{"crashed": 0, "code": 99999999999}', b"\xff"):
        assert isinstance(door.read_event(bad), door.Refusal), bad


# ---------------------------------------------------------------------------
# No backtracking over learner text: time(4n) / time(n) near 4, never near 16. CPU time of this process (a
# busy machine steals wall time, not CPU time), the best of three, and a factor 4 between the sizes so that
# noise cannot carry a linear ratio (4) past the threshold (8) nor a quadratic one (16) below it.
# ---------------------------------------------------------------------------
def _ratio(function, n: int) -> float:
    def best(size: int) -> float:
        times = []
        for _ in range(3):
            started = time.process_time()
            function(size)
            times.append(time.process_time() - started)
        return min(times)

    return best(4 * n) / max(best(n), 1e-6)


ADVERSARIAL = {
    "temp paths, slashes": lambda n: scrub.without_temp_paths("/" * n),
    "temp paths, failing markers": lambda n: scrub.without_temp_paths("/" + "rl4llm-grade-!" * (n // 14)),
    "temp paths, many matches": lambda n: scrub.without_temp_paths("/rl4llm-grade-a" * (n // 15)),
    "crash-log paths": lambda n: scrub.without_paths("-/a/" * (n // 4)),
    "crash-log paths, one long segment": lambda n: scrub.without_paths("/" + "a" * n + "//"),
    "addresses": lambda n: scrub.without_addresses("0x0x12" * (n // 6)),
    "learner text cleaning": lambda n: clean_text("\x01a" * (n // 2)),
}


# slow: megabytes rewritten six times each (about 5 s of CPU for the seven); what each rewrite does stays in the fast
# tier (test_the_rewrites_do_what_the_expressions_did), their growth is not an everyday change
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_each_rewrite_of_learner_text_is_linear(name):
    ratio = _ratio(ADVERSARIAL[name], 3 * MIB // 4)  # 0.75 MB against 3 MB
    assert ratio < 8.0, (name, ratio)


def test_the_rewrites_do_what_the_expressions_did():
    import re

    samples = ["TypeError at 0x7f12ab34cd56 in /tmp/rl4llm-grade-ab_12/sub_3/work/x.txt", "0x12 0xabcdef01",
               'File "/a/b/c.py", line 3, -/q/r x./y/z /only "/p/q/" //a/b', "/x/rl4llm-grade-/rl4llm-grade-k9/sub_"]
    for text in samples:
        assert scrub.without_addresses(text) == re.sub(r"0x[0-9a-fA-F]{6,}", "0x...", text)
        assert scrub.without_temp_paths(text) == re.sub(
            r"/[^\s'\"]*?rl4llm-grade-[A-Za-z0-9_]+(?:/sub_\d+)?", "<submission>", text)
        assert scrub.without_paths(text) == re.sub(r"(?<![\w.])/(?:[^\s\"'/]+/)+([^\s\"'/]+)", r"\1", text)


# ---------------------------------------------------------------------------
# Fuzz: any bytes, any JSON-ish structure: a typed value or a refusal, never an exception
# ---------------------------------------------------------------------------
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.sampled_from(["__ndarray__", "__dict__", "a0", "float", "ok", "raised", "list"]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        st.sampled_from(["cases", "outcome", "value", "type", "exception", "__ndarray__", "__dict__", "__tuple__",
                         "__tensor__", "dtype", "requires_grad", "list", "array", "ndim", "message", "mro",
                         "where", "index", "data", "a0"]) | st.text(max_size=5), inner, max_size=5),
    max_leaves=30)
FUZZ = settings(deadline=None, max_examples=150, suppress_health_check=list(HealthCheck))
FUZZ_SLOW = settings(deadline=None, max_examples=3000, suppress_health_check=list(HealthCheck))


def _check_event(data: bytes) -> None:
    event = door.read_event(data)
    assert isinstance(event, (door.Event, door.Refusal))
    if isinstance(event, door.Event) and event.kind == "loaded":
        error = door.read_error(event.error)
        assert error is None or isinstance(error, door.Refusal) or (
            isinstance(error["type"], str) and all(isinstance(n, str) for n in error["mro"]))


def _check_result(result, packed) -> None:
    text = json.dumps(result) if not isinstance(result, str) else result
    read = door.read_result(text, msgspec.Raw(json.dumps(packed).encode()), cases=8)
    if isinstance(read, door.Refusal):
        return
    payload, arrays = read
    for case in payload["cases"]:
        if case["outcome"] == "ok":
            codec.decode(case["value"], arrays)  # decodable, within its caps
        else:
            assert isinstance(case["exception"]["message"], str)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_any_bytes_as_an_event(data):
    _check_event(data)


@FUZZ
@given(JSONISH)
def test_fuzz_any_structure_as_an_event_a_load_error_or_a_result(value):
    _check_event(json.dumps(value).encode())
    _check_event(json.dumps({"loaded": "m", "error": value}).encode())
    blob = pack_blob({"a0": np.zeros(2), "a1": np.array(["s"])})
    _check_result({"cases": [value]}, blob)
    _check_result({"cases": [{"outcome": "ok", "value": value, "type": value, "inputs_after": value}]}, blob)
    _check_result(value, value)


SPECIAL = st.sampled_from(["\ud800", "\udfff", "\\ud800", "\U0001f600"])  # lone, paired, a backslash spelling one
ANY_TEXT = st.lists(st.characters(blacklist_categories=()) | SPECIAL, max_size=6).map("".join)


@pytest.mark.slow  # a fuzz of the JSON writer's fast path (about 1.9 s); the door's own fuzz stays fast
@FUZZ
@given(st.recursive(st.none() | st.floats(allow_nan=False, allow_infinity=False) | ANY_TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4)))
def test_fuzz_a_workers_json_is_the_same_with_the_surrogate_walk_skipped(value):
    """``process.dumps`` walks a message for lone surrogates only when its ASCII JSON spells a surrogate."""
    from graders.engine.worker import process

    text = process.dumps(value)
    assert text == json.dumps(process.visible_surrogates(value), sort_keys=True) and text.isascii()
    json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")  # read back, nothing lone is left


@FUZZ
@given(st.lists(st.tuples(st.text(max_size=3), st.text(max_size=6), st.lists(st.integers(-2, 1 << 50), max_size=3)),
                max_size=4), st.binary(max_size=64))
def test_fuzz_any_array_index(index, data):
    packed = {"index": [list(entry) for entry in index], "data": base64.b64encode(data).decode()}
    _check_result({"cases": []}, packed)


@pytest.mark.slow
@pytest.mark.exhaustive  # a larger budget of the fuzzes above (about 19 s of CPU), which stay in the suite
@FUZZ_SLOW
@given(JSONISH, st.binary(max_size=2000))
def test_fuzz_longer(value, data):
    _check_event(data)
    _check_event(json.dumps({"loaded": "m", "error": value}).encode())
    _check_result({"cases": [{"outcome": "ok", "value": value, "type": value, "inputs_after": value}]},
                  pack_blob({"a0": np.zeros(2)}))


# ---------------------------------------------------------------------------
# The per-submission wall cap
# ---------------------------------------------------------------------------
def test_the_wall_cap_is_shorter_than_the_backstops_it_replaces():
    exercises = [{"stem": "m", "timeout": 10.0, "cases": []} for _ in range(20)]
    cap = runner.wall_cap(exercises, list(range(20)), load_timeout=60.0)
    backstops = sum(runner.wall_backstop(10.0) for _ in range(20)) + runner.wall_backstop(60.0)
    assert cap == 1.0 * (200 + 60) + 30 and cap < backstops / 3  # 290 s where 20 stopped children held 1095 s


# ---------------------------------------------------------------------------
# The attacks in one batch, beside a correct submission that keeps full marks
# ---------------------------------------------------------------------------
STEM = "module_9_reference"
SEND = '''
import json as _j, base64 as _b64, signal as _signal
_disarm()

def _send(event):
    data = (_j.dumps(event) + "\\n").encode()
    for fd in range(3, 128):
        try:
            os.write(fd, data)
        except OSError:
            pass
'''
ON_CALL = {  # what every exercise function does when called (a forged line on its child's pipe, or a stop)
    "string_array": '_send({"result": _j.dumps({"cases": [{"outcome": "ok", "value": {"__ndarray__": "a0"}, '
                    '"type": "float"}]}), "arrays": {"index": [["a0", "<U1", [3]]], '
                    '"data": _b64.b64encode("abc".encode("utf-32-le")).decode()}})',
    "one_array_300000_times": '_send({"result": _j.dumps({"cases": [{"outcome": "ok", "value": '
                              '[{"__ndarray__": "a0"}] * 300000, "type": "float"}]}), "arrays": {"index": '
                              '[["a0", "<f8", [131072]]], "data": _b64.b64encode(bytes(1 << 20)).decode()}})',
    "stop_itself": "os.kill(os.getpid(), _signal.SIGSTOP)",
}
ON_IMPORT = {  # what the file does when imported
    "load_error_without_type": '_send({"loaded": {"message": "x", "mro": []}})',
    "six_megabyte_message": '_send({"loaded": {"type": "E", "mro": ["E"], "message": "/" * (6 << 20), "where": ""}})',
}


def _hostile_file(on_import: str = "", on_call: str = "") -> str:
    from hostile_code import DISARM, placebo
    from graders.engine.judging.kit import DEFAULT_KIT

    text = placebo(STEM) + "\nimport os, sys, gc, time\n" + DISARM + SEND + on_import + "\n"
    for name in DEFAULT_KIT.functions_by_stem(("9",))[STEM]:
        text += f"\n\ndef {name}(*args, **kwargs):\n" + textwrap.indent(on_call or "pass", "    ") + "\n    return 0.0\n"
    return text


@pytest.mark.slow
def test_the_attacks_cost_their_own_exercises_only(tmp_path, monkeypatch):
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions
    from graders.engine.judging.kit import DEFAULT_KIT

    monkeypatch.setattr(runner, "WALL_CAP_FACTOR", 0.15)  # 20 exercises of 5 s + a 10 s load: a 26.5 s cap
    monkeypatch.setattr(runner, "WALL_CAP_GRACE", 10.0)
    files = {"correct": DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")}
    files |= {name: _hostile_file(on_import=body) for name, body in ON_IMPORT.items()}
    files |= {name: _hostile_file(on_call=body) for name, body in ON_CALL.items()}
    paths = []
    for name, text in files.items():
        (tmp_path / "in" / name).mkdir(parents=True)
        (tmp_path / "in" / name / f"{STEM}.py").write_text(text, encoding="utf-8")
        paths.append(tmp_path / "in" / name)
    options = GradeOptions(modules=("9",), timeout=5.0, load_timeout=10.0, memory_mb=1024)
    started = time.monotonic()
    result = grade_paths(paths, tmp_path / "out", options, jobs=2, progress=False, log=lambda _m: None)
    elapsed = time.monotonic() - started
    reports = dict(zip(result.names, result.reports))
    assert not result.internal_errors and (tmp_path / "out" / "grades.csv").exists()
    graded = {name: [e for e in report["exercises"] if e["id"].startswith(STEM)] for name, report in reports.items()}
    assert all(e["status"] == "passed" for e in graded["correct"]), [e["feedback"] for e in graded["correct"]]
    for name in (*ON_IMPORT, *ON_CALL):
        assert graded[name] and all(e["points"] == 0 for e in graded[name]), name
    for name in ("load_error_without_type", "six_megabyte_message", "string_array", "one_array_300000_times"):
        assert any("could not be read" in e["feedback"] for e in graded[name]), (name, graded[name][0]["feedback"])
    stopped = graded["stop_itself"]
    assert all(e["status"] == "timeout" for e in stopped), [(e["status"], e["feedback"][:150]) for e in stopped]
    assert any("wall-clock cap" in e["feedback"] for e in stopped), [e["feedback"] for e in stopped]
    # 20 stopped children held a lane 20 x wall_backstop(5 s) = 600 s before the cap
    assert elapsed < 20 * runner.wall_backstop(5.0) / 3, elapsed


def test_an_array_index_with_a_dtype_numpy_parses_as_code_is_refused():
    """The fuzz's find: np.dtype(',') raises SyntaxError; the blob reader refuses it as a malformed entry."""
    import numpy as np

    with pytest.raises(SyntaxError):
        np.dtype(",")  # the control: NumPy itself
    for text in (",", "f8,f8", "(2,)f8", "<f8 ", "<" + "f" * 40):
        with pytest.raises(ValueError):
            unpack_blob(_blob_with_dtype(text), 1 << 20)


def _blob_with_dtype(text: str):
    import numpy as np

    packed = pack_blob({"a": np.zeros(2)})
    packed["index"][0][1] = text
    return packed


# ---------------------------------------------------------------------------
# One reading of each learner field: "missing" is a boolean for the door, the runner and the judge alike
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("forged", ["", "x", None, 0, 1, [], {}])
def test_missing_is_a_boolean_and_every_other_spelling_is_refused(forged):
    """A child that sent ``"missing": ""`` was read as "not missing" by the judge and as "missing" by the runner,
    which then kept the child's own toy outcomes: graded on values it made itself. The door now reads
    ``missing`` as a boolean only."""
    text = json.dumps({"cases": [], "missing": forged, "violations": []})
    assert isinstance(door.read_result(text, _raw(pack_blob({})), cases=1), door.Refusal)
    for honest in (True, False):
        payload, _ = door.read_result(json.dumps({"cases": [], "missing": honest, "violations": []}),
                                      _raw(pack_blob({})), cases=1)
        assert payload["missing"] is honest


def test_trusted_positions_come_from_the_trusted_process_whatever_missing_says():
    """The runner replaces a trusted case's outcome with the trusted process's report for every result, and the
    judge words a missing function itself (never the child's text)."""
    from types import SimpleNamespace

    from graders.engine.judging.judge import judge
    from graders.engine.values.protocol import Reason, Submission

    exercise = {"cases": [{"kwargs": {"__dict__": [["check", "toy experiment"]]}, "args": []}],
                "call": {"kind": "harness", "trusted_check": "toy experiment"}, "trusted_apart": True}
    positions = runner.calls.trusted_positions(exercise)
    assert positions == [0]
    forged_case = {"outcome": "ok", "value": 1.0, "type": "float", "inputs_after": None, "output": "printed"}
    error = {"type": "RuntimeError", "mro": ["RuntimeError"], "message": "served", "where": ""}
    served = [door.ServedCase(position=0, result=json.dumps({"cases": [{"outcome": "raised", "exception": error}]}),
                              arrays=_raw(pack_blob({})))]
    for missing in (False, True):
        event = door.read_event(json.dumps({"done": 0, "result": json.dumps(
            {"cases": [] if missing else [forged_case], "missing": missing, "violations": []}),
            "arrays": pack_blob({})}).encode())
        event.served = served
        run = runner._read_result(event, exercise)
        cases = run.payload["cases"]
        assert cases == [] if missing else cases[0]["outcome"] == "raised", cases  # never the child's 1.0
    graded = SimpleNamespace(stem="module_9_training", function="grpo_loss", problem=None, index=0)
    missing_run = runner._read_result(door.read_event(json.dumps({"done": 0, "result": json.dumps(
        {"cases": [], "missing": True, "violations": []}), "arrays": pack_blob({})}).encode()), exercise)
    judgement = judge(graded, Submission("s", {}), {"module_9_training": "x"}, {}, {0: missing_run}, None)
    assert judgement.reason is Reason.FUNCTION_MISSING
    assert str(judgement.detail) == "module_9_training.py has no function grpo_loss"
    assert judgement.detail.in_("ru") == "в module_9_training.py нет функции grpo_loss"
