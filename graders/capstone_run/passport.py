"""The run passport (RUN_DIR/passport.json) and the figures beside it.

Given code: the capstone student need not change it. The fields are what
graders/capstone.py checks: every trainer argument, library versions, seeds,
profile, model, verifier (path, VERIFIER_VERSION, sha256), data hashes,
metrics before and after, the per-step reward curve and the wall time.

Figures (PNG, titled, labelled axes, in the chosen language):
``reward_curve.png`` (the curve the grader reads), ``training_curves.png``
(reward, completion length, clipped ratio, entropy, KL per step for GRPO;
margin, reward accuracy, loss for DPO) and ``accuracy_before_after.png``.
A series a step did not log, or logged as None (a step whose rewards were all
None), is a gap in the plot, never an error.

Reading a passport someone else wrote (:func:`read_passport`, then
:func:`passport_problems`) is the one place its structure is checked, for
``rl4llm capstone check`` and ``rl4llm capstone grade`` alike: at most
``MAX_PASSPORT_BYTES`` are read, UTF-8 strictly, nesting past what the JSON
parser takes is an answer, not a crash; then every field the grader reads must
hold its JSON kind (``PASSPORT_FIELDS``), and anywhere in the passport no
nesting deeper than ``MAX_DEPTH``, no string or key longer than
``MAX_STRING_CHARS`` or holding a lone surrogate, no integer beyond
``MAX_INTEGER``, and no NaN or Infinity outside ``metrics`` (where
:func:`write_passport` keeps them for the metrics check to flag).
"""

from __future__ import annotations

import enum
import json
import math
import platform
import re
import textwrap
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

PASSPORT_NAME = "passport.json"
FIGURE_NAME = "reward_curve.png"
CURVES_FIGURE_NAME = "training_curves.png"
ACCURACY_FIGURE_NAME = "accuracy_before_after.png"
# (log_history key, text key of its label) per algorithm, in the order of the panels.
STEP_SERIES = {
    "grpo": (("reward", "series_reward"), ("completions/mean_length", "series_completion_length"),
             ("completions/clipped_ratio", "series_clipped_ratio"), ("entropy", "series_entropy"),
             ("kl", "series_kl")),
    "dpo": (("rewards/margins", "series_margin"), ("rewards/accuracies", "series_pair_accuracy"),
            ("loss", "series_loss"), ("entropy", "series_entropy"), ("kl", "series_kl")),
}
HEADLINE_METRIC = {"grpo": "greedy_accuracy", "dpo": "pair_accuracy"}
LIBRARIES = ("torch", "transformers", "trl", "peft", "datasets", "accelerate")
# The log_history key plotted as "the reward curve": GRPO's mean verifier reward,
# DPO's implicit reward margin beta * (log-ratio chosen - log-ratio rejected).
CURVE_KEYS = {"grpo": "reward", "dpo": "rewards/margins"}


def library_versions() -> dict[str, str]:
    """{"python": ..., "torch": ..., ...}; "not installed" for a missing library."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def json_safe(value):
    """``value`` with every leaf JSON can hold (enums by value, paths and objects as str)."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_safe(item) for item in value]
    if isinstance(value, enum.Enum):
        return json_safe(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _number(value) -> float | None:
    """``value`` as a finite float, or None (absent, None, NaN, a string TRL never logs)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def step_series(log_history: list[dict], key: str) -> dict:
    """{"steps", "values"}: one point per training log entry (one with "loss" or ``key``) that logged
    a finite ``key``; entries where it is absent, None or NaN (all rewards None) are skipped, and so are
    entries that are not objects with an integer "step" (a passport's structure is checked elsewhere:
    :func:`passport_problems`)."""
    points = [(entry["step"], _number(entry.get(key))) for entry in log_history
              if isinstance(entry, dict) and isinstance(entry.get("step"), int)
              and not isinstance(entry["step"], bool)]
    points = [(step, value) for step, value in points if value is not None]
    return {"steps": [step for step, _ in points], "values": [value for _, value in points]}


def reward_curve(log_history: list[dict], algorithm: str) -> dict:
    """{"metric", "steps", "values"}: the points of ``step_series`` for the algorithm's curve key."""
    key = CURVE_KEYS[algorithm]
    return {"metric": key, **step_series(log_history, key)}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    return plt


def plot_reward_curve(curve: dict, path: Path, title: str, language: str = "en") -> Path:
    """Save the curve as a PNG with matplotlib's Agg backend (no display needed)."""
    from graders.capstone_run.texts import text

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    ax.plot(curve["steps"], curve["values"], marker="o")
    ax.set_xlabel(text(language, "figure_step"))
    ax.set_ylabel(curve["metric"])
    ax.set_title(title)
    ax.grid(True, alpha=0.25)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_training_curves(log_history: list[dict], algorithm: str, profile: str, path: Path,
                         language: str = "en", beta: float | None = None) -> Path:
    """One panel per STEP_SERIES entry (x: optimizer step, y: the series); an unlogged series says why."""
    from graders.capstone_run.texts import text

    plt = _pyplot()
    series = STEP_SERIES[algorithm]
    fig, axes = plt.subplots(len(series), 1, figsize=(7.0, 2.2 * len(series)), sharex=True)
    for ax, (key, label) in zip(axes, series):
        points = step_series(log_history, key)
        ax.set_ylabel(key, fontsize=8)
        ax.set_title(text(language, label), fontsize=9)
        ax.grid(True, alpha=0.25)
        if points["values"]:
            ax.plot(points["steps"], points["values"], marker="o", markersize=3)
        else:
            reason = text(language, "kl_reason" if key == "kl" and beta == 0 else "absent_reason")
            ax.text(0.5, 0.5, text(language, "figure_not_logged", reason=reason), ha="center", va="center",
                    transform=ax.transAxes)
    axes[-1].set_xlabel(text(language, "figure_step"))
    fig.suptitle(text(language, "figure_title", algorithm=algorithm.upper(), profile=profile))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_before_after(metrics: dict, algorithm: str, profile: str, path: Path, language: str = "en") -> Path:
    """Two bars: the headline metric of the base model and of the model with the adapter."""
    from graders.capstone_run.texts import text

    plt = _pyplot()
    metric = HEADLINE_METRIC[algorithm]
    values = [_number(metrics.get(when, {}).get(metric)) for when in ("before", "after")]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    labels = [text(language, "figure_before"), text(language, "figure_after")]
    bars = ax.bar(labels, [0.0 if value is None else value for value in values], color=["#999999", "#1f77b4"])
    for bar, value in zip(bars, values):
        ax.annotate("n/a" if value is None else f"{value:.3f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom")
    ax.set_ylim(0.0, 1.05)
    ax.set_ylabel(text(language, "figure_accuracy_axis", metric=metric))
    title = text(language, "figure_accuracy_title", algorithm=algorithm.upper(), profile=profile, metric=metric)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _finite_or_none(value):
    return value if not isinstance(value, float) or math.isfinite(value) else None


def sha256_tree(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under ``folder`` (sorted), e.g. a saved adapter."""
    import hashlib

    folder = Path(folder)
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def write_passport(run_dir: Path, passport: dict) -> Path:
    """Write RUN_DIR/passport.json (sorted keys, indented). The log history's non-finite floats
    become null; metrics keep NaN so the grader can flag them."""
    passport = json_safe(passport)
    passport["log_history"] = [{key: _finite_or_none(item) for key, item in entry.items()}
                               for entry in passport.get("log_history", [])]
    path = Path(run_dir) / PASSPORT_NAME
    path.write_text(json.dumps(passport, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- reading a passport
MAX_PASSPORT_BYTES = 4 << 20  # a tiny GRPO run writes ~125 KB (120 logged steps); the full profile 80 steps
MAX_DEPTH = 16  # a run's passport nests 5 levels at most (data.filter.train.dropped_examples[0])
MAX_STRING_CHARS = 4096  # the longest string a run writes is a path (PATH_MAX is 4096 on Linux)
MAX_INTEGER = 2**63 - 1  # no count, step or seed a run writes comes near; bigger ones overflow floats
MAX_SEED = 2**32 - 1  # numpy's seeds (transformers.set_seed) stop there
MAX_PROBLEMS_SHOWN = 8
OBJECT, LIST, STRING, INTEGER, NUMBER = "object", "list", "string", "integer", "number"
BOOLEAN, NULL = "boolean", "null"
# Every field the grader reads (graders/capstone.py, graders/capstone_grade.py, graders/capstone_reeval.py), by
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
    :mod:`graders.capstone_run.texts` and the values that fill it."""

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
    from graders.capstone_run.texts import text

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
