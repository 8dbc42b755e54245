"""The exception messages the kit writes where a learner's would be, in every language of the course.

A case that "raised" shows its exception's message; most are the learner's own and are shown as written.
Some the kit writes: the worker (:func:`graders.engine.worker.child.describe_exception`: a memory error,
``sys.exit``, a missing Landlock), the trusted process when a toy run stops (:mod:`graders.engine.worker.trusted`
and each :class:`graders.engine.worker.served.ServedError`) and the grader when the trusted process reported
nothing (``graders.engine.worker.runner.NOT_SERVED``). They travel in English, as the exception's message;
:func:`kit_exception` reads one back in the report's language (``tests/test_kit_exceptions.py`` finds every
such message in those modules and fails on one the table lacks).
"""

from __future__ import annotations

import re

from graders.engine.values.texts import checked
from graders.text import Text


# Exception messages the kit itself writes where the learner's own would be (a case that "raised"): the worker
# (graders.engine.worker.child.describe_exception), the trusted process and its served calls
# (graders.engine.worker.trusted, .served) and the grader (graders.engine.worker.runner.NOT_SERVED). Read back by
# :func:`kit_exception` with literal operations only (a prefix and a suffix around at most one field): an
# exception message is learner text.
KIT_EXCEPTIONS = (
    Text("ran out of memory (the worker's memory limit was reached)",
         "закончилась память (достигнут лимит памяти рабочего процесса)"),
    Text("called sys.exit({code})", "вызвана sys.exit({code})"),
    Text("<unprintable message>", "<сообщение не удалось напечатать>"),
    Text("Landlock could not be applied, and this batch relies on it: no learner code runs",
         "Landlock не удалось применить, а эта проверка на него опирается: код решения не запускается"),
    Text("the toy run stopped: {reason}", "игрушечный запуск остановлен: {reason}"),
    # graders.engine.worker.missing: a package the grader lacks, used after the file loaded
    Text("the grading machine has no package {what}: remove that import if the graded functions do not need it",
         "на проверяющей машине нет пакета {what}: уберите этот импорт, если проверяемым функциям он не нужен"),
    Text("the toy run reported nothing (the learner's process stopped serving the function)",
         "игрушечный запуск ничего не сообщил (процесс с кодом решения перестал обслуживать функцию)"),
    # graders.engine.worker.served.ServedError: why the trusted process could not use what the child sent
    Text("a message longer than {limit} bytes", "сообщение длиннее {limit} байт"),
    Text("an unreadable message ({detail})", "нечитаемое сообщение ({detail})"),
    Text("a tensor of dtype {dtype}", "тензор с типом данных {dtype}"),
    Text("an unreadable value ({detail})", "нечитаемое значение ({detail})"),
    Text("the learner's process stopped answering", "процесс с кодом решения перестал отвечать"),
    Text("an unreadable answer", "нечитаемый ответ"),
    Text("an answer without its value", "ответ без значения"),
    Text("an answer whose gradient flags do not match its tensors",
         "ответ, флаги градиентов которого не соответствуют его тензорам"),
    Text("a gradient answer without its gradients", "ответ на обратный проход без градиентов"),
    Text("gradients that do not match the call's inputs", "градиенты, не соответствующие входам вызова"),
)


def kit_exception(message: str, language: str, *, _nested: bool = False) -> str:
    """An exception message the kit wrote (:data:`KIT_EXCEPTIONS`) in ``language``; any other (the learner's
    own) as it is. Linear in the message: a template matches when the message starts with the text before its
    field and ends with the text after it; the field of ``the toy run stopped: {reason}`` is read back too, one
    level deep (a reason is never itself a stopped run)."""
    if checked(language) == "en" or not isinstance(message, str):
        return message
    for text in KIT_EXCEPTIONS:
        english = str(text)
        head, brace, rest = english.partition("{")
        if not brace:
            if message == english:
                return text.in_(language)
            continue
        name, _, tail = rest.partition("}")
        if name == "reason" and _nested:
            continue
        if len(message) >= len(head) + len(tail) and message.startswith(head) and message.endswith(tail):
            field = message[len(head):len(message) - len(tail)]
            if name == "reason":
                field = kit_exception(field, language, _nested=True)
            return text.in_(language, **{name: field})
    return message


# torch's words for "two tensors of different dtypes met in one operation" (torch 2.x), each with the two dtype
# names it gives; read from the learner's own exception message (bounded, linear patterns) to say it in one line
_DTYPE_CLASH = tuple(re.compile(pattern) for pattern in (
    r"expected scalar type (\w+) but found (\w+)",
    r"(\w+) did not match (\w+)",
    r"to have the same dtype, but got:? (\w+) (?:!=|and) (\w+)",
    r"must have the same dtype, but got (\w+) and (\w+)",
    r"to have same dtype, but found (\w+) and (\w+)",
    r"Found dtype (\w+) but expected (\w+)",
))
_TORCH_DTYPES = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                 "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
                 "float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64", "int32": "int32"}
DTYPE_CLASH = Text("two tensors of different dtypes met in one operation ({first} and {second}); keep every tensor "
                   "in the dtype the inputs have (convert with .to(...) where a new tensor is made)",
                   "в одной операции встретились тензоры разных типов данных ({first} и {second}); держите все "
                   "тензоры в типе данных входов (приводите через .to(...) там, где создаётся новый тензор)")


def dtype_clash(error: dict | None) -> tuple[str, str] | None:
    """The two dtypes (``float32``, ``float64``, ...) of a ``RuntimeError`` in which torch says that tensors of
    different dtypes met, else ``None``: the learner's own message, read for torch's fixed words only."""
    if not isinstance(error, dict) or error.get("type") != "RuntimeError":
        return None
    message = str(error.get("message") or "")[:2000]
    for pattern in _DTYPE_CLASH:
        found = pattern.search(message)
        if found:
            first, second = (_TORCH_DTYPES.get(name.lower()) for name in found.groups())
            if first and second and first != second:
                return first, second
    return None
