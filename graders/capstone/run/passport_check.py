"""Reading a run passport someone else wrote, and the one place its structure is checked.

For ``rl4llm capstone check`` and ``rl4llm capstone grade`` alike (:func:`read_passport`, then
:func:`passport_problems`): at most ``MAX_PASSPORT_BYTES`` are read, UTF-8 strictly, nesting past
what the JSON parser takes is an answer, not a crash; then every field the grader reads must
hold its JSON kind (``PASSPORT_FIELDS``), and anywhere in the passport no nesting deeper than
``MAX_DEPTH``, no string or key longer than ``MAX_STRING_CHARS`` or holding a lone surrogate, no
integer beyond ``MAX_INTEGER``, and no NaN or Infinity outside ``metrics`` (where
:func:`graders.capstone.run.passport.write_passport` keeps them for the metrics check to flag).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import NamedTuple


MAX_PASSPORT_BYTES = 4 << 20  # a tiny GRPO run writes ~125 KB (120 logged steps); the full profile 80 steps
MAX_DEPTH = 16  # a run's passport nests 5 levels at most (data.filter.train.dropped_examples[0])
MAX_STRING_CHARS = 4096  # the longest string a run writes is a path (PATH_MAX is 4096 on Linux)
MAX_INTEGER = 2**63 - 1  # no count, step or seed a run writes comes near; bigger ones overflow floats
MAX_SEED = 2**32 - 1  # numpy's seeds (transformers.set_seed) stop there
MAX_PROBLEMS_SHOWN = 8
OBJECT, LIST, STRING, INTEGER, NUMBER = "object", "list", "string", "integer", "number"
BOOLEAN, NULL = "boolean", "null"
# Every field the grader reads (graders/capstone/passport.py, graders/capstone/grade.py, graders/capstone/reeval.py), by
# path ("*": every key of an object, "[]": every item of a list), and the JSON kinds it may hold where present.
# A field that is absent is the checks' to report (a missing required field, a missing metric, ...),
# except log_history[].step, which every logged step has. A field of another kind makes the passport malformed.
PASSPORT_FIELDS = {
    "schema": (STRING,), "algorithm": (STRING,), "profile": (STRING,), "trainer_class": (STRING,),
    "device": (STRING,), "seeds": (OBJECT,), "seeds.seed": (INTEGER,), "seeds.data_seed": (INTEGER, NULL),
    "versions": (OBJECT,), "versions.*": (STRING,), "model": (OBJECT,), "trainer_args": (OBJECT,),
    "lora": (OBJECT,), "lora.used": (BOOLEAN,), "lora.r": (INTEGER,), "lora.lora_alpha": (NUMBER,),
    "lora.lora_dropout": (NUMBER,), "lora.target_modules": (LIST, NULL), "lora.target_modules[]": (STRING,),
    "lora.trainable_parameters": (INTEGER, NULL),
    "verifier": (OBJECT, NULL), "verifier.path": (STRING,), "verifier.version": (STRING,),
    "verifier.sha256": (STRING,),
    "loss": (OBJECT, NULL), "loss.path": (STRING,), "loss.sha256": (STRING,),
    "data": (OBJECT,), "data.dataset": (STRING,), "data.train_split": (STRING,), "data.eval_split": (STRING,),
    "data.train_sha256": (STRING,), "data.eval_sha256": (STRING,), "data.train_rows": (INTEGER,),
    "data.eval_rows": (INTEGER,), "data.filter": (OBJECT, NULL),
    "metrics": (OBJECT,), "metrics.before": (OBJECT,), "metrics.after": (OBJECT,), "metrics.before.*": (NUMBER,),
    "metrics.after.*": (NUMBER,),
    "reward_curve": (OBJECT,), "reward_curve.metric": (STRING,), "reward_curve.steps": (LIST,),
    "reward_curve.steps[]": (INTEGER,), "reward_curve.values": (LIST,), "reward_curve.values[]": (NUMBER,),
    "wall_time_s": (OBJECT,), "wall_time_s.total": (NUMBER,), "wall_time_s.train": (NUMBER,),
    "log_history": (LIST,), "log_history[]": (OBJECT,), "log_history[].step": (INTEGER,),
    "log_history[].*": (NUMBER, NULL),
    "adapter": (OBJECT,), "adapter.path": (STRING,), "adapter.files": (OBJECT,), "adapter.files.*": (STRING,),
    "overrides": (OBJECT,), "precision": (OBJECT,), "processes": (OBJECT,),
}
REQUIRED_IN_PASSPORT = ("log_history[].step",)
RANGES = {"seeds.seed": (0, MAX_SEED), "seeds.data_seed": (0, MAX_SEED), "log_history[].step": (0, MAX_INTEGER),
          "reward_curve.steps[]": (0, MAX_INTEGER)}
NON_FINITE_ALLOWED = ("metrics",)  # write_passport keeps a NaN metric so that the metrics check flags it
_MISSING = object()  # a required field that is absent
_PLAIN_KEY = re.compile(r"[A-Za-z_][\w/-]*")


class PassportProblem(NamedTuple):
    """Why a passport is malformed: the field (a path such as ``log_history[3].step``), a text key of
    :mod:`graders.capstone.run.texts` and the values that fill it."""

    field: str
    key: str
    values: dict


def read_passport(path) -> tuple[dict | None, str, dict]:
    """(passport or None, text key, values) of a passport file: at most MAX_PASSPORT_BYTES, UTF-8, JSON, an
    object. Never raises for the file's content; its fields are :func:`passport_problems`' to judge."""
    path = Path(path)
    name = path.name
    try:
        if not path.is_file():
            return None, "passport_absent", {"name": name, "run_dir": path.parent}
        with path.open("rb") as handle:
            data = handle.read(MAX_PASSPORT_BYTES + 1)
    except OSError as error:
        return None, "passport_not_json", {"name": name, "error": error}
    if len(data) > MAX_PASSPORT_BYTES:
        return None, "passport_too_large", {"name": name, "limit": MAX_PASSPORT_BYTES}
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, "passport_not_utf8", {"name": name, "position": error.start,
                                           "byte": data[error.start:error.start + 1]}
    try:
        passport = json.loads(source)
    except RecursionError:
        return None, "passport_too_deep", {"name": name, "limit": MAX_DEPTH}
    except MemoryError:
        return None, "passport_too_large", {"name": name, "limit": MAX_PASSPORT_BYTES}
    except ValueError as error:  # json.JSONDecodeError, and an integer of more digits than Python converts
        return None, "passport_not_json", {"name": name, "error": error}
    if not isinstance(passport, dict):
        return None, "passport_not_object", {"name": name, "found": type(passport).__name__}
    return passport, "passport_parsed", {"name": name}


def _kind(value) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return NUMBER
    return {dict: OBJECT, list: LIST, str: STRING}.get(type(value), type(value).__name__)


def _fits(value, kinds: tuple[str, ...]) -> bool:
    kind = _kind(value)
    return kind in kinds or (kind == INTEGER and NUMBER in kinds)


def _field_name(parts: tuple) -> str:
    """``metrics.after.greedy_accuracy``, ``log_history[3].step``; a key of other characters as ``['...']``
    (ASCII, so a lone surrogate prints); a path deeper than 8 parts shortened."""
    name = ""
    for part in parts[:8]:
        if isinstance(part, int):
            name += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part) and len(part) <= 64:
            name += f".{part}" if name else part
        else:
            name += f"[{ascii(part[:64] + ('...' if len(part) > 64 else ''))}]"
    return name + ("..." if len(parts) > 8 else "")


def shown_value(value, limit: int = 60) -> str:
    """A value as a message shows it: JSON (ASCII) for a scalar, shortened; ``{...}`` / ``[...]`` for a container."""
    if isinstance(value, dict):
        return "{...}" if value else "{}"
    if isinstance(value, list):
        return "[...]" if value else "[]"
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    try:
        said = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        said = ascii(value)
    return said if len(said) <= limit + 2 else said[:limit] + "..."


def _problems_anywhere(passport: dict) -> list[tuple[tuple, PassportProblem]]:
    """(parts, problem) by the rules for every value of the passport: depth, strings and keys, integers,
    NaN/Infinity (walked without recursion: a passport the parser took can still nest a thousand levels)."""
    problems = []
    stack = [(passport, (), 0)]
    while stack:
        value, parts, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                problems.append((parts, PassportProblem(_field_name(parts), "passport_problem_deep",
                                                        {"limit": MAX_DEPTH})))
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            children = []
            for key, item in items:
                if isinstance(key, str):
                    problem = _string_problem(key, (*parts, key), of_key=True)
                    if problem:
                        problems.append(((*parts, key), problem))
                        continue
                children.append((item, (*parts, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(value, str):
            problem = _string_problem(value, parts)
            if problem:
                problems.append((parts, problem))
        elif isinstance(value, int) and not isinstance(value, bool):
            if not -MAX_INTEGER <= value <= MAX_INTEGER:
                problems.append((parts, PassportProblem(_field_name(parts), "passport_problem_range",
                                                        {"found": shown_value(value), "low": -MAX_INTEGER,
                                                         "high": MAX_INTEGER})))
        elif isinstance(value, float) and not math.isfinite(value) and parts[:1] != NON_FINITE_ALLOWED:
            problems.append((parts, PassportProblem(_field_name(parts), "passport_problem_not_finite",
                                                    {"found": shown_value(value)})))
    return problems


def _string_problem(value: str, parts: tuple, of_key: bool = False) -> PassportProblem | None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return PassportProblem(_field_name(parts), "passport_problem_key_surrogate" if of_key else
                               "passport_problem_surrogate", {"found": ascii(value[error.start])})
    if len(value) > MAX_STRING_CHARS:
        return PassportProblem(_field_name(parts), "passport_problem_key_long" if of_key else
                               "passport_problem_long", {"length": len(value), "limit": MAX_STRING_CHARS})
    return None


def _at(passport: dict, pattern: str):
    """(parts, value) of every value at ``pattern`` whose containers have the kinds the pattern names."""
    found = [((), passport)]
    steps = re.findall(r"[^.\[\]]+|\[\]", pattern)
    for number, step in enumerate(steps):
        following = []
        for parts, value in found:
            if step == "[]":
                if isinstance(value, list):
                    following += [((*parts, index), item) for index, item in enumerate(value)]
            elif isinstance(value, dict):
                if step == "*":
                    following += [((*parts, key), item) for key, item in value.items()]
                elif step in value:
                    following.append(((*parts, step), value[step]))
                elif number == len(steps) - 1 and pattern in REQUIRED_IN_PASSPORT:
                    following.append(((*parts, step), _MISSING))
        found = following
    return found


def _within(value: int, bounds: tuple[int, int]) -> bool:
    return bounds[0] <= value <= bounds[1]


def passport_problems(passport: dict) -> list[PassportProblem]:
    """Why ``passport`` (a parsed object) is malformed; [] when its structure is what a run writes. One
    problem per field at most, in the order of PASSPORT_FIELDS, then the rules for every value."""
    problems, seen = [], set()
    for pattern, kinds in PASSPORT_FIELDS.items():
        for parts, value in _at(passport, pattern):
            if parts in seen:
                continue
            name = _field_name(parts)
            if value is _MISSING:
                problem = PassportProblem(name, "passport_problem_missing", {})
            elif not _fits(value, kinds):
                problem = PassportProblem(name, "passport_problem_kind", {"kinds": kinds, "found": shown_value(value)})
            elif pattern in RANGES and _kind(value) == INTEGER and not _within(value, RANGES[pattern]):
                low, high = RANGES[pattern]
                problem = PassportProblem(name, "passport_problem_range", {"found": shown_value(value), "low": low,
                                                                           "high": high})
            else:
                continue
            seen.add(parts)
            problems.append(problem)
    problems += [problem for parts, problem in _problems_anywhere(passport)  # none inside a field already wrong
                 if not any(parts[:end] in seen for end in range(len(parts) + 1))]
    return problems


def describe_problems(problems: list[PassportProblem], language: str = "en") -> str:
    """The problems as one line in ``language``: at most MAX_PROBLEMS_SHOWN, then how many more."""
    from graders.capstone.run.texts import text

    said = []
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        values = dict(problem.values)
        if "kinds" in values:
            words = [text(language, f"passport_kind_{kind}") for kind in values.pop("kinds")]
            values["expected"] = words[0] if len(words) == 1 else text(language, "passport_kind_either",
                                                                       first=words[0], second=words[1])
        said.append(text(language, problem.key, field=problem.field, **values))
    if len(problems) > MAX_PROBLEMS_SHOWN:
        said.append(text(language, "passport_problems_more", count=len(problems) - MAX_PROBLEMS_SHOWN))
    return "; ".join(said)
