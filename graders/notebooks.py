"""The nbgrader source notebooks: ``solutions/`` -> ``assignments/source/<assignment>/<file stem>.ipynb``.

One assignment per module and language -- ``module_08``, ``module_09`` (English)
and ``module_08_ru``, ``module_09_ru`` (Russian) -- each with one notebook per
learner file (``module_9_reference.ipynb``, ``module_9_training.ipynb``), so a
notebook's namespace is exactly one learner module, as in ``starter/``. The
English and Russian notebooks have identical code cells; only the markdown
differs (formulas and docstrings stay in English).

A solution file is split along its top-level statements (AST order): runs of
given statements become one read-only code cell, each fenced function its own
solution cell (``nbgrader generate_assignment`` replaces the fenced region with
``# YOUR CODE HERE`` / ``raise NotImplementedError()``). Each exercise (a public
fenced function) gets a markdown cell with its formula and docstring and an
autograded test cell worth the spec's points (``graders/checks``): a hidden part
(stripped from the release) that names the exercise and refuses to run in a
kernel -- ``nbgrader autograde`` does not execute notebooks: the kit's engine
scores each test cell from the notebook's definitions
(:mod:`graders.engine.nbgrader_scoring`) -- then visible checks, for the
learner while working, rendered from the spec's public cases with expected
values computed here from the reference. Generation is deterministic: fixed cell ids,
sorted keys, nbformat 4.5, no outputs or execution counts, kernel ``python3``.
"""

from __future__ import annotations

import ast
import inspect
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graders.build import BEGIN_SOLUTION, END_SOLUTION, find_fences
from graders.paths import ASSIGNMENTS_DIR, SOLUTIONS_DIR

SOURCE_DIR = ASSIGNMENTS_DIR / "source"
MODULES = {  # folder -> (module number, learner file stems)
    "module_08": ("8", ("module_8_reference", "module_8_training")),
    "module_09": ("9", ("module_9_reference", "module_9_training")),
}
LANGUAGES = ("en", "ru")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HELPER_NAMES = ("check_close", "check_raises", "sampled", "visible_checks")
MAX_VISIBLE = 4  # visible checks per exercise
MAX_CHECK_CHARS = 1000  # a longer rendered check is left to the hidden tests
LINE = 120  # a longer check is written over several lines
MAX_EXPECTED_VALUES = 12  # a longer 1-D expected array is checked at 5 evenly spaced indices
MAX_EXPECTED_ARRAY = 30  # entries of a multi-dimensional expected array, at most


def assignment_name(folder: str, language: str) -> str:
    """``module_09`` (English) or ``module_09_ru``."""
    return folder if language == "en" else f"{folder}_{language}"


# =============================================================================
# Splitting a solution file into cells
# =============================================================================
@dataclass
class Segment:
    """A run of top-level source: given code, or one fenced function."""

    kind: str  # "given" | "solution"
    text: str
    name: str = ""
    node: ast.AST | None = None
    public: bool = False  # a public fenced function: an exercise


def split_source(source: str, filename: str = "<source>") -> tuple[str, list[Segment]]:
    """(module docstring, segments in file order).

    Each segment is a contiguous slice of the file: the comments and blank lines
    above a statement go with it, so a section banner opens the cell it heads.
    """
    tree = ast.parse(source, filename=filename)
    lines = source.splitlines()
    fenced = {fence.function.split(".")[0] for fence in find_fences(source, filename)}
    body = list(tree.body)
    docstring = ""
    cursor = 0  # 0-based index of the first line not yet assigned
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        docstring = inspect.cleandoc(body[0].value.value)
        cursor = body[0].end_lineno
        body = body[1:]
    segments: list[Segment] = []
    run_start: int | None = None  # first line of the current run of given statements
    for index, node in enumerate(body):
        end = _end_of(node, lines) if index + 1 < len(body) else len(lines)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in fenced:
            if run_start is not None:
                segments.append(Segment("given", "\n".join(lines[run_start:cursor]).strip("\n")))
                run_start = None
            text = "\n".join(lines[cursor:end]).strip("\n")
            segments.append(Segment("solution", text, node.name, node, not node.name.startswith("_")))
        elif run_start is None:
            run_start = cursor
        cursor = end
    if run_start is not None:
        segments.append(Segment("given", "\n".join(lines[run_start:cursor]).strip("\n")))
    for segment in segments:
        begins = sum(line.strip().startswith(BEGIN_SOLUTION) for line in segment.text.splitlines())
        ends = sum(line.strip().startswith(END_SOLUTION) for line in segment.text.splitlines())
        if (segment.kind == "given" and begins + ends) or (segment.kind == "solution" and (begins != ends or not begins)):
            raise ValueError(f"{filename}: the cell of {segment.name or 'given code'} does not hold whole fences")
    return docstring, segments


def _end_of(node: ast.AST, lines: list[str]) -> int:
    """One past the node's last line, counting indented comment lines after its last statement
    (a function's closing ``### END SOLUTION`` is a comment: the AST ends before it)."""
    end = node.end_lineno
    probe = end
    while probe < len(lines) and (not lines[probe].strip() or lines[probe][:1] in " \t"):
        probe += 1
        if lines[probe - 1].strip():
            end = probe
    return end


def dependencies(node: ast.AST, exercises: set[str]) -> list[str]:
    """Other exercises of the same file that a function's body refers to, in order of appearance."""
    found: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in exercises and child.id != node.name and child.id not in found:
            found.append(child.id)
    return found


# =============================================================================
# Visible checks: the spec's public cases rendered as Python
# =============================================================================
def _float_exact(value: float) -> str:
    if value != value:
        return 'float("nan")'
    if value in (float("inf"), float("-inf")):
        return 'float("inf")' if value > 0 else '-float("inf")'
    return repr(value)


def _float_rounded(value: float) -> str:
    """12 significant digits: stable across machines whose last-ulp results differ."""
    if value != value or value in (float("inf"), float("-inf")):
        return _float_exact(value)
    if abs(value) < 1e-15:
        return "0.0"
    text = format(value, ".12g")
    return text if any(c in text for c in ".en") else text + ".0"


def _string(value: str) -> str:
    """A raw literal for text with backslashes (``r'\\boxed{3}'`` reads as the notebook's LaTeX), else repr."""
    if "\\" in value and value.isprintable() and not value.endswith("\\"):
        for quote in ("'", '"'):
            literal = f"r{quote}{value}{quote}"
            if quote not in value and ast.literal_eval(literal) == value:
                return literal
    return repr(value)


def render_input(value) -> str | None:
    """Exact Python source for a case input (None when it has no compact literal form)."""
    from graders.engine.codec import TensorSpec

    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, np.integer):
        return repr(value)
    if isinstance(value, float):
        return _float_exact(value)
    if isinstance(value, np.generic):
        if value.dtype.kind not in "biuf":
            return None
        item = render_input(value.item())
        return None if item is None else f"np.{value.dtype.name}({item})"
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            return None
        if (value.ndim == 1 and value.dtype == np.float64 and value.size > 8
                and np.array_equal(value, np.linspace(value[0], value[-1], value.size))):
            return f"np.linspace({_float_exact(float(value[0]))}, {_float_exact(float(value[-1]))}, {value.size})"
        body = render_input(value.tolist())
        if body is None:
            return None
        if value.dtype == np.float64 and value.size > 0:
            return f"np.array({body})"
        dtype = "bool" if value.dtype.kind == "b" else f"np.{value.dtype.name}"
        return f"np.array({body}, dtype={dtype})"
    if isinstance(value, TensorSpec):
        body = render_input(np.asarray(value.data).tolist())
        if body is None:
            return None
        grad = ", requires_grad=True" if value.requires_grad else ""
        return f"torch.tensor({body}, dtype=torch.{value.dtype}{grad})"
    if isinstance(value, (list, tuple)):
        items = [render_input(item) for item in value]
        if any(item is None for item in items):
            return None
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return None
        items = [(repr(key), render_input(item)) for key, item in value.items()]
        if any(item is None for _, item in items):
            return None
        return "{" + ", ".join(f"{key}: {item}" for key, item in items) + "}"
    return None


def render_expected(value) -> str | None:
    """Source for a normalised expected value, floats rounded to 12 significant digits.

    A 1-D array longer than MAX_EXPECTED_VALUES becomes ``sampled(length, at, values)``
    (five evenly spaced entries); a larger multi-dimensional array has no rendering.
    """
    if value is None or isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return _float_rounded(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _float_rounded(float(value))
        if value.ndim == 1 and value.size > MAX_EXPECTED_VALUES:
            at = sorted({int(i) for i in np.linspace(0, value.size - 1, 5).round()})
            return f"sampled({value.size}, {at}, {render_expected(value[at])})"
        if value.size > MAX_EXPECTED_ARRAY:
            return None
        return render_expected(list(value)) if value.ndim > 1 else \
            "[" + ", ".join(_float_rounded(float(x)) for x in value) + "]"
    if isinstance(value, list):
        items = [render_expected(item) for item in value]
        return None if any(item is None for item in items) else "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        items = [(repr(key), render_expected(item)) for key, item in value.items()]
        if any(item is None for _, item in items):
            return None
        return "{" + ", ".join(f"{key}: {item}" for key, item in items) + "}"
    return None  # an Opaque object: nothing to compare


@dataclass
class VisibleCheck:
    label: str
    code: str  # one statement


def _call_text(name: str, function, case, harness: bool) -> str | None:
    kwargs = dict(case.kwargs)
    if harness:  # harness options (check=..., gradient_weights=...) are not the function's arguments
        parameters = inspect.signature(function).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            kwargs = {key: value for key, value in kwargs.items() if key in parameters}
    parts = [render_input(arg) for arg in case.args]
    parts += [None if render_input(v) is None else f"{k}={render_input(v)}" for k, v in kwargs.items()]
    if any(part is None for part in parts):
        return None
    return f"{name}({', '.join(parts)})"


def visible_checks(exercise_id: str, reference_function) -> list[VisibleCheck]:
    """Up to MAX_VISIBLE public cases of the exercise as one-line checks (expected from the reference)."""
    import torch

    from graders.checks import spec_for
    from graders.engine.codec import normalise

    spec = spec_for(exercise_id)
    name = exercise_id.split(".", 1)[1]
    harness = spec.call.describe()["kind"] == "harness"
    namespace = {"np": np, "torch": torch, name: reference_function}
    checks: list[VisibleCheck] = []
    seen: set[str] = set()
    for case in spec.cases():
        if case.hidden or len(checks) == MAX_VISIBLE:
            continue
        call = _call_text(name, reference_function, case, harness)
        if call is None or call in seen:
            continue
        seen.add(call)
        label = " ".join(case.label.split()) or "a public case"
        if case.raises is not None:
            try:
                eval(call, dict(namespace))  # noqa: S307 - kit code rendered above
            except case.raises:
                checks.append(VisibleCheck(label, f"with check_raises({case.raises.__name__}):\n    {call}"))
            except Exception:  # noqa: BLE001 - not a usable visible check
                pass
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                value = normalise(eval(call, dict(namespace)))  # noqa: S307
        except Exception:  # noqa: BLE001 - e.g. a harness-only case: no direct call
            continue
        expected = render_expected(value)
        if expected is None:
            continue
        rtol = case.rtol if case.rtol is not None else spec.rtol
        atol = case.atol if case.atol is not None else spec.atol
        code = f"check_close({call}, {expected}, rtol={rtol!r}, atol={atol!r})"
        if len(code) > MAX_CHECK_CHARS:
            continue
        if len(code) > LINE:
            code = f"check_close(\n    {call},\n    {expected},\n    rtol={rtol!r}, atol={atol!r})"
        checks.append(VisibleCheck(label, code))
    return checks


# =============================================================================
# Texts (English and Russian)
# =============================================================================
MODULE_TEXT = {
    ("8", "en"): ("Module 8 — RLHF and direct preference optimisation",
                  "The KL-regularised optimum and the reward–KL frontier, per-token reward shaping, constraints "
                  "and dual ascent (safe RLHF), DPO and its relatives (cDPO, IPO, SimPO, ORPO) and likelihood "
                  "displacement; then a toy DPO run on a tiny autoregressive policy."),
    ("8", "ru"): ("Модуль 8 — RLHF и прямая оптимизация предпочтений",
                  "Оптимум с KL-регуляризацией и граница «награда–KL», потокенное формирование награды (reward "
                  "shaping), ограничения и двойственный подъём (safe RLHF), DPO и его родственники (cDPO, IPO, "
                  "SimPO, ORPO) и смещение правдоподобия (likelihood displacement); затем игрушечный запуск DPO "
                  "на маленькой авторегрессионной политике."),
    ("9", "en"): ("Module 9 — RLVR and GRPO",
                  "A verifiable reward (a numeric verifier), informative groups, group-relative advantages and the "
                  "leave-one-out baseline, clipping (PPO, DAPO's clip-higher, GSPO), the loss reductions of GRPO, "
                  "Dr. GRPO and DAPO, the overlong penalty, the k3 KL estimator, entropy and pass@k; then a toy "
                  "GRPO loop in which a tiny policy learns arithmetic from a verifier."),
    ("9", "ru"): ("Модуль 9 — RLVR и GRPO",
                  "Проверяемая награда (числовой верификатор), информативные группы, групповые относительные "
                  "преимущества (advantages) и базовая линия leave-one-out, клиппинг (PPO, clip-higher из DAPO, "
                  "GSPO), редукции функции потерь GRPO, Dr. GRPO и DAPO, штраф за чрезмерную длину, оценка KL k3, "
                  "энтропия и pass@k; затем игрушечный цикл GRPO, в котором маленькая политика учится арифметике "
                  "по сигналу верификатора."),
}
FILE_TEXT = {
    ("module_8_reference", "en"): "pure NumPy, one formula per function",
    ("module_8_reference", "ru"): "чистый NumPy, одна формула на функцию",
    ("module_8_training", "en"): "PyTorch: sequence log-probabilities and the DPO loss, plugged into a toy DPO run",
    ("module_8_training", "ru"): "PyTorch: логарифмы вероятностей последовательностей и функция потерь DPO, "
                                 "которые подключаются к игрушечному запуску DPO",
    ("module_9_reference", "en"): "pure NumPy: the verifier and the formulas of GRPO",
    ("module_9_reference", "ru"): "чистый NumPy: верификатор и формулы GRPO",
    ("module_9_training", "en"): "PyTorch: the clipped GRPO loss, plugged into a toy GRPO loop",
    ("module_9_training", "ru"): "PyTorch: клиппированная функция потерь GRPO, которая подключается к "
                                 "игрушечному циклу GRPO",
}
EXPERIMENT_CALL = {
    "module_8_training": "run_toy_dpo_experiment(loss_fn=dpo_loss, logprob_fn=sequence_logprobs)",
    "module_9_training": "run_toy_grpo_experiment(loss_fn=grpo_loss)",
}
EXPERIMENT_NEEDS = {  # what the given experiment needs besides this notebook, per language
    ("module_9_training", "en"): " The loop calls your `module_9_reference` functions (`group_relative_advantages`, "
                                 "`clip_activity`, `categorical_entropy`, `pass_at_k_unbiased`): put your "
                                 "`module_9_reference.py` next to this notebook, or pass `formulas=` an object that "
                                 "has them.",
    ("module_9_training", "ru"): " Цикл вызывает ваши функции из `module_9_reference` (`group_relative_advantages`, "
                                 "`clip_activity`, `categorical_entropy`, `pass_at_k_unbiased`): положите свой "
                                 "`module_9_reference.py` рядом с этим ноутбуком или передайте в `formulas=` объект, "
                                 "в котором они есть.",
}

HOW_TO = {
    "en": """## How to work

1. **Run the cells from the top** (*Kernel → Restart & Run All*). Read-only cells hold the given code and the
   helpers of the visible tests; you need not change them.
2. **Implement each exercise** in its solution cell: replace `# YOUR CODE HERE` and `raise NotImplementedError()`
   with your code. Keep the function's name, signature and docstring; the first line of the docstring is the
   formula and the paper it comes from. Helpers of your own belong inside the solution cell.
3. **Run the test cell** under each exercise. Its visible checks are public cases (the seminar notebook's tables
   and small rows you can check on paper): the cell runs without an error when they pass. They are for you while
   you work; they do not decide your score.
4. **How your notebook is graded.** `nbgrader autograde` does not run your notebook. The kit's grading engine reads
   its definitions — functions, classes, imports and constants (literal values or UPPER_CASE names) from every code
   cell — and checks each exercise function in an isolated process: the public cases, hidden edge cases and inputs
   drawn with a fixed seed, compared with the reference solution. Other top-level code (experiments, prints, plots,
   `x = f(...)`) is not run for grading, so your functions must not depend on it. Your feedback shows the verdict
   under each test cell: every failed check with what was expected and what came back (the inputs of hidden checks
   may be withheld) and, when the engine recognises it, the typical mistake behind it.
5. **Points.** An exercise earns its points times the share of its checks that pass (some checks weigh more); a
   timeout, a crash, or anything the grader refuses (reading its files, starting processes, ...) scores 0 for the
   exercise.
6. **Conventions.** float64 and natural logarithms; never modify an input in place; invalid arguments raise
   `ValueError` naming the argument. The equations are on the module's page, `starter/{folder}/README.md`.

Before you submit: *Kernel → Restart & Run All*, and check that no cell fails.""",
    "ru": """## Как работать

1. **Выполняйте ячейки сверху вниз** (*Kernel → Restart & Run All*). В ячейках только для чтения — готовый код и
   вспомогательные функции видимых тестов; менять их не нужно.
2. **Реализуйте каждое упражнение** в его ячейке с решением: замените `# YOUR CODE HERE` и
   `raise NotImplementedError()` своим кодом. Не меняйте имя функции, её сигнатуру и docstring; первая строка
   docstring — формула и статья, из которой она взята. Собственные вспомогательные функции определяйте внутри
   ячейки с решением.
3. **Запускайте тестовую ячейку** под каждым упражнением. Её видимые проверки — публичные примеры (таблицы из
   ноутбука семинара и небольшие примеры, которые можно проверить на бумаге): если они проходят, ячейка
   выполняется без ошибки. Они нужны вам для самопроверки во время работы и не определяют оценку.
4. **Как проверяется ноутбук.** `nbgrader autograde` не выполняет ваш ноутбук. Движок проверки кита читает его
   определения — функции, классы, импорты и константы (литеральные значения или имена В_ВЕРХНЕМ_РЕГИСТРЕ) из всех
   ячеек с кодом — и проверяет каждую функцию-упражнение в изолированном процессе: публичные примеры, скрытые
   граничные случаи и входы, сгенерированные с фиксированным seed, сравниваются с эталонным решением. Остальной код
   верхнего уровня (эксперименты, `print`, графики, `x = f(...)`) при проверке не выполняется, поэтому ваши функции
   не должны от него зависеть. В отзыве под каждой тестовой ячейкой — вердикт: каждая непройденная проверка с
   ожидаемым и полученным значением (входные данные скрытых проверок могут не показываться) и, если движок её
   узнаёт, типичная ошибка, которая к ней привела.
5. **Баллы.** Упражнение приносит свои баллы, умноженные на долю пройденных проверок (некоторые проверки весят
   больше); превышение времени, аварийное завершение или действие, которое грейдер запрещает (чтение его файлов,
   запуск процессов, ...), дают 0 за упражнение.
6. **Соглашения.** float64 и натуральные логарифмы; входные данные никогда не изменяются на месте; при
   недопустимых аргументах выбрасывается `ValueError` с именем аргумента. Формулы собраны на странице модуля
   `starter/{folder}/README.md`.

Перед сдачей: *Kernel → Restart & Run All* и убедитесь, что ни одна ячейка не падает.""",
}

TEXT = {
    "en": {
        "notebook": "This notebook is the nbgrader form of the learner file `{stem}.py` ({blurb}): {count} exercises, "
                    "{points} points.",
        "experiment": "The tests do not run the toy experiment itself (the autograder runs a short version of it "
                      "with your function plugged in). To run it yourself, call `{call}` in a new cell.",
        "file_doc": "### The file's own description",
        "helpers": "**Helpers of the visible tests** (read-only): `check_close` compares a result with the expected "
                   "value at a tolerance (`sampled` stands for a long array checked at a few indices), "
                   "`check_raises` expects an exception, `visible_checks` groups the checks of one exercise.",
        "given": "**Given code** (read-only): run it; you need not change it.",
        "helper_fn": "### Helper `{name}` — yours to write; graded through the exercises that call it",
        "exercise": "## Exercise {index} of {count}: `{name}` — {points}",
        "formula": "**Formula** (the first line of the docstring):",
        "docstring": "**The rest of the docstring:**",
        "dependent": "`{name}` calls {deps}. The autograder checks it with trusted copies of {them}, so a mistake "
                     "there costs points only once; the visible checks below use your own {deps} and only print "
                     "a note when they disagree.",
        "builds_on": "`{name}` calls your {deps}: a mistake there shows up here too.",
        "it": "it", "them": "them",
    },
    "ru": {
        "notebook": "Этот ноутбук — версия учебного файла `{stem}.py` для nbgrader ({blurb}): упражнений — "
                    "{count}, всего {points}.",
        "experiment": "Тесты не запускают сам игрушечный эксперимент (автогрейдер запускает его короткую версию с "
                      "вашей функцией). Чтобы запустить его самостоятельно, вызовите `{call}` в новой ячейке.",
        "file_doc": "### Описание файла (из исходного кода, на английском)",
        "helpers": "**Вспомогательные функции видимых тестов** (только для чтения): `check_close` сравнивает "
                   "результат с ожидаемым значением с допуском (`sampled` — длинный массив, который проверяется "
                   "в нескольких индексах), `check_raises` ожидает исключение, `visible_checks` объединяет "
                   "проверки одного упражнения.",
        "given": "**Готовый код** (только для чтения): выполните ячейку, менять её не нужно.",
        "helper_fn": "### Вспомогательная функция `{name}` — её пишете вы; она оценивается через упражнения, "
                     "которые её вызывают",
        "exercise": "## Упражнение {index} из {count}: `{name}` — {points}",
        "formula": "**Формула** (первая строка docstring):",
        "docstring": "**Остальная часть docstring** (на английском):",
        "dependent": "`{name}` вызывает {deps}. Автогрейдер проверяет её с доверенными копиями {them}, поэтому "
                     "ошибка там не отнимает баллы дважды; видимые проверки ниже используют ваши собственные "
                     "{deps} и при расхождении только выводят сообщение.",
        "builds_on": "`{name}` вызывает вашу реализацию {deps}: ошибка там проявится и здесь.",
        "it": "этой функции", "them": "этих функций",
    },
}


def points_text(points: float, language: str) -> str:
    """'3 points' / '3 балла' (Russian plural rules)."""
    number = f"{points:g}"
    if language == "en":
        return f"{number} point" + ("" if points == 1 else "s")
    if points != int(points):
        return f"{number} балла"
    n = int(points)
    if n % 10 == 1 and n % 100 != 11:
        return f"{number} балл"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return f"{number} балла"
    return f"{number} баллов"


def _fenced(text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text}\n{fence}"


HELPERS_SOURCE = '''\
# Helpers of the visible tests (given; read-only).
import contextlib as _contextlib
import dataclasses as _dataclasses
import numbers as _numbers
import sys as _sys

import numpy as np


def _checkable(value):
    """Numbers -> float; arrays, tensors and lists of numbers -> float64 arrays; dataclasses -> dicts."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().cpu().double().numpy()
    if isinstance(value, (bool, np.bool_, _numbers.Number)) and not isinstance(value, complex):
        return float(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            array = value.astype(np.float64)
            return float(array) if array.ndim == 0 else array
        return _checkable(value.tolist())
    if isinstance(value, (list, tuple)):
        items = [_checkable(item) for item in value]
        if not items:
            return np.zeros(0)
        if all(isinstance(item, float) for item in items):
            return np.array(items)
        if all(isinstance(item, np.ndarray) for item in items) and len({item.shape for item in items}) == 1:
            return np.stack(items)
        return items
    if isinstance(value, dict):
        return {str(key): _checkable(item) for key, item in value.items()}
    if _dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _checkable(getattr(value, f.name)) for f in _dataclasses.fields(value)}
    return value


def _short(value):
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=6, threshold=12, separator=", ").replace("\\n", "")
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


class sampled:
    """Expected entries of a long 1-D array: ``sampled(length, at, values)`` checks ``got[at]`` only."""

    def __init__(self, length, at, values):
        self.length, self.at, self.values = length, list(at), np.array(values, dtype=np.float64)

    def __repr__(self):
        return f"sampled({self.length}, {self.at}, {self.values.tolist()})"


def _mismatch(want, got, rtol, atol, where=""):
    at = f" at {where}" if where else ""
    if isinstance(want, sampled):
        if not isinstance(got, np.ndarray) or got.shape != (want.length,):
            return f"expected an array of shape ({want.length},), got {_short(got)}{at}"
        return _mismatch(want.values, got[want.at], rtol, atol, f"{where} indices {want.at}")
    if isinstance(want, (float, np.ndarray)):
        if type(got) is not type(want):
            return f"expected {_short(want)}, got {_short(got)} (type {type(got).__name__}){at}"
        w, g = np.asarray(want), np.asarray(got)
        if w.shape != g.shape:
            return f"expected shape {w.shape}, got shape {g.shape}{at}"
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.abs(g - w) <= atol + rtol * np.abs(w)
        ok |= (np.isnan(w) & np.isnan(g)) | (np.isinf(w) & (w == g))
        if not ok.all():
            return f"expected {_short(want)}, got {_short(got)}{at} (rtol {rtol:g}, atol {atol:g})"
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"expected a dict, got {_short(got)}{at}"
        for key, item in want.items():
            if key not in got:
                return f"missing key {key!r}{at}"
            problem = _mismatch(item, got[key], rtol, atol, f"{where}[{key!r}]")
            if problem:
                return problem
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"expected {len(want)} items, got {_short(got)}{at}"
        for index, (item, have) in enumerate(zip(want, got)):
            problem = _mismatch(item, have, rtol, atol, f"{where}[{index}]")
            if problem:
                return problem
        return None
    if type(got) is not type(want) or got != want:
        return f"expected {_short(want)}, got {_short(got)}{at}"
    return None


def check_close(got, expected, rtol=1e-05, atol=1e-06):
    """Assert |got - expected| <= atol + rtol * |expected| elementwise (NaN matches NaN; same shapes, same keys)."""
    got, want = _checkable(got), _checkable(expected)
    problem = _mismatch(want, got, rtol, atol)
    if problem:
        raise AssertionError(problem)


class check_raises:
    """``with check_raises(ValueError): f(...)`` asserts that the block raises that exception type."""

    def __init__(self, expected):
        self.expected = expected

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            raise AssertionError(f"expected {self.expected.__name__} to be raised")
        return issubclass(kind, self.expected)


@_contextlib.contextmanager
def visible_checks(advisory=None):
    """Run visible checks with warnings shown on stdout (nbgrader fails a test cell that writes to stderr).

    ``advisory``: a failing check only prints a note (the function builds on other exercises, which the
    autograder replaces with trusted copies).
    """
    saved = _sys.stderr
    _sys.stderr = _sys.stdout
    try:
        yield
    except Exception as error:
        if advisory is None:
            raise
        print(f"visible check failed ({advisory}): {type(error).__name__}: {error}")
    finally:
        _sys.stderr = saved
'''


# =============================================================================
# Notebooks
# =============================================================================
@dataclass
class Notebook:
    cells: list[dict] = field(default_factory=list)

    def _meta(self, grade_id: str, *, solution=False, grade=False, locked=True, points=None) -> dict:
        meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
        if points is not None:
            meta["points"] = int(points) if float(points).is_integer() else float(points)
        return {"nbgrader": meta}

    def markdown(self, cell_id: str, text: str) -> None:
        self.cells.append({"cell_type": "markdown", "id": cell_id, "metadata": self._meta(cell_id),
                           "source": _lines(text)})

    def code(self, cell_id: str, text: str, **meta) -> None:
        self.cells.append({"cell_type": "code", "execution_count": None, "id": cell_id,
                           "metadata": self._meta(cell_id, **meta), "outputs": [], "source": _lines(text)})

    def text(self) -> str:
        notebook = {"cells": self.cells, "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
                    "nbformat": 4, "nbformat_minor": 5}
        return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _lines(text: str) -> list[str]:
    """nbformat's multi-line string form: every line keeps its newline except the last."""
    return text.splitlines(keepends=True)


HIDDEN_REFUSAL = ("{exercise_id} is scored by the kit's engine, not in a kernel: run nbgrader autograde from "
                  "assignments/ so that nbgrader_config.py is loaded")


def hidden_exercise(source: str) -> str | None:
    """The exercise id named by a test cell's hidden part (the ``raise`` written by :func:`_test_cell`)."""
    hidden = source.partition("### BEGIN HIDDEN TESTS")[2].partition("### END HIDDEN TESTS")[0]
    for node in ast.walk(ast.parse(hidden)):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args \
                and isinstance(node.exc.args[0], ast.Constant) and isinstance(node.exc.args[0].value, str):
            return node.exc.args[0].value.split(" ", 1)[0]
    return None


def _test_cell(exercise_id: str, name: str, points: float, checks: list[VisibleCheck], trusted: list[str]) -> str:
    """The hidden part first (a refusal naming the exercise: the engine, not a kernel, scores this cell), then
    the visible checks.

    An exercise graded with trusted copies of other exercises (``trusted``) gets
    advisory visible checks: they run on the learner's own copies, so they only
    print a note, lest one mistake cost two cells.
    """
    lines = [f"# Tests of {name} ({points_text(points, 'en')}): visible checks, for you while you work.",
             "# The autograder does not run this cell: the kit's engine scores the exercise from your notebook's "
             "definitions.",
             "### BEGIN HIDDEN TESTS",
             f"# Exercise {exercise_id}: its verdict is written here by graders.engine.nbgrader_scoring.",
             f"raise RuntimeError({HIDDEN_REFUSAL.format(exercise_id=exercise_id)!r})",
             "### END HIDDEN TESTS"]
    if not checks:
        lines.append("# (No visible checks: the public cases of this function do not fit on a line; "
                     "the autograder's hidden checks include them.)")
        return "\n".join(lines)
    lines.append("# Visible checks: public cases. The autograder also runs hidden checks on inputs you have not seen.")
    if trusted:
        advisory = f"it uses your {', '.join(trusted)}"
        for check in checks:
            lines.append(f"with visible_checks(advisory={advisory!r}):  # {check.label}")
            lines += ["    " + line for line in check.code.splitlines()]
        return "\n".join(lines)
    lines.append("with visible_checks():")
    for check in checks:
        lines.append(f"    # {check.label}")
        lines += ["    " + line for line in check.code.splitlines()]
    return "\n".join(lines)


def _code_list(names: list[str], language: str) -> str:
    quoted = [f"`{n}`" for n in names]
    joiner = " and " if language == "en" else " и "
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + joiner + quoted[-1]


def build_notebook(folder: str, stem: str, language: str) -> str:
    """The source notebook of one learner file in one language (JSON text)."""
    from graders.checks import spec_for
    from graders.engine.kit import DEFAULT_KIT

    number, _ = MODULES[folder]
    path = SOLUTIONS_DIR / folder / f"{stem}.py"
    source = path.read_text(encoding="utf-8")
    docstring, segments = split_source(source, str(path))
    defined = {s.name for s in segments if s.kind == "solution"}
    given_names = {n.name for s in segments if s.kind == "given" for n in ast.parse(s.text).body
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    clash = (defined | given_names) & set(HELPER_NAMES)
    if clash:
        raise ValueError(f"{path} defines {sorted(clash)}, the names of the notebook's test helpers")
    exercises = [s for s in segments if s.kind == "solution" and s.public]
    exercise_names = {s.name for s in exercises}
    specs = {s.name: spec_for(f"{stem}.{s.name}") for s in exercises}
    missing = [name for name, spec in specs.items() if spec is None]
    if missing:
        raise ValueError(f"no checks for {stem}: {missing}")
    total = sum(spec.points for spec in specs.values())
    reference = DEFAULT_KIT.reference_module(stem)
    text = TEXT[language]
    title, coverage = MODULE_TEXT[(number, language)]

    nb = Notebook()
    intro = [f"# {title} · `{stem}`", "", coverage, "",
             text["notebook"].format(stem=stem, blurb=FILE_TEXT[(stem, language)], count=len(exercises),
                                     points=points_text(total, language))]
    if stem in EXPERIMENT_CALL:
        intro += ["", text["experiment"].format(call=EXPERIMENT_CALL[stem]) + EXPERIMENT_NEEDS.get((stem, language), "")]
    intro += ["", HOW_TO[language].format(folder=folder)]
    if docstring:
        intro += ["", text["file_doc"], "", _fenced(docstring)]
    nb.markdown("intro", "\n".join(intro))

    def helpers() -> None:
        nb.markdown("helpers-note", text["helpers"])
        nb.code("helpers", HELPERS_SOURCE.rstrip("\n"))

    given_count = 0
    index = 0
    if segments[0].kind != "given":
        helpers()
    for segment in segments:
        if segment.kind == "given":
            given_count += 1
            nb.markdown(f"given-{given_count:02d}-note", text["given"])
            nb.code(f"given-{given_count:02d}", segment.text)
            if given_count == 1:  # after the file's imports: ``from __future__`` stays the first statement
                helpers()
            continue
        doc = inspect.cleandoc(ast.get_docstring(segment.node, clean=False) or "")
        first, _, rest = doc.partition("\n")
        if not segment.public:
            nb.markdown(f"about-{segment.name.lstrip('_')}",
                        text["helper_fn"].format(name=segment.name) + "\n\n" + _fenced(doc))
            nb.code(segment.name, segment.text, solution=True, locked=False)
            continue
        index += 1
        spec = specs[segment.name]
        exercise_id = f"{stem}.{segment.name}"
        parts = [text["exercise"].format(index=index, count=len(exercises), name=segment.name,
                                         points=points_text(spec.points, language)),
                 "", text["formula"], "", _fenced(first.strip())]
        if rest.strip():
            parts += ["", text["docstring"], "", _fenced(rest.strip("\n"))]
        deps = dependencies(segment.node, exercise_names)
        call = spec.call.describe()
        trusted = [d for d in deps if call["kind"] == "harness" and d in call["source"]]  # swapped in by the harness
        if trusted:
            parts += ["", text["dependent"].format(name=segment.name, deps=_code_list(trusted, language),
                                                   them=text["it"] if len(trusted) == 1 else text["them"])]
        if set(deps) - set(trusted):
            parts += ["", text["builds_on"].format(name=segment.name,
                                                   deps=_code_list([d for d in deps if d not in trusted], language))]
        nb.markdown(f"about-{segment.name}", "\n".join(parts))
        nb.code(segment.name, segment.text, solution=True, locked=False)
        checks = visible_checks(exercise_id, getattr(reference, segment.name))
        nb.code(f"test-{segment.name}", _test_cell(exercise_id, segment.name, spec.points, checks, trusted),
                grade=True, points=spec.points)
    return nb.text()


def notebook_path(folder: str, stem: str, language: str) -> Path:
    return SOURCE_DIR / assignment_name(folder, language) / f"{stem}.ipynb"


def build_outputs() -> dict[Path, str]:
    """Every source notebook and its expected content (absolute path -> text)."""
    outputs: dict[Path, str] = {}
    for folder, (_, stems) in MODULES.items():
        for stem in stems:
            for language in LANGUAGES:
                outputs[notebook_path(folder, stem, language)] = build_notebook(folder, stem, language)
    return outputs
