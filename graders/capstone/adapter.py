"""The submitted LoRA adapter as the capstone's re-evaluation loads it: the profile's config, checked tensors.

    check_config(profile, folder)          # the learner's few LoRA fields against the profile's
    model = read_adapter(profile, base, folder)

The learner's ``adapter_config.json`` is never given to PEFT (its ``exclude_modules`` or
``target_modules`` may be a regular expression that PEFT runs over every module name, its
other fields choose code paths): it is read by the one reader
(:func:`graders.engine.intake.reader.read_file`, at most :data:`MAX_CONFIG_BYTES`) and only
compared with the profile (``peft_type``, ``r``, ``lora_alpha``); a mismatch is refused.
The LoRA layers are made from the kit's profile (:func:`graders.capstone.run.run.lora_config`),
and ``adapter_model.safetensors`` (at most :data:`MAX_ADAPTER_BYTES`) must hold exactly
their tensors: its header is parsed here, every name and shape compared with the layers',
before ``safetensors`` decodes a byte.

:func:`header` is at least as strict as safetensors' own reader (``Metadata::validate`` and
``read_metadata`` in its ``tensor.rs``): 8 bytes of length, a header of at most
:data:`MAX_HEADER_BYTES` inside the file, UTF-8 text of one JSON object (from its opening brace; no
key twice, no float, no negative number, no lone surrogate), ``__metadata__`` a map of strings to
strings, each tensor exactly ``{dtype, shape, data_offsets}`` with a dtype a LoRA is saved in
(:data:`DTYPE_BYTES`, fewer than safetensors knows), a shape of non-negative integers, offsets
``[begin, end]`` whose span is the shape's bytes; sorted by offsets the tensors tile the data
from byte 0 to its last, no gap, no overlap, no two on the same bytes. Each refusal is an
:class:`AdapterRefused`: one line, in every language of the course (:data:`REASONS`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from graders.capstone.run.profiles import CapstoneError
from graders.capstone.run.texts import text
from graders.engine.intake.reader import UnsafeSubmission, read_file
from graders.text import Text

MAX_CONFIG_BYTES = 64 << 10
MAX_ADAPTER_BYTES = 64 << 20  # graders.capstone.grade.ZIP_MAX_MEMBER_BYTES
MAX_HEADER_BYTES = 1 << 20  # safetensors allows 100 MB; a Qwen3 LoRA's header is under 100 KiB
DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2}  # what PEFT saves a LoRA in; safetensors knows more, refused here
FIELDS = ("dtype", "shape", "data_offsets")
MAX_DIMENSIONS, MAX_DIMENSION = 4, 1 << 24
MAX_DIGITS = 20  # a u64 (safetensors' usize) has at most 20 digits
COMPARED = ("lora_alpha",)  # beside peft_type and r (reeval_not_lora)

REASONS = {
    "short": Text("the file is {size} bytes, shorter than the 8 bytes that give a safetensors header's length",
                  "файл размером {size} байт короче 8 байт, задающих длину заголовка safetensors"),
    "header_size": Text("its header claims {size} bytes: at most {limit} are allowed and the file holds {file}",
                        "заголовок заявляет {size} байт: допускается не больше {limit}, а в файле {file}"),
    "not_utf8": Text("its header is not UTF-8 text", "заголовок — не текст в UTF-8"),
    "not_object": Text("its header does not start with the opening brace of a JSON object",
                       "заголовок не начинается с открывающей скобки объекта JSON"),
    "not_json": Text("its header is not one JSON object (only spaces may follow it)",
                     "заголовок — не один объект JSON (после него допустимы только пробелы)"),
    "number": Text("its header holds the number {token}: only integers from 0 to 20 digits are allowed",
                   "в заголовке число {token}: допускаются только целые числа от 0 длиной до 20 цифр"),
    "surrogate": Text("its header holds the string {string} with a lone surrogate, which safetensors cannot read",
                      "в заголовке строка {string} с одиночным суррогатом, которую safetensors не читает"),
    "duplicate": Text("its header names the key {name} twice in one object",
                      "в одном объекте заголовка ключ {name} встречается дважды"),
    "metadata": Text("its __metadata__ is not a map of strings to strings",
                     "его __metadata__ — не отображение строк в строки"),
    "entry": Text("the entry {name} has the fields {fields}, not exactly dtype, shape and data_offsets",
                  "у записи {name} поля {fields}, а не ровно dtype, shape и data_offsets"),
    "dtype": Text("the tensor {name} has dtype {dtype}, not one of {known}",
                  "у тензора {name} dtype {dtype}, а не один из {known}"),
    "shape": Text("the tensor {name} has shape {shape}, not a list of at most {dimensions} integers from 0 to "
                  "{largest}",
                  "у тензора {name} форма {shape}, а не список не более чем из {dimensions} целых чисел от 0 до "
                  "{largest}"),
    "offsets": Text("the tensor {name} has data_offsets {offsets}, not two integers begin <= end",
                    "у тензора {name} data_offsets {offsets}, а не два целых числа begin <= end"),
    "past_end": Text("the tensor {name} ends at byte {end}, past the {size} bytes of data",
                     "тензор {name} кончается на байте {end}, за пределами {size} байт данных"),
    "bytes": Text("the tensor {name} spans {span} bytes; its shape {shape} in {dtype} needs {needed}",
                  "тензор {name} занимает {span} байт, а его форме {shape} в {dtype} нужно {needed}"),
    "alias": Text("the tensors {name} and {other} have the same data_offsets {offsets}",
                  "у тензоров {name} и {other} одни и те же data_offsets {offsets}"),
    "overlap": Text("the tensors {name} {offsets} and {other} {other_offsets} overlap",
                    "тензоры {name} {offsets} и {other} {other_offsets} перекрываются"),
    "gap": Text("the bytes {begin} to {end} of the data belong to no tensor (the tensors must tile the data)",
                "байты данных с {begin} по {end} не принадлежат ни одному тензору (тензоры должны покрывать "
                "данные без промежутков)"),
    "trailing": Text("the last {extra} bytes of the data, from byte {begin}, belong to no tensor",
                     "последние {extra} байт данных, начиная с байта {begin}, не принадлежат ни одному тензору"),
    "names": Text("{missing} expected tensor(s) missing (e.g. {example}), {extra} unexpected (e.g. {unexpected})",
                  "ожидаемых тензоров не хватает: {missing} (например, {example}), лишних: {extra} (например, "
                  "{unexpected})"),
    "shape_differs": Text("{name} has shape {shape}, the profile's LoRA {wanted}",
                          "у {name} форма {shape}, у LoRA профиля {wanted}"),
    "config_not_json": Text("adapter_config.json is not UTF-8 JSON", "adapter_config.json — не JSON в UTF-8"),
    "config_not_object": Text("adapter_config.json is not a JSON object", "adapter_config.json — не объект JSON"),
}
SLOT = {"reeval_tensors": "problem", "reeval_unreadable": "reason"}  # the field of each key a reason fills


class AdapterRefused(CapstoneError):
    """``key`` (``reeval_tensors`` or ``reeval_unreadable``) with one of :data:`REASONS` as its field: each
    language reads the reason in its own words (``str(error)`` is English)."""

    def __init__(self, reason: str, key: str = "reeval_tensors", **fields):
        self.reason, self.fields = reason, fields
        super().__init__(key, **{SLOT[key]: REASONS[reason].in_("en", **fields)})

    def text(self, language: str) -> str:
        return text(language, self.key, **{SLOT[self.key]: REASONS[self.reason].in_(language, **self.fields)})


def _quoted(value, limit: int = 80) -> str:
    """A learner's value as one short line (``ascii``: no control character, no surrogate reaches a report)."""
    return ascii(value)[:limit]


def _read(path: Path, limit: int) -> bytes:
    try:
        return read_file(path, limit)
    except UnsafeSubmission as why:
        raise CapstoneError("reeval_unreadable", reason=str(why)) from None


def check_config(profile, folder: Path) -> None:
    """Refuse (CapstoneError) an adapter_config.json that is not the profile's LoRA in its few fields."""
    try:
        config = json.loads(_read(Path(folder) / "adapter_config.json", MAX_CONFIG_BYTES).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise AdapterRefused("config_not_json", "reeval_unreadable") from None
    if not isinstance(config, dict):
        raise AdapterRefused("config_not_object", "reeval_unreadable")
    if config.get("peft_type") != "LORA" or config.get("r") != profile.lora["r"]:
        raise CapstoneError("reeval_not_lora", rank=profile.lora["r"], peft_type=str(config.get("peft_type"))[:40],
                            found=str(config.get("r"))[:40])
    for field in COMPARED:
        if config.get(field) != profile.lora[field]:
            raise CapstoneError("reeval_lora_field", field=field, found=str(config.get(field))[:40],
                                wanted=profile.lora[field])


# ----------------------------------------------------------------------------- the safetensors header
def _object(pairs: list) -> dict:
    """A JSON object of the header: no key twice (safetensors may keep either), no string it cannot read."""
    seen = set()
    for key, value in pairs:
        for string in (key, value) if isinstance(value, str) else (key,):
            try:
                string.encode("utf-8")
            except UnicodeEncodeError:
                raise AdapterRefused("surrogate", string=_quoted(string)) from None
        if key in seen:
            raise AdapterRefused("duplicate", name=_quoted(key))
        seen.add(key)
    return dict(pairs)


def _integer(token: str) -> int:
    """A JSON integer of the header: safetensors reads every number as a usize (``-0`` is a float to it)."""
    if token.startswith("-") or len(token) > MAX_DIGITS:
        raise AdapterRefused("number", token=_quoted(token, 40))
    return int(token)


def _not_integer(token: str):
    raise AdapterRefused("number", token=_quoted(token, 40))


def _json_object(data: bytes, size: int) -> dict:
    """The header's JSON object (read with :func:`_object`, :func:`_integer`); AdapterRefused otherwise."""
    try:
        source = data[8:8 + size].decode("utf-8")
    except UnicodeDecodeError:
        raise AdapterRefused("not_utf8") from None
    if not source.startswith("{"):
        raise AdapterRefused("not_object")
    try:
        entries = json.loads(source, object_pairs_hook=_object, parse_int=_integer, parse_float=_not_integer,
                             parse_constant=_not_integer)
    except (ValueError, RecursionError):
        raise AdapterRefused("not_json") from None
    if not isinstance(entries, dict):
        raise AdapterRefused("not_object")
    return entries


def _is_count(value, largest: int | None = None) -> bool:
    return type(value) is int and 0 <= value and (largest is None or value <= largest)


def _tensor(name: str, entry, body: int) -> tuple[str, tuple[int, ...], int, int]:
    """(dtype, shape, begin, end) of one tensor entry whose fields and byte count are sound."""
    quoted = _quoted(name)
    if not isinstance(entry, dict) or sorted(entry) != sorted(FIELDS):
        fields = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
        raise AdapterRefused("entry", name=quoted, fields=_quoted(fields, 120))
    dtype, shape, offsets = (entry[field] for field in FIELDS)
    if not (isinstance(dtype, str) and dtype in DTYPE_BYTES):
        raise AdapterRefused("dtype", name=quoted, dtype=_quoted(dtype, 40), known=", ".join(DTYPE_BYTES))
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMENSIONS
            and all(_is_count(n, MAX_DIMENSION) for n in shape)):
        raise AdapterRefused("shape", name=quoted, shape=_quoted(shape, 80), dimensions=MAX_DIMENSIONS,
                             largest=MAX_DIMENSION)
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(n) for n in offsets)
            and offsets[0] <= offsets[1]):
        raise AdapterRefused("offsets", name=quoted, offsets=_quoted(offsets, 80))
    begin, end = offsets
    if end > body:
        raise AdapterRefused("past_end", name=quoted, end=end, size=body)
    needed = math.prod(shape) * DTYPE_BYTES[dtype]
    if end - begin != needed:
        raise AdapterRefused("bytes", name=quoted, span=end - begin, shape=shape, dtype=dtype, needed=needed)
    return dtype, tuple(shape), begin, end


def _check_tiling(spans: list[tuple[int, int, str]], body: int) -> None:
    """The tensors' (begin, end, name), sorted, cover bytes 0 .. body of the data once each (safetensors'
    ``InvalidOffset`` and ``MetadataIncompleteBuffer``), and no two share their offsets (not even empty ones)."""
    cursor, previous = 0, None
    for begin, end, name in sorted(spans):
        if previous is not None and (begin, end) == previous[:2]:
            raise AdapterRefused("alias", name=_quoted(previous[2]), other=_quoted(name), offsets=[begin, end])
        if begin < cursor:
            raise AdapterRefused("overlap", name=_quoted(previous[2]), offsets=list(previous[:2]),
                                 other=_quoted(name), other_offsets=[begin, end])
        if begin > cursor:
            raise AdapterRefused("gap", begin=cursor, end=begin)
        cursor, previous = end, (begin, end, name)
    if cursor != body:
        raise AdapterRefused("trailing", extra=body - cursor, begin=cursor)


def header(data: bytes) -> dict[str, tuple[str, tuple[int, ...]]]:
    """``{tensor name: (dtype, shape)}`` of a safetensors file whose header and offsets are sound (the module's
    docstring); else :class:`AdapterRefused` (``reeval_tensors``) saying what is not."""
    if len(data) < 8:
        raise AdapterRefused("short", size=len(data))
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEADER_BYTES or 8 + size > len(data):
        raise AdapterRefused("header_size", size=size, limit=MAX_HEADER_BYTES, file=len(data))
    entries, body = _json_object(data, size), len(data) - 8 - size
    metadata = entries.pop("__metadata__", {})
    if not (isinstance(metadata, dict) and all(isinstance(value, str) for value in metadata.values())):
        raise AdapterRefused("metadata")
    found, spans = {}, []
    for name, entry in entries.items():
        dtype, shape, begin, end = _tensor(name, entry, body)
        found[name] = (dtype, shape)
        spans.append((begin, end, name))
    _check_tiling(spans, body)
    return found


def check_tensors(found: dict, expected: dict[str, tuple[int, ...]]) -> None:
    """Refuse (AdapterRefused) the file's tensors unless they are the LoRA layers' (names, then shapes)."""
    missing, extra = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
    if missing or extra:
        raise AdapterRefused("names", missing=len(missing), example=_quoted(missing[:1], 120), extra=len(extra),
                             unexpected=_quoted(extra[:1], 120))
    for name, shape in expected.items():
        if found[name][1] != shape:
            raise AdapterRefused("shape_differs", name=_quoted(name, 120), shape=list(found[name][1]),
                                 wanted=list(shape))


def read_adapter(profile, base, folder: Path):
    """``base`` with the profile's LoRA layers holding the submitted tensors (checked by :func:`header` and
    :func:`check_tensors`), in eval mode; CapstoneError for an adapter that does not fit."""
    from peft import get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict
    from safetensors.torch import load

    from graders.capstone.run.run import lora_config

    data = _read(Path(folder) / "adapter_model.safetensors", MAX_ADAPTER_BYTES)
    found = header(data)
    model = get_peft_model(base, lora_config(profile))
    check_tensors(found, {name: tuple(tensor.shape) for name, tensor in get_peft_model_state_dict(model).items()})
    set_peft_model_state_dict(model, load(data))
    model.eval()
    return model
