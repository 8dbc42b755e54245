"""The grader's texts, in every language of the course (``graders.course.LANGUAGES``).

Each table is key-major: ``{key: Text(en, ru)}`` (:class:`graders.text.Text`), read with
``TABLE[key].in_(language, **fields)``.

What ``rl4llm grade`` tells a learner: the feedback lines of an exercise
(:data:`FEEDBACK`, rendered by :mod:`graders.engine.outputs.feedback`) and the
scoreboard (:data:`SCOREBOARD`, :func:`graders.engine.outputs.reports.scoreboard`).
Every template exists in every language with the same placeholders; exercise
ids, function names, misconception NAMES and statuses (``passed``,
``failed``, ...) are keys and read the same in all of them. A check's label
comes from its case in every language (``Case.label``, a ``Text`` whose English
value is the case's identity; ``graders.checks.Case.label_in``).
The English templates are exactly the kit's historical strings: English
reports do not change by a byte.

:data:`DETAILS` holds the particulars that other parts of the engine say (a
sandbox refusal, a worker's exit, a file's syntax error, the comparator's line,
a note about the submission's files, a kit problem). Each is made as data, a
:class:`graders.text.Particular` (:func:`detail`): a key, its fields, and which fields
are data rather than the kit's words; every language is rendered from those
fields, and hide mode withholds the data fields by structure. :func:`translated`
reads a Particular or a Text through its accessor and leaves any other string (a
learner's or Python's words) as it is: nothing is read back from English. The misconception hints come in every language from the
catalogue itself (each entry's docstring, :mod:`graders.engine.judging.misconceptions`).
"""

from __future__ import annotations

from graders.course import LANGUAGES
from graders.engine.values.compare_texts import COMPARE, KINDS, TYPES
from graders.text import Particular, Text, placeholders
from graders.engine.values.intake_texts import INTAKE_DETAILS, INTAKE_FEEDBACK

FEEDBACK = {
    # one line saying why the checks were not judged (graders.engine.values.protocol.Reason)
    "submission_ungradable": Text("the submission could not be graded: {detail}",
                                  "сдачу не удалось проверить: {detail}"),
    "file_missing": Text("missing: no {stem}.py in the submission", "не найдено: в сдаче нет файла {stem}.py"),
    "not_graded": Text("not graded: {detail}", "не проверено: {detail}"),
    "no_result": Text("not graded: the worker returned nothing for this exercise",
                      "не проверено: рабочий процесс не вернул результат по этому упражнению"),
    "load_failed": Text("{stem}.py could not be loaded: {error}", "не удалось загрузить {stem}.py: {error}"),
    "load_refused": Text("{stem}.py tried {what} while loading; the grader refuses this, so its exercises score 0",
                         "при загрузке {stem}.py грейдер запретил действие: {what}; поэтому все упражнения этого "
                         "файла получают 0 баллов"),
    "load_timeout": Text("loading {stem}.py did not finish within {seconds:g} s of CPU time; 0 points",
                         "загрузка {stem}.py не завершилась за {seconds:g} с процессорного времени; 0 баллов"),
    "load_crashed": Text("loading {stem}.py ended the grading process: {detail}",
                         "загрузка {stem}.py аварийно завершила процесс проверки: {detail}"),
    "timeout": Text("timeout: did not finish within {seconds:g} s of CPU time (all checks together); 0 points",
                    "превышено время: упражнение не завершилось за {seconds:g} с процессорного времени (все проверки вместе); 0 баллов"),
    "crashed": Text("crashed: {detail} while running this exercise; 0 points",
                    "аварийное завершение: {detail} во время выполнения этого упражнения; 0 баллов"),
    "function_missing": Text("missing: {detail}", "не найдено: {detail}"),
    "refused": Text("this exercise tried {what}; the grader refuses access to the reference solutions and hidden "
                    "checks, so it scores 0",
                    "упражнение попыталось выполнить запрещённое действие: {what}; грейдер закрывает доступ к "
                    "эталонным решениям и скрытым проверкам, поэтому упражнение получает 0 баллов"),
    "last_output": Text("last output:", "последний вывод:"),
    # the checks, one by one
    "checks_passed": Text("{passed}/{checks} checks passed.", "пройдено проверок: {passed} из {checks}."),
    "check": Text("- {label} ({visibility}): input {input}", "- {label} ({visibility}), входные данные: {input}"),
    "a_check": Text("a check", "проверка"),
    "hidden": Text("hidden", "скрытая"),
    "public": Text("public", "открытая"),
    "hidden_input": Text("hidden input", "скрыты"),
    "same_result": Text("(the same result on {count} more check(s))",
                        "(тот же результат ещё в проверках: {count})"),
    "more_failing": Text("- ... and {count} more failing check(s)", "- ... и ещё непройденных проверок: {count}"),
    "kit_problem": Text("(kit problem, check skipped: {problem})",
                        "(проблема комплекта заданий, проверка пропущена: {problem})"),
    "misconception": Text("misconception '{name}'", "типичная ошибка '{name}'"),  # how both misconception lines begin: they are found by it
    "misconception_on_check": Text("misconception '{name}': {hint}", "типичная ошибка '{name}': {hint}"),
    "misconception_summary": Text("- misconception '{name}' (on check '{label}'): {hint}",
                                  "- типичная ошибка '{name}' (на проверке '{label}'): {hint}"),
    "candidates": Text("- several catalogued mistakes fit every check equally well, so none is named: {names}",
                       "- всем проверкам одинаково соответствуют несколько известных ошибок, поэтому ни одна не "
                       "названа: {names}"),
    "float_trap": Text("floating point, not the formula: where exactly 0 is expected (an all-equal group) the "
                       "result is not 0; the mean of equal floats is not always exactly that float (r - mean(r) "
                       "is ~1e-16, not 0), so test for an all-equal group explicitly, as the lecture does",
                       "дело в плавающей точке, а не в формуле: там, где ожидается ровно 0 (группа из равных "
                       "значений), результат не 0; среднее равных чисел с плавающей точкой не всегда в точности "
                       "равно этому числу (r - mean(r) ~ 1e-16, а не 0), поэтому проверьте группу из равных "
                       "значений явно, как в лекции"),
    "not_implemented": Text("not implemented yet: {detail}", "ещё не реализовано: {detail}"),
    "not_implemented_marker": Text("not implemented yet", "не реализован"),  # the kit's stubs say it themselves
    **INTAKE_FEEDBACK,  # a function that still raises NotImplementedError without the kit's message
    # what happened on one failing check (graders.engine.values.protocol.CaseResult)
    "wrong": Text("expected {expected}, got {got}", "ожидалось: {expected}, получено: {got}"),
    "unreadable": Text("returned a value the grader could not read",
                       "функция вернула значение, которое грейдер не смог прочитать"),
    "not_raised": Text("expected {exception} to be raised, got {got}",
                       "ожидалось исключение {exception}, получено: {got}"),
    "wrong_exception": Text("expected {exception}, but it raised {error}",
                            "ожидалось исключение {exception}, но функция выбросила {error}"),
    "raised": Text("raised {error}", "функция выбросила исключение {error}"),
    "modified_input": Text("modified its input(s) in place: {names}; inputs must never change",
                           "функция изменила входные данные на месте: {names}; входные данные изменять нельзя"),
    "no_case_result": Text("no result came back for this check",
                           "по этой проверке не вернулось никакого результата"),
    "withheld_error": Text("raised an exception (details withheld: hidden check)",
                           "функция выбросила исключение (подробности не показываются: скрытая проверка)"),
    "withheld_wrong": Text("wrong answer (details withheld: hidden check)",
                           "неверный ответ (подробности не показываются: скрытая проверка)"),
    "withheld_type": Text("an answer of the wrong type (details withheld: hidden check)",
                          "ответ не того типа (подробности не показываются: скрытая проверка)"),
    "withheld_value": Text("<hidden>", "<скрыто>"),  # a value in a hidden check's line (hide mode)
    "withheld_cause": Text("raised an exception in a hidden check (details withheld)",
                           "функция выбросила исключение в скрытой проверке (подробности не показываются)"),
}

SCOREBOARD = {
    "nothing": Text("no submissions graded.", "ни одна сдача не проверена."),
    "submission": Text("submission", "сдача"),
    "score": Text("score", "баллы"),
    "not_passed": Text("== {submission}: {score}/{max_score} ({count} exercise(s) not passed)",
                       "== {submission}: {score}/{max_score} (не пройдено упражнений: {count})"),
}

# The lines `rl4llm grade` (and `rl4llm report`, `merge`, Gradescope's top-level output) print around the scoreboard
CLI = {
    "progress": Text("grading", "проверка"),
    "unit": Text("submission", "работа"),
    "note": Text("note: {note}", "примечание: {note}"),
    "warning": Text("warning: {message}", "предупреждение: {message}"),
    "layers_missing": Text("sandbox layers missing on this machine: {layers} (see `rl4llm doctor`)",
                           "на этой машине нет слоёв песочницы: {layers} (см. `rl4llm doctor`)"),
    "reports_in": Text("reports in {folder}/ (grades.csv, <submission>/report.json, results.json, junit.xml)",
                       "отчёты в {folder}/ (grades.csv, <работа>/report.json, results.json, junit.xml)"),
    "class_report": Text("class report: {path} ({others})", "отчёт по группе: {path} ({others})"),
    "shard_done": Text("shard {shard}: graded {count} of {total} submissions; when every shard is done: rl4llm merge "
                       "OUT SHARD_DIR...",
                       "часть {shard}: проверено работ {count} из {total}; когда готовы все части: rl4llm merge "
                       "OUT SHARD_DIR..."),
    "gradescope_output": Text("Your score: {score:g} / {max_score:g} ({summary})",
                              "Ваш балл: {score:g} из {max_score:g} ({summary})"),
    "interrupted": Text("rl4llm grade: interrupted: {graded} of {total} submission(s) graded; their reports and "
                        "grades.csv are in {folder}/, whose run manifest marks the run interrupted (the next run into "
                        "it sets it aside); grade again to grade them all",
                        "rl4llm grade: прервано: проверено работ: {graded} из {total}; их отчёты и grades.csv в "
                        "{folder}/, манифест запуска отмечает его прерванным (следующий запуск туда отложит его в "
                        "сторону); запустите проверку снова, чтобы проверить все"),
}
STATUS_WORDS = {"passed": Text("passed", "зачтено"), "failed": Text("failed", "неверно"),
                "error": Text("error", "ошибка"), "timeout": Text("timeout", "время"),
                "missing": Text("missing", "нет")}

# Particulars written in English elsewhere in the engine, each as its module writes it; the first
# template that matches the whole text is used, so a specific form comes before a general one.
DETAILS = {
    # graders.engine.sandbox.layers: what the audit hook refused ("the grader does not allow ...")
    "refused_process": Text("starting a process", "запуск процесса"),
    "refused_fork": Text("forking the worker", "fork рабочего процесса"),
    "refused_dlopen": Text("loading native code with ctypes", "загрузка нативного кода через ctypes"),
    "refused_dlsym": Text("looking up native functions with ctypes", "поиск нативных функций через ctypes"),
    "refused_symlink": Text("creating symbolic links", "создание символических ссылок"),
    "refused_link": Text("creating hard links", "создание жёстких ссылок"),
    "refused_network": Text("opening network connections", "открытие сетевых соединений"),
    "refused_signal": Text("signalling other processes", "отправка сигналов другим процессам"),
    "refused_path": Text("access to {path} ({event})", "доступ к {path} ({event})"),
    "refused_import": Text("importing {module}", "импорт {module}"),
    # graders.engine.sandbox.layers: why workers keep root (a note of `rl4llm grade`)
    "keep_root_env": Text("RL4LLM_KEEP_ROOT=1: workers keep root (audit hook only)",
                          "RL4LLM_KEEP_ROOT=1: рабочие процессы остаются под root (только audit hook)"),
    "keep_root_start": Text("running as root, but user nobody cannot start {python} ({error}): workers keep root{fix}",
                            "запуск под root, но пользователь nobody не может запустить {python} ({error}): рабочие "
                            "процессы остаются под root{fix}"),
    "keep_root_import": Text("running as root, but user nobody cannot import the worker ({last}): workers keep "
                             "root{fix}",
                             "запуск под root, но пользователь nobody не может импортировать рабочий модуль ({last}): "
                             "рабочие процессы остаются под root{fix}"),
    "keep_root_fix": Text(
        "; user nobody cannot enter {folder}, on the way to {what} ({path}): run `chmod o+x {folder}` (others may "
        "then pass through it, not list it), or install the kit with a Python outside it (e.g. python3 -m venv "
        "/opt/rl4llm-venv)",
        "; nobody не может войти в {folder} на пути к {what} ({path}): выполните `chmod o+x {folder}` (другие "
        "смогут проходить через папку, но не читать её список) или установите комплект заданий с Python вне её "
        "(например, python3 -m venv /opt/rl4llm-venv)"),
    "keep_root_to_interpreter": Text("the interpreter", "интерпретатору"),
    "keep_root_to_kit": Text("the kit", "комплекту заданий"),
    # graders.engine.outputs.outfolder: an earlier run set aside
    "set_aside_interrupted": Text(
        "note: {out_dir} held an earlier run that was interrupted ({graded} of {total} submission(s) graded); set "
        "aside in {target}/ ({folders} submission folder(s) and {files} file(s), nothing deleted): {out_dir} now "
        "holds this run only",
        "примечание: в {out_dir} был прерванный прошлый запуск (проверено работ: {graded} из {total}); он "
        "перенесён в {target}/ (папок работ: {folders}, файлов: {files}, ничего не удалено): теперь в {out_dir} "
        "только этот запуск"),
    "set_aside": Text("note: {out_dir} held an earlier run; set aside in {target}/ ({folders} submission folder(s) and "
                      "{files} file(s), nothing deleted): {out_dir} now holds this run only",
                      "примечание: в {out_dir} был прошлый запуск; он перенесён в {target}/ (папок работ: {folders}, "
                      "файлов: {files}, ничего не удалено): теперь в {out_dir} только этот запуск"),
    # graders.engine.worker.runner: how a worker ended
    "exit_unresponsive": Text("the worker process stopped responding", "рабочий процесс перестал отвечать"),
    "exit_segfault": Text("the worker process was killed by SIGSEGV (a segmentation fault)",
                          "рабочий процесс завершён сигналом SIGSEGV (ошибка сегментации)"),
    "exit_killed": Text("the worker process was killed by SIGKILL (killed, often by the memory limit)",
                        "рабочий процесс завершён сигналом SIGKILL (принудительно, часто из-за лимита памяти)"),
    "exit_aborted": Text("the worker process was killed by SIGABRT (aborted)",
                         "рабочий процесс завершён сигналом SIGABRT (аварийная остановка)"),
    "exit_file_size": Text("the worker process was killed by SIGXFSZ (wrote a file larger than allowed)",
                           "рабочий процесс завершён сигналом SIGXFSZ (записан файл больше допустимого размера)"),
    "exit_signal": Text("the worker process was killed by {signal}", "рабочий процесс завершён сигналом {signal}"),
    "exit_code": Text("the worker process exited with code {code}", "рабочий процесс завершился с кодом {code}"),
    "result_unreadable": Text("the worker's result could not be read ({error})",
                              "не удалось прочитать результат рабочего процесса ({error})"),
    # graders.engine.worker.parent and graders.engine.routes.inline: no function to call
    "no_function": Text("{stem}.py has no function {function}", "в {stem}.py нет функции {function}"),
    "not_a_function": Text("{function} is not a function (got {type})",
                           "{function} — не функция (получено: {type})"),
    # the kit's stubs (graders.build.stubs): a fence without a formula line, then the usual form
    "stub_docstring": Text("{function} is not implemented yet -- see the docstring",
                           "{function}: ещё не реализовано — см. docstring"),
    "stub": Text("{function} is not implemented yet -- {pointer}", "{function}: ещё не реализовано — {pointer}"),
    # graders.engine.intake.submission: the learner file
    "file_too_large": Text("{where} is larger than {limit} bytes and was not graded",
                           "файл {where} больше {limit} байт и не проверялся"),
    "file_not_utf8": Text("{where} is not valid UTF-8 (byte {position}: {byte}); save it as UTF-8 and resubmit",
                          "файл {where} не является корректным текстом в UTF-8 (байт {position}: {byte}); сохраните "
                          "файл в кодировке UTF-8 и отправьте заново"),
    "file_syntax": Text("{where} has a syntax error at line {line} ({message}){code}",
                        "в {where} синтаксическая ошибка в строке {line} ({message}){code}"),
    "file_uncompilable": Text("{where} cannot be compiled: {error}",
                              "файл {where} не удаётся скомпилировать: {error}"),
    "file_too_deep": Text("{where} is too deeply nested or too long to be compiled ({error}); shorten its longest "
                          "expression or its deepest nesting and resubmit",
                          "в файле {where} слишком глубокая вложенность или слишком длинное выражение, его нельзя "
                          "скомпилировать ({error}); сократите самое длинное выражение или самую глубокую "
                          "вложенность и отправьте файл заново"),
    # graders.engine.intake.submission: notes about where the learner file was found
    "note_copies": Text("found {count} copies of {stem}.py; graded the shallowest, {chosen} (ignored: {others})",
                        "найдено копий {stem}.py: {count}; проверена ближайшая к корню сдачи, {chosen} "
                        "(пропущены: {others})"),
    "note_notebook": Text("graded the definitions in notebook {notebook} (no {stem}.py in the submission)",
                          "проверены определения из ноутбука {notebook} (в сдаче нет {stem}.py)"),
    "note_cell_graded": Text("{notebook} cell {cell} ({start}): {error}; this cell was left out, as Jupyter fails "
                             "it alone, and the notebook's other cells were graded",
                             "{notebook}, ячейка {cell} ({start}): {error}; эта ячейка не учтена (Jupyter тоже "
                             "не выполнил бы её), остальные ячейки ноутбука проверены"),
    "note_cell_nothing": Text("{notebook} cell {cell} ({start}): {error}; nothing in this notebook could be graded",
                              "{notebook}, ячейка {cell} ({start}): {error}; в этом ноутбуке нечего проверить"),
    "note_near_miss": Text("found {files}: is that your {stem}.py? Learner files are graded by their exact starter "
                           "names; rename it to {stem}.py and resubmit",
                           "найдено: {files}. Это ваш {stem}.py? Файлы проверяются только под точными именами "
                           "из starter; переименуйте файл в {stem}.py и отправьте заново"),
    # graders.engine.intake.submission: the submission as a whole
    "submission_unreadable": Text("the submission could not be read ({error})",
                                  "не удалось прочитать сдачу ({error})"),
    **INTAKE_DETAILS,  # the zip and notebook refusals with their reasons (before "zip_unreadable")
    "zip_unreadable": Text("{name} is not a readable zip file ({error})",
                           "{name} не удаётся прочитать как zip-архив ({error})"),
    "zip_members": Text("the zip has {count} members; the limit is {limit}",
                        "элементов в zip-архиве: {count}; допустимо не больше {limit}"),
    "zip_member_unreadable": Text("the zip member {name} cannot be read ({error})",
                                  "не удаётся прочитать элемент zip-архива {name} ({error})"),
    "zip_unsafe": Text("unsafe zip: {reason}", "небезопасный zip-архив: {reason}"),
    "zip_nul": Text("a member name contains a NUL byte", "имя одного из элементов содержит байт NUL"),
    "zip_absolute": Text("member {name} has an absolute path", "у элемента {name} абсолютный путь"),
    "zip_escapes": Text("member {name} escapes the folder ('..')",
                        "элемент {name} выходит за пределы папки ('..')"),
    "zip_symlink": Text("member {name} is a symbolic link", "элемент {name} — символическая ссылка"),
    "zip_special": Text("member {name} is not a regular file", "элемент {name} — не обычный файл"),
    "zip_member_large": Text("member {name} is too large ({size} bytes; the limit is {limit})",
                             "элемент {name} слишком велик ({size} байт; допустимо не больше {limit})"),
    "zip_member_inflates": Text("member {name} is larger than {limit} bytes once decompressed",
                                "элемент {name} после распаковки больше {limit} байт"),
    "zip_total": Text("more than {limit} bytes once decompressed", "после распаковки больше {limit} байт"),
    "not_a_submission": Text("{path} is neither a folder, a .zip, nor a learner file",
                             "{path} — не папка, не .zip и не учебный файл"),
    # graders.engine.routes.grading and graders.engine.judging.judge: the kit's own problems
    "kit_no_checks": Text("the kit has no checks for this exercise yet (graders/checks/); it cannot be graded",
                          "в комплекте заданий пока нет проверок для этого упражнения (graders/checks/); его нельзя проверить"),
    "kit_no_cases": Text("the kit's checks for this exercise have no cases",
                         "в проверках комплекта заданий для этого упражнения нет ни одного тестового случая"),
    "kit_no_raise": Text("check {label} expects {exception}, but the reference does not raise it",
                         "проверка {label} ожидает исключение {exception}, но эталонное решение его не выбрасывает"),
    "kit_reference_raised": Text("the reference raised on check {label}: {message}",
                                 "эталонное решение выбросило исключение на проверке {label}: {message}"),
    "kit_no_usable_checks": Text("no usable checks", "нет пригодных проверок"),
    **COMPARE,  # graders.engine.values.compare: the comparator's line (its own table)
}


def checked(language: str) -> str:
    """``language`` when the course has it; ``ValueError`` otherwise."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; the course speaks {', '.join(LANGUAGES)}")
    return language


def feedback_text(language: str, key: str, **fields) -> str:
    """One feedback template of :data:`FEEDBACK`, filled in."""
    return FEEDBACK[key].in_(checked(language), **fields)


def scoreboard_text(language: str, key: str, **fields) -> str:
    """One scoreboard template of :data:`SCOREBOARD`, filled in."""
    return SCOREBOARD[key].in_(checked(language), **fields)


def cli_text(language: str, key: str, **fields) -> str:
    """One line of :data:`CLI`, filled in (English for a language the course lacks)."""
    return CLI[key].in_(language if language in LANGUAGES else "en", **fields)


def detail(key: str, **fields) -> Particular:
    """A particular of :data:`DETAILS` as data (:class:`graders.text.Particular`): the English string it is, and every
    language rendered from the same fields (a field that is a Text, a check's label, read in each). Every field
    counts as data: hide mode withholds it (:meth:`Particular.withheld_in`)."""
    return Particular(key, DETAILS[key], data=tuple(fields), **fields)


REFUSED_UNKNOWN = Text("an action the sandbox refused", "действие, запрещённое песочницей")


def refusal(violation) -> Text:
    """What the sandbox refused, as the kit says it: a Text as it is (hide mode's own), or a door-read refusal
    (``{"what": "refused_path", "path": ..., "event": ...}``, :class:`graders.engine.values.door.Refused`)
    as the Particular of its key, every field data."""
    if isinstance(violation, Text):
        return violation
    what = violation.get("what") if isinstance(violation, dict) else None
    if not (isinstance(what, str) and what.startswith("refused_") and what in DETAILS):
        return REFUSED_UNKNOWN
    return detail(what, **{name: str(violation.get(name, "")) for name in placeholders(DETAILS[what])})


STUB_MARK = " is not implemented yet -- "  # between the function and its pointer in every kit stub's message


def stub_particular(message: str) -> Particular | str:
    """A stub's ``NotImplementedError`` message as the kit's Particular when it is exactly one the kit's build writes
    (:func:`graders.build.stubs.stub_message`: ``<id> is not implemented yet -- <pointer>``); any other message
    as it is. The one place a message from the learner's process is matched against a kit form: the stub is the
    kit's own text in the learner's file, and only its two fixed forms are recognised (never a template read
    back in general). The pointer stays data."""
    function, mark, pointer = str(message).partition(STUB_MARK)
    if not mark or not function or not all(part.isidentifier() for part in function.split(".")) or not pointer:
        return message
    if pointer == DETAILS["stub_docstring"].in_("en", function="").partition(STUB_MARK)[2]:
        return detail("stub_docstring", function=function)
    return detail("stub", function=function, pointer=pointer)


def translated(text: str, language: str) -> str:
    """``text`` in ``language``: a :class:`Text` (a :class:`Particular` too) through its accessor; any other string is
    a learner's or Python's own words and stays as it is. Nothing is read back from English."""
    if isinstance(text, Text):
        return text.in_(checked(language))
    checked(language)
    return text
