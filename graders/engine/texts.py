"""The grader's texts, in every language of the course (``graders.course.LANGUAGES``).

What ``rl4llm grade`` tells a learner: the feedback lines of an exercise
(:data:`FEEDBACK`, rendered by :mod:`graders.engine.feedback`) and the
scoreboard (:data:`SCOREBOARD`, :func:`graders.engine.reports.scoreboard`).
Every template exists in every language with the same placeholders; exercise
ids, function names, misconception NAMES and statuses (``passed``,
``failed``, ...) are keys and read the same in all of them. A check's label
comes from its case in every language (``Case.label`` in English, the case's
identity; ``Case.label_ru`` in Russian, ``graders.checks.Case.label_in``).
The English templates are exactly the kit's historical strings: English
reports do not change by a byte.

:data:`DETAILS` holds the particulars that other parts of the engine write in
English (a sandbox refusal, a worker's exit, a file's syntax error, the
comparator's line, a note about the submission's files, a kit problem).
Their English templates are the forms those modules produce; :func:`translated`
recognises one and writes it in another language. A particular it does not
recognise stays as written, as do the checks' own messages and Python's
exception texts. The misconception hints come in every language from the
catalogue itself (each entry's docstring, :mod:`graders.engine.misconceptions`).
"""

from __future__ import annotations

import re
import string

from graders.course import LANGUAGES
from graders.engine.compare import Said, spoken

FEEDBACK = {
    "en": {
        # one line saying why the checks were not judged (graders.engine.protocol.Reason)
        "submission_ungradable": "the submission could not be graded: {detail}",
        "file_missing": "missing: no {stem}.py in the submission",
        "not_graded": "not graded: {detail}",
        "no_result": "not graded: the worker returned nothing for this exercise",
        "load_failed": "{stem}.py could not be loaded: {error}",
        "load_refused": "{stem}.py tried {what} while loading; the grader refuses this, so its exercises score 0",
        "load_timeout": "loading {stem}.py did not finish within {seconds:g} s of CPU time; 0 points",
        "load_crashed": "loading {stem}.py ended the grading process: {detail}",
        "timeout": "timeout: did not finish within {seconds:g} s of CPU time (all checks together); 0 points",
        "crashed": "crashed: {detail} while running this exercise; 0 points",
        "function_missing": "missing: {detail}",
        "refused": "this exercise tried {what}; the grader refuses access to the reference solutions and hidden "
                   "checks, so it scores 0",
        "last_output": "last output:",
        # the checks, one by one
        "checks_passed": "{passed}/{checks} checks passed.",
        "check": "- {label} ({visibility}): input {input}",
        "a_check": "a check",
        "hidden": "hidden",
        "public": "public",
        "hidden_input": "hidden input",
        "same_result": "(the same result on {count} more check(s))",
        "more_failing": "- ... and {count} more failing check(s)",
        "kit_problem": "(kit problem, check skipped: {problem})",
        "misconception": "misconception '{name}'",  # how both misconception lines begin: they are found by it
        "misconception_on_check": "misconception '{name}': {hint}",
        "misconception_summary": "- misconception '{name}' (on check '{label}'): {hint}",
        "candidates": "- several catalogued mistakes fit every check equally well, so none is named: {names}",
        "float_trap": ("floating point, not the formula: where exactly 0 is expected (an all-equal group) the "
                       "result is not 0; the mean of equal floats is not always exactly that float (r - mean(r) "
                       "is ~1e-16, not 0), so test for an all-equal group explicitly, as the lecture does"),
        "not_implemented": "not implemented yet: {detail}",
        "not_implemented_marker": "not implemented yet",  # the kit's stubs say it themselves
        # what happened on one failing check (graders.engine.protocol.CaseResult)
        "wrong": "expected {expected}, got {got}",
        "unreadable": "returned a value the grader could not read",
        "not_raised": "expected {exception} to be raised, got {got}",
        "wrong_exception": "expected {exception}, but it raised {error}",
        "raised": "raised {error}",
        "modified_input": "modified its input(s) in place: {names}; inputs must never change",
        "no_case_result": "no result came back for this check",
        "withheld_error": "raised an exception (details withheld: hidden check)",
        "withheld_wrong": "wrong answer (details withheld: hidden check)",
    },
    "ru": {
        "submission_ungradable": "сдачу не удалось проверить: {detail}",
        "file_missing": "не найдено: в сдаче нет файла {stem}.py",
        "not_graded": "не проверено: {detail}",
        "no_result": "не проверено: рабочий процесс не вернул результат по этому упражнению",
        "load_failed": "не удалось загрузить {stem}.py: {error}",
        "load_refused": "при загрузке {stem}.py грейдер запретил действие: {what}; поэтому все упражнения этого "
                        "файла получают 0 баллов",
        "load_timeout": "загрузка {stem}.py не завершилась за {seconds:g} с процессорного времени; 0 баллов",
        "load_crashed": "загрузка {stem}.py аварийно завершила процесс проверки: {detail}",
        "timeout": "превышено время: упражнение не завершилось за {seconds:g} с процессорного времени (все проверки вместе); 0 баллов",
        "crashed": "аварийное завершение: {detail} во время выполнения этого упражнения; 0 баллов",
        "function_missing": "не найдено: {detail}",
        "refused": "упражнение попыталось выполнить запрещённое действие: {what}; грейдер закрывает доступ к "
                   "эталонным решениям и скрытым проверкам, поэтому упражнение получает 0 баллов",
        "last_output": "последний вывод:",
        "checks_passed": "пройдено проверок: {passed} из {checks}.",
        "check": "- {label} ({visibility}), входные данные: {input}",
        "a_check": "проверка",
        "hidden": "скрытая",
        "public": "открытая",
        "hidden_input": "скрыты",
        "same_result": "(тот же результат ещё в проверках: {count})",
        "more_failing": "- ... и ещё непройденных проверок: {count}",
        "kit_problem": "(проблема кита, проверка пропущена: {problem})",
        "misconception": "типичная ошибка '{name}'",
        "misconception_on_check": "типичная ошибка '{name}': {hint}",
        "misconception_summary": "- типичная ошибка '{name}' (на проверке '{label}'): {hint}",
        "candidates": "- всем проверкам одинаково соответствуют несколько известных ошибок, поэтому ни одна не "
                      "названа: {names}",
        "float_trap": ("дело в плавающей точке, а не в формуле: там, где ожидается ровно 0 (группа из равных "
                       "значений), результат не 0; среднее равных чисел с плавающей точкой не всегда в точности "
                       "равно этому числу (r - mean(r) ~ 1e-16, а не 0), поэтому проверьте группу из равных "
                       "значений явно, как в лекции"),
        "not_implemented": "ещё не реализовано: {detail}",
        "not_implemented_marker": "не реализован",
        "wrong": "ожидалось: {expected}, получено: {got}",
        "unreadable": "функция вернула значение, которое грейдер не смог прочитать",
        "not_raised": "ожидалось исключение {exception}, получено: {got}",
        "wrong_exception": "ожидалось исключение {exception}, но функция выбросила {error}",
        "raised": "функция выбросила исключение {error}",
        "modified_input": "функция изменила входные данные на месте: {names}; входные данные изменять нельзя",
        "no_case_result": "по этой проверке не вернулось никакого результата",
        "withheld_error": "функция выбросила исключение (подробности не показываются: скрытая проверка)",
        "withheld_wrong": "неверный ответ (подробности не показываются: скрытая проверка)",
    },
}

SCOREBOARD = {
    "en": {
        "nothing": "no submissions graded.",
        "submission": "submission",
        "score": "score",
        "not_passed": "== {submission}: {score}/{max_score} ({count} exercise(s) not passed)",
    },
    "ru": {
        "nothing": "ни одна сдача не проверена.",
        "submission": "сдача",
        "score": "баллы",
        "not_passed": "== {submission}: {score}/{max_score} (не пройдено упражнений: {count})",
    },
}

# Particulars written in English elsewhere in the engine, each as its module writes it; the first
# template that matches the whole text is used, so a specific form comes before a general one.
DETAILS = {
    "en": {
        # graders.engine.sandbox: what the audit hook refused ("the grader does not allow ...")
        "refused_process": "starting a process",
        "refused_fork": "forking the worker",
        "refused_dlopen": "loading native code with ctypes",
        "refused_dlsym": "looking up native functions with ctypes",
        "refused_symlink": "creating symbolic links",
        "refused_link": "creating hard links",
        "refused_network": "opening network connections",
        "refused_signal": "signalling other processes",
        "refused_path": "access to {path} ({event})",
        "refused_import": "importing {module}",
        # graders.engine.runner: how a worker ended
        "exit_unresponsive": "the worker process stopped responding",
        "exit_segfault": "the worker process was killed by SIGSEGV (a segmentation fault)",
        "exit_killed": "the worker process was killed by SIGKILL (killed, often by the memory limit)",
        "exit_aborted": "the worker process was killed by SIGABRT (aborted)",
        "exit_file_size": "the worker process was killed by SIGXFSZ (wrote a file larger than allowed)",
        "exit_signal": "the worker process was killed by {signal}",
        "exit_code": "the worker process exited with code {code}",
        "result_unreadable": "the worker's result could not be read ({error})",
        # graders.engine.worker and graders.engine.inline: no function to call
        "no_function": "{stem}.py has no function {function}",
        "not_a_function": "{function} is not a function (got {type})",
        # the kit's stubs (graders.build.stubs): a fence without a formula line, then the usual form
        "stub_docstring": "{function} is not implemented yet -- see the docstring",
        "stub": "{function} is not implemented yet -- {pointer}",
        # graders.engine.submission: the learner file
        "file_too_large": "{where} is larger than {limit} bytes and was not graded",
        "file_not_utf8": "{where} is not valid UTF-8 (byte {position}: {byte}); save it as UTF-8 and resubmit",
        "file_syntax": "{where} has a syntax error at line {line} ({message}){code}",
        "file_uncompilable": "{where} cannot be compiled: {error}",
        "file_too_deep": "{where} is too deeply nested or too long to be compiled ({error}); shorten its longest "
                         "expression or its deepest nesting and resubmit",
        # graders.engine.submission: notes about where the learner file was found
        "note_copies": "found {count} copies of {stem}.py; graded the shallowest, {chosen} (ignored: {others})",
        "note_notebook": "graded the definitions in notebook {notebook} (no {stem}.py in the submission)",
        "note_near_miss": "found {files}: is that your {stem}.py? Learner files are graded by their exact starter "
                          "names; rename it to {stem}.py and resubmit",
        # graders.engine.submission: the submission as a whole
        "submission_unreadable": "the submission could not be read ({error})",
        "zip_unreadable": "{name} is not a readable zip file ({error})",
        "zip_members": "the zip has {count} members; the limit is {limit}",
        "zip_member_unreadable": "the zip member {name} cannot be read ({error})",
        "zip_unsafe": "unsafe zip: {reason}",
        "zip_nul": "a member name contains a NUL byte",
        "zip_absolute": "member {name} has an absolute path",
        "zip_escapes": "member {name} escapes the folder ('..')",
        "zip_symlink": "member {name} is a symbolic link",
        "zip_special": "member {name} is not a regular file",
        "zip_member_large": "member {name} is too large ({size} bytes; the limit is {limit})",
        "zip_member_inflates": "member {name} is larger than {limit} bytes once decompressed",
        "zip_total": "more than {limit} bytes once decompressed",
        "not_a_submission": "{path} is neither a folder, a .zip, nor a learner file",
        # graders.engine.grading and graders.engine.judge: the kit's own problems
        "kit_no_checks": "the kit has no checks for this exercise yet (graders/checks/); it cannot be graded",
        "kit_no_cases": "the kit's checks for this exercise have no cases",
        "kit_no_raise": "check {label} expects {exception}, but the reference does not raise it",
        "kit_reference_raised": "the reference raised on check {label}: {message}",
        "kit_no_usable_checks": "no usable checks",
        # graders.engine.compare: the comparator's line
        "compare_at": "at {where}: {reason}",
        "compare_entries": "{count} of {size} entries differ; first at index {index}: expected {expected}, "
                           "got {got} (rtol {rtol}, atol {atol})",
        "compare_shape": "expected an array of shape {shape}, got shape {got_shape}",
        "compare_length": "expected {count} item(s), got {got_count}",
        "compare_key": "missing key {key}",
        "compare_kind": "cannot compare {kind}",
        "compare_values": "expected {expected}, got {got}",
    },
    "ru": {
        "refused_process": "запуск процесса",
        "refused_fork": "fork рабочего процесса",
        "refused_dlopen": "загрузка нативного кода через ctypes",
        "refused_dlsym": "поиск нативных функций через ctypes",
        "refused_symlink": "создание символических ссылок",
        "refused_link": "создание жёстких ссылок",
        "refused_network": "открытие сетевых соединений",
        "refused_signal": "отправка сигналов другим процессам",
        "refused_path": "доступ к {path} ({event})",
        "refused_import": "импорт {module}",
        "exit_unresponsive": "рабочий процесс перестал отвечать",
        "exit_segfault": "рабочий процесс завершён сигналом SIGSEGV (ошибка сегментации)",
        "exit_killed": "рабочий процесс завершён сигналом SIGKILL (принудительно, часто из-за лимита памяти)",
        "exit_aborted": "рабочий процесс завершён сигналом SIGABRT (аварийная остановка)",
        "exit_file_size": "рабочий процесс завершён сигналом SIGXFSZ (записан файл больше допустимого размера)",
        "exit_signal": "рабочий процесс завершён сигналом {signal}",
        "exit_code": "рабочий процесс завершился с кодом {code}",
        "result_unreadable": "не удалось прочитать результат рабочего процесса ({error})",
        "no_function": "в {stem}.py нет функции {function}",
        "not_a_function": "{function} — не функция (получено: {type})",
        "stub_docstring": "{function}: ещё не реализовано — см. docstring",
        "stub": "{function}: ещё не реализовано — {pointer}",
        "file_too_large": "файл {where} больше {limit} байт и не проверялся",
        "file_not_utf8": "файл {where} не является корректным текстом в UTF-8 (байт {position}: {byte}); сохраните "
                         "файл в кодировке UTF-8 и отправьте заново",
        "file_syntax": "в {where} синтаксическая ошибка в строке {line} ({message}){code}",
        "file_uncompilable": "файл {where} не удаётся скомпилировать: {error}",
        "file_too_deep": "в файле {where} слишком глубокая вложенность или слишком длинное выражение, его нельзя "
                         "скомпилировать ({error}); сократите самое длинное выражение или самую глубокую "
                         "вложенность и отправьте файл заново",
        "note_copies": "найдено копий {stem}.py: {count}; проверена ближайшая к корню сдачи, {chosen} "
                       "(пропущены: {others})",
        "note_notebook": "проверены определения из ноутбука {notebook} (в сдаче нет {stem}.py)",
        "note_near_miss": "найдено: {files}. Это ваш {stem}.py? Файлы проверяются только под точными именами "
                          "из starter; переименуйте файл в {stem}.py и отправьте заново",
        "submission_unreadable": "не удалось прочитать сдачу ({error})",
        "zip_unreadable": "{name} не удаётся прочитать как zip-архив ({error})",
        "zip_members": "элементов в zip-архиве: {count}; допустимо не больше {limit}",
        "zip_member_unreadable": "не удаётся прочитать элемент zip-архива {name} ({error})",
        "zip_unsafe": "небезопасный zip-архив: {reason}",
        "zip_nul": "имя одного из элементов содержит байт NUL",
        "zip_absolute": "у элемента {name} абсолютный путь",
        "zip_escapes": "элемент {name} выходит за пределы папки ('..')",
        "zip_symlink": "элемент {name} — символическая ссылка",
        "zip_special": "элемент {name} — не обычный файл",
        "zip_member_large": "элемент {name} слишком велик ({size} байт; допустимо не больше {limit})",
        "zip_member_inflates": "элемент {name} после распаковки больше {limit} байт",
        "zip_total": "после распаковки больше {limit} байт",
        "not_a_submission": "{path} — не папка, не .zip и не учебный файл",
        "kit_no_checks": "у кита пока нет проверок для этого упражнения (graders/checks/); его нельзя проверить",
        "kit_no_cases": "в проверках кита для этого упражнения нет ни одного тестового случая",
        "kit_no_raise": "проверка {label} ожидает исключение {exception}, но эталонное решение его не выбрасывает",
        "kit_reference_raised": "эталонное решение выбросило исключение на проверке {label}: {message}",
        "kit_no_usable_checks": "нет пригодных проверок",
        "compare_at": "элемент {where}: {reason}",
        "compare_entries": "не совпадают элементы: {count} из {size}; первый — с индексом {index}: ожидалось: "
                           "{expected}, получено: {got} (rtol {rtol}, atol {atol})",
        "compare_shape": "ожидался массив формы {shape}, получена форма {got_shape}",
        "compare_length": "ожидалось элементов: {count}, получено: {got_count}",
        "compare_key": "нет ключа {key}",
        "compare_kind": "не удаётся сравнить: {kind}",
        "compare_values": "ожидалось: {expected}, получено: {got}",
    },
}

# graders.engine.compare.kind: what a value is, inside the comparator's line
KINDS = {
    "en": {
        "number": "a number",
        "string": "a string",
        "dict": "a dict",
        "array": "an array of shape {shape}",
        "list": "a list of {count} item(s)",
        "object": "an object of type {type}",
        "other": "a {type}",
    },
    "ru": {
        "number": "число",
        "string": "строка",
        "dict": "словарь",
        "array": "массив формы {shape}",
        "list": "список длины {count}",
        "object": "объект типа {type}",
        "other": "объект типа {type}",
    },
}

# placeholders of DETAILS that hold text of their own: a particular (translated, or the whole stays
# English) or a value that may be a kind ("a number"; a value such as 0.5 stays as it is)
_NESTED_DETAIL = ("reason",)
_NESTED_KIND = ("expected", "got", "kind")


def checked(language: str) -> str:
    """``language`` when the course has it; ``ValueError`` otherwise."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; the course speaks {', '.join(LANGUAGES)}")
    return language


def feedback_text(language: str, key: str, **fields) -> str:
    """One feedback template of :data:`FEEDBACK`, filled in."""
    return FEEDBACK[checked(language)][key].format(**fields)


def scoreboard_text(language: str, key: str, **fields) -> str:
    """One scoreboard template of :data:`SCOREBOARD`, filled in."""
    return SCOREBOARD[checked(language)][key].format(**fields)


def detail(key: str, **fields) -> str:
    """A particular in the form the engine writes it (English; :func:`translated` reads it back)."""
    return DETAILS["en"][key].format(**fields)


def detail_in_every_language(key: str, per_language: dict[str, dict] | None = None, **fields) -> Said:
    """:func:`detail` with the fields that differ by language (a check's label) given per language."""
    per_language = per_language or {}
    return spoken({language: DETAILS[language][key].format(**{**fields, **per_language.get(language, {})})
                   for language in LANGUAGES})


def translated(text: str, language: str) -> str:
    """``text``, a particular the engine wrote in English, in ``language`` (as it is when not recognised).

    A check's own message made with ``graders.checks.said`` carries its translations: they win."""
    spoken = getattr(text, "translations", None)
    if isinstance(spoken, dict) and isinstance(spoken.get(checked(language)), str):
        return spoken[checked(language)]
    if checked(language) == "en":
        return text
    found = _translate(text, DETAILS, language)
    return text if found is None else found


def _translate(text: str, table: dict, language: str) -> str | None:
    for key, pattern in _patterns(table):
        match = pattern.fullmatch(text)
        if match is None:
            continue
        fields = dict(match.groupdict())
        for name, value in fields.items():
            if name in _NESTED_DETAIL:
                fields[name] = _translate(value, DETAILS, language)
            elif name in _NESTED_KIND:
                fields[name] = _translate(value, KINDS, language) or value
        if None not in fields.values():
            return table[language][key].format(**fields)
    return None


_PATTERNS: dict[int, list[tuple[str, re.Pattern]]] = {}


def _patterns(table: dict) -> list[tuple[str, re.Pattern]]:
    """The English templates of ``table`` as patterns: a placeholder matches any text (a repeat, the same)."""
    if id(table) not in _PATTERNS:
        compiled = []
        for key, template in table["en"].items():
            parts, seen = [], set()
            for literal, field, _, _ in string.Formatter().parse(template):
                parts.append(re.escape(literal))
                if field is not None:
                    parts.append(f"(?P={field})" if field in seen else f"(?P<{field}>.*?)")
                    seen.add(field)
            compiled.append((key, re.compile("".join(parts), re.DOTALL)))
        _PATTERNS[id(table)] = compiled
    return _PATTERNS[id(table)]
