"""The mutation report: ``mutation.json``, its Markdown table, the docs page's generated block, the floors.

``mutation.json`` holds, per exercise (:func:`graders.mutation.campaign.summarise`):
mutants, equivalent, non-equivalent, killed (lost points under the hidden
checks), survived, ``score`` = killed / non-equivalent, ``public_share`` =
point-losing mutants whose ``pytest -k <function>`` fails / those run, the
names the grader and pytest gave (with counts), every survivor with its diff
line and witness input, the point-losing mutants whose public tests pass, and
those the grader and pytest name differently (``names_differ``);
and every mutant's verdict under ``mutants``.

The floors (:data:`FLOORS`, ``graders/mutation/floors.json``) are the lowest
score each exercise may have; the tests fail when a measured score drops below
its floor.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from graders.paths import REPO_ROOT

FLOORS = Path(__file__).resolve().parent / "floors.json"
DOCS_PAGE = REPO_ROOT / "docs" / "mutation.md"
BEGIN, END = "<!-- mutation-report:begin -->", "<!-- mutation-report:end -->"  # `rl4llm mutate --docs`, not the build


def _percent(value) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def table(report: dict) -> str:
    """The per-exercise Markdown table, a totals row, then every survivor (its diff line and witness)."""
    lines = ["| Exercise | Mutants | Equivalent | Killed | Survived | Score | Public fails / run | Names (grader; pytest) |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    total = {"mutants": 0, "equivalent": 0, "killed": 0, "survived": 0, "public_checked": 0, "public_failed": 0}
    for row in report["exercises"]:
        for key in total:
            total[key] += row[key]
        grader = ", ".join(f"{n} ×{c}" for n, c in row["grader_names"].items()) or "–"
        pytest = ", ".join(f"{n} ×{c}" for n, c in row["pytest_names"].items()) or "–"
        public = (f"{row['public_failed']}/{row['public_checked']} "
                  f"({_percent(row['public_failed'] / row['public_checked'])})"
                  if row["public_checked"] else "–")
        lines.append(f"| `{row['exercise']}` | {row['mutants']} | {row['equivalent']} | {row['killed']} | "
                     f"{row['survived']} | {_percent(row['killed'] / (row['killed'] + row['survived']) if row['killed'] + row['survived'] else None)} | {public} | {grader}; {pytest} |")
    non_equivalent = total["killed"] + total["survived"]
    score = total["killed"] / non_equivalent if non_equivalent else None
    share = total["public_failed"] / total["public_checked"] if total["public_checked"] else None
    lines.append(f"| **all** | {total['mutants']} | {total['equivalent']} | {total['killed']} | {total['survived']} | "
                 f"{_percent(score)} | {total['public_failed']}/{total['public_checked']} ({_percent(share)}) | |")
    seconds = report.get("seconds", {})
    lines += ["", f"Measured with `--jobs {report.get('jobs')}`"
                  + (f", public tests on a sample of {report['public_sample']} point-losing mutants per exercise"
                     if report.get("public_sample") else "")
                  + (", public tests not run" if not report.get("public", True) else "")
                  + f": judging {seconds.get('judging', '?')} s, in all {seconds.get('total', '?')} s.", ""]
    lines.append("### Survivors (mutants that keep full marks), with a witness input")
    lines.append("")
    for row in report["exercises"]:
        for survivor in row["survivors"]:
            witness = survivor.get("witness") or {}
            where = "a check's input" if witness.get("from_checks") else "a draw the checks lack"
            lines.append(f"- `{survivor['id']}` `{survivor['diff']}` — differs on {where}: "
                         f"`{witness.get('input', '')[:200]}` ({witness.get('difference', '')[:160]})")
    lines.append("")
    lines.append("### Point-losing mutants whose public tests pass (`pytest -k <function>` green)")
    lines.append("")
    for row in report["exercises"]:
        for green in row["public_green"]:
            lines.append(f"- `{green['id']}` `{green['diff']}`")
    lines += ["", "### Point-losing mutants the grader and pytest name differently (`–`: no name)", ""]
    for row in report["exercises"]:
        for differ in row.get("names_differ", []):
            lines.append(f"- `{differ['id']}` `{differ['diff']}`: grader {', '.join(differ['grader']) or '–'}; "
                         f"pytest {', '.join(differ['pytest']) or '–'}")
    return "\n".join(lines) + "\n"


def write(report: dict, out: Path) -> tuple[Path, Path]:
    """``out/mutation.json`` and ``out/mutation.md``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data, text = out / "mutation.json", out / "mutation.md"
    data.write_text(json.dumps(report, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    text.write_text("# Mutation report\n\n" + table(report), encoding="utf-8")
    return data, text


def merge(folders: list[Path]) -> dict:
    """One report from the ``mutation.json`` of several runs (a SLURM array's tasks), in course order."""
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.mutation.campaign import summarise

    parts = [json.loads((Path(f) / "mutation.json").read_text(encoding="utf-8")) for f in folders]
    mutants = {k: v for part in parts for k, v in part.get("mutants", {}).items()}
    rows = {row["exercise"]: summarise(row["exercise"], mutants[row["exercise"]]) if row["exercise"] in mutants
            else row for part in parts for row in part["exercises"]}  # summarised again: the current rules
    order = [e for e in DEFAULT_KIT.exercises() if e in rows]
    seconds = {key: round(sum(p["seconds"][key] for p in parts), 1) for key in ("judging", "total")}
    return {"jobs": max(p["jobs"] for p in parts), "public": all(p["public"] for p in parts),
            "public_sample": parts[0].get("public_sample"), "seconds": seconds,
            "exercises": [rows[e] for e in order], "mutants": {e: mutants[e] for e in order if e in mutants}}


def update_docs(report: dict, page: Path = DOCS_PAGE) -> Path:
    """Replace the generated block of ``docs/mutation.md`` with the table of a run over every exercise."""
    from graders.engine.judging.kit import DEFAULT_KIT

    missing = [e for e in DEFAULT_KIT.exercises() if e not in {r["exercise"] for r in report["exercises"]}]
    if missing:
        raise ValueError(f"the docs page holds a run over every exercise; this one lacks {', '.join(missing)}")
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{BEGIN}\n{table(report)}{END}{tail}", encoding="utf-8")
    return page


def floors(path: Path = FLOORS) -> dict[str, float]:
    """The committed floor of each exercise's mutation score."""
    return json.loads(Path(path).read_text(encoding="utf-8")) if Path(path).exists() else {}


def below_floor(report: dict, path: Path = FLOORS) -> list[str]:
    """The exercises of ``report`` whose score is under their floor (one line each)."""
    known = floors(path)
    found = []
    for row in report["exercises"]:
        floor = known.get(row["exercise"])
        if floor is not None and (row["score"] is None or row["score"] < floor - 1e-12):
            found.append(f"{row['exercise']}: score {row['score']} below its floor {floor}")
    return found


def write_floors(report: dict, path: Path = FLOORS) -> Path:
    """Record each exercise's measured score (rounded down to 0.001) as its floor, keeping the others."""
    known = floors(path)
    for row in report["exercises"]:
        if row["score"] is not None:
            known[row["exercise"]] = math.floor(row["score"] * 1000) / 1000
    Path(path).write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n", encoding="utf-8")
    return Path(path)
