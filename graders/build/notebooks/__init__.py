"""The nbgrader source notebooks: ``solutions/`` -> ``assignments/source/<assignment>/<file stem>.ipynb``.

One assignment per module and language of the course registry
(:mod:`graders.course`): ``module_09`` in English, ``module_09_ru`` in
Russian, ... -- each with one notebook per learner file, so a notebook's
namespace is exactly one learner module, as in ``starter/``. The languages'
notebooks have identical code cells; only the markdown differs
(:mod:`.texts`).

A notebook reads top to bottom: an introduction, then the file's cells
(:mod:`.cells`) -- given code read-only, the helper cell of the visible tests
(:mod:`.helper`) right after the file's imports, and per exercise a markdown
cell with its formula and docstring, its solution cell (``nbgrader
generate_assignment`` replaces the fenced region with ``# YOUR CODE HERE`` /
``raise NotImplementedError()``) and an autograded test cell worth the spec's
points (:mod:`.checks`). The module's given modules that its files import
(:func:`graders.build.stubs.given_files`) are written beside the notebooks,
so the release ships them too. Generation is deterministic (:mod:`.ipynb`).
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from graders import course
from graders.build.notebooks.cells import Segment, dependencies, split_source
from graders.build.notebooks.checks import graded_cell, visible_checks
from graders.build.notebooks.helper import helper_names, helper_source
from graders.build.notebooks.ipynb import Notebook
from graders.build.notebooks.latex import display_math
from graders.build.notebooks.texts import (
    EXPERIMENT_CALL, EXPERIMENT_NEEDS, FILE_TEXT, HOW_TO, MODULE_TEXT, TEXT, code_list, fenced, points_text,
)
from graders.build.stubs import given_copy, given_files
from graders.checks import Harness, spec_for
from graders.engine.judging.kit import DEFAULT_KIT
from graders.loader import parse
from graders.paths import ASSIGNMENTS_DIR, SOLUTIONS_DIR, STARTER_DIR
from graders.text import table_in

SOURCE_DIR = ASSIGNMENTS_DIR / "source"


def assignment_name(folder: str, language: str) -> str:
    """``module_09`` (English) or ``module_09_ru``."""
    return folder if language == "en" else f"{folder}_{language}"


def notebook_path(folder: str, stem: str, language: str) -> Path:
    return SOURCE_DIR / assignment_name(folder, language) / f"{stem}.ipynb"


def _intro(module: course.Module, stem: str, language: str, docstring: str, count: int, total: float) -> str:
    text = table_in(TEXT, language)
    title, coverage = table_in(MODULE_TEXT[module.number], language)
    coverage = coverage.format(exercises=code_list([e.split(".", 1)[1] for e in course.exercises([module.number])],
                                                   language))
    intro = [f"# {title} · `{stem}`", "", coverage, "",
             text["notebook"].format(stem=stem, blurb=FILE_TEXT[stem].in_(language), count=count,
                                     points=points_text(total, language))]
    if stem in EXPERIMENT_CALL:
        intro += ["", text["experiment"].format(call=EXPERIMENT_CALL[stem]) + (EXPERIMENT_NEEDS[stem].in_(language) if stem in EXPERIMENT_NEEDS else "")]
    intro += ["", HOW_TO.in_(language).format(folder=module.folder)]
    if docstring:
        intro += ["", text["file_doc"], "", fenced(docstring)]
    return "\n".join(intro)


def _about(segment: Segment, index: int, count: int, points: float, deps: list[str], trusted: list[str],
           language: str, exercise_id: str = "") -> str:
    """The markdown above an exercise: its formula (typeset, then the docstring's line), the rest of its
    docstring, what it calls."""
    text = table_in(TEXT, language)
    doc = inspect.cleandoc(ast.get_docstring(segment.node, clean=False) or "")
    first, _, rest = doc.partition("\n")
    parts = [text["exercise"].format(index=index, count=count, name=segment.name,
                                     points=points_text(points, language)),
             "", text["formula"], "", *([display_math(exercise_id), ""] if display_math(exercise_id) else []),
             fenced(first.strip())]
    if rest.strip():
        parts += ["", text["docstring"], "", fenced(rest.strip("\n"))]
    if trusted:
        one = len(trusted) == 1
        parts += ["", text["dependent"].format(name=segment.name, deps=code_list(trusted, language),
                                               them=text["it"] if one else text["them"],
                                               them_own=text["its_own"] if one else text["their_own"])]
    if set(deps) - set(trusted):
        parts += ["", text["builds_on"].format(name=segment.name,
                                               deps=code_list([d for d in deps if d not in trusted], language))]
    return "\n".join(parts)


def build_notebook(folder: str, stem: str, language: str) -> str:
    """The source notebook of one learner file in one language (JSON text)."""
    module = course.module(folder)
    path = SOLUTIONS_DIR / folder / f"{stem}.py"
    docstring, segments = split_source(path.read_text(encoding="utf-8"), str(path))
    defined = {s.name for s in segments if s.kind == "solution"}
    given_names = {n.name for s in segments if s.kind == "given" for n in parse(s.text).body
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    clash = (defined | given_names) & helper_names()
    if clash:
        raise ValueError(f"{path} defines {sorted(clash)}, the names of the notebook's test helpers")
    exercises = [s for s in segments if s.kind == "solution" and s.public]
    specs = {s.name: spec_for(f"{stem}.{s.name}") for s in exercises}
    missing = [name for name, spec in specs.items() if spec is None]
    if missing:
        raise ValueError(f"no checks for {stem}: {missing}")
    reference = DEFAULT_KIT.reference_module(stem)
    text = table_in(TEXT, language)

    nb = Notebook()
    nb.markdown("intro", _intro(module, stem, language, docstring, len(exercises),
                                sum(spec.points for spec in specs.values())))

    def helpers() -> None:
        nb.markdown("helpers-note", text["helpers"])
        nb.code("helpers", helper_source(language).rstrip("\n"))

    given_count = 0
    if segments[0].kind != "given":
        helpers()
    for segment in segments:
        if segment.kind == "given":
            given_count += 1
            nb.markdown(f"given-{given_count:02d}-note", text["given"])
            nb.code(f"given-{given_count:02d}", segment.text)
            if given_count == 1:  # after the file's imports: ``from __future__`` stays the first statement
                helpers()
        elif not segment.public:
            doc = inspect.cleandoc(ast.get_docstring(segment.node, clean=False) or "")
            nb.markdown(f"about-{segment.name.lstrip('_')}",
                        text["helper_fn"].format(name=segment.name) + "\n\n" + fenced(doc))
            nb.code(segment.name, segment.text, solution=True, locked=False)
        else:
            spec = specs[segment.name]
            deps = dependencies(segment.node, set(specs))
            harness = spec.call.describe()["source"] if isinstance(spec.call, Harness) else ""
            answered = getattr(spec.call, "answers", ())  # answered for it (graders/engine/judging/answers.py)
            trusted = [d for d in deps if d in harness or d in answered]
            nb.markdown(f"about-{segment.name}", _about(segment, exercises.index(segment) + 1, len(exercises),
                                                        spec.points, deps, trusted, language,
                                                        f"{stem}.{segment.name}"))
            nb.code(segment.name, segment.text, solution=True, locked=False)
            checks = visible_checks(f"{stem}.{segment.name}", getattr(reference, segment.name), language)
            rows = {d: visible_checks(f"{stem}.{d}", getattr(reference, d), language) for d in trusted}
            nb.code(f"test-{segment.name}", graded_cell(f"{stem}.{segment.name}", segment.name, spec.points, checks,
                                                        rows, language), grade=True, points=spec.points)
    return nb.text()


def _imports(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports (function-local imports included)."""
    found: set[str] = set()
    for node in ast.walk(parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def given_outputs(solutions_dir: Path = SOLUTIONS_DIR, source_dir: Path = SOURCE_DIR) -> dict[Path, str]:
    """Each given module that a file of its module imports, beside that module's notebooks in every language."""
    outputs: dict[Path, str] = {}
    given = given_files(solutions_dir)
    for module in course.MODULES:
        folder = solutions_dir / module.folder
        mine = [path for path in given if path.parent == folder]
        imported = set().union(*(_imports(path) for path in folder.glob("*.py")))
        for path in mine:
            if path.stem not in imported:
                continue
            text = given_copy(path, solutions_dir)
            for language in course.LANGUAGES:
                outputs[source_dir / assignment_name(module.folder, language) / path.name] = text
    return outputs


LANGUAGE_LINK = re.compile(r"^\*\[[^\]]+\]\(README(\.\w+)?\.md\)\*\s*$")  # *[Русская версия](README.ru.md)*


def page_outputs(starter_dir: Path = STARTER_DIR, source_dir: Path = SOURCE_DIR) -> dict[Path, str]:
    """The module's page (its equations and conventions) as ``README.md`` beside its notebooks, in the
    assignment's language (the English page where a translation is missing), so the release ships it."""
    outputs: dict[Path, str] = {}
    for module in course.MODULES:
        for language in course.LANGUAGES:
            pages = [starter_dir / module.folder / name for name in (f"README.{language}.md", "README.md")]
            page = next((path for path in pages if path.is_file()), None)
            if page is not None:  # alone in its assignment: without the link to the other language's page
                lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
                kept = "".join(line for line in lines if not LANGUAGE_LINK.match(line))
                outputs[source_dir / assignment_name(module.folder, language) / "README.md"] = \
                    re.sub(r"\n{3,}", "\n\n", kept)
    return outputs


def build_outputs() -> dict[Path, str]:
    """Every source notebook (and given module beside them) and its expected content (absolute path -> text)."""
    outputs: dict[Path, str] = {}
    for learner_file in course.learner_files():
        for language in course.LANGUAGES:
            outputs[notebook_path(learner_file.folder, learner_file.stem, language)] = \
                build_notebook(learner_file.folder, learner_file.stem, language)
    outputs.update(given_outputs())
    outputs.update(page_outputs())
    return outputs
