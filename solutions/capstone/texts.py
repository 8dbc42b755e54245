"""What the capstone tells a student or an instructor, in every language of the course.

Given code: the capstone student need not change it.

``TEXT[language][key]`` is a ``str.format`` template; every language has the
same keys and the same placeholders (tests/test_capstone_units.py checks it).
The language is ``--lang``, else ``RL4LLM_LANG``, else the locale
(:func:`graders.language.default_language`). Check names, file names, flags,
library names and numbers read the same in every language.
"""

from __future__ import annotations

TEXT = {
    "en": {
        # figures (solutions/capstone/passport.py)
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
        "run_wrote": "wrote {passport}, {adapter}/ and the figures in {out}; grade a submission with: "
                     "rl4llm capstone grade SUBMISSION",
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
        "grade_wrote": "report: {path}",
        "grade_not_folder": "{submission} is not a folder or a .zip file; nothing graded",
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
        "run_wrote": "записаны {passport}, {adapter}/ и графики в {out}; оценить сдачу: "
                     "rl4llm capstone grade SUBMISSION",
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
        "grade_wrote": "отчёт: {path}",
        "grade_not_folder": "{submission} — не папка и не .zip; ничего не оценено",
    },
}


def text(language: str, key: str, **values) -> str:
    """TEXT[language][key] filled with ``values``; English when the language is unknown."""
    return TEXT.get(language, TEXT["en"])[key].format(**values)
