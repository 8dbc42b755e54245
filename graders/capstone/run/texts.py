"""What the capstone tells a student or an instructor, in every language of the course.

Given code: the capstone student need not change it.

``TEXT[key]`` is a :class:`graders.text.Text`, a ``str.format`` template in every
language with the same placeholders, read with ``TEXT[key].in_(language, **values)`` (tests/test_languages.py and
tests/test_capstone_rewards.py check it, and that every key the capstone's
code names is here). The texts: the figures, ``rl4llm capstone`` (run,
preflight, --help) and why a run cannot start (:class:`graders.capstone.run.profiles.CapstoneError`);
the passport checks and the grade are in :mod:`graders.capstone.run.grade_texts`, merged into ``TEXT`` here.
The language is ``--lang``, else ``RL4LLM_LANG``, else the locale
(:func:`graders.language.default_language`). Check names, file names, flags,
library names and numbers read the same in every language.
"""

from __future__ import annotations

from graders.capstone.run.grade_texts import GRADE_TEXT
from graders.text import Text

TEXT = {
    # figures (graders/capstone/run/passport.py)
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
    "error_no_loss": Text("DPO needs your loss: pass --loss PATH/module_8_training.py (your Module 8 file; its "
                          "sequence_logprobs and dpo_loss are DPO's loss)",
                          "DPO нужна ваша функция потерь: укажите --loss PATH/module_8_training.py (ваш файл "
                          "модуля 8; его sequence_logprobs и dpo_loss и есть потеря DPO)"),
    "error_loss_import": Text("cannot import the loss file {path}: {error}",
                              "не удалось импортировать файл потерь {path}: {error}"),
    "error_loss_missing": Text("the loss file {path} defines no function {names}",
                               "в файле потерь {path} нет функции {names}"),
    "error_loss_raised": Text("the loss file {path} raised {error} on a batch of two pairs: {message}",
                              "файл потерь {path} бросил {error} на батче из двух пар: {message}"),
    "error_loss_value": Text("the loss file {path} gave a wrong result on a batch of two pairs: {problem}",
                             "файл потерь {path} дал неверный результат на батче из двух пар: {problem}"),
    "error_data_dir": Text("--data-dir {data_dir} has no {name}.jsonl for the split {split!r} of {dataset} (one "
                           "JSON row per line, the Hub's columns)",
                           "в --data-dir {data_dir} нет {name}.jsonl для части {split!r} набора {dataset} (по "
                           "одной строке JSON на пример, столбцы как на Hub)"),
    "error_no_rows": Text("no row of {dataset} has a reference math-verify can parse (train kept "
                          "{kept}/{rows}, eval {eval_kept}/{eval_rows}); dropped e.g. {examples}",
                          "ни в одном примере {dataset} math-verify не разбирает эталонный ответ (обучающих "
                          "оставлено {kept}/{rows}, оценочных {eval_kept}/{eval_rows}); отброшены, например, "
                          "{examples}"),
    # rl4llm capstone --help (graders/capstone/cli.py)
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
    "help_loss": Text("your module_8_training.py: its sequence_logprobs and dpo_loss are DPO's loss (required for "
                      "DPO)",
                      "ваш module_8_training.py: его sequence_logprobs и dpo_loss — потеря DPO (для DPO "
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
    "help_submission": Text("the run folder (or a .zip of it) with the module_9_reference.py (GRPO) or "
                            "module_8_training.py (DPO) it used",
                            "папка запуска (или её .zip) с module_9_reference.py (GRPO) или module_8_training.py "
                            "(DPO), который она использовала"),
    "help_grade_model": Text("the base model for re-evaluation (smoke/full; default: the Hub id, from the cache)",
                             "базовая модель для повторной оценки (smoke/full; по умолчанию id на Hub, из кэша)"),
    "help_grade_data_dir": Text("held-out rows instead of the Hub", "отложенные примеры вместо Hub"),
    "help_grade_out": Text("report folder (default: rl4llm-out/capstone/<name>)",
                           "папка отчёта (по умолчанию rl4llm-out/capstone/<имя>)"),
    **GRADE_TEXT,  # the passport checks and the grade (graders/capstone/run/grade_texts.py)
}


def text(language: str, key: str, /, **values) -> str:
    """TEXT[key] in ``language`` filled with ``values`` (which may hold a placeholder named ``key``); English
    when the language is unknown."""
    return TEXT[key].in_(language).format(**values)
