"""The learner bundle: what a learner receives, built by ``rl4llm bundle --out DIR``.

    DIR/
      README.md, README.ru.md     how to install, test, run the notebook and submit (EN, RU)
      pyproject.toml              ``pip install -e .``: the dependencies and the ``rl4llm run`` command
      starter/                    the kit's starter/ as is: stubs, given modules, public tests, the
                                  "likely mistake" tables, the module pages, the learner's conftest
      graders/                    only what ``rl4llm run`` needs: the walkthrough, the figures, the
                                  course registry, the language setting and the seed notebooks

Never in it: ``solutions/``, the hidden checks, the misconception catalogue, the grading engine,
the kit's tests, the nbgrader sources. :func:`hidden_parts_in` lists any that slipped in (the build
refuses to finish then), and ``tests/test_bundle.py`` installs the bundle in a fresh environment
without the kit and uses it as a learner would.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from graders import course
from graders.fences import BEGIN_SOLUTION
from graders.paths import REPO_ROOT, SEEDS_DIR, STARTER_DIR

# The graders modules `rl4llm run` imports (graders.walkthrough and what it imports, transitively).
RUN_MODULES = ("__init__", "course", "fences", "figures", "language", "learner_cli", "loader", "paths",
               "walkthrough")
HIDDEN_NAMES = ("solutions", "checks", "misconceptions", "engine", "build", "tests", "assignments", "capstone")

PYPROJECT = '''[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "rl4llm-learner"
version = "{version}"
description = "RL for LLMs, modules 8 and 9: the learner's exercises, public tests and notebook runner"
requires-python = ">=3.10"
dependencies = ["numpy>=1.24", "torch>=2.2,<3", "pandas>=2.0", "matplotlib>=3.7", "ipython>=8.0",
                "hypothesis>=6.80", "pytest>=7.4", "tqdm>=4.60"]

[project.scripts]
rl4llm = "graders.learner_cli:main"

[tool.setuptools]
packages = ["graders"]

[tool.setuptools.package-data]
graders = ["seeds/*.txt"]

[tool.pytest.ini_options]
testpaths = ["starter"]
'''

README = {
    "en": '''# RL for LLMs, modules 8 and 9: your exercises

[Русская версия](README.ru.md)

You implement the functions in `starter/module_08/` (RLHF and DPO) and
`starter/module_09/` (RLVR and GRPO) that raise `NotImplementedError`. Each
module's page (`starter/module_0X/README.md`) gives the formulas and
conventions; each function's docstring opens with its formula.

## Set up (once)

```bash
python -m venv .venv && . .venv/bin/activate
pip install torch --index-url https://download.pytorch.org/whl/cpu   # a CPU build is enough
pip install -e .
```

## Work

```bash
pytest starter/module_09                                # every public test of module 9
pytest starter/module_09 -k group_relative_advantages   # one function: every test of it
rl4llm run module09 --impl starter/                     # the course notebook on YOUR code: tables + figures
```

A test of a function you have not written yet fails with one line,
`NOT IMPLEMENTED`. When your output is exactly what a known mistake gives, the
failure names it ("likely mistake"). `rl4llm run` writes its figures to
`rl4llm-out/module09/`; a cell that needs a function you have not written yet
is reported and skipped.

Russian messages, hints and figures: `export RL4LLM_LANG=ru` (or a Russian
locale); `rl4llm run ... --lang ru`.

## Hand in

The learner files: {files}. The grader runs hidden checks of the same kinds as
the public tests: green public tests and the docstrings' conventions are what
full marks need.
''',
    "ru": '''# RL для LLM, модули 8 и 9: ваши задания

[English version](README.md)

Вы реализуете функции в `starter/module_08/` (RLHF и DPO) и
`starter/module_09/` (RLVR и GRPO), которые сейчас бросают `NotImplementedError`.
Страница каждого модуля (`starter/module_0X/README.ru.md`) даёт формулы и
соглашения; докстринг каждой функции начинается с её формулы.

## Установка (один раз)

```bash
python -m venv .venv && . .venv/bin/activate
pip install torch --index-url https://download.pytorch.org/whl/cpu   # достаточно сборки для CPU
pip install -e .
```

## Работа

```bash
pytest starter/module_09                                # все открытые тесты модуля 9
pytest starter/module_09 -k group_relative_advantages   # одна функция: все её тесты
rl4llm run module09 --impl starter/                     # ноутбук курса на ВАШЕМ коде: таблицы и графики
```

Тест функции, которую вы ещё не написали, падает с одной строкой
`NOT IMPLEMENTED`. Если ваш результат в точности совпадает с результатом
известной ошибки, отчёт её называет («вероятная ошибка»). `rl4llm run` сохраняет
графики в `rl4llm-out/module09/`; ячейка, которой нужна ещё не написанная
функция, отмечается и пропускается.

Сообщения, подсказки и графики по-русски: `export RL4LLM_LANG=ru` (или русская
локаль); `rl4llm run ... --lang ru`.

## Что сдавать

Файлы с решениями: {files}. Грейдер запускает скрытые проверки тех же видов,
что и открытые тесты: зелёные открытые тесты и соглашения из докстрингов — это
всё, что нужно для полного балла.
''',
}


class BundleError(Exception):
    """The bundle cannot be built as asked (the target is not empty, or a hidden part slipped in)."""


def learner_file_list() -> str:
    return ", ".join(f"`starter/{f.relpath}`" for f in course.learner_files())


def hidden_parts_in(folder: Path) -> list[str]:
    """What of the kit's hidden parts ``folder`` holds: a hidden folder or module name anywhere, or a
    file with a fenced solution (a reference's body between ``### BEGIN SOLUTION`` markers)."""
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part in HIDDEN_NAMES or part.removesuffix(".py") in HIDDEN_NAMES for part in relative.parts):
            found.append(f"{relative.as_posix()} (a hidden part of the kit)")
        elif path.suffix in (".py", ".ipynb", ".json", ".md", ".txt") and path.is_file():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            if any(line.strip() == BEGIN_SOLUTION for line in lines):
                found.append(f"{relative.as_posix()} (holds a fenced solution)")
    return found


def build_bundle(out: Path | str, *, force: bool = False) -> Path:
    """Write the learner bundle into ``out`` (which must be new or empty, or ``force``); return it."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not force:
            raise BundleError(f"{out} is not empty; choose a new folder or pass --force to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
    shutil.copytree(STARTER_DIR, out / "starter", ignore=ignore)
    package = out / "graders"
    package.mkdir()
    for name in RUN_MODULES:
        shutil.copy2(REPO_ROOT / "graders" / f"{name}.py", package / f"{name}.py")
    shutil.copytree(SEEDS_DIR, package / "seeds", ignore=ignore)
    from graders import __version__

    (out / "pyproject.toml").write_text(PYPROJECT.format(version=__version__), encoding="utf-8")
    for language, text in README.items():
        name = "README.md" if language == "en" else f"README.{language}.md"
        (out / name).write_text(text.format(files=learner_file_list()), encoding="utf-8")
    leaked = hidden_parts_in(out)
    if leaked:
        shutil.rmtree(out)
        raise BundleError("the learner bundle would hold hidden parts of the kit: " + "; ".join(leaked))
    return out
