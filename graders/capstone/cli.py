"""``rl4llm capstone ...``: the arguments and the dispatch of the capstone subcommands.

    run        train (graders/capstone/run/run.py) and write the run folder
    preflight  can this machine run a profile? (graders/capstone/run/preflight.py)
    check      the passport checks alone (graders/capstone/passport.py)
    grade      a whole submission (graders/capstone/grade.py; the instructor's kit only)

Both CLIs take their arguments from :func:`add_capstone_arguments`: the instructor's ``rl4llm``
(:mod:`graders.cli`) every action, the learner bundle's (:mod:`graders.learner_cli`) ``LEARNER_ACTIONS``.
Help and messages come from ``graders/capstone/run/texts.py`` in the chosen language (``--lang``,
else ``RL4LLM_LANG``, else the locale).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders import course
from graders.capstone.run.texts import text
from graders.cleaner import FIELD_LIMIT, clean, say
from graders.language import default_language

ACTIONS = ("run", "preflight", "check", "grade")
LEARNER_ACTIONS = ("preflight", "run", "check")  # grade needs the engine and the reference: instructor only
ALGORITHM_CHOICES = ["grpo", "dpo"]
PROFILE_CHOICES = ["tiny", "smoke", "full"]
DEVICE_CHOICES = ["auto", "cpu", "cuda"]


def add_capstone_arguments(parser: argparse.ArgumentParser, language: str | None = None,
                           actions: tuple[str, ...] = ACTIONS) -> None:
    """The capstone subcommands in ``actions`` and their flags, on ``parser`` (``rl4llm capstone``);
    help in ``language`` (default: the kit's language setting)."""
    language = language or default_language()

    def say(key: str) -> str:  # the help text of a key (here, not graders.cleaner.say: nothing is printed)
        return text(language, key)

    sub = parser.add_subparsers(dest="action", required=True)
    for action in actions:
        if action == "run":
            run = sub.add_parser("run", help=say("help_run"), description=say("help_run"))
            run.add_argument("--algo", choices=ALGORITHM_CHOICES, required=True, help=say("help_algo"))
            run.add_argument("--profile", choices=PROFILE_CHOICES, default="tiny", help=say("help_profile"))
            run.add_argument("--out", required=True, help=say("help_out"))
            run.add_argument("--verifier", default=None, help=say("help_verifier"))
            run.add_argument("--loss", default=None, metavar="PATH", help=say("help_loss"))
            run.add_argument("--seed", type=int, default=None, help=say("help_seed"))
            run.add_argument("--model", default=None, metavar="PATH", help=say("help_model"))
            run.add_argument("--data-dir", default=None, metavar="DIR", help=say("help_data_dir"))
            run.add_argument("--max-steps", type=int, default=None, help=say("help_max_steps"))
            run.add_argument("--max-completion-length", type=int, default=None,
                             help=say("help_max_completion_length"))
            run.add_argument("--max-length", type=int, default=None, help=say("help_max_length"))
            run.add_argument("--device", choices=DEVICE_CHOICES, default="auto", help=say("help_device"))
            run.add_argument("--lang", choices=course.LANGUAGES, default=None, help=say("help_lang"))
            run.add_argument("--quiet", action="store_true", help=say("help_quiet"))
        elif action == "preflight":
            preflight = sub.add_parser("preflight", help=say("help_preflight"), description=say("help_preflight"))
            preflight.add_argument("--algo", choices=ALGORITHM_CHOICES, default="grpo", help=say("help_algo"))
            preflight.add_argument("--profile", choices=PROFILE_CHOICES, default="smoke", help=say("help_profile"))
            preflight.add_argument("--model", default=None, metavar="PATH", help=say("help_model"))
            preflight.add_argument("--data-dir", default=None, metavar="DIR", help=say("help_data_dir"))
            preflight.add_argument("--device", choices=DEVICE_CHOICES, default="auto", help=say("help_device"))
            preflight.add_argument("--lang", choices=course.LANGUAGES, default=None, help=say("help_lang"))
        elif action == "check":
            check = sub.add_parser("check", help=say("help_check"), description=say("help_check"))
            check.add_argument("run_dir", metavar="RUN_DIR", help=say("help_run_dir"))
            check.add_argument("--lang", choices=course.LANGUAGES, default=None, help=say("help_lang"))
        elif action == "grade":
            grade = sub.add_parser("grade", help=say("help_grade"), description=say("help_grade"))
            grade.add_argument("submission", metavar="SUBMISSION", help=say("help_submission"))
            grade.add_argument("--model", default=None, metavar="PATH", help=say("help_grade_model"))
            grade.add_argument("--data-dir", default=None, metavar="DIR", help=say("help_grade_data_dir"))
            grade.add_argument("--out", default=None, help=say("help_grade_out"))
            grade.add_argument("--lang", choices=course.LANGUAGES, default=None, help=say("help_lang"))
        else:
            raise ValueError(f"unknown capstone action {action!r}; the actions are {ACTIONS}")


def kept_text(passport: dict, language: str) -> str | None:
    """The line on the kept training rows, or None (DPO, tiny); a passport from before the verifier's share
    was recorded (no ``verifier_decided``) says "?" there."""
    kept = ((passport.get("data") or {}).get("filter") or {}).get("train")
    if not kept:
        return None
    return text(language, "run_kept", kept=kept["kept"], rows=kept["rows"], percent=100 * kept["kept_fraction"],
                decided=kept.get("verifier_decided", "?"))


def _run(args: argparse.Namespace, language: str) -> int:
    from graders.capstone.run.profiles import DEFAULT_SEED, CapstoneError
    from graders.capstone.run.run import RunOptions, run_capstone

    options = RunOptions(args.algo, args.profile, Path(args.out),
                         verifier=Path(args.verifier) if args.verifier else None,
                         loss=Path(args.loss) if args.loss else None,
                         seed=DEFAULT_SEED if args.seed is None else args.seed, model=args.model,
                         data_dir=Path(args.data_dir) if args.data_dir else None, max_steps=args.max_steps,
                         max_completion_length=args.max_completion_length, max_length=args.max_length,
                         device=args.device, progress=not args.quiet, language=language)
    try:
        passport = run_capstone(options)
    except CapstoneError as error:
        say(f"rl4llm capstone run: {error.text(language)}", file=sys.stderr)
        return 2
    after = passport["metrics"]["after"]
    say(text(language, "run_metrics", before=passport["metrics"]["before"], after=after))
    kept = kept_text(passport, language)
    if kept:
        say(kept)
    if "truncated_fraction" in after:
        say(text(language, "run_truncated", limit=passport["trainer_args"]["max_completion_length"],
                   percent=100 * after["truncated_fraction"]))
    if passport["overrides"] or passport["device"] == "cpu" and args.profile != "tiny":
        say(text(language, "run_dry", overrides=passport["overrides"]))
    say(text(language, "run_wrote", passport=Path(args.out) / "passport.json", adapter=Path(args.out) / "adapter",
               out=args.out))
    return 0


def capstone_command(args: argparse.Namespace) -> int:
    """Run one capstone subcommand; the process exit code."""
    language = getattr(args, "lang", None) or default_language()
    if args.action == "run":
        return _run(args, language)
    if args.action == "preflight":
        from graders.capstone.run.preflight import format_preflight, preflight

        lines = preflight(args.algo, args.profile, model=args.model, data_dir=args.data_dir, device=args.device)
        say(format_preflight(lines, args.algo, args.profile, language), end="")
        return 1 if any(line.status == "fail" for line in lines) else 0
    if args.action == "check":
        from graders.capstone.passport import check_passport, format_report, write_report

        report = clean(check_passport(args.run_dir, language), FIELD_LIMIT)  # passport strings: shown, written
        say(format_report(report, language), end="")
        if not Path(args.run_dir).is_dir():
            say(f"rl4llm capstone check: {text(language, 'check_not_folder', run_dir=args.run_dir)}",
                file=sys.stderr)
            return 2
        say(text(language, "report_wrote", path=write_report(args.run_dir, report)))
        return 0
    from graders.capstone.grade import format_grade, grade_submission, write_grade

    submission = Path(args.submission)
    if not submission.is_dir() and submission.suffix != ".zip":
        say(text(language, "grade_not_folder", submission=submission), file=sys.stderr)
        return 2
    report = clean(grade_submission(submission, model=args.model, data_dir=args.data_dir, language=language),
                   FIELD_LIMIT)  # the passport's and the submission's strings: printed and written cleaned
    say(format_grade(report, language), end="")
    out = Path(args.out) if args.out else Path("rl4llm-out") / "capstone" / submission.stem
    say(text(language, "report_wrote", path=write_grade(out, report)))
    return 0
