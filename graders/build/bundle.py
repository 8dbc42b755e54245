"""The learner bundle: what a learner receives, built by ``rl4llm bundle --out DIR``.

    DIR/
      README.md, README.ru.md     how to install, test, run the notebook and submit (EN, RU)
      pyproject.toml              ``pip install -e .``: the dependencies and the ``rl4llm`` command
                                  (``rl4llm run``, ``rl4llm capstone preflight|run|check``); the
                                  ``capstone`` extra: the kit's TRL libraries
      constraints/capstone.txt    the capstone libraries' tested versions (``pip install -c``)
      starter/                    the kit's starter/ as is: stubs, given modules, public tests, the
                                  "likely mistake" tables, the module pages, the learner's conftest
      graders/                    only what ``rl4llm run`` and ``rl4llm capstone`` need: the walkthrough,
                                  the figures, the course registry, the language setting, the seed
                                  notebooks; the capstone's runner (``graders/capstone/run/``), its
                                  passport checks (``graders/capstone/passport.py``) and its commands

Never in it: ``solutions/``, the hidden checks, the misconception catalogue, the grading engine,
the capstone's instructor side (grading a submission, re-evaluating an adapter with the kit's
verifier), the kit's tests, the nbgrader sources. :func:`hidden_parts_in` lists any that slipped in (the build
refuses to finish then), and ``tests/test_bundle.py`` installs the bundle in a fresh environment
without the kit and uses it as a learner would.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
from pathlib import Path

from graders import course
from graders.fences import BEGIN_SOLUTION
from graders.paths import REPO_ROOT, SEEDS_DIR, STARTER_DIR

# The graders modules `rl4llm run` imports (graders.walkthrough.run and what it imports, transitively).
# Paths inside graders/, without ".py".
RUN_MODULES = ("__init__", "course", "fences", "language", "learner_cli", "loader", "paths", "settings", "text",
               "walkthrough/__init__", "walkthrough/run", "walkthrough/lines", "walkthrough/seed", "walkthrough/values",
               "walkthrough/figures")
# What `rl4llm capstone preflight|run|check` adds: the commands, the passport checks, the runner package.
CAPSTONE_MODULES = ("capstone/__init__", "capstone/passport", "capstone/cli", "cleaner")  # cleaner: every line cli prints
CAPSTONE_PACKAGE = "capstone/run"
CAPSTONE_CONSTRAINTS = Path("constraints") / "capstone.txt"
HIDDEN_NAMES = ("solutions", "checks", "misconceptions", "engine", "build", "tests", "assignments")
# the capstone's instructor side, by its path inside the bundle
HIDDEN_PATHS = ("graders/capstone/grade.py", "graders/capstone/reeval.py", "graders/capstone/claims.py")

PYPROJECT = '''[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "rl4llm-learner"
version = "{version}"
description = "RL for LLMs, modules 8 and 9: the learner's exercises, public tests, notebook runner and capstone"
requires-python = ">=3.10"
dependencies = ["numpy>=1.24", "torch>=2.2,<3", "pandas>=2.0", "matplotlib>=3.7", "ipython>=8.0",
                "hypothesis>=6.80", "pytest>=7.4", "tqdm>=4.60"]

[project.optional-dependencies]
capstone = {capstone}

[project.scripts]
rl4llm = "graders.learner_cli:main"

[tool.setuptools]
packages = ["graders", "graders.walkthrough", "graders.capstone", "graders.capstone.run"]

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
pip install "torch>=2.2,<3" --index-url https://download.pytorch.org/whl/cpu   # the kit's range, a CPU build
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

## The capstone (TRL, Qwen3-0.6B)

GRPO and DPO on `Qwen/Qwen3-0.6B` with TRL and a LoRA adapter. GRPO's only
reward is YOUR `verify_numeric_answer` (`starter/module_09/module_9_reference.py`):
finish it first; a run stops at once, before any training, while it is a stub.

```bash
pip install -c constraints/capstone.txt -e ".[capstone]"   # TRL, transformers, PEFT: the tested versions
rl4llm capstone preflight --algo grpo --profile full       # CUDA, memory, model, data, versions; exit 1 if a run cannot work
rl4llm capstone run --algo grpo --profile tiny --out runs/tiny --verifier starter/module_09/module_9_reference.py   # CPU, seconds
rl4llm capstone run --algo grpo --profile full --out submission --verifier starter/module_09/module_9_reference.py
rl4llm capstone check submission                           # the passport checks, on your machine
```

`tiny` is a random 32-wide model on a toy task, on the CPU, with no download:
it tells a working reward from a broken one. `smoke` (2 steps) and `full`
train the real model and need a CUDA GPU (`--device cpu --model PATH
--max-steps 1` is a dry run, never graded as the profile's run). DPO
(`--algo dpo`) needs no verifier. The run folder holds `passport.json`, the
adapter and three figures (`--lang ru` for Russian labels).

Hand in the run folder (or a `.zip` of it) with the verifier it used copied
into it (`cp starter/module_09/module_9_reference.py submission/`). The
grader checks your verifier with its hidden checks, the passport against the
course's profiles, and re-measures the adapter itself: the passport is your
claim, the grader's measurement is the grade.
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
pip install "torch>=2.2,<3" --index-url https://download.pytorch.org/whl/cpu   # диапазон набора, сборка для CPU
pip install -e .
```

## Работа

```bash
pytest starter/module_09                                # все открытые тесты модуля 9
pytest starter/module_09 -k group_relative_advantages   # одна функция: все её тесты
rl4llm run module09 --impl starter/                     # ноутбук курса на ВАШЕМ коде: таблицы и графики
```

Тест функции, которую вы ещё не написали, падает с одной строкой
`НЕ РЕАЛИЗОВАНО`. Если ваш результат в точности совпадает с результатом
известной ошибки, отчёт её называет («вероятная ошибка»). `rl4llm run` сохраняет
графики в `rl4llm-out/module09/`; ячейка, которой нужна ещё не написанная
функция, отмечается и пропускается.

Сообщения, подсказки и графики по-русски: `export RL4LLM_LANG=ru` (или русская
локаль); `rl4llm run ... --lang ru`.

## Что сдавать

Файлы с решениями: {files}. Грейдер запускает скрытые проверки тех же видов,
что и открытые тесты: зелёные открытые тесты и соглашения из докстрингов — это
всё, что нужно для полного балла.

## Капстоун (TRL, Qwen3-0.6B)

GRPO и DPO на `Qwen/Qwen3-0.6B` с TRL и адаптером LoRA. Единственная награда
GRPO — ВАША `verify_numeric_answer` (`starter/module_09/module_9_reference.py`):
сначала допишите её; пока это заглушка, запуск останавливается сразу, до обучения.

```bash
pip install -c constraints/capstone.txt -e ".[capstone]"   # TRL, transformers, PEFT: проверенные версии
rl4llm capstone preflight --algo grpo --profile full       # CUDA, память, модель, данные, версии; код 1, если запуск не сработает
rl4llm capstone run --algo grpo --profile tiny --out runs/tiny --verifier starter/module_09/module_9_reference.py   # CPU, секунды
rl4llm capstone run --algo grpo --profile full --out submission --verifier starter/module_09/module_9_reference.py
rl4llm capstone check submission                           # проверки паспорта на вашей машине
```

`tiny` — случайная модель шириной 32 на учебной задаче, на CPU, без
скачивания: она отличает работающую награду от сломанной. `smoke` (2 шага) и
`full` обучают настоящую модель, им нужен GPU с CUDA (`--device cpu --model
PATH --max-steps 1` — пробный запуск, он никогда не оценивается как запуск
профиля). DPO (`--algo dpo`) верификатор не нужен. В папке запуска лежат
`passport.json`, адаптер и три графика (`--lang ru` — подписи по-русски).

Сдайте папку запуска (или её `.zip`), скопировав в неё верификатор, с которым
шёл запуск (`cp starter/module_09/module_9_reference.py submission/`). Грейдер
проверяет ваш верификатор скрытыми проверками, паспорт — по профилям курса, а
адаптер измеряет заново сам: паспорт — это ваше заявление, оценка — то, что
измерил грейдер.
''',
}


class BundleError(Exception):
    """The bundle cannot be built as asked (the target is not empty, or a hidden part slipped in)."""


def capstone_requirements() -> list[str]:
    """The kit's ``capstone`` extra (pyproject.toml), which the bundle's ``capstone`` extra is."""
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r"^capstone = (\[[^\]]*\])", text, re.MULTILINE)
    if match is None:
        raise BundleError("pyproject.toml has no `capstone = [...]` extra")
    return ast.literal_eval(match.group(1))  # a TOML list of strings reads as a Python list


def learner_file_list() -> str:
    return ", ".join(f"`starter/{f.relpath}`" for f in course.learner_files())


def hidden_parts_in(folder: Path) -> list[str]:
    """What of the kit's hidden parts ``folder`` holds: a hidden folder or module name anywhere, or a
    file with a fenced solution (a reference's body between ``### BEGIN SOLUTION`` markers)."""
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if (any(part in HIDDEN_NAMES or part.removesuffix(".py") in HIDDEN_NAMES for part in relative.parts)
                or relative.as_posix() in HIDDEN_PATHS):
            found.append(f"{relative.as_posix()} (a hidden part of the kit)")
        elif path.suffix in (".py", ".ipynb", ".json", ".md", ".txt") and path.is_file():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            if any(line.strip() == BEGIN_SOLUTION for line in lines):
                found.append(f"{relative.as_posix()} (holds a fenced solution)")
    return found


def build_bundle(out: Path | str, *, force: bool = False) -> Path:
    """Write the learner bundle into ``out`` (which must be new or empty, or ``force``); return it."""
    out = Path(out)
    if os.path.lexists(out) and not out.is_dir():  # a file (or a link) is never replaced, --force or not
        raise BundleError(f"--out {out} is a file, not a folder; name a new (or empty) folder")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise BundleError(f"{out} is not empty; choose a new folder or pass --force to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
    shutil.copytree(STARTER_DIR, out / "starter", ignore=ignore)
    package = out / "graders"
    package.mkdir()
    for name in RUN_MODULES + CAPSTONE_MODULES:
        (package / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / "graders" / f"{name}.py", package / f"{name}.py")
    shutil.copytree(SEEDS_DIR, package / "seeds", ignore=ignore)
    shutil.copytree(REPO_ROOT / "graders" / CAPSTONE_PACKAGE, package / CAPSTONE_PACKAGE, ignore=ignore)
    (out / CAPSTONE_CONSTRAINTS).parent.mkdir()
    shutil.copy2(REPO_ROOT / CAPSTONE_CONSTRAINTS, out / CAPSTONE_CONSTRAINTS)
    from graders import __version__

    (out / "pyproject.toml").write_text(PYPROJECT.format(version=__version__,
                                                         capstone=json.dumps(capstone_requirements())),
                                        encoding="utf-8")
    for language, text in README.items():
        name = "README.md" if language == "en" else f"README.{language}.md"
        (out / name).write_text(text.format(files=learner_file_list()), encoding="utf-8")
    leaked = hidden_parts_in(out)
    if leaked:
        shutil.rmtree(out)
        raise BundleError("the learner bundle would hold hidden parts of the kit: " + "; ".join(leaked))
    return out
