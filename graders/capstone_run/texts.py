"""What the capstone tells a student or an instructor, in every language of the course.

Given code: the capstone student need not change it.

``TEXT[language][key]`` is a ``str.format`` template; every language has the
same keys and the same placeholders (tests/test_languages.py and
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

TEXT = {
    "en": {
        # figures (graders/capstone_run/passport.py)
        "figure_title": "{algorithm} ({profile}): training curves per optimizer step",
        "figure_step": "optimizer step",
        "figure_not_logged": "not logged ({reason})",
        "figure_accuracy_title": "{algorithm} ({profile}): {metric} on held-out rows before and after training",
        "figure_accuracy_axis": "{metric}",
        "figure_before": "base model",
        "figure_after": "with the adapter",
        "series_reward": "mean reward",
        "series_completion_length": "mean completion length (tokens)",
        "series_clipped_ratio": "clipped ratio (completions cut at the length limit)",
        "series_entropy": "policy entropy (nats)",
        "series_kl": "KL to the reference policy",
        "series_margin": "implicit reward margin",
        "series_pair_accuracy": "implicit reward accuracy",
        "series_loss": "loss",
        "kl_reason": "beta = 0: TRL computes no KL",
        "absent_reason": "this trainer does not log it",
        # rl4llm capstone run
        "run_wrote": "wrote {passport}, {adapter}/ and the figures in {out}; check the passport with: "
                     "rl4llm capstone check {out}",
        "run_kept": "data: kept {kept} of {rows} training rows ({percent:.0f}%) whose reference the verifier "
                    "reads exactly",
        "run_truncated": "completions cut at {limit} tokens: {percent:.0f}% after training (greedy, eval rows)",
        "run_dry": "dry run: the passport records overrides {overrides}; it is not the profile's run and will "
                   "not be graded as one",
        "run_metrics": "metrics before: {before}\nmetrics after:  {after}",
        # rl4llm capstone check
        "check_title": "capstone check of {run_dir}",
        "check_score": "score: {score}/{max_score}",
        # rl4llm capstone preflight
        "preflight_title": "capstone preflight ({algorithm}, {profile})",
        "preflight_ok": "ok",
        "preflight_fail": "FAIL",
        "preflight_warn": "warn",
        "preflight_python": "Python {version}",
        "preflight_library": "{name} {found} (needs {spec})",
        "preflight_library_missing": "{name} is not installed (needs {spec}); install with: "
                                     "pip install -c constraints/capstone.txt '.[capstone]'",
        "preflight_cuda": "CUDA: {name}, {free_gib:.1f} of {total_gib:.1f} GiB free",
        "preflight_no_cuda": "CUDA: torch {torch} sees no GPU; profile {profile} needs one (use --device cpu "
                             "only for a dry run)",
        "preflight_cuda_not_needed": "CUDA: not needed (the tiny profile, or --device cpu)",
        "preflight_memory_low": "CUDA: only {free_gib:.1f} GiB free, the profile needs about {need_gib:.0f} GiB",
        "preflight_bf16": "precision: bf16 supported, the run uses bf16",
        "preflight_fp16": "precision: this GPU has no bf16 (e.g. T4, V100); the run falls back to fp16 mixed "
                          "precision with float32 weights",
        "preflight_cpu_precision": "precision: float32 on the CPU",
        "preflight_model": "model: {model} found at {where}",
        "preflight_model_missing": "model: {model} is neither a local folder nor in the Hugging Face cache "
                                   "({cache}); download it once with network access, or pass --model PATH",
        "preflight_data": "data: {dataset} found at {where}",
        "preflight_data_missing": "data: {dataset} is neither in --data-dir nor in the Hugging Face cache "
                                  "({cache}); download it once, or pass --data-dir DIR",
        "preflight_offline": "offline: HF_HUB_OFFLINE={value}",
        "preflight_tiny_data": "data: {dataset} is built in memory",
        "preflight_summary_ok": "preflight passed: the run can start",
        "preflight_summary_fail": "preflight failed: {count} problem(s) above; the run would not work",
        # rl4llm capstone grade
        "grade_title": "capstone grade of {submission}",
        "grade_score": "score: {score}/{max_score}",
        "grade_not_folder": "{submission} is not a folder or a .zip file; nothing graded",
        "check_pass": "PASS",
        "check_fail": "FAIL",
        "check_not_folder": "{run_dir} is not a folder; no report written",
        "report_wrote": "report: {path}",
        # the passport checks (graders/capstone.py): check names are ids, the same in every language
        "passport_absent": "no {name} in {run_dir}",
        "passport_not_json": "{name} is not valid JSON: {error}",
        "passport_not_object": "{name} must hold a JSON object, found {found}",
        "passport_parsed": "{name} parsed",
        "passport_not_checked": "not checked: {reason}",
        "passport_fields_unusable": "required fields are missing",
        "passport_malformed": "could not check: malformed passport ({error})",
        "passport_expected_item": "{key}={found!r} (expected {expected!r})",
        "passport_fields_missing": "missing field(s): {fields}",
        "passport_schema": "schema is {found!r}, expected {expected!r}",
        "passport_unknown_profile": "algorithm/profile {algorithm!r}/{profile!r} is not one of {algorithms} x "
                                    "{profiles}",
        "passport_fields_ok": "all {count} fields present ({algorithm}, {profile})",
        "passport_versions_missing": "library version(s) not recorded: {names}",
        "passport_versions_ok": "{versions}",
        "passport_seed_type": "seeds.seed must be an integer, found {found!r}",
        "passport_seed_differs": "trainer_args.seed is {found!r} but seeds.seed is {seed}",
        "passport_seed_ok": "seed {seed} recorded and used by the trainer",
        "passport_verifier_dpo": "not applicable: DPO trains on preference pairs, no verifier",
        "passport_verifier_shape": "verifier must be an object with path, version and sha256, found {found!r}",
        "passport_verifier_version": "verifier version is {found!r}, the kit's VERIFIER_VERSION is {expected!r}: "
                                     "the reward came from a different verifier",
        "passport_verifier_sha": "verifier sha256 is not recorded as 64 hex digits: {found!r}",
        "passport_verifier_ok": "verifier {version} ({sha}..., {path})",
        "passport_data_set": "data set {dataset!r} [{split!r}], the profile prescribes {expected!r} "
                             "[{expected_split!r}]",
        "passport_data_hash_shape": "data.{key} is not a sha256 (64 hex digits): {found!r}",
        "passport_data_hash_other": "data.{key} is {found}..., the kit's {dataset} hashes to {expected}...: the "
                                    "run trained or evaluated on other rows",
        "passport_data_tiny_ok": "{dataset}: train and eval hashes match the kit's rows",
        "passport_data_ok": "{dataset} [{split}]: hash {sha}... recorded",
        "passport_trainer_class": "trainer is {found!r}, expected {expected}",
        "passport_trainer_args_differ": "trainer arguments differ from the profile: {differences}",
        "passport_trainer_args_ok": "{count} prescribed {trainer} settings match",
        "passport_lora_unused": "the trained model was not a PEFT LoRA model (lora.used is not true)",
        "passport_lora_differs": "LoRA settings differ from the profile: {differences}",
        "passport_lora_ok": "LoRA r={r}, alpha={alpha}, {trainable} trainable",
        "passport_metrics_missing": "metrics.{when} is missing",
        "passport_metrics_not_finite": "metrics.{when} lacks a finite {keys} (found {found})",
        "passport_metrics_ok": "{summary}",
        "passport_curve_metric": "reward curve plots {found!r}, expected {expected!r}",
        "passport_curve_empty": "the reward curve needs at least one (step, value) point",
        "passport_curve_not_finite": "the reward curve has non-finite values: {values}",
        "passport_curve_ok": "{count} point(s) of {key}, last {last:.4g} at step {step}",
        "passport_wall_time_bad": "wall_time_s.total must be a positive number of seconds, found {found!r}",
        "passport_wall_time_ok": "{total:.1f} s",
        "passport_figure_missing": "{name} is missing from the run folder",
        "passport_figure_not_png": "{name} is not a PNG file",
        "passport_figure_ok": "{name} ({size} bytes)",
        # the grade of a submission (graders/capstone_grade.py, graders/capstone_reeval.py)
        "grade_no_verifier": "no {file} in the submission",
        "grade_verifier": "{exercise}: {status} ({points}/{max_points})",
        "grade_verifier_feedback": "{exercise}: {status} ({points}/{max_points}): {feedback}",
        "grade_unknown_profile": "unknown algorithm/profile {algorithm!r}/{profile!r}",
        "grade_unusable": "not checked: the passport is unusable",
        "grade_inconsistent": "not measured: the passport is not consistent",
        "grade_reeval_failed": "the adapter could not be re-evaluated: {error}",
        "grade_not_measured": "not measured",
        "consistency_log_empty": "log_history is empty",
        "consistency_curve": "reward_curve is not the curve of its own log_history",
        "consistency_steps": "the log reaches step {steps}, the profile trains {max_steps}",
        "consistency_dry_run": "a dry run (overrides {overrides})",
        "consistency_device": "device {device!r}, profile {profile!r} runs on {wanted}",
        "consistency_verifier_hash": "{file} does not hash to the passport's verifier sha256",
        "consistency_adapter_hash": "adapter/{name} is missing or does not hash to the passport's",
        "consistency_ok": "{steps} logged steps, curve, device and hashes agree",
        "figures_not_png": "{name} is missing or not a PNG image",
        "figures_small": "{name} is {width}x{height} pixels, at least {minimum} expected",
        "figures_ok": "{count} figures decode as PNG",
        "reeval_extra_files": "adapter/ holds files the grader does not load: {extra} (only {allowed})",
        "reeval_not_lora": "adapter_config.json is not a LoRA adapter of rank {rank}: peft_type {peft_type!r}, "
                           "r {found!r}",
        "reeval_claim_ok": "{metric} measured by the grader: base {before:.4g}, with the adapter {after:.4g}; the "
                           "passport claims {claimed!r}",
        "reeval_claim_wrong": "{metric} measured by the grader: base {before:.4g}, with the adapter {after:.4g}; "
                              "the passport claims {claimed!r} -- not what was measured",
        "improvement_not_required": "not required for the {profile} profile (measured gain {gain:+.4g})",
        "improvement": "measured gain {gain:+.4g}, at least {minimum:+.4g} required",
        # why a run cannot start (CapstoneError)
        "error_algorithm": "algorithm must be one of {choices}, got {got!r}",
        "error_profile": "profile must be one of {choices}, got {got!r}",
        "error_device": "device must be one of {choices}, got {got!r}",
        "error_no_gpu": "profile {profile!r} trains {model} and needs a CUDA GPU, but torch sees none (torch "
                        "{torch}, torch.cuda.is_available() is False). Run it on a GPU machine (see `rl4llm "
                        "capstone preflight`), use --profile tiny on a CPU, or --device cpu for a dry run (with "
                        "--model PATH and --max-steps 1).",
        "error_model": "cannot load the model {source!r}: {reason} (offline? pass --model PATH, or see `rl4llm "
                       "capstone preflight`)",
        "error_no_verifier": "GRPO needs your verifier: pass --verifier PATH/module_9_reference.py (your Module 9 "
                             "file; its verify_numeric_answer is the reward)",
        "error_verifier_import": "cannot import the verifier {path}: {error}",
        "error_verifier_missing": "the verifier {path} defines no function verify_numeric_answer",
        "error_verifier_raised": "the verifier {path} raised {error} on a simple answer: {message}",
        "error_verifier_value": "the verifier {path} returned {value!r} for a simple answer; it must return 0 or 1",
        "error_data_dir": "--data-dir {data_dir} has no {name}.jsonl for the split {split!r} of {dataset} (one "
                          "JSON row per line, the Hub's columns)",
        "error_no_rows": "no row of {dataset} has a reference the verifier reads exactly (train kept "
                         "{kept}/{rows}, eval {eval_kept}/{eval_rows}); dropped e.g. {examples}",
        # rl4llm capstone --help (graders/capstone_cli.py)
        "help_capstone": "the TRL capstone: preflight, a GRPO/DPO run with LoRA, the passport check",
        "help_run": "train and write DIR/passport.json, DIR/adapter/ and the figures",
        "help_algo": "grpo (your verifier is the reward) or dpo (preference pairs)",
        "help_profile": "tiny: CPU, seconds, no download; smoke/full: Qwen3-0.6B on a CUDA GPU",
        "help_out": "the run folder",
        "help_verifier": "your module_9_reference.py: its verify_numeric_answer is GRPO's reward (required for "
                         "GRPO)",
        "help_seed": "trainer seed (default 42, TRL's)",
        "help_model": "a local model folder (e.g. a downloaded Qwen3-0.6B snapshot) instead of the Hub id",
        "help_data_dir": "a folder with train.jsonl / test.jsonl instead of the Hub (air-gapped machines)",
        "help_max_steps": "dry run: stop after N optimizer steps",
        "help_max_completion_length": "dry run: GRPO completion tokens",
        "help_max_length": "dry run: DPO prompt + answer tokens",
        "help_device": "auto: tiny on CPU, smoke/full on CUDA; cpu: a dry run of a real profile",
        "help_lang": "language of the figures and messages (default: $RL4LLM_LANG, else the locale)",
        "help_quiet": "no progress bar or per-step logs",
        "help_preflight": "check that this machine can run a profile (exit 1 if not)",
        "help_check": "check a run passport; writes RUN_DIR/capstone_report.json",
        "help_run_dir": "the run folder (rl4llm capstone run --out)",
        "help_grade": "grade a capstone submission (folder or .zip)",
        "help_submission": "the run folder (or a .zip of it) with the module_9_reference.py it used",
        "help_grade_model": "the base model for re-evaluation (smoke/full; default: the Hub id, from the cache)",
        "help_grade_data_dir": "held-out rows instead of the Hub",
        "help_grade_out": "report folder (default: rl4llm-out/capstone/<name>)",
    },
    "ru": {
        "figure_title": "{algorithm} ({profile}): кривые обучения по шагам оптимизатора",
        "figure_step": "шаг оптимизатора",
        "figure_not_logged": "не записано ({reason})",
        "figure_accuracy_title": "{algorithm} ({profile}): {metric} на отложенных примерах до и после обучения",
        "figure_accuracy_axis": "{metric}",
        "figure_before": "базовая модель",
        "figure_after": "с адаптером",
        "series_reward": "средняя награда",
        "series_completion_length": "средняя длина ответа (токены)",
        "series_clipped_ratio": "доля обрезанных ответов (упёрлись в предел длины)",
        "series_entropy": "энтропия политики (наты)",
        "series_kl": "KL к референсной политике",
        "series_margin": "отрыв неявной награды",
        "series_pair_accuracy": "точность неявной награды",
        "series_loss": "функция потерь",
        "kl_reason": "beta = 0: TRL не вычисляет KL",
        "absent_reason": "этот тренер его не записывает",
        "run_wrote": "записаны {passport}, {adapter}/ и графики в {out}; проверить паспорт: "
                     "rl4llm capstone check {out}",
        "run_kept": "данные: оставлено {kept} из {rows} обучающих примеров ({percent:.0f}%), чей эталонный ответ "
                    "верификатор читает точно",
        "run_truncated": "ответов, обрезанных на {limit} токенах: {percent:.0f}% после обучения (жадно, "
                         "отложенные примеры)",
        "run_dry": "пробный запуск: паспорт записывает изменения {overrides}; это не запуск профиля, и "
                   "оцениваться как он не будет",
        "run_metrics": "метрики до обучения: {before}\nметрики после:      {after}",
        "check_title": "проверка паспорта капстоуна {run_dir}",
        "check_score": "баллы: {score}/{max_score}",
        "preflight_title": "предполётная проверка капстоуна ({algorithm}, {profile})",
        "preflight_ok": "ok",
        "preflight_fail": "ОШИБКА",
        "preflight_warn": "внимание",
        "preflight_python": "Python {version}",
        "preflight_library": "{name} {found} (нужно {spec})",
        "preflight_library_missing": "{name} не установлен (нужно {spec}); установите: "
                                     "pip install -c constraints/capstone.txt '.[capstone]'",
        "preflight_cuda": "CUDA: {name}, свободно {free_gib:.1f} из {total_gib:.1f} ГиБ",
        "preflight_no_cuda": "CUDA: torch {torch} не видит GPU; профилю {profile} он нужен (--device cpu — "
                             "только для пробного запуска)",
        "preflight_cuda_not_needed": "CUDA: не нужна (профиль tiny или --device cpu)",
        "preflight_memory_low": "CUDA: свободно лишь {free_gib:.1f} ГиБ, профилю нужно около {need_gib:.0f} ГиБ",
        "preflight_bf16": "точность: bf16 поддерживается, запуск идёт в bf16",
        "preflight_fp16": "точность: у этого GPU нет bf16 (например, T4, V100); запуск переходит на смешанную "
                          "точность fp16 с весами float32",
        "preflight_cpu_precision": "точность: float32 на CPU",
        "preflight_model": "модель: {model} найдена в {where}",
        "preflight_model_missing": "модель: {model} нет ни в локальной папке, ни в кэше Hugging Face ({cache}); "
                                   "скачайте её один раз при доступе к сети или укажите --model PATH",
        "preflight_data": "данные: {dataset} найдены в {where}",
        "preflight_data_missing": "данные: {dataset} нет ни в --data-dir, ни в кэше Hugging Face ({cache}); "
                                  "скачайте их один раз или укажите --data-dir DIR",
        "preflight_offline": "офлайн: HF_HUB_OFFLINE={value}",
        "preflight_tiny_data": "данные: {dataset} строятся в памяти",
        "preflight_summary_ok": "проверка пройдена: запуск может начаться",
        "preflight_summary_fail": "проверка не пройдена: проблем выше — {count}; запуск не сработал бы",
        "grade_title": "оценка капстоуна {submission}",
        "grade_score": "баллы: {score}/{max_score}",
        "grade_not_folder": "{submission} — не папка и не .zip; ничего не оценено",
        "check_pass": "ПРОЙДЕНА",
        "check_fail": "НЕ ПРОЙДЕНА",
        "check_not_folder": "{run_dir} — не папка; отчёт не записан",
        "report_wrote": "отчёт: {path}",
        "passport_absent": "в {run_dir} нет {name}",
        "passport_not_json": "{name} — некорректный JSON: {error}",
        "passport_not_object": "{name} должен содержать объект JSON, а содержит {found}",
        "passport_parsed": "{name} прочитан",
        "passport_not_checked": "не проверено: {reason}",
        "passport_fields_unusable": "нет обязательных полей",
        "passport_malformed": "проверить не удалось: паспорт повреждён ({error})",
        "passport_expected_item": "{key}={found!r} (ожидалось {expected!r})",
        "passport_fields_missing": "нет полей: {fields}",
        "passport_schema": "схема {found!r}, ожидалась {expected!r}",
        "passport_unknown_profile": "алгоритм/профиль {algorithm!r}/{profile!r} не входит в {algorithms} x "
                                    "{profiles}",
        "passport_fields_ok": "все {count} полей на месте ({algorithm}, {profile})",
        "passport_versions_missing": "не записаны версии библиотек: {names}",
        "passport_versions_ok": "{versions}",
        "passport_seed_type": "seeds.seed должен быть целым числом, а равен {found!r}",
        "passport_seed_differs": "trainer_args.seed равен {found!r}, а seeds.seed равен {seed}",
        "passport_seed_ok": "seed {seed} записан и использован тренером",
        "passport_verifier_dpo": "не применяется: DPO обучается на парах предпочтений, верификатора нет",
        "passport_verifier_shape": "verifier должен быть объектом с полями path, version и sha256, а равен "
                                   "{found!r}",
        "passport_verifier_version": "версия верификатора {found!r}, а VERIFIER_VERSION набора — {expected!r}: "
                                     "награду давал другой верификатор",
        "passport_verifier_sha": "sha256 верификатора записан не как 64 шестнадцатеричные цифры: {found!r}",
        "passport_verifier_ok": "верификатор {version} ({sha}..., {path})",
        "passport_data_set": "набор данных {dataset!r} [{split!r}], а профиль предписывает {expected!r} "
                             "[{expected_split!r}]",
        "passport_data_hash_shape": "data.{key} — не sha256 (64 шестнадцатеричные цифры): {found!r}",
        "passport_data_hash_other": "data.{key} равен {found}..., а хеш {dataset} из набора — {expected}...: "
                                    "запуск обучался или оценивался на других примерах",
        "passport_data_tiny_ok": "{dataset}: хеши обучающих и оценочных примеров совпадают с примерами набора",
        "passport_data_ok": "{dataset} [{split}]: хеш {sha}... записан",
        "passport_trainer_class": "тренер {found!r}, ожидался {expected}",
        "passport_trainer_args_differ": "аргументы тренера отличаются от профиля: {differences}",
        "passport_trainer_args_ok": "все {count} предписанных настроек {trainer} совпадают",
        "passport_lora_unused": "обучалась не модель PEFT LoRA (lora.used не равно true)",
        "passport_lora_differs": "настройки LoRA отличаются от профиля: {differences}",
        "passport_lora_ok": "LoRA r={r}, alpha={alpha}, обучаемых параметров: {trainable}",
        "passport_metrics_missing": "нет metrics.{when}",
        "passport_metrics_not_finite": "в metrics.{when} нет конечного значения {keys} (найдено {found})",
        "passport_metrics_ok": "{summary}",
        "passport_curve_metric": "кривая награды строит {found!r}, ожидалось {expected!r}",
        "passport_curve_empty": "в кривой награды нужна хотя бы одна точка (шаг, значение)",
        "passport_curve_not_finite": "в кривой награды есть неконечные значения: {values}",
        "passport_curve_ok": "точек {key}: {count}, последняя {last:.4g} на шаге {step}",
        "passport_wall_time_bad": "wall_time_s.total должно быть положительным числом секунд, а равно {found!r}",
        "passport_wall_time_ok": "{total:.1f} с",
        "passport_figure_missing": "в папке запуска нет {name}",
        "passport_figure_not_png": "{name} — не файл PNG",
        "passport_figure_ok": "{name} ({size} байт)",
        "grade_no_verifier": "в сдаче нет {file}",
        "grade_verifier": "{exercise}: {status} ({points}/{max_points})",
        "grade_verifier_feedback": "{exercise}: {status} ({points}/{max_points}): {feedback}",
        "grade_unknown_profile": "неизвестные алгоритм/профиль {algorithm!r}/{profile!r}",
        "grade_unusable": "не проверено: паспорт непригоден",
        "grade_inconsistent": "не измерено: паспорт не согласован сам с собой",
        "grade_reeval_failed": "адаптер не удалось оценить заново: {error}",
        "grade_not_measured": "не измерено",
        "consistency_log_empty": "log_history пуст",
        "consistency_curve": "reward_curve — не кривая из его собственного log_history",
        "consistency_steps": "журнал доходит до шага {steps}, а профиль обучает {max_steps}",
        "consistency_dry_run": "пробный запуск (изменения {overrides})",
        "consistency_device": "устройство {device!r}, а профиль {profile!r} запускается на {wanted}",
        "consistency_verifier_hash": "хеш {file} не совпадает с sha256 верификатора в паспорте",
        "consistency_adapter_hash": "adapter/{name} отсутствует, или его хеш не совпадает с паспортом",
        "consistency_ok": "шагов в журнале: {steps}; кривая, устройство и хеши согласованы",
        "figures_not_png": "{name} отсутствует или не является изображением PNG",
        "figures_small": "{name} размером {width}x{height} пикселей, нужно не меньше {minimum}",
        "figures_ok": "все {count} графика читаются как PNG",
        "reeval_extra_files": "в adapter/ есть файлы, которые грейдер не загружает: {extra} (только {allowed})",
        "reeval_not_lora": "adapter_config.json — не адаптер LoRA ранга {rank}: peft_type {peft_type!r}, "
                           "r {found!r}",
        "reeval_claim_ok": "{metric}, измеренная грейдером: базовая модель {before:.4g}, с адаптером {after:.4g}; "
                           "паспорт заявляет {claimed!r}",
        "reeval_claim_wrong": "{metric}, измеренная грейдером: базовая модель {before:.4g}, с адаптером "
                              "{after:.4g}; паспорт заявляет {claimed!r} — это не то, что измерено",
        "improvement_not_required": "для профиля {profile} не требуется (измеренный прирост {gain:+.4g})",
        "improvement": "измеренный прирост {gain:+.4g}, требуется не меньше {minimum:+.4g}",
        "error_algorithm": "алгоритм должен быть одним из {choices}, а получен {got!r}",
        "error_profile": "профиль должен быть одним из {choices}, а получен {got!r}",
        "error_device": "устройство должно быть одним из {choices}, а получено {got!r}",
        "error_no_gpu": "профиль {profile!r} обучает {model}, и ему нужен GPU с CUDA, но torch его не видит "
                        "(torch {torch}, torch.cuda.is_available() равно False). Запустите его на машине с GPU "
                        "(см. `rl4llm capstone preflight`), возьмите --profile tiny на CPU или --device cpu для "
                        "пробного запуска (с --model PATH и --max-steps 1).",
        "error_model": "не удалось загрузить модель {source!r}: {reason} (нет сети? укажите --model PATH или "
                       "см. `rl4llm capstone preflight`)",
        "error_no_verifier": "GRPO нужен ваш верификатор: укажите --verifier PATH/module_9_reference.py (ваш "
                             "файл модуля 9; его verify_numeric_answer и есть награда)",
        "error_verifier_import": "не удалось импортировать верификатор {path}: {error}",
        "error_verifier_missing": "в верификаторе {path} нет функции verify_numeric_answer",
        "error_verifier_raised": "верификатор {path} бросил {error} на простом ответе: {message}",
        "error_verifier_value": "верификатор {path} вернул {value!r} на простом ответе; он должен возвращать 0 "
                                "или 1",
        "error_data_dir": "в --data-dir {data_dir} нет {name}.jsonl для части {split!r} набора {dataset} (по "
                          "одной строке JSON на пример, столбцы как на Hub)",
        "error_no_rows": "ни в одном примере {dataset} верификатор не читает эталонный ответ точно (обучающих "
                         "оставлено {kept}/{rows}, оценочных {eval_kept}/{eval_rows}); отброшены, например, "
                         "{examples}",
        "help_capstone": "капстоун на TRL: предполётная проверка, запуск GRPO/DPO с LoRA, проверка паспорта",
        "help_run": "обучить и записать DIR/passport.json, DIR/adapter/ и графики",
        "help_algo": "grpo (награда — ваш верификатор) или dpo (пары предпочтений)",
        "help_profile": "tiny: CPU, секунды, без скачивания; smoke/full: Qwen3-0.6B на GPU с CUDA",
        "help_out": "папка запуска",
        "help_verifier": "ваш module_9_reference.py: его verify_numeric_answer — награда GRPO (для GRPO "
                         "обязателен)",
        "help_seed": "seed тренера (по умолчанию 42, как в TRL)",
        "help_model": "локальная папка модели (например, скачанный снимок Qwen3-0.6B) вместо id на Hub",
        "help_data_dir": "папка с train.jsonl / test.jsonl вместо Hub (машины без сети)",
        "help_max_steps": "пробный запуск: остановиться после N шагов оптимизатора",
        "help_max_completion_length": "пробный запуск: токенов в ответе GRPO",
        "help_max_length": "пробный запуск: токенов в запросе и ответе DPO",
        "help_device": "auto: tiny на CPU, smoke/full на CUDA; cpu: пробный запуск настоящего профиля",
        "help_lang": "язык графиков и сообщений (по умолчанию $RL4LLM_LANG, иначе локаль)",
        "help_quiet": "без индикатора прогресса и журнала по шагам",
        "help_preflight": "проверить, может ли эта машина запустить профиль (код выхода 1, если нет)",
        "help_check": "проверить паспорт запуска; записывает RUN_DIR/capstone_report.json",
        "help_run_dir": "папка запуска (rl4llm capstone run --out)",
        "help_grade": "оценить сдачу капстоуна (папку или .zip)",
        "help_submission": "папка запуска (или её .zip) с module_9_reference.py, который она использовала",
        "help_grade_model": "базовая модель для повторной оценки (smoke/full; по умолчанию id на Hub, из кэша)",
        "help_grade_data_dir": "отложенные примеры вместо Hub",
        "help_grade_out": "папка отчёта (по умолчанию rl4llm-out/capstone/<имя>)",
    },
}


def text(language: str, key: str, /, **values) -> str:
    """TEXT[language][key] filled with ``values`` (which may hold a placeholder named ``key``); English when
    the language is unknown."""
    return TEXT.get(language, TEXT["en"])[key].format(**values)
