"""What the capstone tells a student or an instructor, in every language of the course.

Given code: the capstone student need not change it.

``TEXT[key]`` is a :class:`graders.text.Text`, a ``str.format`` template in every
language with the same placeholders, read with ``TEXT[key].in_(language, **values)`` (tests/test_languages.py and
tests/test_capstone_rewards.py check it, and that every key the capstone's
code names is here). The texts: the figures, ``rl4llm capstone`` (run,
preflight, check, grade, --help), the passport checks (graders/capstone.py),
the grade (graders/capstone_grade.py, graders/capstone_reeval.py) and why a
run cannot start (:class:`graders.capstone_run.profiles.CapstoneError`).
The language is ``--lang``, else ``RL4LLM_LANG``, else the locale
(:func:`graders.language.default_language`). Check names, file names, flags,
library names and numbers read the same in every language.
"""

from __future__ import annotations

from graders.text import Text

TEXT = {
    # figures (graders/capstone_run/passport.py)
    "figure_title": Text("{algorithm} ({profile}): training curves per optimizer step",
                         "{algorithm} ({profile}): кривые обучения по шагам оптимизатора"),
    "figure_step": Text("optimizer step", "шаг оптимизатора"),
    "figure_not_logged": Text("not logged ({reason})", "не записано ({reason})"),
    "figure_accuracy_title": Text("{algorithm} ({profile}): {metric} on held-out rows before and after training",
                                  "{algorithm} ({profile}): {metric} на отложенных примерах до и после обучения"),
    "figure_accuracy_axis": Text("{metric}", "{metric}"),
    "figure_before": Text("base model", "базовая модель"),
    "figure_after": Text("with the adapter", "с адаптером"),
    "series_reward": Text("mean reward", "средняя награда"),
    "series_completion_length": Text("mean completion length (tokens)", "средняя длина ответа (токены)"),
    "series_clipped_ratio": Text("clipped ratio (completions cut at the length limit)",
                                 "доля обрезанных ответов (упёрлись в предел длины)"),
    "series_entropy": Text("policy entropy (nats)", "энтропия политики (наты)"),
    "series_kl": Text("KL to the reference policy", "KL к референсной политике"),
    "series_margin": Text("implicit reward margin", "отрыв неявной награды"),
    "series_pair_accuracy": Text("implicit reward accuracy", "точность неявной награды"),
    "series_loss": Text("loss", "функция потерь"),
    "kl_reason": Text("beta = 0: TRL computes no KL", "beta = 0: TRL не вычисляет KL"),
    "absent_reason": Text("this trainer does not log it", "этот тренер его не записывает"),
    # rl4llm capstone run
    "run_wrote": Text("wrote {passport}, {adapter}/ and the figures in {out}; check the passport with: "
                      "rl4llm capstone check {out}",
                      "записаны {passport}, {adapter}/ и графики в {out}; проверить паспорт: "
                      "rl4llm capstone check {out}"),
    "run_kept": Text("data: kept {kept} of {rows} training rows ({percent:.0f}%) whose reference math-verify "
                     "parses; your verifier decides the {decided} whose reference is a number",
                     "данные: оставлено {kept} из {rows} обучающих примеров ({percent:.0f}%), чей эталонный ответ "
                     "math-verify разбирает; ваш верификатор решает {decided} из них, где ответ — число"),
    "run_truncated": Text("completions cut at {limit} tokens: {percent:.0f}% after training (greedy, eval rows)",
                          "ответов, обрезанных на {limit} токенах: {percent:.0f}% после обучения (жадно, "
                          "отложенные примеры)"),
    "run_dry": Text("dry run: the passport records overrides {overrides}; it is not the profile's run and will "
                    "not be graded as one",
                    "пробный запуск: паспорт записывает изменения {overrides}; это не запуск профиля, и "
                    "оцениваться как он не будет"),
    "run_metrics": Text("metrics before: {before}\nmetrics after:  {after}",
                        "метрики до обучения: {before}\nметрики после:      {after}"),
    # rl4llm capstone check
    "check_title": Text("capstone check of {run_dir}", "проверка паспорта капстоуна {run_dir}"),
    "check_score": Text("score: {score}/{max_score}", "баллы: {score}/{max_score}"),
    # rl4llm capstone preflight
    "preflight_title": Text("capstone preflight ({algorithm}, {profile})",
                            "предполётная проверка капстоуна ({algorithm}, {profile})"),
    "preflight_ok": Text("ok", "ok"),
    "preflight_fail": Text("FAIL", "ОШИБКА"),
    "preflight_warn": Text("warn", "внимание"),
    "preflight_python": Text("Python {version}", "Python {version}"),
    "preflight_library": Text("{name} {found} (needs {spec})", "{name} {found} (нужно {spec})"),
    "preflight_library_missing": Text("{name} is not installed (needs {spec}); install with: "
                                      "pip install -c constraints/capstone.txt '.[capstone]'",
                                      "{name} не установлен (нужно {spec}); установите: "
                                      "pip install -c constraints/capstone.txt '.[capstone]'"),
    "preflight_cuda": Text("CUDA: {name}, {free_gib:.1f} of {total_gib:.1f} GiB free",
                           "CUDA: {name}, свободно {free_gib:.1f} из {total_gib:.1f} ГиБ"),
    "preflight_no_cuda": Text("CUDA: torch {torch} sees no GPU; profile {profile} needs one (use --device cpu "
                              "only for a dry run)",
                              "CUDA: torch {torch} не видит GPU; профилю {profile} он нужен (--device cpu — "
                              "только для пробного запуска)"),
    "preflight_cuda_not_needed": Text("CUDA: not needed (the tiny profile, or --device cpu)",
                                      "CUDA: не нужна (профиль tiny или --device cpu)"),
    "preflight_memory_low": Text("CUDA: only {free_gib:.1f} GiB free, the profile needs about {need_gib:.0f} GiB",
                                 "CUDA: свободно лишь {free_gib:.1f} ГиБ, профилю нужно около {need_gib:.0f} ГиБ"),
    "preflight_bf16": Text("precision: bf16 supported, the run uses bf16",
                           "точность: bf16 поддерживается, запуск идёт в bf16"),
    "preflight_fp16": Text("precision: this GPU has no bf16 (e.g. T4, V100); the run falls back to fp16 mixed "
                           "precision with float32 weights",
                           "точность: у этого GPU нет bf16 (например, T4, V100); запуск переходит на смешанную "
                           "точность fp16 с весами float32"),
    "preflight_cpu_precision": Text("precision: float32 on the CPU", "точность: float32 на CPU"),
    "preflight_model": Text("model: {model} found at {where}", "модель: {model} найдена в {where}"),
    "preflight_model_missing": Text("model: {model} is neither a local folder nor in the Hugging Face cache "
                                    "({cache}); with network access download it once (`hf download {model}`), or "
                                    "pass --model PATH", "модель: {model} нет ни в локальной папке, ни в кэше "
                                    "Hugging Face ({cache}); при доступе к сети скачайте её один раз (`hf download "
                                    "{model}`) или укажите --model PATH"),
    "preflight_data": Text("data: {dataset} found at {where}", "данные: {dataset} найдены в {where}"),
    "preflight_data_missing": Text("data: {dataset} is neither in --data-dir nor in the Hugging Face cache ({cache}); "
                                   "with network access download it once into that cache (`hf download {dataset} "
                                   "--repo-type dataset`, or one run without HF_HUB_OFFLINE=1), or pass --data-dir "
                                   "DIR holding {files}",
                                   "данные: {dataset} нет ни в --data-dir, ни в кэше Hugging Face ({cache}); при "
                                   "доступе к сети скачайте их один раз в этот кэш (`hf download {dataset} "
                                   "--repo-type dataset` или один запуск без HF_HUB_OFFLINE=1) или укажите "
                                   "--data-dir DIR с файлами {files}"),
    "preflight_data_incomplete": Text("data: the cached snapshot {where} of {dataset} has no parquet or jsonl file "
                                      "for the split(s) {missing}; download it again (`hf download {dataset} "
                                      "--repo-type dataset`) or pass --data-dir DIR holding {files}",
                                      "данные: в снимке {where} набора {dataset} в кэше нет файла parquet или jsonl "
                                      "для частей {missing}; скачайте набор заново (`hf download {dataset} "
                                      "--repo-type dataset`) или укажите --data-dir DIR с файлами {files}"),
    "preflight_offline": Text("offline: HF_HUB_OFFLINE={value}", "офлайн: HF_HUB_OFFLINE={value}"),
    "preflight_tiny_data": Text("data: {dataset} is built in memory", "данные: {dataset} строятся в памяти"),
    "preflight_summary_ok": Text("preflight passed: the run can start", "проверка пройдена: запуск может начаться"),
    "preflight_summary_fail": Text("preflight failed: {count} problem(s) above; the run would not work",
                                   "проверка не пройдена: проблем выше — {count}; запуск не сработал бы"),
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
    "passport_verifier_dpo": Text("not applicable: DPO trains on preference pairs, no verifier",
                                  "не применяется: DPO обучается на парах предпочтений, верификатора нет"),
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
    "improvement": Text("measured gain {gain:+.4g}, at least {minimum:+.4g} required",
                        "измеренный прирост {gain:+.4g}, требуется не меньше {minimum:+.4g}"),
    # why a run cannot start (CapstoneError)
    "error_algorithm": Text("algorithm must be one of {choices}, got {got!r}",
                            "алгоритм должен быть одним из {choices}, а получен {got!r}"),
    "error_profile": Text("profile must be one of {choices}, got {got!r}",
                          "профиль должен быть одним из {choices}, а получен {got!r}"),
    "error_device": Text("device must be one of {choices}, got {got!r}",
                         "устройство должно быть одним из {choices}, а получено {got!r}"),
    "error_no_gpu": Text("profile {profile!r} trains {model} and needs a CUDA GPU, but torch sees none (torch "
                         "{torch}, torch.cuda.is_available() is False). Run it on a GPU machine (see `rl4llm "
                         "capstone preflight`), use --profile tiny on a CPU, or --device cpu for a dry run (with "
                         "--model PATH and --max-steps 1).",
                         "профиль {profile!r} обучает {model}, и ему нужен GPU с CUDA, но torch его не видит "
                         "(torch {torch}, torch.cuda.is_available() равно False). Запустите его на машине с GPU "
                         "(см. `rl4llm capstone preflight`), возьмите --profile tiny на CPU или --device cpu для "
                         "пробного запуска (с --model PATH и --max-steps 1)."),
    "error_model": Text("cannot load the model {source!r}: {reason} (offline? pass --model PATH, or see `rl4llm "
                        "capstone preflight`)",
                        "не удалось загрузить модель {source!r}: {reason} (нет сети? укажите --model PATH или "
                        "см. `rl4llm capstone preflight`)"),
    "error_no_verifier": Text("GRPO needs your verifier: pass --verifier PATH/module_9_reference.py (your Module 9 "
                              "file; its verify_numeric_answer is the reward)",
                              "GRPO нужен ваш верификатор: укажите --verifier PATH/module_9_reference.py (ваш "
                              "файл модуля 9; его verify_numeric_answer и есть награда)"),
    "error_verifier_import": Text("cannot import the verifier {path}: {error}",
                                  "не удалось импортировать верификатор {path}: {error}"),
    "error_verifier_missing": Text("the verifier {path} defines no function verify_numeric_answer",
                                   "в верификаторе {path} нет функции verify_numeric_answer"),
    "error_verifier_raised": Text("the verifier {path} raised {error} on a simple answer: {message}",
                                  "верификатор {path} бросил {error} на простом ответе: {message}"),
    "error_verifier_value": Text("the verifier {path} returned {value!r} for a simple answer; it must return 0 or 1",
                                 "верификатор {path} вернул {value!r} на простом ответе; он должен возвращать 0 "
                                 "или 1"),
    "error_data_dir": Text("--data-dir {data_dir} has no {name}.jsonl for the split {split!r} of {dataset} (one "
                           "JSON row per line, the Hub's columns)",
                           "в --data-dir {data_dir} нет {name}.jsonl для части {split!r} набора {dataset} (по "
                           "одной строке JSON на пример, столбцы как на Hub)"),
    "error_no_rows": Text("no row of {dataset} has a reference math-verify can parse (train kept "
                          "{kept}/{rows}, eval {eval_kept}/{eval_rows}); dropped e.g. {examples}",
                          "ни в одном примере {dataset} math-verify не разбирает эталонный ответ (обучающих "
                          "оставлено {kept}/{rows}, оценочных {eval_kept}/{eval_rows}); отброшены, например, "
                          "{examples}"),
    # rl4llm capstone --help (graders/capstone_cli.py)
    "help_capstone": Text("the TRL capstone: preflight, a GRPO/DPO run with LoRA, the passport check",
                          "капстоун на TRL: предполётная проверка, запуск GRPO/DPO с LoRA, проверка паспорта"),
    "help_run": Text("train and write DIR/passport.json, DIR/adapter/ and the figures",
                     "обучить и записать DIR/passport.json, DIR/adapter/ и графики"),
    "help_algo": Text("grpo (your verifier is the reward) or dpo (preference pairs)",
                      "grpo (награда — ваш верификатор) или dpo (пары предпочтений)"),
    "help_profile": Text("tiny: CPU, seconds, no download; smoke/full: Qwen3-0.6B on a CUDA GPU",
                         "tiny: CPU, секунды, без скачивания; smoke/full: Qwen3-0.6B на GPU с CUDA"),
    "help_out": Text("the run folder", "папка запуска"),
    "help_verifier": Text("your module_9_reference.py: its verify_numeric_answer is GRPO's reward (required for "
                          "GRPO)",
                          "ваш module_9_reference.py: его verify_numeric_answer — награда GRPO (для GRPO "
                          "обязателен)"),
    "help_seed": Text("trainer seed (default 42, TRL's)", "seed тренера (по умолчанию 42, как в TRL)"),
    "help_model": Text("a local model folder (e.g. a downloaded Qwen3-0.6B snapshot) instead of the Hub id",
                       "локальная папка модели (например, скачанный снимок Qwen3-0.6B) вместо id на Hub"),
    "help_data_dir": Text("a folder with train.jsonl / test.jsonl instead of the Hub (air-gapped machines)",
                          "папка с train.jsonl / test.jsonl вместо Hub (машины без сети)"),
    "help_max_steps": Text("dry run: stop after N optimizer steps",
                           "пробный запуск: остановиться после N шагов оптимизатора"),
    "help_max_completion_length": Text("dry run: GRPO completion tokens", "пробный запуск: токенов в ответе GRPO"),
    "help_max_length": Text("dry run: DPO prompt + answer tokens",
                            "пробный запуск: токенов в запросе и ответе DPO"),
    "help_device": Text("auto: tiny on CPU, smoke/full on CUDA; cpu: a dry run of a real profile",
                        "auto: tiny на CPU, smoke/full на CUDA; cpu: пробный запуск настоящего профиля"),
    "help_lang": Text("language of the figures and messages (default: $RL4LLM_LANG, else the locale)",
                      "язык графиков и сообщений (по умолчанию $RL4LLM_LANG, иначе локаль)"),
    "help_quiet": Text("no progress bar or per-step logs", "без индикатора прогресса и журнала по шагам"),
    "help_preflight": Text("check that this machine can run a profile (exit 1 if not)",
                           "проверить, может ли эта машина запустить профиль (код выхода 1, если нет)"),
    "help_check": Text("check a run passport; writes RUN_DIR/capstone_report.json",
                       "проверить паспорт запуска; записывает RUN_DIR/capstone_report.json"),
    "help_run_dir": Text("the run folder (rl4llm capstone run --out)", "папка запуска (rl4llm capstone run --out)"),
    "help_grade": Text("grade a capstone submission (folder or .zip)", "оценить сдачу капстоуна (папку или .zip)"),
    "help_submission": Text("the run folder (or a .zip of it) with the module_9_reference.py it used",
                            "папка запуска (или её .zip) с module_9_reference.py, который она использовала"),
    "help_grade_model": Text("the base model for re-evaluation (smoke/full; default: the Hub id, from the cache)",
                             "базовая модель для повторной оценки (smoke/full; по умолчанию id на Hub, из кэша)"),
    "help_grade_data_dir": Text("held-out rows instead of the Hub", "отложенные примеры вместо Hub"),
    "help_grade_out": Text("report folder (default: rl4llm-out/capstone/<name>)",
                           "папка отчёта (по умолчанию rl4llm-out/capstone/<имя>)"),
}


def text(language: str, key: str, /, **values) -> str:
    """TEXT[key] in ``language`` filled with ``values`` (which may hold a placeholder named ``key``); English
    when the language is unknown."""
    return TEXT[key].in_(language).format(**values)
