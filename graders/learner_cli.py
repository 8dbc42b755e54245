"""``rl4llm`` in the learner bundle (``rl4llm bundle``): ``rl4llm run`` and ``rl4llm capstone
preflight|run|check``; the instructor's CLI defines the same subcommands with the same functions
(:func:`add_run_command`, :func:`graders.capstone.cli.add_capstone_arguments`).

The instructor's CLI (:mod:`graders.cli`) also builds, grades and exports; the learner's install has
none of that (no solutions, no checks, no engine), so its ``rl4llm`` offers what works there: running
a course notebook on the learner's own files, and the capstone's runs and passport check (the
capstone's TRL libraries: ``pip install -e ".[capstone]"``). Help texts follow the kit's language setting.
"""

from __future__ import annotations

import argparse
import sys

from graders import course
from graders.language import default_language
from graders.text import Text, table_in

HELP = {
    "description": Text("RL for LLMs, modules 8 and 9: run a course notebook on your own code; the TRL capstone.",
                        "RL для LLM, модули 8 и 9: ноутбук курса на вашем коде; капстоун на TRL."),
    "run": Text("run a course notebook headless on your files (tables + PNG figures)",
                "выполнить ноутбук курса на ваших файлах без Jupyter (таблицы и рисунки PNG)"),
    "module": Text("module08 or module09 (also 8, 9, module_08, module_09)",
                   "module08 или module09 (также 8, 9, module_08, module_09)"),
    "impl": Text("your files: a folder laid out like starter/ (DIR/module_09/module_9_reference.py) or the "
                 "module folder itself (default: starter/)",
                 "ваши файлы: папка, устроенная как starter/ (DIR/module_09/module_9_reference.py), или сама "
                 "папка модуля (по умолчанию starter/)"),
    "impl_kit": Text("your files: a folder laid out like starter/ (DIR/module_09/module_9_reference.py) or the "
                     "module folder itself (default: solutions/, else starter/)",
                     "ваши файлы: папка, устроенная как starter/ (DIR/module_09/module_9_reference.py), или сама "
                     "папка модуля (по умолчанию solutions/, иначе starter/)"),
    "profile": Text("the toy experiment's size", "размер учебного эксперимента"),
    "out": Text("output folder (default rl4llm-out/<module>)",
                "папка для результатов (по умолчанию rl4llm-out/<модуль>)"),
    "reference_only": Text("stop before the toy training experiment",
                           "остановиться перед учебным экспериментом с обучением"),
    "lang": Text("language of the figures and messages (default: $RL4LLM_LANG, else the locale)",
                 "язык рисунков и сообщений (по умолчанию $RL4LLM_LANG, иначе локаль)"),
    "traceback": Text("print Python's full traceback when a cell fails",
                      "при ошибке ячейки показать полный traceback Python"),
    "verbose": Text("also print the notebook's raw Python values (configs, token ids)",
                    "печатать и «сырые» значения Python из ноутбука (конфигурации, id токенов)"),
}


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage error said in one line (what is wrong, and where the help is), exit 2."""

    def error(self, message: str):
        from graders.cleaner import say

        say(f"{self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def module_arg(text: str) -> course.Module:
    """A module for argparse: 8, 9, module08, module_08...; anything else exits 2 naming the course's modules."""
    try:
        return course.module(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_run_command(sub, language: str | None = None, *, impl_default: str | None = "starter"):
    """The ``run`` subcommand (shared by the instructor's ``rl4llm``): arguments, help in ``language``.

    ``impl_default``: the folder ``--impl`` means when it is not given (``None``: the kit's
    ``solutions/`` where the install has it, else its ``starter/``).
    """
    text = table_in(HELP, language or default_language())
    impl_help = text["impl"] if impl_default == "starter" else text["impl_kit"]
    run = sub.add_parser("run", help=text["run"], description=text["run"])
    run.add_argument("module", type=module_arg, metavar="MODULE", help=text["module"])
    run.add_argument("--impl", default=impl_default, metavar="DIR", help=impl_help)
    run.add_argument("--profile", choices=["smoke", "full"], default="smoke", help=text["profile"])
    run.add_argument("--out", default=None, help=text["out"])
    run.add_argument("--reference-only", action="store_true", help=text["reference_only"])
    run.add_argument("--lang", choices=course.LANGUAGES, default=None, help=text["lang"])
    run.add_argument("--traceback", action="store_true", help=text["traceback"])
    run.add_argument("--verbose", action="store_true", help=text["verbose"])
    run.set_defaults(func=run_command)
    return run


def run_command(args: argparse.Namespace) -> int:
    """``rl4llm run``: the seed notebook on the given implementation, readable figures; the exit status."""
    from graders.walkthrough.run import run_notebook

    return run_notebook(args.module, args.impl, args.out, profile=args.profile, reference_only=args.reference_only,
                        language=args.lang, show_traceback=args.traceback, verbose=args.verbose)


def capstone_command(args: argparse.Namespace) -> int:
    """``rl4llm capstone preflight|run|check`` (imported only when asked: the TRL libraries are optional)."""
    from graders.capstone.cli import capstone_command as dispatch

    return dispatch(args)


def add_capstone_command(sub, language: str | None = None):
    """The learner's ``capstone`` subcommand: the instructor's arguments for ``LEARNER_ACTIONS``."""
    from graders.capstone.cli import LEARNER_ACTIONS, add_capstone_arguments
    from graders.capstone.run.texts import text

    language = language or default_language()
    capstone = sub.add_parser("capstone", help=text(language, "help_capstone"),
                              description=text(language, "help_capstone"))
    add_capstone_arguments(capstone, language, actions=LEARNER_ACTIONS)
    capstone.set_defaults(func=capstone_command)
    return capstone


def parser(language: str | None = None) -> argparse.ArgumentParser:
    text = table_in(HELP, language or default_language())
    top = OneLineParser(prog="rl4llm", description=text["description"])
    sub = top.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    add_run_command(sub, language)
    add_capstone_command(sub, language)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print(f"rl4llm {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
