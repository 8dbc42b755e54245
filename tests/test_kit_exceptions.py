"""The exception messages the kit writes where a learner's would be, in every language of the course.

A case "raised" shows its exception's message. Most are the learner's own; some the kit writes: the worker
(a memory error, ``sys.exit``), the trusted process when a toy run stops (:mod:`graders.engine.worker.trusted`,
each :class:`graders.engine.worker.served.ServedError`) and the grader when the trusted process reported
nothing (``runner.NOT_SERVED``). Each is in :data:`graders.engine.values.kit_messages.KIT_EXCEPTIONS` and the feedback
reads it back in the report's language (:func:`graders.engine.values.kit_messages.kit_exception`); a learner's
message is shown as it is. The class test: every such message written in those modules is in the table.
"""

from __future__ import annotations

import ast
import time

import pytest

from graders.engine.outputs.feedback import _exception_text
from graders.engine.values.kit_messages import KIT_EXCEPTIONS, kit_exception
from graders.engine.worker import runner
from graders.paths import REPO_ROOT

WRITERS = ("graders/engine/worker/served.py", "graders/engine/worker/trusted.py", "graders/engine/worker/child.py",
           "graders/engine/worker/missing.py")
SAMPLES = {"code": "3", "reason": "an answer without its value", "limit": "67108864", "detail": "Expecting value",
           "dtype": "'complex64'", "what": "seaborn (module_9_reference.py, line 1)"}


def _template(node) -> str | None:
    """A literal message as a template: an f-string's expressions become ``{field}`` (the field's name unknown)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return None


def _written_messages() -> list[str]:
    """The first argument of every ``ServedError(...)`` and ``RuntimeError(...)``, and every ``message = ...``
    of :func:`describe_exception`, in the modules that write exceptions for the learner's report."""
    found = []
    for relative in WRITERS:
        tree = ast.parse((REPO_ROOT / relative).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("ServedError", "RuntimeError") \
                    and node.args and (text := _template(node.args[0])) is not None:
                found.append(text)
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["message"] \
                    and (text := _template(node.value)) is not None:
                found.append(text)
    return found


def _english_forms() -> set[str]:
    return {"".join(part if i % 2 == 0 else "{}" for i, part in enumerate(str(text).replace("}", "{").split("{")))
            for text in KIT_EXCEPTIONS}


def test_every_exception_message_the_kit_writes_is_in_the_table():
    written = _written_messages()
    assert len(written) >= 10  # the served errors, the toy run's stop, the memory error, sys.exit
    missing = [text for text in written if text not in _english_forms()
               and text != "the learner's function raised"]  # carries the learner's own exception instead
    assert not missing, missing
    assert runner.NOT_SERVED["exception"]["message"] in {str(text) for text in KIT_EXCEPTIONS}


@pytest.mark.parametrize("text", KIT_EXCEPTIONS, ids=lambda t: str(t)[:40])
def test_each_kit_message_reads_back_in_russian_and_stays_english_in_english(text):
    fields = {name: SAMPLES[name] for name in SAMPLES if "{" + name + "}" in str(text)}
    english = text.in_("en", **fields)
    expected = text.in_("ru", **{**fields, **({"reason": "ответ без значения"} if "reason" in fields else {})})
    assert kit_exception(english, "ru") == expected
    assert kit_exception(english, "en") == english


def test_a_served_failure_reads_in_russian_in_the_feedback_and_a_learners_message_as_written():
    error = {"type": "RuntimeError", "message": "the toy run stopped: a tensor of dtype 'complex64'", "where": ""}
    assert _exception_text(error, "ru") == "RuntimeError: игрушечный запуск остановлен: тензор с типом данных 'complex64'"
    assert _exception_text(error) == "RuntimeError: the toy run stopped: a tensor of dtype 'complex64'"
    for learner in ("the toy run stopped", "called sys.exit(", "a message longer than", "моя ошибка", ""):
        assert kit_exception(learner, "ru") == learner


def test_reading_back_is_linear_in_the_message():
    """Literal prefix and suffix tests only: a 4 MB message costs about four times a 1 MB one (CPU time, the
    best of three rounds of twenty), never the sixteen a backtracking pattern would."""
    def best(size: int) -> float:
        message = "the toy run stopped: " * (size // 21) + "a tensor of dtype x"
        times = []
        for _ in range(3):
            started = time.process_time()
            for _ in range(20):
                kit_exception(message, "ru")
            times.append(time.process_time() - started)
        return min(times)

    assert best(4 << 20) / max(best(1 << 20), 1e-6) < 8.0
