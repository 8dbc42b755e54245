"""Mutation testing of the kit's own checks: ``rl4llm mutate`` (issue 32, point 1).

For every exercise, the kit generates mutants of its reference function (small
AST changes: :mod:`graders.mutation.operators`), leaves out the equivalent ones
(equal to the reference on the checks' inputs AND on draws the checks lack:
:mod:`graders.mutation.draws`), grades the rest with the engine's in-process
route and counts those that lose points (:mod:`graders.mutation.run`), runs the
public tests on the point-losing ones (:mod:`graders.mutation.public`), all in
parallel (:mod:`graders.mutation.campaign`), and writes ``mutation.json``, a
Markdown table and ``docs/mutation.md``'s generated block
(:mod:`graders.mutation.report`). ``--audit`` judges the equivalent ones again on every
draw with other seeds (:mod:`graders.mutation.audit`). ``rl4llm check-exercise ID``
(:mod:`graders.mutation.check_exercise`) is one exercise's whole loop, this run its last step.

Why a mutator of its own, not mutmut or cosmic-ray: both mutate files in place
and run a test command per mutant (a fresh process, the whole test suite or a
selection of it), and neither can hand back one mutated function. Here a
mutant is one function judged in-process by the engine: the mutated ``def`` is
exec'd in a copy of the reference module's namespace, like a catalogue entry,
and graded by :func:`graders.engine.routes.inline.grade_exercise` in milliseconds, with
the equivalence decided on the reference's outcomes computed once per
exercise. A file-based tool would cost a process and a grading batch per
mutant (over a thousand of them) and could not mutate only the exercise's
function, which is what the checks are answerable for. The operator set covers
mutmut's and cosmic-ray's (binary, comparison, boolean and unary operators,
number constants, ``True``/``False``, removed statements) plus the numerical
mistakes of this course (``min``/``max``, ``sum``/``mean``, ``argmin``/``argmax``,
axis/keepdims/ddof, removed shift/clip/detach, dtypes, off-by-one slices,
swapped arguments, dropped guards). Left out on purpose: string constants
(error messages, dictionary keys), decorators, the function's signature.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders.cli_checks import positive_int


def add_command(sub) -> None:
    """Register ``rl4llm mutate`` and ``rl4llm check-exercise`` (:mod:`graders.mutation.check_exercise`) on the CLI's
    subparsers."""
    from graders.mutation import check_exercise

    check_exercise.add_parser(sub)
    parser = sub.add_parser("mutate", help="mutation testing of the kit's own checks (mutation.json, a table)")
    parser.add_argument("--exercise", action="append", default=None, metavar="ID",
                        help="one exercise (repeatable; default: every exercise), e.g. "
                             "module_9_reference.pass_at_k_unbiased")
    parser.add_argument("--jobs", type=positive_int, default=2,
                        help="processes judging mutants and running pytest (default 2)")
    parser.add_argument("--out", default=str(Path("rl4llm-out") / "mutation"),
                        help="folder for mutation.json and mutation.md (default rl4llm-out/mutation)")
    parser.add_argument("--no-public", action="store_true", help="do not run the public tests on mutants")
    parser.add_argument("--public-sample", type=int, default=None, metavar="N",
                        help="run the public tests on at most N point-losing mutants per exercise (an even sample)")
    parser.add_argument("--docs", action="store_true",
                        help="also rewrite docs/mutation.md's generated table (needs a run over every exercise)")
    parser.add_argument("--write-floors", action="store_true",
                        help="record the measured scores as the floors (graders/mutation/floors.json)")
    parser.add_argument("--audit", action="store_true",
                        help="re-judge only the mutants called equivalent, on every draw of every case with other "
                             "seeds (graders/mutation/audit.py); writes audit.json; exit 1 when one differs there")
    parser.add_argument("--list", action="store_true", help="print the exercise ids, one a line, and stop")
    parser.add_argument("--merge", nargs="+", default=None, metavar="DIR",
                        help="merge the mutation.json of several --out folders (a SLURM array's) into --out")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """``rl4llm mutate``: run (or merge), write the report, check the floors; exit 1 when a score is under one."""
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.mutation import report as reports

    known = DEFAULT_KIT.exercises()
    if args.list:
        print("\n".join(known))
        return 0
    if args.audit:
        from graders.mutation.audit import audit, write

        unknown = [e for e in (args.exercise or []) if e not in known]
        if unknown:
            print(f"error: no exercise {', '.join(unknown)} (rl4llm mutate --list names them)", file=sys.stderr)
            return 2
        found = audit(args.exercise or known, jobs=args.jobs, progress=lambda line: print(line, flush=True))
        print(f"wrote {write(found, Path(args.out))}")
        wrong = [(row["exercise"], m) for row in found["exercises"] for m in row["mislabelled"]]
        for exercise, mutant in wrong:
            print(f"mislabelled: {mutant['id']} ({mutant['status']}): {mutant['diff']}; {mutant['witness']['label']}: "
                  f"{mutant['witness']['difference']}", file=sys.stderr)
        print(f"audit: {sum(r['equivalent'] for r in found['exercises'])} called equivalent, {len(wrong)} mislabelled "
              f"({found['seconds']} s)")
        return 1 if wrong else 0
    if args.merge:
        result = reports.merge([Path(folder) for folder in args.merge])
    else:
        chosen = args.exercise or known
        unknown = [e for e in chosen if e not in known]
        if unknown:
            print(f"error: no exercise {', '.join(unknown)} (rl4llm mutate --list names them)", file=sys.stderr)
            return 2
        from graders.mutation.campaign import campaign

        result = campaign(chosen, jobs=args.jobs, public=not args.no_public, public_sample=args.public_sample,
                          progress=lambda line: print(line, flush=True))
    data, text = reports.write(result, Path(args.out))
    print(f"wrote {data} and {text}")
    if args.docs:
        print(f"wrote {reports.update_docs(result)}")
    if args.write_floors:
        print(f"wrote {reports.write_floors(result)}")
    for row in result["exercises"]:
        score = "–" if row["score"] is None else f"{100 * row['score']:.1f} %"
        print(f"{row['exercise']}: {row['mutants']} mutants, {row['equivalent']} equivalent, {row['killed']} killed, "
              f"{row['survived']} survived: score {score}")
    problems = reports.below_floor(result)
    for line in problems:
        print(f"below floor: {line}", file=sys.stderr)
    return 1 if problems else 0
