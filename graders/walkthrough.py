"""Run a course seed notebook headless against an implementation folder.

The seeds (``graders/seeds/module_0X_seed.txt``, verbatim copies of
``shared/seeds``) are plain-text exports of the course notebooks. This runner
executes their code unchanged except for:

- the title line (prose, not code) is dropped;
- the folder discovery block (``_candidates = ...`` through
  ``sys.path.insert(0, str(MODULE_DIR))``) is replaced by the given folder;
- ``PROFILE = "smoke"`` may be set to another profile;
- optionally, the code is cut before a marker line (``stop_before``).

It runs in a fresh interpreter (``python -m graders.walkthrough``) so the
learner modules imported by the seed never mix with another implementation's.
``plt.show()`` saves each open figure as ``figure_NN.png`` in the output
folder (Agg backend); ``display`` is IPython's, which prints outside IPython.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from graders import course
from graders.paths import SEEDS_DIR, SOLUTIONS_DIR

DISCOVERY_START = "_candidates = "
DISCOVERY_END = "sys.path.insert(0, str(MODULE_DIR))"
PROFILE_LINE = 'PROFILE = "smoke"'
# Where each seed's toy experiment starts: code before it needs only the reference file.
EXPERIMENT_MARKERS = {
    "module_09": "experiment = run_toy_grpo_experiment(",
    "module_08": "experiment = run_toy_dpo_experiment(",
}


def seed_path(module: str) -> Path:
    """The bundled seed notebook of ``module`` (any spelling :func:`graders.course.module` reads)."""
    return SEEDS_DIR / f"{course.module(module).folder}_seed.txt"


def prepare_seed_code(text: str, module_dir: Path, *, profile: str | None = None,
                      stop_before: str | None = None) -> str:
    """Return the runnable code of a seed notebook pointed at ``module_dir``."""
    lines = text.splitlines()
    body = lines[1:]  # line 0 is the notebook's title
    start = next((i for i, line in enumerate(body) if line.startswith(DISCOVERY_START)), None)
    end = next((i for i, line in enumerate(body) if line.strip() == DISCOVERY_END), None)
    if start is None or end is None or end < start:
        raise ValueError("the seed has no recognisable folder discovery block")
    module_dir = Path(module_dir).resolve()
    replacement = [
        f"ROOT = Path({str(module_dir.parent)!r})",
        f"MODULE_DIR = Path({str(module_dir)!r})",
        DISCOVERY_END,
    ]
    body = body[:start] + replacement + body[end + 1:]
    if profile is not None:
        # the seeds write 'PROFILE = "smoke"  # "full" uses ...': a trailing comment is allowed
        if not any(line.startswith(PROFILE_LINE) for line in body):
            raise ValueError(f"the seed has no line {PROFILE_LINE!r} to set the profile")
        body = [f"PROFILE = {profile!r}" if line.startswith(PROFILE_LINE) else line for line in body]
    if stop_before is not None:
        cut = next((i for i, line in enumerate(body) if line.startswith(stop_before)), None)
        if cut is None:
            raise ValueError(f"stop_before marker {stop_before!r} not found in the seed")
        body = body[:cut]
    return "\n".join(body) + "\n"


def _install_figure_saver(out_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counter = {"n": 0}

    def show(*_args, **_kwargs) -> None:
        for number in plt.get_fignums():
            counter["n"] += 1
            target = out_dir / f"figure_{counter['n']:02d}.png"
            plt.figure(number).savefig(target, dpi=110, bbox_inches="tight")
            print(f"[figure saved: {target}]")
        plt.close("all")

    plt.show = show


def execute_seed(module: str, impl_dir: Path, out_dir: Path, *, profile: str | None = None,
                 stop_before: str | None = None) -> None:
    """Execute a seed in THIS interpreter (used by the subprocess entry point)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    code = prepare_seed_code(seed_path(module).read_text(encoding="utf-8"), impl_dir,
                             profile=profile, stop_before=stop_before)
    _install_figure_saver(out_dir)
    import pandas as pd

    pd.set_option("display.width", 160)
    pd.set_option("display.max_columns", 20)
    namespace = {"__name__": "__seed__"}
    previous = Path.cwd()
    os.chdir(out_dir)  # anything the seed writes lands in the output folder
    try:
        exec(compile(code, f"<seed {module}>", "exec"), namespace)
    finally:
        os.chdir(previous)


def run_seed_subprocess(module: str, impl_dir: Path | None = None, out_dir: Path = Path("rl4llm-out"),
                        *, profile: str | None = None, stop_before: str | None = None,
                        capture: bool = False, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run a seed in a fresh interpreter; return the completed process."""
    impl_dir = Path(impl_dir) if impl_dir is not None else SOLUTIONS_DIR / course.module(module).folder
    command = [sys.executable, "-m", "graders.walkthrough", course.module(module).folder, "--impl", str(impl_dir),
               "--out", str(out_dir)]
    if profile is not None:
        command += ["--profile", profile]
    if stop_before is not None:
        command += ["--stop-before", stop_before]
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    return subprocess.run(command, env=env, capture_output=capture, text=True, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.walkthrough")
    parser.add_argument("module", type=course.module, help="8, 9, module_08 or module_09")
    parser.add_argument("--impl", type=Path, required=True, help="folder holding module_X_*.py")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--stop-before", default=None)
    args = parser.parse_args(argv)
    execute_seed(args.module.folder, args.impl, args.out.resolve(), profile=args.profile,
                 stop_before=args.stop_before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
