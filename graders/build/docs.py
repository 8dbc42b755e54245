"""The generated blocks of the kit's Markdown: exercise lists, points and totals from the registry.

A Markdown file of the kit (``README.md``, ``docs/*.md``, ``starter/module_0X/README*.md``)
holds any number of blocks between two marker lines::

    <!-- generated:NAME:begin -->
    ... written by `rl4llm build` ...
    <!-- generated:NAME:end -->

``rl4llm build`` rewrites what lies between the markers with ``BLOCKS[NAME](language)``
(``language``: ``ru`` in a ``*.ru.md`` file, else ``en``); ``rl4llm build --check``
names each file and block that is stale. Everything else in the file is written
by hand. A new block is one entry of ``BLOCKS``: a function of the language
returning Markdown, e.g. ``BLOCKS["settings"] = lambda language: settings.markdown_table()``.

Blocks here:

- ``course-totals``: exercises and points per learner file and for the course;
- ``<folder>-exercises`` (``module_08-exercises``, ...): a module's exercises, each with its
  file, points and formula (the ``LATEX`` table beside its checks), and the module's totals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from graders import course, settings
from graders import checks
from graders.paths import REPO_ROOT, STARTER_DIR
from graders.build.notebooks.texts import exercises_text, points_text
from graders.text import Text

BEGIN = "<!-- generated:{name}:begin -->"
END = "<!-- generated:{name}:end -->"
_BLOCK = re.compile(r"^<!-- generated:(?P<name>[\w.-]+):begin -->\n(?P<body>.*?)^<!-- generated:(?P=name):end -->$",
                    re.M | re.S)
_OPENING = re.compile(r"^<!-- generated:([\w.-]+):(begin|end) -->$", re.M)

WORDS = {
    "exercises": Text("Exercises", "Упражнения"),
    "module_total": Text("In all: {exercises}, {points}.", "Всего: {exercises}, {points}."),
    "course_total": Text("Exercises: every public fenced function, with id `<file stem>.<function>` — {files}: "
                         "{exercises}, {points}.",
                         "Упражнения: каждая публичная функция с ограждением, id `<файл>.<функция>` — {files}: "
                         "{exercises}, {points}."),
    "in_file": Text("{count} in `{stem}`", "{count} в `{stem}`"),
    "row": Text("- `{function}` (`{file}`, {points}): {formula}", "- `{function}` (`{file}`, {points}): {formula}"),
    "catalogue_total": Text("The catalogue holds {entries} entries: at least {fewest} and at most {most} per exercise.",
                            "В каталоге {entries} записей: от {fewest} до {most} на упражнение."),
    "generated": Text("*This list is generated from the course registry by `rl4llm build`.*",
                      "*Этот список строит `rl4llm build` по реестру курса.*"),
}


def _exercises_of(stem: str) -> list[str]:
    return [e for e in course.exercises([course.module_of(stem).number]) if e.split(".", 1)[0] == stem]


def _points(exercise_ids: list[str]) -> float:
    return sum(checks.points(e) or 0.0 for e in exercise_ids)


def course_totals(language: str) -> str:
    """One line: exercises per learner file (the training files' names listed) and the course's totals."""
    files = []
    for learner_file in course.learner_files():
        ids = _exercises_of(learner_file.stem)
        part = WORDS["in_file"].in_(language, count=len(ids), stem=learner_file.stem)
        if len(ids) <= 3:
            part += " (" + ", ".join(f"`{e.split('.', 1)[1]}`" for e in ids) + ")"
        files.append(part)
    ids = course.exercises()
    return WORDS["course_total"].in_(language, files=", ".join(files), exercises=exercises_text(len(ids), language),
                                     points=points_text(_points(ids), language)) + "\n"


def catalogue_totals(language: str) -> str:
    """One line: how many catalogued mistakes there are, and the fewest and most of one exercise."""
    from graders.engine.judging.misconceptions import load_misconceptions

    counts = [len(load_misconceptions(exercise_id)) for exercise_id in course.exercises()]
    return WORDS["catalogue_total"].in_(language, entries=sum(counts), fewest=min(counts), most=max(counts)) + "\n"


def module_exercises(folder: str) -> Callable[[str], str]:
    """The block of a module page: its exercises (function, file, points, formula) and its totals."""
    def block(language: str) -> str:
        from graders.build.notebooks.latex import formula

        module = course.module(folder)
        ids = course.exercises([module.number])
        lines = [f"## {WORDS['exercises'].in_(language)}", ""]
        for exercise_id in ids:
            stem, function = exercise_id.split(".", 1)
            typeset = formula(exercise_id)
            lines.append(WORDS["row"].in_(language, function=function, file=f"{stem}.py",
                                          points=points_text(checks.points(exercise_id) or 0.0, language),
                                          formula=f"${typeset}$" if typeset else "—"))
        lines += ["", WORDS["module_total"].in_(language, exercises=exercises_text(len(ids), language),
                                                points=points_text(_points(ids), language)),
                  "", WORDS["generated"].in_(language)]
        return "\n".join(lines) + "\n"
    return block


#: name -> function(language) -> Markdown; one line adds a block.
BLOCKS: dict[str, Callable[[str], str]] = {
    "course-totals": course_totals,
    "catalogue-totals": catalogue_totals,  # docs/instructors.md
    **{f"{m.folder}-exercises": module_exercises(m.folder) for m in course.MODULES},
    "settings": lambda language: settings.markdown_table(),  # docs/settings.md
}


class BlockError(ValueError):
    """A Markdown file's markers are unbalanced or name a block the kit does not have."""


def markdown_files(root: Path = REPO_ROOT) -> list[Path]:
    """The Markdown files that may hold generated blocks."""
    found = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    for folder in course.FOLDERS:
        found += sorted((root / STARTER_DIR.relative_to(REPO_ROOT) / folder).glob("README*.md"))
    return [path for path in found if path.is_file()]


def language_of(path: Path) -> str:
    """``ru`` for ``README.ru.md`` (a language of the course before ``.md``), else ``en``."""
    parts = path.name.split(".")
    return parts[-2] if len(parts) >= 3 and parts[-2] in course.LANGUAGES else "en"


def blocks_in(text: str) -> list[str]:
    """The names of the blocks a text holds, in order; ``BlockError`` on an unbalanced marker."""
    names = [m.group("name") for m in _BLOCK.finditer(text)]
    if len(_OPENING.findall(text)) != 2 * len(names):
        raise BlockError("a generated block's begin and end markers do not pair up")
    return names


def rendered(text: str, language: str, where: str = "") -> str:
    """``text`` with every generated block rewritten."""
    blocks_in(text)

    def body(match: re.Match) -> str:
        name = match.group("name")
        if name not in BLOCKS:
            raise BlockError(f"{where}: unknown generated block {name!r}; the kit has {sorted(BLOCKS)}")
        return f"{BEGIN.format(name=name)}\n{BLOCKS[name](language)}{END.format(name=name)}"
    return _BLOCK.sub(body, text)


def stale_blocks(path: Path) -> list[str]:
    """The names of the blocks of ``path`` whose text differs from a fresh build."""
    text = path.read_text(encoding="utf-8")
    language = language_of(path)
    stale = []
    for match in _BLOCK.finditer(text):
        name = match.group("name")
        if name not in BLOCKS or match.group("body") != BLOCKS[name](language):
            stale.append(name)
    return stale


def build_outputs(root: Path = REPO_ROOT) -> dict[Path, str]:
    """Every Markdown file holding a generated block, with its blocks rewritten."""
    outputs = {}
    for path in markdown_files(root):
        text = path.read_text(encoding="utf-8")
        try:
            has_blocks = bool(blocks_in(text))
        except BlockError as error:
            raise BlockError(f"{path.relative_to(root)}: {error}") from None
        if has_blocks:
            outputs[path] = rendered(text, language_of(path), str(path.relative_to(root)))
    return outputs
