"""The run passport (RUN_DIR/passport.json) and the figures beside it.

Given code: the capstone student need not change it. The fields are what
graders/capstone/passport.py checks: every trainer argument, library versions, seeds,
profile, model, verifier (path, VERIFIER_VERSION, sha256), data hashes,
metrics before and after, the per-step reward curve and the wall time.

Figures (PNG, titled, labelled axes, in the chosen language):
``reward_curve.png`` (the curve the grader reads), ``training_curves.png``
(reward, completion length, clipped ratio, entropy, KL per step for GRPO;
margin, reward accuracy, loss for DPO) and ``accuracy_before_after.png``.
A series a step did not log, or logged as None (a step whose rewards were all
None), is a gap in the plot, never an error.

Reading a passport someone else wrote, and checking its structure, is
:mod:`graders.capstone.run.passport_check`.
"""

from __future__ import annotations

import enum
import functools
import json
import math
import platform
import textwrap
from importlib import metadata
from pathlib import Path


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
    return dict(_installed_versions())


@functools.cache  # what is installed does not change while a process runs; each look-up scans site-packages
def _installed_versions() -> tuple[tuple[str, str], ...]:
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return tuple(versions.items())


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
    from graders.capstone.run.texts import text

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
    from graders.capstone.run.texts import text

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
    from graders.capstone.run.texts import text

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
