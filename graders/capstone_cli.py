"""``rl4llm capstone ...``: the arguments and the dispatch of the capstone subcommands.

    run        train (solutions/capstone/run.py) and write the run folder
    preflight  can this machine run a profile? (solutions/capstone/preflight.py)
    check      the passport checks alone (graders/capstone.py)
    grade      a whole submission (graders/capstone_grade.py)

Learner-facing lines come from ``solutions/capstone/texts.py`` in the chosen
language (``--lang``, else ``RL4LLM_LANG``, else the locale).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders import course
from graders.language import default_language


def add_capstone_arguments(parser: argparse.ArgumentParser) -> None:
    """The capstone subcommands and their flags, on ``parser`` (``rl4llm capstone``)."""
    sub = parser.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="train and write DIR/passport.json, DIR/adapter/ and the figures")
    run.add_argument("--algo", choices=["grpo", "dpo"], required=True)
    run.add_argument("--profile", choices=["tiny", "smoke", "full"], default="tiny",
                     help="tiny: CPU, seconds, no download; smoke/full: Qwen3-0.6B on a CUDA GPU")
    run.add_argument("--out", required=True, help="run folder")
    run.add_argument("--verifier", default=None,
                     help="your module_9_reference.py: its verify_numeric_answer is GRPO's reward (required for GRPO)")
    run.add_argument("--seed", type=int, default=None, help="trainer seed (default 42, TRL's)")
    run.add_argument("--model", default=None, metavar="PATH",
                     help="a local model folder (e.g. a downloaded Qwen3-0.6B snapshot) instead of the Hub id")
    run.add_argument("--data-dir", default=None, metavar="DIR",
                     help="a folder with train.jsonl / test.jsonl instead of the Hub (air-gapped machines)")
    run.add_argument("--max-steps", type=int, default=None, help="dry run: stop after N optimizer steps")
    run.add_argument("--max-completion-length", type=int, default=None, help="dry run: GRPO completion tokens")
    run.add_argument("--max-length", type=int, default=None, help="dry run: DPO prompt + answer tokens")
    run.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                     help="auto: tiny on CPU, smoke/full on CUDA; cpu: a dry run of a real profile")
    run.add_argument("--lang", choices=course.LANGUAGES, default=None, help="language of figures and messages")
    run.add_argument("--quiet", action="store_true", help="no progress bar or per-step logs")

    preflight = sub.add_parser("preflight", help="check that this machine can run a profile (exit 1 if not)")
    preflight.add_argument("--algo", choices=["grpo", "dpo"], default="grpo")
    preflight.add_argument("--profile", choices=["tiny", "smoke", "full"], default="smoke")
    preflight.add_argument("--model", default=None, metavar="PATH")
    preflight.add_argument("--data-dir", default=None, metavar="DIR")
    preflight.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    preflight.add_argument("--lang", choices=course.LANGUAGES, default=None)

    check = sub.add_parser("check", help="check a run passport; writes RUN_DIR/capstone_report.json")
    check.add_argument("run_dir", metavar="RUN_DIR")
    check.add_argument("--lang", choices=course.LANGUAGES, default=None)

    grade = sub.add_parser("grade", help="grade a capstone submission (folder or .zip)")
    grade.add_argument("submission", metavar="SUBMISSION")
    grade.add_argument("--model", default=None, metavar="PATH",
                       help="the base model for re-evaluation (smoke/full; default: the Hub id, from the cache)")
    grade.add_argument("--data-dir", default=None, metavar="DIR", help="held-out rows instead of the Hub")
    grade.add_argument("--out", default=None, help="report folder (default: rl4llm-out/capstone/<name>)")
    grade.add_argument("--lang", choices=course.LANGUAGES, default=None)


def _run(args: argparse.Namespace, language: str) -> int:
    from solutions.capstone.profiles import DEFAULT_SEED, CapstoneError
    from solutions.capstone.run import RunOptions, run_capstone
    from solutions.capstone.texts import text

    options = RunOptions(args.algo, args.profile, Path(args.out),
                         verifier=Path(args.verifier) if args.verifier else None,
                         seed=DEFAULT_SEED if args.seed is None else args.seed, model=args.model,
                         data_dir=Path(args.data_dir) if args.data_dir else None, max_steps=args.max_steps,
                         max_completion_length=args.max_completion_length, max_length=args.max_length,
                         device=args.device, progress=not args.quiet, language=language)
    try:
        passport = run_capstone(options)
    except CapstoneError as error:
        print(f"rl4llm capstone run: {error}", file=sys.stderr)
        return 2
    after = passport["metrics"]["after"]
    print(text(language, "run_metrics", before=passport["metrics"]["before"], after=after))
    kept = (passport["data"].get("filter") or {}).get("train")
    if kept:
        print(text(language, "run_kept", kept=kept["kept"], rows=kept["rows"], percent=100 * kept["kept_fraction"]))
    if "truncated_fraction" in after:
        print(text(language, "run_truncated", limit=passport["trainer_args"]["max_completion_length"],
                   percent=100 * after["truncated_fraction"]))
    if passport["overrides"] or passport["device"] == "cpu" and args.profile != "tiny":
        print(text(language, "run_dry", overrides=passport["overrides"]))
    print(text(language, "run_wrote", passport=Path(args.out) / "passport.json", adapter=Path(args.out) / "adapter",
               out=args.out))
    return 0


def capstone_command(args: argparse.Namespace) -> int:
    """Run one capstone subcommand; the process exit code."""
    language = getattr(args, "lang", None) or default_language()
    if args.action == "run":
        return _run(args, language)
    if args.action == "preflight":
        from solutions.capstone.preflight import format_preflight, preflight

        lines = preflight(args.algo, args.profile, model=args.model, data_dir=args.data_dir, device=args.device)
        print(format_preflight(lines, args.algo, args.profile, language), end="")
        return 1 if any(line.status == "fail" for line in lines) else 0
    if args.action == "check":
        from graders.capstone import check_passport, format_report, write_report

        report = check_passport(args.run_dir)
        print(format_report(report, language), end="")
        if not Path(args.run_dir).is_dir():
            print(f"rl4llm capstone check: {args.run_dir} is not a folder; no report written", file=sys.stderr)
            return 2
        print(f"report: {write_report(args.run_dir, report)}")
        return 0
    from graders.capstone_grade import format_grade, grade_submission, write_grade
    from solutions.capstone.texts import text

    submission = Path(args.submission)
    if not submission.is_dir() and submission.suffix != ".zip":
        print(text(language, "grade_not_folder", submission=submission), file=sys.stderr)
        return 2
    report = grade_submission(submission, model=args.model, data_dir=args.data_dir, language=language)
    print(format_grade(report, language), end="")
    out = Path(args.out) if args.out else Path("rl4llm-out") / "capstone" / submission.stem
    print(text(language, "grade_wrote", path=write_grade(out, report)))
    return 0
