"""Every text of the class report, in English and Russian (``Text(en, ru)``)."""

from __future__ import annotations

from graders.text import Text

TEXT = {
    "title": Text("Class report: {submissions} submissions, {exercises} exercises",
                  "Отчёт по группе: работ {submissions}, заданий {exercises}"),
    "scores": Text("Scores", "Баллы"),
    "scores_figure": Text("Total scores of the class", "Итоговые баллы группы"),
    "score_axis": Text("total score (of {max_score})", "итоговый балл (из {max_score})"),
    "count_axis": Text("submissions", "работ"),
    "summary": Text("count {count}, mean {mean}, median {median}, quartiles {q1} and {q3}, min {min}, max {max}",
                    "работ {count}, среднее {mean}, медиана {median}, квартили {q1} и {q3}, минимум {min}, максимум {max}"),
    "exercises": Text("Exercises, hardest first", "Задания, от самого трудного"),
    "exercises_figure": Text("Mean fraction of points per exercise", "Средняя доля баллов по заданиям"),
    "fraction_axis": Text("mean fraction of points", "средняя доля баллов"),
    "exercise": Text("exercise", "задание"),
    "max_points": Text("points", "баллы"),
    "handed_in": Text("handed in", "сдано"),
    "missing_count": Text("missing", "не сдано"),
    "mean_fraction": Text("mean fraction", "средняя доля"),
    "pass_rate": Text("pass rate", "доля зачтённых"),
    "discrimination": Text("discrimination", "дискриминативность"),
    "discrimination_note": Text("discrimination: the correlation of an exercise's points with the rest of the "
                                "total (low or negative: the exercise does not separate strong from weak work). "
                                "Handed in means with code to judge: a missing file is not a wrong answer, and "
                                "neither is an untouched stub or a file that cannot be read or loaded (\"no code\"); "
                                "mean, pass rate and discrimination are over the submissions that handed the "
                                "exercise in",
                                "дискриминативность: корреляция баллов за задание с остальной суммой "
                                "(низкая или отрицательная: задание не отделяет сильные работы от слабых). "
                                "Сдано — значит есть код для проверки: несданный файл не считается неверным ответом, "
                                "как и нетронутая заготовка или файл, который нельзя прочитать или загрузить "
                                "(«без кода»); среднее, доля зачтённых и дискриминативность считаются по работам, "
                                "где задание сдано"),
    "misconceptions": Text("Misconceptions the class holds, most common first",
                           "Ошибочные представления группы, от самых частых"),
    "misconception": Text("misconception", "ошибка"),
    "learners": Text("submissions", "работ"),
    "who": Text("who", "кто"),
    "hint": Text("hint", "подсказка"),
    "no_misconceptions": Text("No catalogued misconception was named in this batch.",
                              "В этой партии не названо ни одной ошибки из каталога."),
    "heatmap": Text("Every exercise of every submission", "Каждое задание каждой работы"),
    "heatmap_figure": Text("Status of each exercise in each submission (submissions by total score)",
                           "Статус каждого задания в каждой работе (работы по итоговому баллу)"),
    "submission_axis": Text("submission (highest total first)", "работа (от наибольшего балла)"),
    "environment": Text("Errors and timeouts (usually the environment, not the learning)",
                        "Ошибки выполнения и превышения времени (обычно среда, а не понимание)"),
    "environment_note": Text("grouped by cause: one row per cause and submission, with the exercises it stopped (a "
                             "file that cannot be read stops every exercise in it). An exercise left as its stub "
                             "(NotImplementedError) is counted apart, as not implemented",
                             "по причинам: одна строка на причину и работу, с заданиями, которые она остановила "
                             "(файл, который нельзя прочитать, останавливает все свои задания). Задание, оставленное "
                             "заготовкой (NotImplementedError), учитывается отдельно, как не реализованное"),
    "cause": Text("cause", "причина"),
    "stopped": Text("exercises", "задания"),
    "count": Text("count", "сколько"),
    "no_cause": Text("no cause in the report (graded by an older kit)", "причины в отчёте нет (проверено старой "
                     "версией)"),
    "reason": Text("reason", "причина"),
    "reasons": {
        "validation_missing": Text("returns a value where the input must be refused (an exception is expected)",
                                   "возвращает значение там, где входные данные надо отвергнуть (ожидается "
                                   "исключение)"),
        "not_implemented": Text("still the stub (NotImplementedError)", "всё ещё заготовка (NotImplementedError)"),
        "missing": Text("no file or no function", "нет файла или функции"),
    },
    "no_code_count": Text("no code", "без кода"),
    # input validation missing
    "validation": Text("Input validation missing", "Нет проверки входных данных"),
    "validation_note": Text("failed only on the checks that expect the input to be refused (an exception): the "
                            "formula is right, the validation is left out",
                            "не пройдены только проверки, где входные данные надо отвергнуть (исключением): формула "
                            "верна, проверка входных данных пропущена"),
    "no_validation": Text("No submission failed only on input validation.",
                          "Ни одна работа не ошиблась только в проверке входных данных."),
    "no_environment": Text("No exercise ended in an error or a timeout.",
                           "Ни одно задание не закончилось ошибкой выполнения или превышением времени."),
    "submission": Text("submission", "работа"),
    "status": Text("status", "статус"),
    "statuses": {
        "passed": Text("passed", "зачтено"),
        "failed": Text("failed", "неверно"),
        "error": Text("error", "ошибка"),
        "timeout": Text("timeout", "время"),
        "missing": Text("missing", "нет"),
        "not_implemented": Text("not implemented", "не реализовано"),
        "unexplained": Text("failed, no catalogued mistake", "неверно, ошибки нет в каталоге"),
        "validation_missing": Text("input validation missing", "нет проверки входных данных"),
        "not_graded": Text("not graded in this submission", "в этой работе не проверялось"),
    },
    # per student
    "students": Text("Per student: what to discuss", "По студентам: что обсудить"),
    "students_note": Text("each submission's exercises not passed, the points lost, the catalogued mistakes its "
                          "report names and the hint to discuss with its author",
                          "задания работы, которые не зачтены, потерянные баллы, названные в отчёте ошибки из "
                          "каталога и подсказка для разговора с автором"),
    "student_title": Text("{submission}: {score} of {max_score}", "{submission}: {score} из {max_score}"),
    "points_lost": Text("points lost", "потеряно баллов"),
    "mistakes": Text("named mistakes", "названные ошибки"),
    "all_passed": Text("Every exercise passed.", "Все задания зачтены."),
    "no_mistake": Text("no catalogued mistake", "нет ошибки из каталога"),
    "candidates_are": Text("several fit, none claimed: {candidates}", "подходят несколько, ни одна не выбрана: "
                           "{candidates}"),
    # unexplained failures
    "unexplained": Text("Failures no catalogued mistake explains", "Неверные ответы, которые не объясняет каталог"),
    "unexplained_note": Text("failed exercises whose report names no catalogued mistake (\"candidates\": several "
                             "catalogue entries fit and none is claimed): read these submissions, and perhaps add "
                             "the mistake to the catalogue",
                             "неверные задания, в отчёте которых не названа ни одна ошибка из каталога "
                             "(«кандидаты»: подходят несколько записей каталога, ни одна не выбрана): прочитайте "
                             "эти работы и, возможно, добавьте ошибку в каталог"),
    "no_unexplained": Text("Every failed exercise has a catalogued mistake named.",
                           "Для каждого неверного задания названа ошибка из каталога."),
    "candidates": Text("candidates", "кандидаты"),
    # notes about the folder
    "mixed_note": Text("The reports hold different sets of exercises (runs of different modules?): each exercise's "
                       "numbers are over the submissions graded on it.",
                       "Отчёты содержат разные наборы заданий (запуски разных модулей?): числа по каждому заданию "
                       "считаются по работам, в которых оно проверялось."),
}
