"""The ``rl4llm`` command line.

Subcommands:
  build [--check]                     regenerate starter/ from solutions/ (or verify it is current)
  run module08|module09 [--profile smoke|full] [--out DIR] [--reference-only]
                                      run a course notebook headless against solutions/,
                                      printing its tables and saving its figures as PNG
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders.paths import MODULE_DIRS


def _cmd_build(args: argparse.Namespace) -> int:
    from graders.build import build

    return build(check=args.check)


def _cmd_run(args: argparse.Namespace) -> int:
    from graders.walkthrough import EXPERIMENT_MARKERS, run_seed_subprocess

    out = Path(args.out) if args.out else Path("rl4llm-out") / args.module
    stop = EXPERIMENT_MARKERS[args.module] if args.reference_only else None
    print(f"running the {args.module} course notebook against solutions/ "
          f"(profile={args.profile}); figures go to {out}/", flush=True)
    completed = run_seed_subprocess(args.module, out_dir=out, profile=args.profile, stop_before=stop)
    if completed.returncode != 0:
        print(f"rl4llm run {args.module}: the notebook failed (exit {completed.returncode}).",
              file=sys.stderr)
        return completed.returncode
    figures = sorted(out.glob("figure_*.png"))
    print(f"done: {len(figures)} figure(s) in {out}/")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rl4llm", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p_build = sub.add_parser("build", help="regenerate starter/ from solutions/")
    p_build.add_argument("--check", action="store_true", help="only verify; exit 1 when stale")
    p_build.set_defaults(func=_cmd_build)

    p_run = sub.add_parser("run", help="run a course notebook headless (tables + PNG figures)")
    p_run.add_argument("module", choices=sorted(MODULE_DIRS))
    p_run.add_argument("--profile", choices=["smoke", "full"], default="smoke")
    p_run.add_argument("--out", default=None, help="output folder (default rl4llm-out/<module>)")
    p_run.add_argument("--reference-only", action="store_true",
                       help="stop before the toy training experiment")
    p_run.set_defaults(func=_cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
