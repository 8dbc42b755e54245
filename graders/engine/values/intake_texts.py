"""The intake's refusals, worded in every language: a zip refused from its end records, a notebook its reader
could not read, and why. Entries of :data:`graders.engine.values.texts.DETAILS`, kept here so that the table of
details stays one page; the intake says them as data (``texts.detail``: :mod:`graders.engine.intake.reader`,
:data:`graders.engine.intake.notebook_reader.WHY`). :data:`INTAKE_FEEDBACK`: entries of
:data:`graders.engine.values.texts.FEEDBACK` kept here for the same reason (a function that is still a stub).
"""

from __future__ import annotations

from graders.text import Text

INTAKE_DETAILS = {
    # a zip refused from its end records (graders.engine.intake.reader.check_zip_ends): its reason read back too
    # (before "zip_unreadable", whose error is Python's text; a reason that is not one of these falls to it)
    "zip_not_readable": Text("{name} is not a readable zip file ({reason})",
                             "{name} не удаётся прочитать как zip-архив ({reason})"),
    "zip_no_end": Text("no end-of-directory record in its last 64 KiB", "в последних 64 КиБ нет записи о конце каталога"),
    "zip_large": Text("its directory is {size} bytes, over the {limit} that {count} members may take",
                      "его каталог занимает {size} байт, больше {limit}, допустимых для элементов: {count}"),
    "zip_outside": Text("its directory ({size} bytes at {offset}) passes byte {end}",
                        "его каталог ({size} байт со смещения {offset}) заходит за байт {end}"),
    "zip_entries": Text("its directory lacks the {count} members listed", "в его каталоге нет всех {count} элементов"),
    # a file an LMS student handed in more than once (graders.engine.outputs.lms.stage, .lms.json's "resubmitted";
    # graders.engine.intake.submission.discover): which was graded, which were set aside
    "note_resubmitted": Text("{file} was handed in {count} times: the newest, {graded}, was graded; set aside: "
                             "{aside}",
                             "файл {file} сдан несколько раз ({count}): проверена последняя версия, {graded}; "
                             "не проверялись: {aside}"),
    # a notebook its reader's child could not read (graders.engine.intake.notebook_reader), and why
    "notebook_unreadable": Text("not a readable notebook ({reason})", "ноутбук не удаётся прочитать ({reason})"),
    "notebook_cpu": Text("reading took more than {seconds} s of CPU",
                         "чтение заняло больше {seconds} с процессорного времени"),
    "notebook_wall": Text("reading took more than {seconds} s", "чтение заняло больше {seconds} с"),
    "notebook_memory": Text("reading needed more than {mib} MiB", "для чтения нужно больше {mib} МиБ"),
    "notebook_stopped": Text("its reader stopped ({code})", "программа чтения остановилась ({code})"),
    "notebook_silent": Text("its reader gave no answer", "программа чтения не дала ответа"),
}

INTAKE_FEEDBACK = {
    # a function that still raises NotImplementedError without the kit's message (nbgrader's stub, a learner's
    # own): graders.engine.outputs.feedback._stub_line; {detail} is "" or " (<its message>)"
    "stub_raises": Text("{function} is not implemented yet: it still raises NotImplementedError{detail}",
                        "{function}: ещё не реализовано — функция по-прежнему выбрасывает NotImplementedError{detail}"),
}
