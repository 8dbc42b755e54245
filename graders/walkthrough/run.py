"""Run a course seed notebook headless against an implementation folder (``rl4llm run``).

The seeds (``graders/seeds/module_0X_seed.txt``, verbatim copies of
``shared/seeds``) are plain-text exports of the course notebooks. This runner
executes their code unchanged except for:

- the title line (prose, not code) becomes a comment;
- the folder discovery block (``_candidates = ...`` through
  ``sys.path.insert(0, str(MODULE_DIR))``) is replaced by the given folder
  (padded, so a line number of the run is a line number of the seed file);
- ``PROFILE = "smoke"`` may be set to another profile;
- optionally, the code is cut before a marker line (``stop_before``).

It runs in a fresh interpreter (``python -m graders.walkthrough.run``) so the
learner modules imported by the seed never mix with another implementation's.
The implementation is any folder holding the module's learner files
(:func:`resolve_impl`): the kit's ``solutions/``, a learner's ``starter/``, or
a module folder itself; given modules it lacks are taken from the kit.

The code runs cell by cell (a cell: top-level statements between blank
lines). A cell that raises is reported in one line -- a stub names the
function that is not implemented yet -- and the run goes on; a later cell that
needs a name a failed cell should have made is skipped and says so. The run
ends with what was saved and what could not be produced, and exits 1 if any
cell could not run.

``plt.show()`` saves each open figure (Agg backend). With ``readable=True``
(what ``rl4llm run`` uses) the figures are finished by :mod:`graders.walkthrough.figures`:
descriptive names, titles, labelled axes, the kit's extra figures, every text
in the chosen language; the Russian labels of the seed's tables and printed
lines are translated too. Without it (the seed tests) each figure is saved as
the seed drew it, as ``figure_NN.png``. ``run_summary.json`` in the output
folder records the cells that failed and every figure saved, with its title
and axis labels. The seed's code, the implementation folder, the cells and the texts
are :mod:`graders.walkthrough.seed`'s; this module runs them and reports.
"""

from __future__ import annotations

import argparse
import json
import linecache
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from dataclasses import asdict
from pathlib import Path

from graders import course
from graders.walkthrough import figures, lines as walkthrough_lines, values as walkthrough_values
from graders.language import default_language
from graders.paths import REPO_ROOT
from graders.walkthrough.seed import (DISCOVERY_END, EXPERIMENT_MARKERS, SUMMARY_FILE, TEXT, Cell,  # noqa: F401
                                      CellProblem, CellStatus, ImplError, MissingFigure, RunSummary, SavedFigure,
                                      _missing_given_modules, describe_failure, prepare_seed_code, resolve_impl,
                                      seed_path, split_cells)

# ----------------------------------------------------------------------------- running the seed
class SeedRun:
    """One run of a seed in this interpreter: its cells, its figures and what could not be produced."""

    def __init__(self, module: course.Module, impl_dir: Path, run_dir: Path, out_dir: Path, *, language: str,
                 readable: bool, show_traceback: bool, verbose: bool = True) -> None:
        self.module, self.run_dir, self.out_dir = module, run_dir, out_dir  # run_dir: impl_dir or a staged copy
        self.language, self.readable, self.show_traceback = language, readable, show_traceback
        self.namespace: dict = {"__name__": "__seed__"}
        self.summary = RunSummary(module.folder, language, readable, str(impl_dir))
        self.cell: Cell | None = None
        self.expected: dict[int, figures.SeedFigure] = {}  # a cell's line -> the figure it shows
        self.shown: list = []  # the tables the current cell showed (walkthrough_lines.install)
        self.hidden: list | None = None if verbose else []  # raw values printed, kept out of the output
        self.differing: set[str] = set()  # the functions whose own documented value differed so far

    # -- figures
    def install_show(self) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        def show(*_args, **_kwargs) -> None:
            for number in plt.get_fignums():
                self.save_seed_figure(plt.figure(number))
            plt.close("all")

        plt.show = show

    def save_seed_figure(self, fig) -> None:
        spec = self.expected.get(self.cell.line) if self.cell is not None else None
        if spec is not None and any(saved.slug == spec.slug for saved in self.summary.figures):
            spec = None  # a second figure of the same cell is not the one expected
        if not self.readable:
            self.save(fig, f"figure_{len(self.summary.figures) + 1:02d}", None)
        elif spec is not None and spec.marker in figures.figure_texts(fig):
            figures.finish_seed_figure(fig, spec, self.language, self.namespace)
            self.save(fig, spec.slug, spec.slug)
        else:
            name = f"{self.module.alias}_figure_{len(self.summary.figures) + 1:02d}"
            if spec is not None:
                print(TEXT["unexpected"].in_(self.language, slug=spec.slug, path=self.out_dir / f"{name}.png"))
            self.save(fig, name, None)

    def save(self, fig, name: str, slug: str | None) -> None:
        target = self.out_dir / f"{name}.png"
        fig.savefig(target, dpi=110, bbox_inches="tight")
        self.summary.figures.append(SavedFigure(target.name, slug, **figures.describe(fig)))
        print(TEXT["saved"].in_(self.language, path=target), flush=True)

    def draw_extra_figures(self, cells: list[Cell]) -> None:
        import matplotlib.pyplot as plt

        for extra in figures.EXTRA_FIGURES[self.module.folder]:
            if extra.needs not in self.namespace:
                if any(extra.needs in cell.defines for cell in cells):  # the run was meant to make it
                    self.summary.missing_figures.append(
                        MissingFigure(f"{extra.slug}.png", TEXT["missing_needs"].in_(self.language, name=extra.needs)))
                continue
            try:
                fig = extra.draw(self.namespace[extra.needs], self.language)
                figures.finish(fig, extra.slug, self.language)
            except Exception as error:  # the learner's results may be malformed: say so, keep the rest
                plt.close("all")
                reason = describe_failure(error, "", self.run_dir, self.language)
                self.summary.missing_figures.append(
                    MissingFigure(f"{extra.slug}.png", TEXT["missing_error"].in_(self.language, reason=reason)))
                continue
            self.save(fig, extra.slug, extra.slug)
            plt.close(fig)

    # -- the seed's own display() and print(), in the chosen language (graders.walkthrough.lines)
    def install_translations(self) -> None:
        walkthrough_lines.install(self.namespace, self.language, self.shown, self.hidden)

    # -- the cells
    def run_cells(self, cells: list[Cell], seed_file: str) -> None:
        import matplotlib.pyplot as plt

        unresolved: set[str] = set()  # names a failed or skipped cell should have made
        for cell in cells:
            self.cell = cell
            waiting = sorted((cell.needs & unresolved) - set(self.namespace))
            if waiting:
                reason = ", ".join(f"`{name}`" for name in waiting)
                print(TEXT["cell_skipped"].in_(self.language, line=cell.line, code=cell.headline, names=reason), flush=True)
                self.summary.failed_cells.append(CellProblem(cell.line, cell.headline, CellStatus.SKIPPED, reason))
                unresolved |= cell.defines
                continue
            code = compile("\n" * (cell.line - 1) + cell.source, seed_file, "exec")
            self.shown.clear()
            try:
                exec(code, self.namespace)
                if self.readable:
                    self.check_page_values(cell)
            except Exception as error:
                plt.close("all")  # a half-drawn figure must not join the next cell's
                reason = describe_failure(error, seed_file, self.run_dir, self.language)
                sys.stdout.flush()
                print(TEXT["cell_failed"].in_(self.language, line=cell.line, code=cell.headline, reason=reason),
                      flush=True)
                if self.show_traceback:
                    # from the seed's frame on: the runner's own exec() frame is noise
                    traceback.print_exception(type(error), error, error.__traceback__.tb_next, file=sys.stdout)
                self.summary.failed_cells.append(CellProblem(cell.line, cell.headline, CellStatus.FAILED, reason))
                unresolved |= cell.defines
        self.cell = None
        self.summary.cells = len(cells)
        saved = {figure.slug for figure in self.summary.figures}
        not_run = {problem.line for problem in self.summary.failed_cells}
        for line, spec in self.expected.items():
            if spec.slug not in saved and line in not_run:
                self.summary.missing_figures.append(
                    MissingFigure(f"{spec.slug}.png", TEXT["missing_cell"].in_(self.language, line=line)))

    def check_page_values(self, cell: Cell) -> None:
        """Say whether the values this cell computed match the module page (graders.walkthrough.values)."""
        for record in walkthrough_values.check_cell(self.module.folder, cell.source, self.namespace, self.shown,
                                                    self.language, self.differing):
            print(record.pop("line"), flush=True)
            self.summary.page_values.append(record)

    def report(self) -> None:
        """Print what was saved and what could not be produced; write ``run_summary.json``."""
        summary, language = self.summary, self.language
        fields = {"cells": summary.cells, "figures": len(summary.figures), "out": self.out_dir}
        if summary.failed_cells:
            problems = len(summary.failed_cells)
            print("\n" + TEXT["summary_bad"].in_(language, ran=summary.cells - problems, failed=summary.failed,
                              skipped=problems - summary.failed, **fields))
        else:
            print("\n" + TEXT["summary_ok"].in_(language, **fields))
        for figure in summary.figures:
            print(TEXT["figure_line"].in_(language, file=figure.file, title=figure.title))
        summary.hidden_dumps = len(self.hidden or [])
        if summary.hidden_dumps:
            print(TEXT["dumps_hidden"].in_(language, count=summary.hidden_dumps))
        if summary.differing:
            print(TEXT["values_differ"].in_(language, count=len(summary.differing), first=summary.differing[0]["blame"]))
        if summary.missing_figures:
            print(TEXT["missing_header"].in_(language, count=len(summary.missing_figures)))
            for missing in summary.missing_figures:
                print(TEXT["missing_line"].in_(language, file=missing.file, reason=missing.reason))
        if summary.failed and not self.show_traceback:
            print(TEXT["traceback_hint"].in_(language))
        (self.out_dir / SUMMARY_FILE).write_text(json.dumps(asdict(summary), ensure_ascii=False, indent=2),
                                                 encoding="utf-8")


def _forget_previous_run(out_dir: Path) -> None:
    """Delete the figures and summary of a previous run in ``out_dir``, so the folder shows this run's only."""
    try:
        previous = json.loads((out_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for item in previous.get("figures", []):
        name = Path(str(item.get("file", ""))).name
        if name.endswith(".png"):
            (out_dir / name).unlink(missing_ok=True)
    (out_dir / SUMMARY_FILE).unlink(missing_ok=True)


def execute_seed(module: str, impl_dir: Path, out_dir: Path, *, profile: str | None = None,
                 stop_before: str | None = None, readable: bool = False, language: str | None = None,
                 show_traceback: bool = False, verbose: bool = True) -> int:
    """Execute a seed in THIS interpreter (the subprocess entry point); 0 when every cell ran and every documented
    value matched the module page, else 1. Without ``verbose`` printed raw values (configs, token ids) are hidden."""
    module = course.module(module)
    language = language or default_language()
    impl_dir = resolve_impl(module, impl_dir, language)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    _forget_previous_run(out_dir)
    with tempfile.TemporaryDirectory(prefix="rl4llm-run-") as staging:
        kit, given = _missing_given_modules(module, impl_dir)
        if given:  # a folder of learner files alone: run a copy of it next to the kit's given modules
            print(TEXT["given_from_kit"].in_(language, names=", ".join(given), impl=impl_dir, kit=kit))
            for path in [impl_dir / f"{stem}.py" for stem in module.files] + [kit / name for name in given]:
                shutil.copy2(path, staging)
            run_dir = Path(staging)
        else:
            run_dir = impl_dir
        code = prepare_seed_code(seed_path(module.folder).read_text(encoding="utf-8"), run_dir,
                                 profile=profile, stop_before=stop_before)
        seed_file = f"<seed {module.folder}>"
        linecache.cache[seed_file] = (len(code), None, code.splitlines(keepends=True), seed_file)
        cells = split_cells(code)
        run = SeedRun(module, impl_dir, run_dir, out_dir, language=language, readable=readable,
                      show_traceback=show_traceback, verbose=verbose)
        run.install_show()
        if readable:
            showing = [cell.line for cell in cells if "plt.show()" in cell.source]
            run.expected = dict(zip(showing, figures.SEED_FIGURES[module.folder]))
            run.install_translations()
        import pandas as pd

        pd.set_option("display.width", 160)
        pd.set_option("display.max_columns", 20)
        previous = Path.cwd()
        os.chdir(out_dir)  # anything the seed writes lands in the output folder
        try:
            run.run_cells(cells, seed_file)
            if readable:
                run.draw_extra_figures(cells)
        finally:
            os.chdir(previous)
        run.report()
    return 1 if run.summary.failed or run.summary.differing else 0


def run_seed_subprocess(module: str, impl_dir: Path | None = None, out_dir: Path = Path("rl4llm-out"),
                        *, profile: str | None = None, stop_before: str | None = None,
                        capture: bool = False, timeout: float | None = None, readable: bool = False,
                        language: str | None = None, show_traceback: bool = False,
                        verbose: bool = True) -> subprocess.CompletedProcess:
    """Run a seed in a fresh interpreter (the same kit as this one); return the completed process.

    ``impl_dir``: see :func:`resolve_impl` (``None``: the kit's ``solutions/``, else its ``starter/``).
    """
    module = course.module(module)
    impl_dir = Path(impl_dir).resolve() if impl_dir is not None else resolve_impl(module, None)
    command = [sys.executable, "-m", "graders.walkthrough.run", module.folder, "--impl", str(impl_dir),
               "--out", str(Path(out_dir).resolve())]
    if profile is not None:
        command += ["--profile", profile]
    if stop_before is not None:
        command += ["--stop-before", stop_before]
    if readable:
        command += ["--readable"]
    if language is not None:
        command += ["--lang", language]
    if show_traceback:
        command += ["--traceback"]
    if not verbose:
        command += ["--quiet"]
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
    # cwd: the folder holding this kit's ``graders``, so the child imports this kit, whatever the caller's cwd
    return subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=capture, text=True,
                          encoding="utf-8" if capture else None, timeout=timeout)


def run_notebook(module, impl: Path | str | None = None, out: Path | str | None = None, *, profile: str = "smoke",
                 reference_only: bool = False, language: str | None = None, show_traceback: bool = False,
                 verbose: bool = False) -> int:
    """``rl4llm run``: the seed of ``module`` against ``impl`` with readable figures; the exit status."""
    module = course.module(module)
    language = language or default_language()
    try:
        impl_dir = resolve_impl(module, impl, language)
    except ImplError as error:
        print(f"rl4llm run: {error}", file=sys.stderr)
        return 2
    out_dir = Path(out) if out else Path("rl4llm-out") / module.alias
    print(TEXT["start"].in_(language, module=module.alias, impl=impl_dir, profile=profile, out=out_dir), flush=True)
    stop = EXPERIMENT_MARKERS[module.folder] if reference_only else None
    completed = run_seed_subprocess(module, impl_dir, out_dir, profile=profile, stop_before=stop, readable=True,
                                    language=language, show_traceback=show_traceback, verbose=verbose)
    try:
        summary = json.loads((out_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = None
    if summary is None:
        print(TEXT["crashed"].in_(language, module=module.alias, code=completed.returncode), file=sys.stderr)
        return completed.returncode or 1
    if completed.returncode == 0 and not summary["missing_figures"]:
        print(TEXT["done"].in_(language, figures=len(summary["figures"]), out=out_dir))
        return 0
    failed = sum(item["status"] == "failed" for item in summary["failed_cells"])
    differ = sum(not item["matches"] for item in summary["page_values"])
    code = completed.returncode or 1
    print(TEXT["failed"].in_(language, module=module.alias, failed=failed, missing=len(summary["missing_figures"]),
              differ=differ, code=code), file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.walkthrough.run")
    parser.add_argument("module", type=course.module, help="8, 9, module_08 or module_09")
    parser.add_argument("--impl", type=Path, required=True, help="the module folder, or a folder holding it")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--stop-before", default=None)
    parser.add_argument("--readable", action="store_true", help="finish the figures (rl4llm run)")
    parser.add_argument("--lang", choices=course.LANGUAGES, default=None)
    parser.add_argument("--traceback", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="hide printed raw values (configs, token ids)")
    args = parser.parse_args(argv)
    try:
        return execute_seed(args.module.folder, args.impl, args.out, profile=args.profile,
                            stop_before=args.stop_before, readable=args.readable, language=args.lang,
                            show_traceback=args.traceback, verbose=not args.quiet)
    except ImplError as error:
        print(f"python -m graders.walkthrough.run: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
