"""The Python of the offline GPU smoke check (``assignments/capstone/gpu_smoke.sh``): its data and its summary.

Instructor's tool: the capstone student need not run it.

    python -m graders.capstone.smoke data OUT [--eval-rows N] [--max-words W]
    python -m graders.capstone.smoke summary OUT [--device cuda|cpu] [--target-s 480]

``data`` writes two ``--data-dir`` folders without any download: ``OUT/grpo``
(DeepMath-103K's columns as TRL's copy has them: a conversational ``prompt``
and a LaTeX ``solution``) and ``OUT/dpo`` (ultrafeedback_binarized's:
conversational ``prompt``, ``chosen``, ``rejected``, ``score_chosen``,
``score_rejected``), each ``train.jsonl`` + ``test.jsonl``. The rows are
generated from a fixed seed: 128 GRPO training problems (the smoke profile's
``train[:128]``) in DeepMath's answer forms (integers, fractions, √, limits,
intervals, integrals), every reference one math-verify reads; 64 DPO training
pairs (``train[:64]``) of 20 to 250 words (``--max-words``), so lengths vary as
in ultrafeedback (the CPU dry run takes 40: the kit's measurement of the pairs
reads them whole, whatever DPO's ``max_length``). ``--eval-rows`` held-out GRPO rows (default 2): with random
weights no completion ever ends, so each held-out row costs a greedy pass of
the profile's full 512 tokens before training, after it and twice more in the
grade: the number that decides the script's time. DPO keeps the profile's 8.

``summary`` reads what the script left under OUT: ``steps.tsv`` (one
``name<TAB>exit code<TAB>seconds`` line per step), each run folder's
``passport.json`` (steps logged, train and total seconds, peak CUDA memory
from ``passport["memory"]``), ``capstone_report.json`` (``capstone check``)
and ``grades/<run>/capstone_grade.json`` (``capstone grade``: the score and
every check that lost points, with the grade's own reason). It prints one
table and exits 1 when a step failed or, on CUDA, when a grade is below its
maximum (a correct smoke run earns every point); a CPU dry run loses the
points the grade withholds from dry runs, which the summary names, and does
not fail for it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from fractions import Fraction
from pathlib import Path

from graders.language import default_language
from graders.text import Text

RUNS = ("grpo", "dpo")
GRPO_TRAIN_ROWS = 128  # the smoke profile's train[:128]
DPO_TRAIN_ROWS, DPO_EVAL_ROWS = 64, 8  # train[:64], test[:8]
DEFAULT_EVAL_ROWS = 2
DEFAULT_MAX_WORDS = 250
DEFAULT_TARGET_S = 480.0  # the "under 8 minutes on one H200"
SEED = 0
GIB = 1 << 30
SQUARE_FREE = (2, 3, 5, 6, 7, 10, 11)
WORDS = ("the", "answer", "follows", "from", "a", "short", "argument", "we", "check", "each", "case", "and",
         "sum", "terms", "so", "result", "is", "clear", "because", "value", "grows", "with", "n", "then",
         "step", "gives", "equation", "solve", "for", "x", "which", "means", "that", "our", "claim", "holds")

LINES = {
    "title": Text("== summary ({device}, decoder layers: {layers})", "== итог ({device}, слоёв декодера: {layers})"),
    "header": Text("run    steps   train s   s/step   total s   peak alloc GiB   peak reserved GiB   check   grade",
                   "запуск шаги   обуч. с   с/шаг    всего с   пик выдел. ГиБ   пик резерв. ГиБ     check   grade"),
    "no_passport": Text("{run}: no passport ({path}): the run did not finish", 
                        "{run}: паспорта нет ({path}): запуск не завершился"),
    "step_times": Text("{run}: step times from log_history (s): {times}",
                       "{run}: время шагов по log_history (с): {times}"),
    "no_step_times": Text("{run}: log_history has no per-step time; mean {mean:.1f} s per step (train {train:.1f} s / "
                          "{steps} steps)", "{run}: в log_history нет времени шага; в среднем {mean:.1f} с на шаг "
                          "(обучение {train:.1f} с / {steps} шагов)"),
    "lost_title": Text("{run}: grade {score}/{max_score}; the checks that lost points:",
                       "{run}: оценка {score}/{max_score}; проверки, потерявшие баллы:"),
    "lost": Text("  {name} ({points}/{max_points}): {message}", "  {name} ({points}/{max_points}): {message}"),
    "cpu_note": Text("{run}: a CPU dry run is never the profile's run: the grade withholds the points above "
                     "(expected here)", "{run}: пробный запуск на CPU — не запуск профиля: оценка не даёт баллов "
                     "выше (здесь так и должно быть)"),
    "gpu_short": Text("{run}: FAIL: a correct smoke run on a GPU earns every point, this one {score}/{max_score}",
                      "{run}: ОШИБКА: верный smoke-запуск на GPU получает все баллы, этот — {score}/{max_score}"),
    "steps_title": Text("steps (exit code, seconds):", "шаги (код выхода, секунды):"),
    "step": Text("  {status:4} {name:<16} rc={rc:<3} {seconds:7.1f} s", "  {status:4} {name:<16} rc={rc:<3} {seconds:7.1f} с"),
    "total": Text("total {total:.1f} s = {minutes:.1f} min (target on one H200: under {target:.0f} s)",
                  "всего {total:.1f} с = {minutes:.1f} мин (цель на одном H200: меньше {target:.0f} с)"),
    "over": Text("over the target by {over:.1f} s (reported, not a failure)",
                 "дольше цели на {over:.1f} с (сообщается, не ошибка)"),
    "result_ok": Text("gpu_smoke: every step passed", "gpu_smoke: все шаги прошли"),
    "result_fail": Text("gpu_smoke: FAILED: {failed}", "gpu_smoke: ОШИБКА: {failed}"),
    "wrote": Text("wrote {grpo} ({grpo_train} train, {grpo_eval} held-out rows) and {dpo} ({dpo_train} train, "
                  "{dpo_eval} held-out pairs)", "записаны {grpo} (обучение {grpo_train}, отложено {grpo_eval}) и "
                  "{dpo} (обучение {dpo_train}, отложено пар {dpo_eval})"),
    "bad_max_words": Text("--max-words must be at least 1, got {got}", "--max-words должно быть не меньше 1, получено {got}"),
    "bad_eval_rows": Text("--eval-rows must be 1 to 8 (the smoke profile reads test[:8]), got {got}",
                          "--eval-rows должно быть от 1 до 8 (профиль smoke читает test[:8]), получено {got}"),
}


def _user(content: str) -> list[dict]:
    return [{"role": "user", "content": content}]


def _latex_fraction(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def math_problem(rng: random.Random, form: int) -> tuple[str, str]:
    """(question, LaTeX reference) of one generated problem in one of DeepMath's answer forms (``form`` mod 6)."""
    a, b, c = rng.randint(2, 19), rng.randint(2, 19), rng.randint(1, 50)
    form %= 6
    if form == 0:  # an integer
        return f"Compute \\({a} \\times {b} + {c}\\).", str(a * b + c)
    if form == 1:  # a fraction in lowest terms
        d = rng.randint(2, 9)
        return (f"Simplify \\(\\frac{{{a}}}{{{b}}} + \\frac{{1}}{{{d}}}\\) to lowest terms.",
                _latex_fraction(Fraction(a, b) + Fraction(1, d)))
    if form == 2:  # a surd
        k, m = rng.randint(2, 9), rng.choice(SQUARE_FREE)
        return f"Simplify \\(\\sqrt{{{k * k * m}}}\\).", f"{k}\\sqrt{{{m}}}"
    if form == 3:  # a limit
        return f"Evaluate the limit \\(\\lim_{{x\\to 0}} \\frac{{\\sin({a}x)}}{{{b}x}}\\).", _latex_fraction(Fraction(a, b))
    if form == 4:  # an interval (math-verify's equivalence decides it)
        low, high = sorted(rng.sample(range(-9, 10), 2))
        return (f"Find the interval on which \\((x - {low})(x - {high}) < 0\\).".replace("- -", "+ "),
                f"({low}, {high})")
    return f"Compute \\(\\int_0^{{{a}}} {b}x\\,dx\\).", _latex_fraction(Fraction(b * a * a, 2))


def grpo_rows(count: int, seed: int = SEED) -> list[dict]:
    """DeepMath-style rows {"prompt": [user message], "solution": LaTeX}, the forms in turn."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        question, answer = math_problem(rng, index)
        rows.append({"prompt": _user(question), "solution": answer})
    return rows


def _sentences(rng: random.Random, words: int) -> str:
    chosen = [rng.choice(WORDS) for _ in range(words)]
    text = []
    for start in range(0, words, 12):
        sentence = " ".join(chosen[start:start + 12])
        text.append(sentence[:1].upper() + sentence[1:] + ".")
    return " ".join(text)


def dpo_rows(count: int, seed: int = SEED, max_words: int = DEFAULT_MAX_WORDS) -> list[dict]:
    """ultrafeedback-style pairs: a question, a chosen answer with the right sum and a rejected one with a wrong
    sum, each followed by 20 (or fewer) to ``max_words`` words of explanation; scores as ultrafeedback's."""
    rng = random.Random(seed + 1)
    rows = []
    for _ in range(count):
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        length = rng.randint(min(20, max_words), max_words)
        rows.append({"prompt": _user(f"What is {a} + {b}? Explain briefly."),
                     "chosen": [{"role": "assistant", "content": f"{a} + {b} = {a + b}. {_sentences(rng, length)}"}],
                     "rejected": [{"role": "assistant",
                                   "content": f"{a} + {b} = {a + b + rng.randint(1, 9)}. {_sentences(rng, length)}"}],
                     "score_chosen": 8.0, "score_rejected": 3.0})
    return rows


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_data(out: Path, eval_rows: int = DEFAULT_EVAL_ROWS, max_words: int = DEFAULT_MAX_WORDS) -> dict[str, Path]:
    """OUT/grpo and OUT/dpo, each with train.jsonl and test.jsonl; {"grpo": folder, "dpo": folder}."""
    math_rows = grpo_rows(GRPO_TRAIN_ROWS + eval_rows)
    pairs = dpo_rows(DPO_TRAIN_ROWS + DPO_EVAL_ROWS, max_words=max_words)
    folders = {"grpo": Path(out) / "grpo", "dpo": Path(out) / "dpo"}
    _write_jsonl(folders["grpo"] / "train.jsonl", math_rows[:GRPO_TRAIN_ROWS])
    _write_jsonl(folders["grpo"] / "test.jsonl", math_rows[GRPO_TRAIN_ROWS:])
    _write_jsonl(folders["dpo"] / "train.jsonl", pairs[:DPO_TRAIN_ROWS])
    _write_jsonl(folders["dpo"] / "test.jsonl", pairs[DPO_TRAIN_ROWS:])
    return folders


# ----------------------------------------------------------------------------- the summary
def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_steps(path: Path) -> list[tuple[str, int, float]]:
    """(name, exit code, seconds) of each line of steps.tsv; [] when there is none."""
    steps = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return steps
    for line in lines:
        parts = line.split("\t")
        if len(parts) == 3:
            steps.append((parts[0], int(parts[1]), float(parts[2])))
    return steps


def step_times(log_history: list) -> list[float]:
    """Seconds of each logged optimizer step, where the log has a per-step time; else []."""
    times = []
    for entry in log_history or []:
        if isinstance(entry, dict) and "loss" in entry:
            for key in ("step_time", "train/step_time", "time/step"):
                if isinstance(entry.get(key), (int, float)):
                    times.append(float(entry[key]))
                    break
    return times


def run_row(run: str, passport: dict, check: dict | None, grade: dict | None) -> dict:
    """The numbers of one run for the table."""
    history = passport.get("log_history") or []
    steps = max((int(e.get("step", 0)) for e in history if isinstance(e, dict)), default=0)
    wall = passport.get("wall_time_s") or {}
    memory = passport.get("memory") or {}
    wanted = (passport.get("trainer_args") or {}).get("max_steps")
    return {"run": run, "steps": steps, "max_steps": wanted, "train_s": wall.get("train"),
            "total_s": wall.get("total"), "per_step_s": wall["train"] / steps if steps and wall.get("train") else None,
            "peak_allocated_gib": memory["peak_allocated_bytes"] / GIB if memory.get("peak_allocated_bytes") else None,
            "peak_reserved_gib": memory["peak_reserved_bytes"] / GIB if memory.get("peak_reserved_bytes") else None,
            "check": f"{check['score']}/{check['max_score']}" if check else "-",
            "grade": f"{grade['score']:g}/{grade['max_score']:g}" if grade else "-",
            "step_times": step_times(history)}


def _cell(value, width: int, form: str = ".1f") -> str:
    return (format(value, form) if isinstance(value, (int, float)) else "-").rjust(width)


def summary(out: Path, device: str = "cuda", target_s: float = DEFAULT_TARGET_S, language: str = "en") -> tuple[str, int]:
    """(the summary's text, exit code) of the script's folder ``out``."""
    say = {key: line.in_(language) for key, line in LINES.items()}
    steps = read_steps(out / "steps.tsv")
    model = _read_json(out / "model" / "config.json") or {}
    lines = [say["title"].format(device=device, layers=model.get("num_hidden_layers", "?")),
             say["header"]]
    notes, failed = [], [name for name, rc, _ in steps if rc != 0]
    for run in RUNS:
        passport = _read_json(out / run / "passport.json")
        if not isinstance(passport, dict):
            if any(name.startswith(run) for name, _, _ in steps):
                notes.append(say["no_passport"].format(run=run, path=out / run / "passport.json"))
            continue
        grade = _read_json(out / "grades" / run / "capstone_grade.json")
        row = run_row(run, passport, _read_json(out / run / "capstone_report.json"), grade)
        lines.append(f"{run:<6} {row['steps']}/{row['max_steps']}".ljust(13) + _cell(row["train_s"], 9)
                     + _cell(row["per_step_s"], 9) + _cell(row["total_s"], 10) + _cell(row["peak_allocated_gib"], 17, ".2f")
                     + _cell(row["peak_reserved_gib"], 20, ".2f") + row["check"].rjust(8) + row["grade"].rjust(8))
        if row["step_times"]:
            notes.append(say["step_times"].format(run=run, times=", ".join(f"{t:.1f}" for t in row["step_times"])))
        elif row["steps"] and row["train_s"]:
            notes.append(say["no_step_times"].format(run=run, mean=row["per_step_s"], train=row["train_s"],
                                                     steps=row["steps"]))
        if grade:
            lost = [c for c in grade.get("checks", []) if c.get("points", 0) < c.get("max_points", 0)]
            if lost:
                notes.append(say["lost_title"].format(run=run, score=f"{grade['score']:g}",
                                                      max_score=f"{grade['max_score']:g}"))
            notes += [say["lost"].format(name=c["name"], points=f"{c['points']:g}", max_points=f"{c['max_points']:g}",
                                         message=" ".join(str(c.get("message", "")).split())[:300]) for c in lost]
            if lost and device == "cpu":
                notes.append(say["cpu_note"].format(run=run))
            elif lost:
                notes.append(say["gpu_short"].format(run=run, score=f"{grade['score']:g}",
                                                     max_score=f"{grade['max_score']:g}"))
                failed.append(f"{run}-grade<max")
    lines += notes
    lines.append(say["steps_title"])
    lines += [say["step"].format(status="OK" if rc == 0 else "FAIL", name=name, rc=rc, seconds=seconds)
              for name, rc, seconds in steps]
    total = sum(seconds for _, _, seconds in steps)
    lines.append(say["total"].format(total=total, minutes=total / 60, target=target_s))
    if device != "cpu" and total > target_s:
        lines.append(say["over"].format(over=total - target_s))
    lines.append(say["result_fail"].format(failed=", ".join(failed)) if failed else say["result_ok"])
    return "\n".join(lines) + "\n", 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    data = sub.add_parser("data", help="write OUT/grpo and OUT/dpo (train.jsonl, test.jsonl)")
    data.add_argument("out")
    data.add_argument("--eval-rows", type=int, default=DEFAULT_EVAL_ROWS)
    data.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS)
    report = sub.add_parser("summary", help="print the summary of the script's folder OUT")
    report.add_argument("out")
    report.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    report.add_argument("--target-s", type=float, default=DEFAULT_TARGET_S)
    args = parser.parse_args(argv)
    language = default_language()
    if args.action == "data":
        if not 1 <= args.eval_rows <= 8 or args.max_words < 1:
            print(LINES["bad_eval_rows" if args.max_words >= 1 else "bad_max_words"].in_(
                language, got=args.eval_rows if args.max_words >= 1 else args.max_words), file=sys.stderr)
            return 2
        folders = write_data(Path(args.out), args.eval_rows, args.max_words)
        print(LINES["wrote"].in_(language, grpo=folders["grpo"], grpo_train=GRPO_TRAIN_ROWS, grpo_eval=args.eval_rows,
                                 dpo=folders["dpo"], dpo_train=DPO_TRAIN_ROWS, dpo_eval=DPO_EVAL_ROWS))
        return 0
    said, code = summary(Path(args.out), args.device, args.target_s, language)
    print(said, end="")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
