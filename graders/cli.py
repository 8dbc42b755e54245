"""rl4llm: build, run and autograde the Module 8 (DPO) and Module 9 (GRPO) exercises.

Subcommands:
  build [--check]                     regenerate starter/ and assignments/source/ from solutions/
                                      (or verify that they are current)
  new-exercise FILE FUNCTION          write the skeletons of a new exercise into its four files
  check-exercise ID [--no-mutation]   one exercise's whole loop: recipe, build, grades, public tests, mutation
  run module08|module09 [--impl DIR] [--lang en|ru] [--profile smoke|full] [--out DIR] [--reference-only]
                         [--traceback]
                                      run a course notebook headless against your files (default:
                                      solutions/, else starter/), printing its tables and saving
                                      titled, labelled figures as PNG
  grade SUBMISSION [SUBMISSION ...] --out DIR [--jobs N] [--module 8|9] [--hide-hidden-inputs]
        [--require-sandbox] [--shard I/N]
                                      autograde submissions (folders or .zip files): writes
                                      DIR/<name>/report.json, results.json, junit.xml, DIR/grades.csv,
                                      DIR/_batch.json (an earlier run in DIR is moved to DIR/_previous/);
                                      with --shard, only shard I of N (round robin) plus DIR/_shard.json
  merge OUT SHARD_DIR [SHARD_DIR ...] check that the folders are every shard of one batch; write
                                      OUT/grades.csv (as an unsharded grade would) and OUT/<name>/
  doctor [--require-sandbox]          list the sandbox layers this machine gives grading workers
  demo [--out DIR]                    grade the bundled example submissions, print scoreboard + feedback
  gradescope --out autograder.zip [--module 8|9] [--lang en|ru]
                                      build a Gradescope autograder bundle: that module's tests and points
                                      only (default: both), its feedback in that language (default: en)
  mutate [--exercise ID]              mutation testing of the kit's own checks (docs/mutation.md)
  capstone run --algo grpo|dpo --profile tiny|smoke|full --out DIR [--verifier PATH] [--model PATH]
               [--data-dir DIR] [--max-steps N] [--max-completion-length N] [--max-length N] [--device cpu]
                                      train with TRL + LoRA (tiny: CPU, seconds; smoke/full: Qwen3-0.6B
                                      on a GPU) and write DIR/passport.json, DIR/adapter/ and the figures
  capstone preflight --algo grpo|dpo --profile P [--model PATH] [--data-dir DIR]
                                      can this machine run the profile? one line per check; exit 1 if not
  capstone check RUN_DIR              check a run passport; writes RUN_DIR/capstone_report.json
  capstone grade SUBMISSION [--model PATH] [--out DIR]
                                      grade a capstone submission: the verifier by the engine, the passport
                                      against the kit, the adapter re-evaluated against the base model
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from graders import course
from graders.cleaner import say
from graders.cli_checks import (EXCEL_HELP, JOBS_HELP, default_jobs, excel_copies, module_mismatch, os_error_line,
                                positive_int, writable_folder)
from graders.cli_checks import module_arg as _module_arg, shard_arg as _shard_arg
from graders.engine.values.texts import cli_text
from graders.language import default_language
from graders.learner_cli import OneLineParser as _OneLineParser
from graders.lms_cli import add_export_command, add_lms_arguments


def _cmd_build(args: argparse.Namespace) -> int:
    from graders.build import build

    return build(check=args.check)


def _cmd_new_exercise(args: argparse.Namespace) -> int:
    from graders.build.scaffold import ScaffoldError, new_exercise, next_steps
    from graders.paths import REPO_ROOT

    try:
        written = new_exercise(args.file, args.function)
    except ScaffoldError as error:
        say(f"rl4llm new-exercise: {error}", file=sys.stderr)
        return 2
    say(f"the skeletons of {args.file}.{args.function}, marked TODO(new-exercise):")
    for path in written:
        say(f"  {path.relative_to(REPO_ROOT)}")
    say(next_steps(f"{args.file}.{args.function}"))
    return 0


def _cmd_bundle(args: argparse.Namespace) -> int:
    from graders.build.bundle import BundleError, build_bundle

    try:
        out = build_bundle(args.out, force=args.force)
    except BundleError as error:
        say(f"rl4llm bundle: {error}", file=sys.stderr)
        return 2
    say(f"learner bundle in {out}/ (README.md, README.ru.md, pyproject.toml, constraints/, starter/, graders/: "
        "rl4llm run and rl4llm capstone preflight|run|check)")
    return 0


class UsageError(Exception):
    """A command given what it cannot use: said in one line, exit 2."""


def _new_folder(path: str, option: str = "--out") -> Path:
    """``path`` as a folder to write into: refused in one line when it names a file (or a link to one)."""
    folder = Path(path)
    if os.path.lexists(folder) and not folder.is_dir():
        raise UsageError(f"{option} {folder} is a file, not a folder: name a new or existing folder")
    return folder


def _grade_options(args: argparse.Namespace):
    from graders.engine.routes.grading import GradeOptions

    modules = (args.module.number,) if getattr(args, "module", None) else course.NUMBERS
    language = {"lang": args.lang} if getattr(args, "lang", None) else {}  # else RL4LLM_LANG, else the locale
    return GradeOptions(modules=modules, hide_hidden_inputs=getattr(args, "hide_hidden_inputs", False),
                        timeout=getattr(args, "timeout", None),
                        require_sandbox=getattr(args, "require_sandbox", False), **language)


def _cmd_grade(args: argparse.Namespace) -> int:
    from graders.engine.routes.batch import BatchInterrupted, GraderError, OutputError, grade_paths
    from graders.engine.outputs.reports import scoreboard

    from graders.engine.outputs.lms import LmsError, write_ids
    from graders.lms_cli import stage_download

    paths = [Path(p) for p in args.submissions]
    language = _grade_options(args).lang
    try:  # before anything is read or graded: a folder that cannot take the reports is said at once
        writable_folder(args.out, "--out", language)
    except ValueError as error:
        raise UsageError(str(error)) from None
    try:
        paths, system, lms_ids, staging = stage_download(args, paths, language)
    except LmsError as error:
        raise UsageError(str(error)) from None
    if getattr(args, "module", None) is not None:  # a module no submission holds: everyone would score 0
        warning = module_mismatch(paths, args.module.number, language)
        if warning:
            say(warning, file=sys.stderr)
    if getattr(args, "module", None) is None:  # the class's own files say which module it handed in
        from graders.engine.intake.class_modules import infer

        modules, note = infer(paths, _grade_options(args).lang)
        if len(modules) == 1:
            args.module = course.module(modules[0])
        if note:
            say(note, file=sys.stderr)
    options = _grade_options(args)
    jobs = args.jobs or default_jobs(options.memory_mb)
    try:
        if args.shard is None:
            result = grade_paths(paths, Path(args.out), options, jobs=jobs, progress=not args.quiet)
        else:
            from graders.engine.routes.shards import grade_shard

            result = grade_shard(paths, Path(args.out), args.shard, options, jobs=jobs,
                                 progress=not args.quiet)
        if staging is not None:
            write_ids(result.out_dir, system, lms_ids)
    except BatchInterrupted as stopped:
        if staging is not None:  # what was graded can be exported (the rest listed as not graded)
            write_ids(stopped.folder, system, lms_ids)
        say(cli_text(_grade_options(args).lang, "interrupted", graded=stopped.graded, total=stopped.total,
                     folder=stopped.folder), file=sys.stderr)
        return 130
    except GraderError as error:  # an OutputError says the machine's reason itself (a full disk...)
        what = "" if isinstance(error, OutputError) else "the grader could not work: "
        say(f"rl4llm grade: {what}{error}", file=sys.stderr)
        return 1 if isinstance(error, OutputError) else 2
    finally:
        if staging is not None:
            staging.cleanup()
    say(scoreboard(result.reports, feedback=args.feedback, language=_grade_options(args).lang), end="")
    language = _grade_options(args).lang
    say(cli_text(language, "reports_in", folder=result.out_dir))
    if args.shard is not None:
        say(cli_text(language, "shard_done", shard=args.shard, count=len(result.names), total=len(paths)))
    elif len(result.reports) >= 2 and not args.no_class_report:  # a class needs two; `rl4llm report` any batch
        _class_report(result.out_dir, _grade_options(args).lang)
    if args.excel:
        _excel(result.out_dir, language)
    return _internal_errors("rl4llm grade: internal grader errors", result.internal_errors)


def _class_report(folder: Path, language: str | None) -> int:
    from graders.classreport import ReportError, build_class_report

    try:
        written = build_class_report(folder, language)
    except ReportError as error:
        say(f"rl4llm report: {error}", file=sys.stderr)
        return 2
    for note in written["notes"]:
        say(f"rl4llm report: note: {note}", file=sys.stderr)
    others = ("summary", "misconceptions", "unexplained", "students", "scores", "exercises", "heatmap")
    say(cli_text(language or default_language(), "class_report", path=written["report"],
                 others=", ".join(written[k].name for k in others)))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    code = _class_report(Path(args.folder), args.lang)
    if args.excel and code == 0:
        _excel(Path(args.folder), args.lang or default_language())
    return code


def _excel(folder: Path, language: str) -> None:
    """``--excel``: the folder's CSVs again, for Excel (:func:`graders.cli_checks.excel_copies`)."""
    from graders.cli_checks import SAID

    target = excel_copies(folder)
    if target is not None:
        say(SAID["excel"].in_(language, folder=target))


def _internal_errors(what: str, errors: list[str]) -> int:
    """1 (and the errors on stderr) when a batch recorded internal grader errors, else 0."""
    if not errors:
        return 0
    say(f"{what} (the reports mark them):\n  " + "\n  ".join(errors), file=sys.stderr)
    return 1


def _cmd_merge(args: argparse.Namespace) -> int:
    from graders.engine.outputs.reports import scoreboard
    from graders.engine.routes.shards import ShardError, merge_shards

    try:
        result = merge_shards(_new_folder(args.out, "OUT"), [Path(folder) for folder in args.shards])
    except ShardError as error:
        say(f"rl4llm merge: {error}", file=sys.stderr)
        return 2
    if result.set_aside is not None:
        say(f"rl4llm merge: note: {result.out_dir} held an earlier run; set aside in {result.set_aside}/ "
            f"(nothing deleted): {result.out_dir} now holds this merge only", file=sys.stderr)
    if not args.quiet:
        say(scoreboard(result.reports), end="")
    say(f"merged {len(args.shards)} shard(s), {len(result.names)} submissions: {result.out_dir}/grades.csv "
        f"and {result.out_dir}/<submission>/")
    if len(result.reports) >= 2:
        _class_report(result.out_dir, None)
    return _internal_errors("rl4llm merge: the shards recorded internal grader errors", result.internal_errors)




def _cmd_doctor(args: argparse.Namespace) -> int:
    from graders.engine.sandbox import landlock, layers as sandbox, wall

    # the interpreter and import path `rl4llm grade` gives its fork servers (tests/test_doctor_config.py)
    python, pythonpath = wall.grading_interpreter()
    wall.forget_kept_probes()  # the doctor probes afresh (a batch reads what it keeps: wall._kept)
    probe = sandbox.probe_layers(python, pythonpath)
    probe.layers["grader_not_dumpable"] = sandbox.make_grader_not_dumpable()
    say(f"sandbox layers for grading workers on this machine (Landlock ABI {landlock.abi_version()}):")
    say(f"workers' interpreter: {python}; PYTHONPATH: {pythonpath}")
    for name in sandbox.LAYERS:
        mark = "yes" if probe.layers.get(name) else "NO "
        say(f"  [{mark}] {name:<20} {sandbox.LAYER_TEXT[name]}")
    if probe.identity:
        say(f"worker identity: {probe.identity}")
    if probe.detail:
        say(f"probe: {probe.detail}")
    if probe.missing:
        say(f"missing: {', '.join(probe.missing)}; `rl4llm grade --require-sandbox` refuses to grade here")
        return 1 if args.require_sandbox else 0
    say("every layer is in force")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from graders.engine.routes.demo import run_demo

    return run_demo(Path(args.out), jobs=args.jobs)


def _cmd_gradescope(args: argparse.Namespace) -> int:
    from graders.engine.routes.gradescope import BundleError, build_bundle, points_of

    modules = (args.module.number,) if args.module else course.NUMBERS
    try:
        path = build_bundle(args.out, modules=modules, language=args.lang)
    except BundleError as error:
        say(f"rl4llm gradescope: {error}", file=sys.stderr)
        return 2
    points = points_of(modules)
    say(f"wrote {path}: Module {' + '.join(modules)}, {points:g} points, feedback in {args.lang}; upload it as "
        f"the autograder of a Gradescope programming assignment worth {points:g} points")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="rl4llm", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)

    p_build = sub.add_parser("build", help="regenerate starter/ from solutions/")
    p_build.add_argument("--check", action="store_true", help="only verify; exit 1 when stale")
    p_build.set_defaults(func=_cmd_build)

    p_new = sub.add_parser("new-exercise", help="write the skeletons of a new exercise into its four files")
    p_new.add_argument("file", metavar="FILE", help=f"a learner file of the course: {', '.join(course.STEMS)}")
    p_new.add_argument("function", metavar="FUNCTION", help="the new exercise's function name")
    p_new.set_defaults(func=_cmd_new_exercise)

    p_report = sub.add_parser("report", help="the class report of a graded batch (HTML, CSV, PNG)")
    p_report.add_argument("folder", help="a folder `rl4llm grade --out` (or `rl4llm merge`) wrote")
    p_report.add_argument("--lang", choices=course.LANGUAGES, default=None,
                          help="language of the report (default: $RL4LLM_LANG, else the locale)")
    p_report.add_argument("--excel", action="store_true", help=EXCEL_HELP)
    p_report.set_defaults(func=_cmd_report)

    p_bundle = sub.add_parser("bundle", help="build what a learner receives (no solutions, checks or engine)")
    p_bundle.add_argument("--out", required=True, help="a new (or empty) folder for the learner bundle")
    p_bundle.add_argument("--force", action="store_true", help="replace the folder's contents")
    p_bundle.set_defaults(func=_cmd_bundle)

    from graders.learner_cli import add_run_command

    add_run_command(sub, "en", impl_default=None)  # the learner bundle's `rl4llm run`, the kit's folders by default

    p_grade = sub.add_parser("grade", help="autograde submissions (folders or .zip files)")
    p_grade.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    p_grade.add_argument("--out", required=True, help="report folder (an earlier run in it is moved, as it is, "
                         "to DIR/_previous/<time>/: nothing is deleted)")
    p_grade.add_argument("--jobs", type=positive_int, default=None, help=JOBS_HELP)
    p_grade.add_argument("--module", type=_module_arg, default=None, metavar="MODULE",
                         help="grade one module only: 8 or 9 (also module_08, module_09)")
    p_grade.add_argument("--hide-hidden-inputs", action="store_true",
                         help='show "hidden input" instead of the inputs of hidden checks')
    p_grade.add_argument("--timeout", type=float, default=None,
                         help="override every exercise's time limit (seconds)")
    p_grade.add_argument("--feedback", action="store_true", help="print feedback under the scoreboard")
    p_grade.add_argument("--lang", choices=course.LANGUAGES, default=None,
                         help="language of the feedback and the scoreboard (default: $RL4LLM_LANG, else the locale)")
    p_grade.add_argument("--quiet", action="store_true", help="no progress bar")
    p_grade.add_argument("--excel", action="store_true", help=EXCEL_HELP)
    add_lms_arguments(p_grade)
    p_grade.add_argument("--no-class-report", action="store_true",
                         help="do not write the class report (`rl4llm report OUT` writes it later)")
    p_grade.add_argument("--require-sandbox", action="store_true",
                         help="refuse to grade unless every sandbox layer is in force (see `rl4llm doctor`)")
    p_grade.add_argument("--shard", type=_shard_arg, default=None, metavar="I/N",
                         help="grade only shard I of N (1-based; the k-th SUBMISSION, from 0, goes to shard "
                              "k %% N + 1) and write DIR/_shard.json; give every shard the same SUBMISSION "
                              "list, then `rl4llm merge`")
    p_grade.set_defaults(func=_cmd_grade)

    add_export_command(sub)
    p_merge = sub.add_parser("merge", help="merge the shard folders of `grade --shard` into one report folder")
    p_merge.add_argument("out", metavar="OUT", help="the merged report folder (not one of the shards)")
    p_merge.add_argument("shards", nargs="+", metavar="SHARD_DIR", help="every shard's --out folder")
    p_merge.add_argument("--quiet", action="store_true", help="no scoreboard")
    p_merge.set_defaults(func=_cmd_merge)

    p_doctor = sub.add_parser("doctor", help="list the sandbox layers grading workers get on this machine")
    p_doctor.add_argument("--require-sandbox", action="store_true", help="exit 1 when a layer is missing")
    p_doctor.set_defaults(func=_cmd_doctor)

    p_demo = sub.add_parser("demo", help="grade the bundled example submissions and show the feedback")
    p_demo.add_argument("--out", default=str(Path("rl4llm-out") / "demo"))
    p_demo.add_argument("--jobs", type=positive_int, default=2)
    p_demo.set_defaults(func=_cmd_demo)

    p_gs = sub.add_parser("gradescope", help="build a Gradescope autograder bundle")
    p_gs.add_argument("--out", default="autograder.zip", help="the zip to write (default: autograder.zip)")
    p_gs.add_argument("--module", type=_module_arg, default=None, metavar="MODULE",
                      help="grade one module only: 8 or 9 (default: both, as one assignment)")
    p_gs.add_argument("--lang", choices=course.LANGUAGES, default="en",
                      help="the feedback's language, fixed in the bundle (default: en; never the container's locale)")
    p_gs.set_defaults(func=_cmd_gradescope)

    p_cap = sub.add_parser("capstone", help="the TRL capstone: preflight, run GRPO/DPO with LoRA, grade a submission")
    from graders.capstone.cli import add_capstone_arguments, capstone_command

    add_capstone_arguments(p_cap)
    p_cap.set_defaults(func=capstone_command)

    from graders.mutation import add_command as add_mutate_command

    add_mutate_command(sub)  # rl4llm mutate and check-exercise: the kit's own checks tested (graders/mutation/)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as error:
        say(f"rl4llm {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `rl4llm doctor | head`: the reader has what it wanted
        return 0
    except KeyboardInterrupt:  # anywhere but a batch's grading loop, which writes what finished first
        say(f"rl4llm {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as error:  # the machine's, not the kit's: a full disk, a read-only folder, a path that is not
        say(f"rl4llm {args.command}: {os_error_line(error, getattr(args, 'lang', None) or default_language())}",
            file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
