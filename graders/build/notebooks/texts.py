"""The notebooks' texts, in every language of the course (``graders.course.LANGUAGES``).

Module titles and coverage, one line per learner file, the "How to work"
section and the short phrases around cells. Code cells are the same in every
language; formulas and docstrings stay in English. Each text is a
:class:`graders.text.Text` (both languages, the same placeholders), read with
``.in_(language)``; ``MODULE_TEXT`` holds (title, coverage) per module.
"""

from __future__ import annotations

from graders.text import Text

MODULE_TEXT = {
    "8": (Text("Module 8 — RLHF and direct preference optimisation",
               "Модуль 8 — RLHF и прямая оптимизация предпочтений"),
          Text("The KL-regularised optimum and the reward–KL frontier, per-token reward shaping, constraints "
               "and dual ascent (safe RLHF), DPO and its relatives and likelihood "
               "displacement; then a toy DPO run on a tiny autoregressive policy. The exercises: {exercises}.",
               "Оптимум с KL-регуляризацией и граница «награда–KL», потокенное формирование награды (reward "
               "shaping), ограничения и двойственный подъём (safe RLHF), DPO и его родственники "
               "и смещение правдоподобия (likelihood displacement); затем игрушечный запуск DPO "
               "на маленькой авторегрессионной политике. Упражнения: {exercises}.")),
    "9": (Text("Module 9 — RLVR and GRPO", "Модуль 9 — RLVR и GRPO"),
          Text("A verifiable reward (a numeric verifier), informative groups, group-relative advantages and the "
               "leave-one-out baseline, clipping (PPO, DAPO's clip-higher, GSPO), the loss reductions of GRPO, "
               "Dr. GRPO and DAPO, the overlong penalty, the k3 KL estimator, entropy and pass@k; then a toy "
               "GRPO loop in which a tiny policy learns arithmetic from a verifier. The exercises: {exercises}.",
               "Проверяемая награда (числовой верификатор), информативные группы, групповые относительные "
               "преимущества (advantages) и базовая линия leave-one-out, клиппинг (PPO, clip-higher из DAPO, "
               "GSPO), редукции функции потерь GRPO, Dr. GRPO и DAPO, штраф за чрезмерную длину, оценка KL k3, "
               "энтропия и pass@k; затем игрушечный цикл GRPO, в котором маленькая политика учится арифметике "
               "по сигналу верификатора. Упражнения: {exercises}.")),
}
FILE_TEXT = {
    "module_8_reference": Text("pure NumPy, one formula per function", "чистый NumPy, одна формула на функцию"),
    "module_8_training": Text("PyTorch: sequence log-probabilities and the DPO loss, plugged into a toy DPO run",
                              "PyTorch: логарифмы вероятностей последовательностей и функция потерь DPO, "
                              "которые подключаются к игрушечному запуску DPO"),
    "module_9_reference": Text("pure NumPy: the verifier and the formulas of GRPO",
                               "чистый NumPy: верификатор и формулы GRPO"),
    "module_9_training": Text("PyTorch: the clipped GRPO loss, plugged into a toy GRPO loop",
                              "PyTorch: клиппированная функция потерь GRPO, которая подключается к "
                              "игрушечному циклу GRPO"),
}
EXPERIMENT_CALL = {
    "module_8_training": "run_toy_dpo_experiment(loss_fn=dpo_loss, logprob_fn=sequence_logprobs)",
    "module_9_training": "run_toy_grpo_experiment(loss_fn=grpo_loss)",
}
EXPERIMENT_NEEDS = {
    "module_9_training": Text(" The loop calls your `module_9_reference` functions (`group_relative_advantages`, "
                              "`clip_activity`, `categorical_entropy`, `pass_at_k_unbiased`): put your "
                              "`module_9_reference.py` next to this notebook, or pass `formulas=` an object that "
                              "has them.",
                              " Цикл вызывает ваши функции из `module_9_reference` (`group_relative_advantages`, "
                              "`clip_activity`, `categorical_entropy`, `pass_at_k_unbiased`): положите свой "
                              "`module_9_reference.py` рядом с этим ноутбуком или передайте в `formulas=` объект, "
                              "в котором они есть."),
}

HOW_TO = Text("""## How to work

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
   `ValueError` naming the argument. The equations are on the module's page, `README.md` beside this notebook.

Before you submit: *Kernel → Restart & Run All*, and check that no cell fails.""",
                              """## Как работать

1. **Выполняйте ячейки сверху вниз** (*Kernel → Restart & Run All*). В ячейках только для чтения — готовый код и
   вспомогательные функции видимых тестов; менять их не нужно.
2. **Реализуйте каждое упражнение** в его ячейке с решением: замените `# YOUR CODE HERE` и
   `raise NotImplementedError()` своим кодом. Не меняйте имя функции, её сигнатуру и docstring; первая строка
   docstring — формула и статья, из которой она взята. Собственные вспомогательные функции определяйте внутри
   ячейки с решением.
3. **Запускайте тестовую ячейку** под каждым упражнением. Её видимые проверки — публичные примеры (таблицы из
   ноутбука семинара и небольшие примеры, которые можно проверить на бумаге): если они проходят, ячейка
   выполняется без ошибки. Они нужны вам для самопроверки во время работы и не определяют оценку.
4. **Как проверяется ноутбук.** `nbgrader autograde` не выполняет ваш ноутбук. Движок проверки комплекта заданий читает его
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
   `README.md` рядом с этим ноутбуком.

Перед сдачей: *Kernel → Restart & Run All* и убедитесь, что ни одна ячейка не падает.""")

TEXT = {
    "notebook": Text("This notebook is the nbgrader form of the learner file `{stem}.py` ({blurb}): {count} exercises, "
                     "{points}.",
                     "Этот ноутбук — версия учебного файла `{stem}.py` для nbgrader ({blurb}): упражнений — "
                     "{count}, всего {points}."),
    "experiment": Text("The tests do not run the toy experiment itself (the autograder runs a short version of it "
                       "with your function plugged in). To run it yourself, call `{call}` in a new cell.",
                       "Тесты не запускают сам игрушечный эксперимент (автогрейдер запускает его короткую версию с "
                       "вашей функцией). Чтобы запустить его самостоятельно, вызовите `{call}` в новой ячейке."),
    "file_doc": Text("### The file's own description", "### Описание файла (из исходного кода, на английском)"),
    "helpers": Text("**Helpers of the visible tests** (read-only): `check_close` compares a result with the expected "
                    "value at a tolerance, with the autograder's own comparator (`sampled` stands for a long array "
                    "checked at a few indices), `check_raises` expects an exception, `visible_checks` groups the "
                    "checks of one exercise.",
                    "**Вспомогательные функции видимых тестов** (только для чтения): `check_close` сравнивает "
                    "результат с ожидаемым значением с допуском тем же кодом, что и автогрейдер (`sampled` — "
                    "длинный массив, который проверяется в нескольких индексах), `check_raises` ожидает "
                    "исключение, `visible_checks` объединяет проверки одного упражнения."),
    "given": Text("**Given code** (read-only): run it; you need not change it.",
                  "**Готовый код** (только для чтения): выполните ячейку, менять её не нужно."),
    "helper_fn": Text("### Helper `{name}` — yours to write; graded through the exercises that call it",
                      "### Вспомогательная функция `{name}` — её пишете вы; она оценивается через упражнения, "
                      "которые её вызывают"),
    "exercise": Text("## Exercise {index} of {count}: `{name}` — {points}",
                     "## Упражнение {index} из {count}: `{name}` — {points}"),
    "formula": Text("**Formula** (typeset, then as the first line of the docstring writes it):",
                    "**Формула** (в наборе, затем так, как её пишет первая строка docstring):"),
    "docstring": Text("**The rest of the docstring:**", "**Остальная часть docstring** (на английском):"),
    "dependent": Text("`{name}` calls {deps}. The autograder answers its calls of {them} with the reference's "
                      "results for each check's own inputs, so a mistake there costs points only once (and "
                      "`{name}` earns points once {deps} is written). The visible checks below first run your "
                      "{deps} on {them_own} public cases: where those fail, this cell only prints a note (no "
                      "verdict); otherwise a failing check below is a mistake in `{name}`.",
                      "`{name}` вызывает {deps}. Автогрейдер отвечает на её вызовы {them} результатами эталона для "
                      "входов каждой проверки, поэтому ошибка там не отнимает баллы дважды (а `{name}` получает "
                      "баллы, когда {deps} написана). Видимые проверки ниже сначала запускают ваши {deps} на "
                      "{them_own} открытых случаях: если эти случаи не пройдены, ячейка только выводит сообщение "
                      "(без вердикта); иначе непройденная проверка ниже — ошибка в `{name}`."),
    "builds_on": Text("`{name}` calls your {deps}: a mistake there shows up here too.",
                      "`{name}` вызывает вашу реализацию {deps}: ошибка там проявится и здесь."),
    "it": Text("it", "этой функции"),
    "them": Text("them", "этих функций"),
    "its_own": Text("its own", "её собственных"),
    "their_own": Text("their own", "их собственных"),
    # the graded test cells (comments; the hidden part stays as the engine reads it)
    "test_header": Text("# Tests of {name} ({points}): visible checks, for you while you work.",
                        "# Тесты {name} ({points}): видимые проверки, для вас во время работы."),
    "test_not_run": Text("# The autograder does not run this cell: the kit's engine scores the exercise from your "
                         "notebook's definitions.",
                         "# Автогрейдер эту ячейку не запускает: упражнение оценивает движок rl4llm-kit по "
                         "определениям из вашего ноутбука."),
    "test_visible": Text("# Visible checks: public cases. The autograder also runs hidden checks on inputs you have "
                         "not seen.",
                         "# Видимые проверки: открытые случаи. Автогрейдер также запускает скрытые проверки на "
                         "входах, которых вы не видели."),
    "test_none": Text("# (No visible checks: the public cases of this function do not fit on a line; the "
                      "autograder's hidden checks include them.)",
                      "# (Видимых проверок нет: открытые случаи этой функции не помещаются в строку; скрытые "
                      "проверки автогрейдера их включают.)"),
    "test_a_case": Text("a public case", "открытый случай"),
    "test_dependency": Text("# First your {dependency} on its own public cases: only where it fails them is a "
                               "failure below not taken as {name}'s.",
                               "# Сначала ваша {dependency} на её собственных открытых случаях: только если она их не "
                               "проходит, сбой ниже не считается ошибкой {name}."),
}


def _plural(n: float, en: tuple[str, str], ru: tuple[str, str, str], language: str) -> str:
    """`n` with its noun: English singular/plural, Russian by its plural rules (1 балл, 2 балла, 5 баллов)."""
    number = f"{n:g}"
    if language != "ru":
        return f"{number} {en[0] if n == 1 else en[1]}"
    if n != int(n):
        return f"{number} {ru[1]}"
    k = int(n)
    if k % 10 == 1 and k % 100 != 11:
        return f"{number} {ru[0]}"
    if 2 <= k % 10 <= 4 and not 12 <= k % 100 <= 14:
        return f"{number} {ru[1]}"
    return f"{number} {ru[2]}"


def exercises_text(n: int, language: str) -> str:
    return _plural(n, ("exercise", "exercises"), ("упражнение", "упражнения", "упражнений"), language)


def points_text(n: float, language: str) -> str:
    return _plural(n, ("point", "points"), ("балл", "балла", "баллов"), language)


AND = Text(" and ", " и ")  # the last two names of a list


def code_list(names: list[str], language: str) -> str:
    """`a`, `b` and `c` (``и`` in Russian)."""
    quoted = [f"`{n}`" for n in names]
    joiner = AND.in_(language)
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + joiner + quoted[-1]


def fenced(text: str) -> str:
    """``text`` as a Markdown code block (four backticks when it holds three)."""
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text}\n{fence}"

# The lines the notebook's visible checks print or raise (graders.build.notebooks.helper), in the notebook's
# language; the likely-mistake lines are the learner's pytest's own (starter/conftest.py's MESSAGES).
CHECK_TEXT = {
    "not_implemented": Text("NOT IMPLEMENTED: {name} -- replace `raise NotImplementedError()` in its solution cell "
                            "with your code",
                            "НЕ РЕАЛИЗОВАНО: {name} — замените `raise NotImplementedError()` в ячейке с решением "
                            "своим кодом"),
    "did_not_raise": Text("expected {exception} to be raised", "ожидалось исключение {exception}, но его не было"),
    "undecided": Text("the visible checks of {name} are not decided: your {dependency} fails its own public case "
                      "({reason}); the autograder checks {name} with a trusted copy of {dependency}, so fix "
                      "{dependency} first (its test cell above), then run this cell again",
                      "видимые проверки {name} не дают вердикта: ваша {dependency} не проходит свой открытый случай "
                      "({reason}); автогрейдер проверяет {name} с доверенной копией {dependency}, поэтому сначала "
                      "исправьте {dependency} (её тестовая ячейка выше), затем выполните эту ячейку снова"),
    "dependencies_pass": Text("what it calls passes its own public cases above ({dependencies}): the mistake is in "
                              "{name}",
                              "то, что она вызывает, проходит свои открытые случаи выше ({dependencies}): ошибка в "
                              "{name}"),
}
