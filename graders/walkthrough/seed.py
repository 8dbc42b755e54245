"""The seed notebook as a program, for ``rl4llm run`` (:mod:`graders.walkthrough.run`), and the run's texts.

Its job: the seed's code prepared to run (:func:`prepare_seed_code`: the title
commented out, the folder discovery replaced by the given folder, the profile
set), the learner's implementation folder found (:func:`resolve_impl`), the
code split into cells (:func:`split_cells`), a failure told in one line
(:func:`describe_failure`), and what the run says, in every language
(:data:`TEXT`, each a :class:`graders.text.Text`), and what a run produced
(:class:`RunSummary`, written as ``run_summary.json``).
"""

from __future__ import annotations

import ast
import re
import traceback
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from graders import course
from graders.paths import SEEDS_DIR, SOLUTIONS_DIR, STARTER_DIR
from graders.text import Text

DISCOVERY_START = "_candidates = "
DISCOVERY_END = "sys.path.insert(0, str(MODULE_DIR))"
PROFILE_LINE = 'PROFILE = "smoke"'
# Where each seed's toy experiment starts: code before it needs only the reference file.
EXPERIMENT_MARKERS = {
    "module_09": "experiment = run_toy_grpo_experiment(",
    "module_08": "experiment = run_toy_dpo_experiment(",
}
SUMMARY_FILE = "run_summary.json"


# ----------------------------------------------------------------------------- what a run produced
class CellStatus(str, Enum):
    FAILED = "failed"  # it raised
    SKIPPED = "skipped"  # it needs a name that a failed cell should have made


@dataclass(frozen=True)
class CellProblem:
    line: int
    code: str  # the cell's first line
    status: CellStatus
    reason: str  # one line, in the run's language


@dataclass(frozen=True)
class SavedFigure:
    file: str  # module09_importance_ratios.png
    slug: str | None  # its entry in graders.walkthrough.figures (None: a figure the kit did not expect)
    title: str
    panels: list[dict]  # per axes: title, xlabel, ylabel, legend (graders.walkthrough.figures.describe)


@dataclass(frozen=True)
class MissingFigure:
    file: str
    reason: str


@dataclass
class RunSummary:
    """What ``run_summary.json`` records, and what the end of a run prints."""

    module: str
    language: str
    readable: bool
    impl: str  # the folder the run was asked for
    cells: int = 0
    failed_cells: list[CellProblem] = field(default_factory=list)
    figures: list[SavedFigure] = field(default_factory=list)
    missing_figures: list[MissingFigure] = field(default_factory=list)
    page_values: list[dict] = field(default_factory=list)  # graders.walkthrough.values.check_cell's records
    hidden_dumps: int = 0  # printed raw values (configs, token ids) left out without --verbose

    @property
    def failed(self) -> int:
        return sum(problem.status is CellStatus.FAILED for problem in self.failed_cells)

    @property
    def differing(self) -> list[dict]:
        """The documented values that differ from the module page (a ✗ line each)."""
        return [record for record in self.page_values if not record["matches"]]

TEXT = {
    "start": Text("Running the {module} course notebook against {impl} (profile {profile}); figures go to {out}/",
                  "Запускаю ноутбук курса {module} на файлах из {impl} (профиль {profile}); "
                  "рисунки сохраняются в {out}/"),
    "given_from_kit": Text("{names}: not in {impl}; a copy of your files runs next to the kit's ({kit})",
                           "{names}: нет в {impl}; копия ваших файлов запускается рядом с файлами набора ({kit})"),
    "saved": Text("[figure saved: {path}]", "[рисунок сохранён: {path}]"),
    "unexpected": Text("[this figure is not the one the kit expected here ({slug}); saved as {path} "
                       "as the seed drew it]",
                       "[это не тот рисунок, который набор ожидал здесь ({slug}); сохранён как {path} "
                       "в том виде, в каком его нарисовал ноутбук]"),
    "not_implemented": Text("not implemented yet: {function} -- {hint}",
                            "ещё не реализовано: {function} -- {hint}"),
    "syntax_error": Text("{file}, line {line}: syntax error: {message}",
                         "{file}, строка {line}: синтаксическая ошибка: {message}"),
    "seed_check": Text("a check of the notebook failed: {code}", "не прошла проверка ноутбука: {code}"),
    "error_at": Text("{kind}: {message} (at {where})", "{kind}: {message} (в {where})"),
    "cell_failed": Text("✗ cell at line {line} (`{code}`) could not run: {reason}",
                        "✗ ячейка в строке {line} (`{code}`) не выполнилась: {reason}"),
    "cell_skipped": Text("– cell at line {line} (`{code}`) skipped: it needs {names}, which a cell above could not make",
                         "– ячейка в строке {line} (`{code}`) пропущена: ей нужно {names}, а ячейка выше "
                         "не смогла это получить"),
    "traceback_hint": Text("  (rl4llm run ... --traceback shows Python's full traceback)",
                           "  (rl4llm run ... --traceback покажет полный traceback Python)"),
    "summary_ok": Text("All {cells} cells of the notebook ran. {figures} figure(s) saved in {out}/:",
                       "Все ячейки ноутбука выполнены ({cells}). Сохранено рисунков в {out}/: {figures}"),
    "summary_bad": Text("{ran} of {cells} cells of the notebook ran; {failed} could not run and {skipped} were skipped "
                        "(✗ and – above). {figures} figure(s) saved in {out}/:",
                        "Ячеек ноутбука выполнено: {ran} из {cells}; не выполнилось: {failed}, пропущено: {skipped} "
                        "(✗ и – выше). Сохранено рисунков в {out}/: {figures}"),
    "values_differ": Text("✗ {count} value(s) differ from the module page (the ✗ lines above); start with `{first}`.",
                          "✗ значений, расходящихся со страницей модуля: {count} (строки ✗ выше); начните с "
                          "`{first}`."),
    "dumps_hidden": Text("({count} printed Python value(s) -- configs, token ids -- hidden; --verbose shows them)",
                         "(скрыто напечатанных значений -- конфигураций, номеров токенов: {count}; флаг --verbose "
                         "покажет их)"),
    "figure_line": Text("  {file}  {title}", "  {file}  {title}"),
    "missing_header": Text("Figures not produced ({count}):", "Не построены рисунки ({count}):"),
    "missing_line": Text("  {file}  ({reason})", "  {file}  ({reason})"),
    "missing_cell": Text("its cell at line {line} did not run", "не выполнилась его ячейка в строке {line}"),
    "missing_needs": Text("needs `{name}`, which the notebook did not make",
                          "нужна переменная `{name}`, которую ноутбук не получил"),
    "missing_error": Text("drawing it failed: {reason}", "не удалось построить: {reason}"),
    "done": Text("done: {figures} figure(s) in {out}/", "готово: рисунков в {out}/: {figures}"),
    "failed": Text("rl4llm run {module}: {failed} cell(s) could not run, {missing} figure(s) not produced, "
                   "{differ} value(s) differ from the module page (listed above); exit {code}.",
                   "rl4llm run {module}: не выполнилось ячеек: {failed}, не построено рисунков: {missing}, "
                   "расходится со страницей модуля значений: {differ} (список выше); код выхода {code}."),
    "crashed": Text("rl4llm run {module}: the notebook stopped before its end (exit {code}).",
                    "rl4llm run {module}: ноутбук остановился, не дойдя до конца (код выхода {code})."),
    "no_default": Text("this install has neither solutions/ nor starter/: pass --impl DIR, the folder that holds "
                       "your {files}",
                       "в этой установке нет ни solutions/, ни starter/: укажите --impl DIR, папку с вашими "
                       "файлами {files}"),
    "impl_missing": Text("--impl {path}: there is no such folder", "--impl {path}: такой папки нет"),
    "impl_layout": Text("--impl {path}: expected {files} either in {path}/{folder}/ (a folder laid out like "
                        "starter/) or directly in {path}/ (the module folder itself); found {found}",
                        "--impl {path}: ожидались файлы {files} либо в {path}/{folder}/ (папка, устроенная как "
                        "starter/), либо прямо в {path}/ (сама папка модуля); найдено: {found}"),
    "found_none": Text("none of them", "ни одного"),
}


def seed_path(module: str) -> Path:
    """The bundled seed notebook of ``module`` (any spelling :func:`graders.course.module` reads)."""
    return SEEDS_DIR / f"{course.module(module).folder}_seed.txt"


def prepare_seed_code(text: str, module_dir: Path, *, profile: str | None = None,
                      stop_before: str | None = None) -> str:
    """Return the runnable code of a seed notebook pointed at ``module_dir``; line N is line N of the seed."""
    lines = text.splitlines()
    body = ["# " + lines[0]] + lines[1:]  # line 0 is the notebook's title
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
    replacement += ["# (folder discovery replaced by rl4llm run)"] * (end + 1 - start - len(replacement))
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


# ----------------------------------------------------------------------------- the implementation folder
class ImplError(ValueError):
    """``--impl`` names no folder holding the module's learner files; the message says what was expected."""


def resolve_impl(module, path: Path | str | None, language: str = "en") -> Path:
    """The module folder holding ``module``'s learner files.

    ``path`` may be a folder laid out like ``starter/`` (``path/module_09/module_9_reference.py``), the
    module folder itself (``path/module_9_reference.py``) or one learner file in it. ``None``: the kit's
    ``solutions/`` where this install has it (the instructor's kit), else its ``starter/`` (a learner's).
    """
    module = course.module(module)
    names = ", ".join(f"{stem}.py" for stem in module.files)
    if path is None:
        root = next((root for root in (SOLUTIONS_DIR, STARTER_DIR) if (root / module.folder).is_dir()), None)
        if root is None:
            raise ImplError(TEXT["no_default"].in_(language, files=names))
        path = root
    path = Path(path)
    if path.is_file() and path.stem in module.files:
        path = path.parent
    if not path.is_dir():
        raise ImplError(TEXT["impl_missing"].in_(language, path=path))
    for candidate in (path / module.folder, path):
        if all((candidate / f"{stem}.py").is_file() for stem in module.files):
            return candidate.resolve()
    found = [str(file.relative_to(path)) for stem in module.files
             for file in (path / module.folder / f"{stem}.py", path / f"{stem}.py") if file.is_file()]
    raise ImplError(TEXT["impl_layout"].in_(language, path=path, files=names, folder=module.folder,
                        found=", ".join(found) or TEXT["found_none"].in_(language)))


def _kit_module_dir(module: course.Module) -> Path | None:
    return next((root / module.folder for root in (SOLUTIONS_DIR, STARTER_DIR) if (root / module.folder).is_dir()),
                None)


def _missing_given_modules(module: course.Module, impl_dir: Path) -> tuple[Path | None, list[str]]:
    """The kit's module folder and the given modules (``grpo_toy.py``, ...) that ``impl_dir`` lacks."""
    kit = _kit_module_dir(module)
    if kit is None or kit.resolve() == impl_dir.resolve():
        return kit, []
    given = [path.name for path in sorted(kit.glob("*.py")) if path.stem not in module.files
             and not path.name.startswith(("_", "test_"))]
    return kit, [name for name in given if not (impl_dir / name).is_file()]


# ----------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class Cell:
    """Top-level statements of the seed between blank lines: what runs, fails or is skipped as one."""

    line: int  # the first line, a line of the seed file
    source: str  # lines ``line``.. of the code
    defines: frozenset[str]  # names it binds
    needs: frozenset[str]  # names it reads and does not bind itself

    @property
    def headline(self) -> str:
        first = self.source.strip().splitlines()[0].strip()
        return first if len(first) <= 60 else first[:57] + "..."


def split_cells(code: str) -> list[Cell]:
    """The cells of ``code``: a blank line between two top-level statements starts a new cell."""
    lines = code.splitlines()
    groups: list[list[ast.stmt]] = []
    previous_end = 0
    for node in ast.parse(code).body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if not groups or any(not line.strip() for line in lines[previous_end:start - 1]):
            groups.append([])
        groups[-1].append(node)
        previous_end = node.end_lineno
    cells = []
    for nodes in groups:
        first = min([nodes[0].lineno] + [d.lineno for d in getattr(nodes[0], "decorator_list", [])])
        defines, reads = set(), set()
        for sub in (sub for node in nodes for sub in ast.walk(node)):
            if isinstance(sub, ast.Name):
                (reads if isinstance(sub.ctx, ast.Load) else defines).add(sub.id)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                defines |= {(alias.asname or alias.name).split(".")[0] for alias in sub.names}
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defines.add(sub.name)
            elif isinstance(sub, ast.arg):
                defines.add(sub.arg)
        cells.append(Cell(first, "\n".join(lines[first - 1:nodes[-1].end_lineno]), frozenset(defines),
                          frozenset(reads - defines)))
    return cells


# ----------------------------------------------------------------------------- what went wrong, in one line
STUB = re.compile(r"^(?P<function>[\w.]+) is not implemented yet(?: -- (?P<hint>.*))?$", re.S)


def describe_failure(error: BaseException, seed_file: str, impl_dir: Path, language: str) -> str:
    """One line for a cell's exception: the stub not implemented, the learner's line that raised, the seed's check."""
    frames = traceback.extract_tb(error.__traceback__)
    if isinstance(error, NotImplementedError):
        match = STUB.match(str(error))
        if match:
            return TEXT["not_implemented"].in_(language, function=match["function"], hint=match["hint"] or "")
        last = frames[-1]
        return TEXT["not_implemented"].in_(language, function=f"{Path(last.filename).stem}.{last.name}",
                   hint=str(error) or "NotImplementedError")
    if isinstance(error, SyntaxError) and error.filename:
        return TEXT["syntax_error"].in_(language, file=Path(error.filename).name, line=error.lineno, message=error.msg)
    mine = [frame for frame in frames if Path(frame.filename).parent == impl_dir]
    if isinstance(error, AssertionError) and frames and frames[-1].filename == seed_file:
        return TEXT["seed_check"].in_(language, code=frames[-1].line)
    frame = (mine or frames)[-1] if frames else None
    where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}: {frame.line}" if frame else "?"
    if frame is not None and frame.filename == seed_file:
        where = f"{seed_file}:{frame.lineno}: {frame.line}"
    return TEXT["error_at"].in_(language, kind=type(error).__name__, message=str(error) or "-", where=where)
