"""The exception messages the kit writes where a learner's would be, in every language of the course, as data.

A case that "raised" shows its exception's message; most are the learner's own and are shown as written.
Some the kit writes: the worker (:func:`graders.engine.worker.child.describe_exception`: a memory error,
``sys.exit``, an unprintable message, a missing Landlock), the trusted process when a toy run stops
(:mod:`graders.engine.worker.trusted` and each :class:`graders.engine.worker.served.ServedError`), a package
the grader lacks (:mod:`graders.engine.worker.missing`) and the grader when the trusted process reported nothing
(``graders.engine.worker.runner.NOT_SERVED``). Each is said as data, never as text to be read back: a key of
:data:`KIT_EXCEPTIONS` and its fields (:func:`kit_message`), carried beside the English message in the exception's
``"kit"`` field (the door types it: :class:`graders.engine.values.door.KitSaid`), and rendered in the report's
language by :func:`kit_text`. A message without that field is the learner's or Python's, shown as it is, whatever
its words. Standard library only: the worker's processes import it.
"""

from __future__ import annotations

import re

from graders.text import Text, placeholders

# key -> the message, its fields the learner's data (a sys.exit code, a package, what a served message held)
KIT_EXCEPTIONS: dict[str, Text] = {
    "out_of_memory": Text("ran out of memory (the worker's memory limit was reached)",
                          "закончилась память (достигнут лимит памяти рабочего процесса)"),
    "sys_exit": Text("called sys.exit({code})", "вызвана sys.exit({code})"),
    "unprintable": Text("<unprintable message>", "<сообщение не удалось напечатать>"),
    "no_landlock": Text("Landlock could not be applied, and this batch relies on it: no learner code runs",
                        "Landlock не удалось применить, а эта проверка на него опирается: код решения не запускается"),
    "toy_stopped": Text("the toy run stopped: {reason}", "игрушечный запуск остановлен: {reason}"),
    "missing_package": Text(
        "the grading machine has no package {what}: remove that import if the graded functions do not need it",
        "на проверяющей машине нет пакета {what}: уберите этот импорт, если проверяемым функциям он не нужен"),
    "not_served": Text("the toy run reported nothing (the learner's process stopped serving the function)",
                       "игрушечный запуск ничего не сообщил (процесс с кодом решения перестал обслуживать функцию)"),
    # graders.engine.worker.served.ServedError: why the trusted process could not use what the child sent
    "served_too_long": Text("a message longer than {limit} bytes", "сообщение длиннее {limit} байт"),
    "served_unreadable_message": Text("an unreadable message ({detail})", "нечитаемое сообщение ({detail})"),
    "served_dtype": Text("a tensor of dtype {dtype}", "тензор с типом данных {dtype}"),
    "served_unreadable_value": Text("an unreadable value ({detail})", "нечитаемое значение ({detail})"),
    "served_stopped": Text("the learner's process stopped answering", "процесс с кодом решения перестал отвечать"),
    "served_raised": Text("the learner's function raised", "функция решения выбросила исключение"),
    "served_unreadable_answer": Text("an unreadable answer", "нечитаемый ответ"),
    "served_no_value": Text("an answer without its value", "ответ без значения"),
    "served_grad_flags": Text("an answer whose gradient flags do not match its tensors",
                              "ответ, флаги градиентов которого не соответствуют его тензорам"),
    "served_no_gradients": Text("a gradient answer without its gradients", "ответ на обратный проход без градиентов"),
    "served_grads_mismatch": Text("gradients that do not match the call's inputs",
                                  "градиенты, не соответствующие входам вызова"),
}
KIT_KEYS = tuple(KIT_EXCEPTIONS)
FIELDS = ("code", "what", "limit", "detail", "dtype")  # the fields a message may name (besides a stop's reason)
FIELD_LIMIT = 200  # characters of one field


def kit_message(key: str, reason: dict | None = None, **fields) -> dict:
    """What the kit says in place of an exception message: ``{"key": key, field: str(value)...}``, each field cut
    to :data:`FIELD_LIMIT`; ``reason`` (a stopped toy run's) is itself said, one level deep."""
    if key not in KIT_EXCEPTIONS or not set(fields) <= set(FIELDS):
        raise ValueError(f"no kit message {key!r} with fields {sorted(fields)}")
    out = {"key": key, **{name: str(value)[:FIELD_LIMIT] for name, value in fields.items()}}
    if reason is not None:
        out["reason"] = {k: v for k, v in reason.items() if k != "reason"}
    return out


def kit_text(message: dict, language: str) -> str:
    """A kit message (:func:`kit_message`'s form, or the door's ``KitSaid`` as built-ins) in ``language``; its fields are
    data, put in as they are."""
    text = KIT_EXCEPTIONS[message["key"]]
    named = placeholders(text.in_("en"))
    fields = {name: message.get(name) or "" for name in FIELDS if name in named}
    if "reason" in named:
        reason = message.get("reason")
        fields["reason"] = kit_text(reason, language) if isinstance(reason, dict) and reason.get("key") else ""
    return text.in_(language, **fields)


class KitError(RuntimeError):
    """A RuntimeError the kit raises where the learner's report shows it: its message in English, and what it
    says as data (``kit_said``) for the report's language."""

    def __init__(self, key: str, reason: dict | None = None, **fields) -> None:
        self.kit_said = kit_message(key, reason, **fields)
        super().__init__(kit_text(self.kit_said, "en"))


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
