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
                                "A missing file is not a wrong answer: mean, pass rate and discrimination are over "
                                "the submissions that handed the exercise in; the missing ones are counted apart",
                                "дискриминативность: корреляция баллов за задание с остальной суммой "
                                "(низкая или отрицательная: задание не отделяет сильные работы от слабых). "
                                "Несданный файл не считается неверным ответом: среднее, доля зачтённых и "
                                "дискриминативность считаются по работам, где задание сдано; несданные считаются "
                                "отдельно"),
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
    "environment_note": Text("an exercise left as its stub (NotImplementedError) is counted apart, as not "
                             "implemented; a row for every exercise of a submission usually means a broken setup",
                             "задание, оставленное заготовкой (NotImplementedError), учитывается отдельно, как "
                             "не реализованное; строки для всех заданий одной работы обычно значат сломанную среду"),
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
