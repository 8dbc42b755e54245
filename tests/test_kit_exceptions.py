"""The exception messages the kit writes where a learner's would be: said as data, rendered in every language.

A case "raised" shows its exception's message. Most are the learner's own; some the kit writes: the worker
(a memory error, ``sys.exit``, an unprintable message, a missing Landlock), the trusted process when a toy run
stops (:mod:`graders.engine.worker.trusted`, each :class:`graders.engine.worker.served.ServedError`), a package the
grader lacks (:mod:`graders.engine.worker.missing`) and the grader when the trusted process reported nothing
(``runner.NOT_SERVED``). Each says a key of :data:`graders.engine.values.kit_messages.KIT_EXCEPTIONS` and its
fields (the exception's ``"kit"``, typed by the door), and the feedback renders that in the report's language;
a message without it is shown as written, whatever its words (nothing is read back). The class test: no
exception in those modules is raised with a literal message.
"""

from __future__ import annotations

import ast

import msgspec
import pytest

from graders.engine.outputs.feedback import _exception_text
from graders.engine.values import door
from graders.engine.values.door_errors import kit_said_of
from graders.engine.values.kit_messages import KIT_EXCEPTIONS, KitError, kit_message, kit_text
from graders.engine.worker import runner
from graders.engine.worker.child import describe_exception
from graders.engine.worker.missing import MissingPackages
from graders.engine.worker.served import ServedError
from graders.paths import REPO_ROOT

WRITERS = ("graders/engine/worker/served.py", "graders/engine/worker/trusted.py", "graders/engine/worker/child.py",
           "graders/engine/worker/missing.py", "graders/engine/worker/runner.py")
SAMPLES = {"code": "3", "limit": "67108864", "detail": "Expecting value", "dtype": "'complex64'",
           "what": "seaborn (module_9_reference.py, line 1)"}


def test_no_exception_of_the_worker_is_raised_with_a_literal_message():
    """Every message the worker's modules raise for the learner's report is a key of the table (a KitError or a
    ServedError with its key), never a string a reader would have to read back."""
    literal = []
    for relative in WRITERS:
        tree = ast.parse((REPO_ROOT / relative).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("ServedError", "RuntimeError",
                                                                                "KitError") and node.args:
                first = node.args[0]
                if isinstance(first, ast.JoinedStr) or (isinstance(first, ast.Constant) and isinstance(
                        first.value, str) and first.value not in KIT_EXCEPTIONS):
                    literal.append(f"{relative}:{node.lineno}")
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["message"] \
                    and isinstance(node.value, (ast.Constant, ast.JoinedStr)):
                literal.append(f"{relative}:{node.lineno}")
    assert not literal, literal
    assert runner.NOT_SERVED["exception"]["kit"] == kit_message("not_served")


@pytest.mark.parametrize("key", KIT_EXCEPTIONS)
def test_each_kit_message_renders_in_each_language_from_its_data(key):
    fields = {name: SAMPLES[name] for name in SAMPLES if "{" + name + "}" in KIT_EXCEPTIONS[key].in_("en")}
    reason = kit_message("served_no_value") if key == "toy_stopped" else None
    message = kit_message(key, reason, **fields)
    english, russian = kit_text(message, "en"), kit_text(message, "ru")
    assert english == KitError(key, reason, **fields).args[0] and russian != english
    assert all(value in english and value in russian for value in fields.values())  # the fields, as they are
    if reason:
        assert russian == "игрушечный запуск остановлен: ответ без значения"
    error = {"type": "RuntimeError", "message": english, "where": "", "kit": message}
    assert _exception_text(error, "ru") == f"RuntimeError: {russian}"
    decoded = msgspec.json.decode(msgspec.json.encode(error | {"mro": []}), type=door.LearnerError)  # the door
    assert kit_text(msgspec.to_builtins(decoded.kit), "ru") == russian


def test_a_learners_message_is_shown_as_written_whatever_its_words():
    """Nothing reads a message back: the kit's own English words without the kit's data stay the learner's."""
    for learner in ("the toy run stopped: a tensor of dtype 'complex64'", "called sys.exit(3)", "моя ошибка", ""):
        error = {"type": "RuntimeError", "message": learner, "where": ""}
        assert _exception_text(error, "ru") == f"RuntimeError: {learner}"


def test_the_worker_says_what_it_wrote_as_data():
    files = REPO_ROOT / "no-such-folder"
    assert describe_exception(SystemExit(3), files)["kit"] == kit_message("sys_exit", code="3")
    assert describe_exception(MemoryError(), files)["kit"] == kit_message("out_of_memory")
    assert describe_exception(ValueError("mine"), files).get("kit") is None  # a learner's: no kit field

    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no")

    assert describe_exception(Unprintable(), files)["kit"] == kit_message("unprintable")
    stopped = describe_exception(KitError("toy_stopped", reason=ServedError("served_dtype", dtype="'x'").kit_said),
                                 files)
    assert stopped["kit"] == kit_message("toy_stopped", kit_message("served_dtype", dtype="'x'"))
    assert stopped["message"] == "the toy run stopped: a tensor of dtype 'x'"
    # a child whose "raised" reply is no exception report: the stop still says why, in each language
    odd = describe_exception(KitError("toy_stopped", reason=ServedError("served_raised", "junk").kit_said), files)
    assert kit_text(odd["kit"], "ru") == "игрушечный запуск остановлен: функция решения выбросила исключение"
    placeholder = MissingPackages(set(), "/tmp/module_9_reference.py").fail("seaborn", "module_9_reference.py, line 1")
    assert describe_exception(placeholder, files)["kit"]["key"] == "missing_package"
    assert describe_exception(placeholder, files)["type"] == "ModuleNotFoundError"


def test_a_forged_kit_field_is_dropped_or_refused():
    """A learner's exception may carry a ``kit_said`` of its own: a well-formed one only changes its own words
    (its fields are data); a malformed one is dropped by the worker, and the door refuses one that reaches it."""
    forged = ValueError("mine")
    forged.kit_said = {"key": "no_such_key"}
    assert describe_exception(forged, REPO_ROOT)["message"] == "mine" and "kit" not in describe_exception(forged,
                                                                                                       REPO_ROOT)
    for bad in ({"key": "sys_exit", "code": 3}, {"key": "sys_exit", "extra": "x"}, {"key": "toy_stopped",
                "reason": {"key": "toy_stopped", "reason": {"key": "sys_exit"}}}, "sys_exit", None):
        assert kit_said_of(bad) is None, bad
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"type":"E","mro":[],"message":"m","kit":{"key":"no_such_key"}}', type=door.LearnerError)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"type":"E","mro":[],"message":"m","kit":{"key":"sys_exit","code":"'
                            + b"x" * 300 + b'"}}', type=door.LearnerError)
