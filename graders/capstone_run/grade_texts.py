"""What the capstone's checks and grade tell a student or an instructor, in every language of the course.

Given code: the capstone student need not change it.

The texts of ``rl4llm capstone check`` (the passport checks, graders/capstone.py) and ``rl4llm capstone grade``
(graders/capstone_grade.py, graders/capstone_reeval.py, graders/capstone_claims.py), as
:class:`graders.text.Text`; :data:`graders.capstone_run.texts.TEXT` holds them with the run's texts, and
:func:`graders.capstone_run.texts.text` reads both (see that module for the conventions).
"""

from __future__ import annotations

from graders.text import Text

GRADE_TEXT = {
    # rl4llm capstone grade
    "grade_title": Text("capstone grade of {submission}", "оценка капстоуна {submission}"),
    "grade_score": Text("score: {score}/{max_score}", "баллы: {score}/{max_score}"),
    "grade_not_folder": Text("{submission} is not a folder or a .zip file; nothing graded",
                             "{submission} — не папка и не .zip; ничего не оценено"),
    "check_pass": Text("PASS", "ПРОЙДЕНА"),
    "check_fail": Text("FAIL", "НЕ ПРОЙДЕНА"),
    "check_not_folder": Text("{run_dir} is not a folder; no report written",
                             "{run_dir} — не папка; отчёт не записан"),
    "report_wrote": Text("report: {path}", "отчёт: {path}"),
    # the passport checks (graders/capstone.py): check names are ids, the same in every language
    "passport_absent": Text("no {name} in {run_dir}", "в {run_dir} нет {name}"),
    "passport_not_json": Text("{name} is not valid JSON: {error}", "{name} — некорректный JSON: {error}"),
    "passport_not_object": Text("{name} must hold a JSON object, found {found}",
                                "{name} должен содержать объект JSON, а содержит {found}"),
    "passport_parsed": Text("{name} parsed", "{name} прочитан"),
    "passport_not_checked": Text("not checked: {reason}", "не проверено: {reason}"),
    "passport_fields_unusable": Text("required fields are missing", "нет обязательных полей"),
    "passport_malformed": Text("could not check: malformed passport ({error})",
                               "проверить не удалось: паспорт повреждён ({error})"),
    "passport_too_large": Text("{name} is larger than {limit} bytes, more than a passport holds; not read",
                               "{name} больше {limit} байт — больше, чем бывает паспорт; не прочитан"),
    "passport_not_utf8": Text("{name} is not UTF-8 text (byte {position}: {byte!r})",
                              "{name} — не текст в UTF-8 (байт {position}: {byte!r})"),
    "passport_too_deep": Text("{name} nests too deeply to parse (a passport nests at most {limit} levels)",
                              "{name} вложен слишком глубоко, чтобы его разобрать (паспорт вложен не глубже "
                              "{limit} уровней)"),
    "passport_malformed_fields": Text("{name} is a malformed passport: {problems}",
                                      "{name} — повреждённый паспорт: {problems}"),
    "passport_is_malformed": Text("{name} is a malformed passport (see the passport check)",
                                  "{name} — повреждённый паспорт (см. проверку passport)"),
    "passport_problem_kind": Text("{field} must be {expected}, found {found}",
                                  "{field} должно быть {expected}, а найдено {found}"),
    "passport_problem_missing": Text("{field} is missing", "нет {field}"),
    "passport_problem_range": Text("{field} is {found}, outside {low}..{high}",
                                   "{field} равно {found}, вне диапазона {low}..{high}"),
    "passport_problem_not_finite": Text("{field} must be a finite number, found {found}",
                                        "{field} должно быть конечным числом, а найдено {found}"),
    "passport_problem_deep": Text("{field} nests deeper than {limit} levels",
                                  "{field} вложено глубже {limit} уровней"),
    "passport_problem_long": Text("{field} is a string of {length} characters, at most {limit} allowed",
                                  "{field} — строка из {length} символов, допускается не больше {limit}"),
    "passport_problem_key_long": Text("{field}: a key of {length} characters, at most {limit} allowed",
                                      "{field}: ключ из {length} символов, допускается не больше {limit}"),
    "passport_problem_surrogate": Text("{field} holds a lone surrogate {found}, which is not text",
                                       "{field} содержит одиночный суррогат {found}, а это не текст"),
    "passport_problem_key_surrogate": Text("{field}: a key holding a lone surrogate {found}, which is not text",
                                           "{field}: ключ содержит одиночный суррогат {found}, а это не текст"),
    "passport_problems_more": Text("and {count} more", "и ещё {count}"),
    "passport_kind_object": Text("an object", "объектом"),
    "passport_kind_list": Text("a list", "списком"),
    "passport_kind_string": Text("a string", "строкой"),
    "passport_kind_integer": Text("an integer", "целым числом"),
    "passport_kind_number": Text("a number", "числом"),
    "passport_kind_boolean": Text("true or false", "true или false"),
    "passport_kind_null": Text("null", "null"),
    "passport_kind_either": Text("{first} or {second}", "{first} или {second}"),
    "passport_expected_item": Text("{key}={found!r} (expected {expected!r})",
                                   "{key}={found!r} (ожидалось {expected!r})"),
    "passport_fields_missing": Text("missing field(s): {fields}", "нет полей: {fields}"),
    "passport_schema": Text("schema is {found!r}, expected {expected!r}",
                            "схема {found!r}, ожидалась {expected!r}"),
    "passport_unknown_profile": Text("algorithm/profile {algorithm!r}/{profile!r} is not one of {algorithms} x "
                                     "{profiles}",
                                     "алгоритм/профиль {algorithm!r}/{profile!r} не входит в {algorithms} x "
                                     "{profiles}"),
    "passport_fields_ok": Text("all {count} fields present ({algorithm}, {profile})",
                               "все {count} полей на месте ({algorithm}, {profile})"),
    "passport_versions_missing": Text("library version(s) not recorded: {names}",
                                      "не записаны версии библиотек: {names}"),
    "passport_versions_ok": Text("{versions}", "{versions}"),
    "passport_seed_type": Text("seeds.seed must be an integer, found {found!r}",
                               "seeds.seed должен быть целым числом, а равен {found!r}"),
    "passport_seed_differs": Text("trainer_args.seed is {found!r} but seeds.seed is {seed}",
                                  "trainer_args.seed равен {found!r}, а seeds.seed равен {seed}"),
    "passport_seed_ok": Text("seed {seed} recorded and used by the trainer",
                             "seed {seed} записан и использован тренером"),
    "passport_loss_shape": Text("loss must be an object with path and sha256 (your module_8_training.py, DPO's loss), "
                                "found {found!r}",
                                "loss должен быть объектом с полями path и sha256 (ваш module_8_training.py, потеря "
                                "DPO), а равен {found!r}"),
    "passport_loss_ok": Text("loss: your sequence_logprobs and dpo_loss ({sha}..., {path})",
                             "потеря: ваши sequence_logprobs и dpo_loss ({sha}..., {path})"),
    "passport_verifier_shape": Text("verifier must be an object with path, version and sha256, found {found!r}",
                                    "verifier должен быть объектом с полями path, version и sha256, а равен "
                                    "{found!r}"),
    "passport_verifier_version": Text("verifier version is {found!r}, the kit's VERIFIER_VERSION is {expected!r}: "
                                      "the reward came from a different verifier",
                                      "версия верификатора {found!r}, а VERIFIER_VERSION набора — {expected!r}: "
                                      "награду давал другой верификатор"),
    "passport_verifier_sha": Text("verifier sha256 is not recorded as 64 hex digits: {found!r}",
                                  "sha256 верификатора записан не как 64 шестнадцатеричные цифры: {found!r}"),
    "passport_verifier_ok": Text("verifier {version} ({sha}..., {path})",
                                 "верификатор {version} ({sha}..., {path})"),
    "passport_data_set": Text("data set {dataset!r} [{split!r}], the profile prescribes {expected!r} "
                              "[{expected_split!r}]",
                              "набор данных {dataset!r} [{split!r}], а профиль предписывает {expected!r} "
                              "[{expected_split!r}]"),
    "passport_data_hash_shape": Text("data.{key} is not a sha256 (64 hex digits): {found!r}",
                                     "data.{key} — не sha256 (64 шестнадцатеричные цифры): {found!r}"),
    "passport_data_hash_other": Text("data.{key} is {found}..., the kit's {dataset} hashes to {expected}...: the "
                                     "run trained or evaluated on other rows",
                                     "data.{key} равен {found}..., а хеш {dataset} из набора — {expected}...: "
                                     "запуск обучался или оценивался на других примерах"),
    "passport_data_tiny_ok": Text("{dataset}: train and eval hashes match the kit's rows",
                                  "{dataset}: хеши обучающих и оценочных примеров совпадают с примерами набора"),
    "passport_data_ok": Text("{dataset} [{split}]: hash {sha}... recorded",
                             "{dataset} [{split}]: хеш {sha}... записан"),
    "passport_trainer_class": Text("trainer is {found!r}, expected {expected}",
                                   "тренер {found!r}, ожидался {expected}"),
    "passport_trainer_args_differ": Text("trainer arguments differ from the profile: {differences}",
                                         "аргументы тренера отличаются от профиля: {differences}"),
    "passport_trainer_args_ok": Text("{count} prescribed {trainer} settings match",
                                     "все {count} предписанных настроек {trainer} совпадают"),
    "passport_lora_unused": Text("the trained model was not a PEFT LoRA model (lora.used is not true)",
                                 "обучалась не модель PEFT LoRA (lora.used не равно true)"),
    "passport_lora_differs": Text("LoRA settings differ from the profile: {differences}",
                                  "настройки LoRA отличаются от профиля: {differences}"),
    "passport_lora_ok": Text("LoRA r={r}, alpha={alpha}, {trainable} trainable",
                             "LoRA r={r}, alpha={alpha}, обучаемых параметров: {trainable}"),
    "passport_metrics_missing": Text("metrics.{when} is missing", "нет metrics.{when}"),
    "passport_metrics_not_finite": Text("metrics.{when} lacks a finite {keys} (found {found})",
                                        "в metrics.{when} нет конечного значения {keys} (найдено {found})"),
    "passport_metrics_ok": Text("{summary}", "{summary}"),
    "passport_curve_metric": Text("reward curve plots {found!r}, expected {expected!r}",
                                  "кривая награды строит {found!r}, ожидалось {expected!r}"),
    "passport_curve_empty": Text("the reward curve needs at least one (step, value) point",
                                 "в кривой награды нужна хотя бы одна точка (шаг, значение)"),
    "passport_curve_not_finite": Text("the reward curve has non-finite values: {values}",
                                      "в кривой награды есть неконечные значения: {values}"),
    "passport_curve_ok": Text("{count} point(s) of {key}, last {last:.4g} at step {step}",
                              "точек {key}: {count}, последняя {last:.4g} на шаге {step}"),
    "passport_wall_time_bad": Text("wall_time_s.total must be a positive number of seconds, found {found!r}",
                                   "wall_time_s.total должно быть положительным числом секунд, а равно {found!r}"),
    "passport_wall_time_ok": Text("{total:.1f} s", "{total:.1f} с"),
    "passport_figure_missing": Text("{name} is missing from the run folder", "в папке запуска нет {name}"),
    "passport_figure_not_png": Text("{name} is not a PNG file", "{name} — не файл PNG"),
    "passport_figure_ok": Text("{name} ({size} bytes)", "{name} ({size} байт)"),
    # the grade of a submission (graders/capstone_grade.py, graders/capstone_reeval.py)
    "grade_no_verifier": Text("no {file} in the submission", "в сдаче нет {file}"),
    "grade_verifier": Text("{exercise}: {status} ({points}/{max_points})",
                           "{exercise}: {status} ({points}/{max_points})"),
    "grade_verifier_feedback": Text("{exercise}: {status} ({points}/{max_points}): {feedback}",
                                    "{exercise}: {status} ({points}/{max_points}): {feedback}"),
    "grade_unknown_profile": Text("unknown algorithm/profile {algorithm!r}/{profile!r}",
                                  "неизвестные алгоритм/профиль {algorithm!r}/{profile!r}"),
    "grade_unusable": Text("not checked: the passport is unusable", "не проверено: паспорт непригоден"),
    "grade_inconsistent": Text("not measured: the passport is not consistent",
                               "не измерено: паспорт не согласован сам с собой"),
    "grade_reeval_failed": Text("the adapter could not be re-evaluated: {error}",
                                "адаптер не удалось оценить заново: {error}"),
    "grade_not_measured": Text("not measured", "не измерено"),
    "grade_zip_refused": Text("not graded: {submission} was refused ({reason})",
                              "не оценено: {submission} отклонён ({reason})"),
    "consistency_log_empty": Text("log_history is empty", "log_history пуст"),
    "consistency_curve": Text("reward_curve is not the curve of its own log_history",
                              "reward_curve — не кривая из его собственного log_history"),
    "consistency_steps": Text("the log reaches step {steps}, the profile trains {max_steps}",
                              "журнал доходит до шага {steps}, а профиль обучает {max_steps}"),
    "consistency_dry_run": Text("a dry run (overrides {overrides})", "пробный запуск (изменения {overrides})"),
    "consistency_device": Text("device {device!r}, profile {profile!r} runs on {wanted}",
                               "устройство {device!r}, а профиль {profile!r} запускается на {wanted}"),
    "consistency_loss_hash": Text("{file} does not hash to the passport's loss sha256",
                                  "хеш {file} не совпадает с sha256 файла потерь в паспорте"),
    "consistency_verifier_hash": Text("{file} does not hash to the passport's verifier sha256",
                                      "хеш {file} не совпадает с sha256 верификатора в паспорте"),
    "consistency_adapter_hash": Text("adapter/{name} is missing or does not hash to the passport's",
                                     "adapter/{name} отсутствует, или его хеш не совпадает с паспортом"),
    "consistency_ok": Text("{steps} logged steps, curve, device and hashes agree",
                           "шагов в журнале: {steps}; кривая, устройство и хеши согласованы"),
    "figures_not_png": Text("{name} is missing or not a PNG image",
                            "{name} отсутствует или не является изображением PNG"),
    "figures_small": Text("{name} is {width}x{height} pixels, at least {minimum} expected",
                          "{name} размером {width}x{height} пикселей, нужно не меньше {minimum}"),
    "figures_ok": Text("{count} figures decode as PNG", "все {count} графика читаются как PNG"),
    "figures_large": Text("{name} is {width}x{height} pixels, at most {maximum} decoded",
                          "{name} размером {width}x{height} пикселей, декодируется не больше {maximum}"),
    "reeval_extra_files": Text("adapter/ holds files the grader does not load: {extra} (only {allowed})",
                               "в adapter/ есть файлы, которые грейдер не загружает: {extra} (только {allowed})"),
    "reeval_not_lora": Text("adapter_config.json is not a LoRA adapter of rank {rank}: peft_type {peft_type!r}, "
                            "r {found!r}",
                            "adapter_config.json — не адаптер LoRA ранга {rank}: peft_type {peft_type!r}, "
                            "r {found!r}"),
    "reeval_claim_ok": Text("{metric} measured by the grader: base {before:.4g}, with the adapter {after:.4g}; the "
                            "passport claims {claimed!r}",
                            "{metric}, измеренная грейдером: базовая модель {before:.4g}, с адаптером {after:.4g}; "
                            "паспорт заявляет {claimed!r}"),
    "reeval_claim_wrong": Text("{metric} measured by the grader: base {before:.4g}, with the adapter {after:.4g}; "
                               "the passport claims {claimed!r} -- not what was measured",
                               "{metric}, измеренная грейдером: базовая модель {before:.4g}, с адаптером "
                               "{after:.4g}; паспорт заявляет {claimed!r} — это не то, что измерено"),
    "improvement_not_required": Text("not required for the {profile} profile (measured gain {gain:+.4g})",
                                     "для профиля {profile} не требуется (измеренный прирост {gain:+.4g})"),
    "improvement": Text("{metric}: measured gain {gain:+.4g}, at least {minimum:+.4g} required",
                        "{metric}: измеренный прирост {gain:+.4g}, требуется не меньше {minimum:+.4g}"),
    # self-reported fields (graders/capstone_claims.py): check names are ids, the same in every language
    "claims_malformed": Text("could not check: malformed passport ({error})",
                             "проверить не удалось: паспорт повреждён ({error})"),
    "claims_inconsistent": Text("not compared: the passport is not consistent",
                                "не сравнено: паспорт не согласован сам с собой"),
    "claims_not_object": Text("{field} must be an object, found {found}",
                              "{field} должно быть объектом, а найдено {found}"),
    "claims_versions_kit_unknown": Text("the grader cannot read the versions the installed kit supports ({kit}: "
                                        "{error}); install the kit (pip install -e .)",
                                        "грейдер не может прочитать версии, которые поддерживает установленный "
                                        "набор ({kit}: {error}); установите его (pip install -e .)"),
    "claims_version_missing": Text("versions.{name} is missing", "нет versions.{name}"),
    "claims_version_malformed": Text("versions.{name} is {found}, not a version (PEP 440)",
                                     "versions.{name} равно {found} — это не номер версии (PEP 440)"),
    "claims_version_outside": Text("versions.{name} {found} is outside the range {kit} supports ({range})",
                                   "versions.{name} {found} вне диапазона, который поддерживает {kit} ({range})"),
    "claims_version_major": Text("versions.{name} {found} is another major version than the grader's {installed}, "
                                 "with which the adapter is re-evaluated",
                                 "versions.{name} {found} — другая старшая версия, чем у грейдера ({installed}), "
                                 "с которой адаптер проверяется заново"),
    "claims_version_differs": Text("{name} {found} (the grader has {installed})", "{name} {found} (у грейдера {installed})"),
    "claims_version_grader_lacks": Text("{name} {found} (not installed for the grader)",
                                        "{name} {found} (у грейдера не установлен)"),
    "claims_versions_same": Text("the same as the grader's", "те же, что у грейдера"),
    "claims_versions_ok": Text("{versions}: inside the kit's ranges; against the grader's versions: {differences}",
                               "{versions}: в диапазонах набора; по сравнению с версиями грейдера: {differences}"),
    "claims_args_seed": Text("seeds.seed must be an integer, found {found}",
                             "seeds.seed должно быть целым числом, а найдено {found}"),
    "claims_args_rebuild_failed": Text("the grader could not rebuild the profile's config ({error})",
                                       "грейдер не смог заново собрать конфигурацию профиля ({error})"),
    "claims_args_item": Text("{key}: found {found}, expected {expected}", "{key}: найдено {found}, ожидалось {expected}"),
    "claims_args_every": Text("every one of {count} keys compared", "сравнены все {count} ключей"),
    "claims_args_kit_set": Text("trl {trl_found} / transformers {transformers_found} are not the grader's "
                                "({trl_grader} / {transformers_grader}): only the {count} keys the kit sets compared",
                                "trl {trl_found} / transformers {transformers_found} — не версии грейдера "
                                "({trl_grader} / {transformers_grader}): сравнены только {count} ключей, которые "
                                "задаёт набор"),
    "claims_args_differ": Text("{count} trainer_args differ from the {config} the grader rebuilds for the {profile} "
                               "profile ({scope}): {differences}",
                               "{count} из trainer_args отличаются от {config}, который грейдер собирает заново для "
                               "профиля {profile} ({scope}): {differences}"),
    "claims_args_ok": Text("trainer_args are the {config} the grader rebuilds for the {profile} profile ({scope})",
                           "trainer_args совпадают с {config}, который грейдер собирает заново для профиля {profile} "
                           "({scope})"),
    "claims_wall_bad": Text("wall_time_s.{key} must be a finite number > 0, found {found}",
                            "wall_time_s.{key} должно быть конечным числом > 0, а найдено {found}"),
    "claims_wall_total": Text("wall_time_s.total {total:.4g} s is less than wall_time_s.train {train:.4g} s",
                              "wall_time_s.total {total:.4g} с меньше wall_time_s.train {train:.4g} с"),
    "claims_wall_no_runtime": Text("log_history has no train_runtime (the Trainer's last entry): wall_time_s.train "
                                   "cannot be compared",
                                   "в log_history нет train_runtime (последней записи Trainer): wall_time_s.train "
                                   "не с чем сравнить"),
    "claims_wall_disagrees": Text("wall_time_s.train {train:.4g} s disagrees with the Trainer's train_runtime "
                                  "{runtime:.4g} s ({low:.4g}..{high:.4g} s expected)",
                                  "wall_time_s.train {train:.4g} с не согласуется с train_runtime Trainer "
                                  "{runtime:.4g} с (ожидалось {low:.4g}..{high:.4g} с)"),
    "claims_wall_ok": Text("wall_time_s.train {train:.4g} s agrees with the Trainer's train_runtime {runtime:.4g} s; "
                           "total {total:.4g} s",
                           "wall_time_s.train {train:.4g} с согласуется с train_runtime Trainer {runtime:.4g} с; "
                           "всего {total:.4g} с"),
}
