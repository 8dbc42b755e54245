"""The comparator's words, in every language: its line (:data:`COMPARE`), what a value is (:data:`KINDS`) and what
a value's type is (:data:`TYPES`), each a template that :mod:`graders.engine.values.compare` fills as data
(:class:`graders.text.Particular`). Kept apart from the comparator so that the tables of texts
(:mod:`graders.engine.values.texts`) hold them without importing NumPy (the notebook reader's child runs
without site-packages), and copied into the learner's comparator by the build (:mod:`graders.build.comparator`).
"""

from __future__ import annotations

from graders.text import Text

# The comparator's line, as data (graders.text.Particular): each field a value of the check's or the learner's
# (withheld in hide mode) but for ``where`` and ``key``, which the reference's own structure names, and the
# tolerances, which are the check's.
COMPARE = {
    "compare_at": Text("at {where}: {reason}", "элемент {where}: {reason}"),
    "compare_entries": Text("{count} of {size} entries differ; first at index {index}: expected {expected}, "
                            "got {got} (rtol {rtol}, atol {atol})",
                            "не совпадают элементы: {count} из {size}; первый — с индексом {index}: ожидалось: "
                            "{expected}, получено: {got} (rtol {rtol}, atol {atol})"),
    "compare_shape": Text("expected an array of shape {shape}, got shape {got_shape}",
                          "ожидался массив формы {shape}, получена форма {got_shape}"),
    "compare_length": Text("expected {count} item(s), got {got_count}",
                           "ожидалось элементов: {count}, получено: {got_count}"),
    "compare_key": Text("missing key {key}", "нет ключа {key}"),
    "compare_kind": Text("cannot compare {kind}", "не удаётся сравнить: {kind}"),
    "compare_close": Text("expected {expected}, got {got} (rtol {rtol}, atol {atol})",
                          "ожидалось: {expected}, получено: {got} (rtol {rtol}, atol {atol})"),
    "compare_values": Text("expected {expected}, got {got}", "ожидалось: {expected}, получено: {got}"),
}
# What a value is, inside the comparator's line (a Particular of its own: its shape, count and type are data)
KINDS = {
    "none": Text("None", "None"),
    "number": Text("a number", "число"),
    "string": Text("a string", "строка"),
    "dict": Text("a dict", "словарь"),
    "array": Text("an array of shape {shape}", "массив формы {shape}"),
    "list": Text("a list of {count} item(s)", "список длины {count}"),
    "object": Text("an object of type {type}", "объект типа {type}"),
    "other": Text("a {type}", "объект типа {type}"),
}

TYPES = {  # what a value's type is, in a WRONG_TYPE line (graders.engine.values.codec.type_of's descriptions)
    "none": Text("None", "None"),
    "bool": Text("a bool", "bool"),
    "int": Text("a Python int", "целое число int"),
    "float": Text("a Python float", "число float"),
    "str": Text("a string", "строка"),
    "array": Text("a NumPy array of dtype {dtype}", "массив NumPy с dtype {dtype}"),
    "tensor_grad": Text("a torch tensor of dtype {dtype} that requires grad",
                        "тензор torch с dtype {dtype}, требующий градиента"),
    "tensor": Text("a torch tensor of dtype {dtype} without grad (detached)",
                   "тензор torch с dtype {dtype} без градиента (отсоединённый)"),
    "scalar": Text("a NumPy {dtype} scalar", "скаляр NumPy {dtype}"),
    "list": Text("a list", "список"),
    "tuple": Text("a tuple", "кортеж"),
    "dict": Text("a dict", "словарь"),
    "dataclass": Text("a {name} dataclass", "датакласс {name}"),
    "object": Text("an object of type {name}", "объект типа {name}"),
    "wrong_type": Text("wrong type: expected {want}, got {have}", "неверный тип: ожидалось: {want}; получено: {have}"),
    "wrong_type_at": Text("wrong type at {where}: expected {want}, got {have}",
                          "неверный тип в {where}: ожидалось: {want}; получено: {have}"),
}
