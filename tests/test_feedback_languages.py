"""The grader speaks the course's languages: `rl4llm grade --lang`, `RL4LLM_LANG`, else the locale.

English stays exactly what it was (reports are compared byte for byte across
versions); Russian feedback carries the same statuses, ids, points and
misconception names. The particulars other engine modules write in English
(sandbox refusals, a worker's exit, the comparator's line, notes about the
submission's files) are recognised by :data:`graders.engine.values.texts.DETAILS`:
each of its English templates is checked here against what its module writes.
"""

from __future__ import annotations

import json
import re
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest

from graders import checks, course
from graders.build.stubs import stub_message
from graders.cli import build_parser, main
from graders.engine.intake import submission
from graders.engine.routes import grading
from graders.engine.sandbox import layers as sandbox
from graders.engine.values import compare, texts
from graders.engine.worker import runner
from graders.engine.outputs.feedback import _verdict_only
from graders.engine.routes.grading import GradeOptions
from graders.engine.routes.inline import grade_exercise
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import mutant_source
from graders.engine.values.protocol import CaseOutcome, CaseResult
from graders.engine.outputs.reports import scoreboard
from graders.text import Text, table_in

GRA = "module_9_reference.group_relative_advantages"
CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
LOCALE = ("RL4LLM_LANG", "LC_ALL", "LC_MESSAGES", "LANG")


def _english_locale(monkeypatch) -> None:
    for variable in LOCALE:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


def _russian(said) -> str:
    """``said`` in Russian: it must have been made as data (a Particular, or a Text) by the code that says it, never a
    plain English string read back, and its Russian must be Russian."""
    assert isinstance(said, Text), f"made as a plain string, not as data: {said!r}"
    russian = texts.translated(said, "ru")
    assert russian == said.in_("ru") and russian != str(said) and CYRILLIC.search(russian), repr(said)
    return russian


# ---------------------------------------------------------------------------
# The tables: English as it always was, every Russian text translated
# ---------------------------------------------------------------------------
def test_english_feedback_templates_are_the_historical_strings():
    say = texts.feedback_text
    assert say("en", "checks_passed", passed=14, checks=51) == "14/51 checks passed."
    assert say("en", "file_missing", stem="module_9_training") == "missing: no module_9_training.py in the submission"
    assert say("en", "misconception_on_check", name="sample_std", hint="h") == "misconception 'sample_std': h"
    assert say("en", "misconception_summary", name="x", label="#1", hint="h") == "- misconception 'x' (on check '#1'): h"
    assert say("en", "timeout", seconds=10.0) == "timeout: did not finish within 10 s of CPU time (all checks together); 0 points"
    assert say("en", "check", label="a check", visibility="hidden", input="hidden input") == \
        "- a check (hidden): input hidden input"
    assert say("en", "wrong", expected="1", got="2") == "expected 1, got 2"
    assert say("en", "refused", what="starting a process") == (
        "this exercise tried starting a process; the grader refuses access to the reference solutions and "
        "hidden checks, so it scores 0")
    assert texts.scoreboard_text("en", "not_passed", submission="a", score="1", max_score="2", count=1) == \
        "== a: 1/2 (1 exercise(s) not passed)"
    assert texts.translated("anything at all", "en") == "anything at all"


PYTHONS_OWN = {"None", "bool"}  # Python's own words: the same in every language


@pytest.mark.parametrize("table", [texts.FEEDBACK, texts.SCOREBOARD, texts.DETAILS, texts.KINDS, texts.TYPES],
                         ids=["FEEDBACK", "SCOREBOARD", "DETAILS", "KINDS", "TYPES"])
def test_every_russian_text_is_translated(table):
    for key, text in table.items():
        english, russian = text.in_("en"), text.in_("ru")
        if russian in PYTHONS_OWN:
            continue
        assert russian != english and CYRILLIC.search(russian), (key, russian)


def test_both_misconception_lines_begin_with_the_marker_in_every_language():
    for language in course.LANGUAGES:
        marker = texts.feedback_text(language, "misconception", name="x")
        assert texts.feedback_text(language, "misconception_on_check", name="x", hint="h").startswith(marker)
        assert marker in texts.feedback_text(language, "misconception_summary", name="x", label="l", hint="h")


def test_hide_mode_keeps_the_russian_misconception_line():
    outcome = CaseOutcome(0, None, CaseResult.RAISED, error={"type": "RuntimeError", "message": "[0.25]"},
                          named=[("x", Text("hint", "подсказка"))])
    assert _verdict_only(outcome, [], "ru") == (
        "функция выбросила исключение (подробности не показываются: скрытая проверка)\n    типичная ошибка 'x': подсказка")


def test_hide_mode_withholds_the_data_fields_of_a_hidden_line_by_structure():
    """A hidden check's comparator or type line keeps the kit's words (where, tolerances, the reference's type)
    and loses every value: by the Particular's fields, in every language, never by reading its text."""
    wrong = compare.mismatch({"loss": np.array([1.0, 2.0])}, {"loss": np.array([1.0, 9.87654])}, rtol=1e-5, atol=0.0)
    typed = compare.type_problem({"array": "float64", "ndim": 1}, {"object": "Fingerprint9876"})
    for result, reason in ((CaseResult.WRONG, wrong), (CaseResult.WRONG_TYPE, typed)):
        outcome = CaseOutcome(0, None, result, expected=np.array([1.0, 2.0]), got=np.array([1.0, 9.87654]),
                              reason=reason)
        for language in course.LANGUAGES:
            text = _verdict_only(outcome, [], language)
            assert "9.87654" not in text and "Fingerprint9876" not in text and "[1]" not in text, text
            assert texts.feedback_text(language, "withheld_value") in text, text
    assert _verdict_only(CaseOutcome(0, None, CaseResult.WRONG, reason=wrong), [], "en").endswith(
        "(at ['loss']: <hidden> of <hidden> entries differ; first at index <hidden>: expected <hidden>, got <hidden> "
        "(rtol 1e-05, atol 0))")
    assert "expected a NumPy array of dtype float64, got <hidden>" in \
        _verdict_only(CaseOutcome(0, None, CaseResult.WRONG_TYPE, reason=typed), [], "en")
    band = Text("the KL is 0.987654, the reference gives 0.5", "KL = 0.987654, эталон даёт 0.5")  # a check's own
    assert _verdict_only(CaseOutcome(0, None, CaseResult.WRONG, reason=band), [], "en") == \
        texts.feedback_text("en", "withheld_wrong")  # not data: dropped whole


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unknown language"):
        texts.feedback_text("de", "checks_passed", passed=1, checks=1)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["grade", "x", "--out", "y", "--lang", "de"])


# ---------------------------------------------------------------------------
# DETAILS recognises what the other modules write
# ---------------------------------------------------------------------------
def test_every_sandbox_refusal_is_recognised(tmp_path):
    fence = sandbox.Fence([tmp_path], ["graders"])
    fence.armed = True
    events = [(event, ()) for event in sandbox.BLOCKED_EVENTS]
    events += [("open", (str(tmp_path / "answers.json"),)), ("import", ("graders.checks",)), ("os.kill", (12345, 9))]
    for event, args in events:
        with pytest.raises(PermissionError) as refused:
            fence.hook(event, args)
        (violation,) = fence.take_violations()  # what the child sends: the refusal's key and its fields
        said = texts.refusal(violation)
        assert str(refused.value) == f"the grader does not allow {said}"  # the learner's own traceback: English
        _russian(said)
    assert _russian(texts.refusal({"what": "refused_path", "path": "/kit/solutions", "event": "open"})) == \
        "доступ к /kit/solutions (open)"
    assert texts.refusal({"what": "not_a_refusal"}) == texts.REFUSED_UNKNOWN  # what the door lets through only


def test_every_worker_exit_is_recognised():
    for code in (None, -11, -9, -6, -25, -15, 3):
        _russian(runner.describe_exit(code))
    assert _russian(runner.describe_exit(-15)) == "рабочий процесс завершён сигналом SIGTERM"


def test_every_comparator_line_is_recognised():
    pairs = [(0.5, 0.6), (np.array([1.0, 2.0]), np.array([1.0, 3.0])), (np.zeros(2), np.zeros(3)),
             (1.0, "x"), (np.zeros(2), [1.0, 2.0]), ([1.0], [1.0, 2.0]), ({"a": 1.0}, {}),
             ({"a": [1.0]}, {"a": [2.0]}), ("a", "b"), (None, 1.0), (1.0, {"k": 1.0}), (object(), 1.0)]
    for expected, got in pairs:
        line = compare.mismatch(expected, got, rtol=1e-9, atol=0.0)
        assert line is not None, (expected, got)
        russian = _russian(line)
        assert not re.search(r"\b(expected|got|of|item)\b", russian), russian
    line = compare.mismatch({"a": [1.0]}, {"a": [[1.0, 2.0]]}, rtol=1e-9, atol=0.0)
    assert line == "at ['a'][0]: expected a number, got a list of 2 item(s)"
    assert _russian(line) == "элемент ['a'][0]: ожидалось: число, получено: список длины 2"


def test_a_particular_that_is_not_recognised_stays_as_written():
    band = "at the result: expected an infinity where the answer is finite (or the other sign)"
    assert texts.translated(band, "ru") == band  # a check's own message: English, and not half-translated
    assert texts.translated("something new", "ru") == "something new"


def test_learner_file_problems_and_notes_are_recognised(tmp_path):
    def problem(data: bytes) -> str:
        found = submission.Submission("s", tmp_path, raw={"module_9_reference": data})
        return submission.learner_source(found, "module_9_reference")[1]

    for data in (b"x" * (submission.MAX_FILE_BYTES + 1), b"\xff\xfe = 1", b"def f(:\n", b"x = 1\x00\n"):
        _russian(problem(data))

    functions = DEFAULT_KIT.functions_by_stem(("9",))
    reference = DEFAULT_KIT.solution_path("module_9_reference").read_text(encoding="utf-8")
    folder = tmp_path / "sub"
    (folder / "copy").mkdir(parents=True)
    for where in ("module_9_reference.py", "copy/module_9_reference.py"):
        (folder / where).write_text(reference, encoding="utf-8")
    (folder / "Module9_training.py").write_text("x = 1\n", encoding="utf-8")
    cell = {"cell_type": "code", "source": "def grpo_loss(*args):\n    return 0\n", "metadata": {}, "outputs": [],
            "execution_count": None}
    (folder / "work.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                   "nbformat_minor": 5}), encoding="utf-8")
    notes = [note for found in submission.discover(folder, functions).notes.values() for note in found]
    assert len(notes) == 2  # two copies; a notebook instead of module_9_training.py
    for note in notes:
        _russian(note)
    (folder / "work.ipynb").unlink()
    notes = submission.discover(folder, functions).notes["module_9_training"]
    assert _russian(notes[0]).startswith("найдено: Module9_training.py. Это ваш module_9_training.py?")


def test_unreadable_submissions_are_recognised(tmp_path):
    functions = DEFAULT_KIT.functions_by_stem(("9",))
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "broken.zip").write_bytes(b"not a zip")
    problems = [submission.discover(tmp_path / "notes.txt", functions).problem,
                submission.discover(tmp_path / "broken.zip", functions).problem]
    for name in ("/etc/passwd", "../up.py"):
        path = tmp_path / f"member_{len(problems)}.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(name, "x = 1\n")
        problems.append(submission.discover(path, functions).problem)
    for problem in problems:
        assert problem
        _russian(problem)
    symlink = texts.detail("zip_unsafe", reason=texts.detail("zip_symlink", name="'a.py'"))
    assert symlink == "unsafe zip: member 'a.py' is a symbolic link"
    assert _russian(symlink) == "небезопасный zip-архив: элемент 'a.py' — символическая ссылка"


def test_stub_messages_and_kit_problems_are_recognised():
    fence = types.SimpleNamespace(function="k3_kl", pointer="k3 = exp(ref - logp) - (ref - logp) - 1")
    assert _russian(texts.stub_particular(stub_message("module_9_reference", fence))) == \
        "module_9_reference.k3_kl: ещё не реализовано — k3 = exp(ref - logp) - (ref - logp) - 1"
    assert texts.stub_particular("my own message") == "my own message"  # not the kit's stub: as it is
    source = Path(grading.__file__).read_text(encoding="utf-8")
    for key in ("kit_no_checks", "kit_no_cases"):  # grading.prepare_job says them as data
        assert f'detail("{key}")' in source, key
    # graders.engine.judging.judge writes its kit problems with texts.detail: recognised by construction
    _russian(texts.detail("kit_no_raise", label="empty group", exception="ValueError"))
    _russian(texts.detail("kit_reference_raised", label=3, message="ValueError: boom"))


# ---------------------------------------------------------------------------
# The setting: --lang, else RL4LLM_LANG, else the locale, else English
# ---------------------------------------------------------------------------
def test_the_options_follow_the_setting(monkeypatch):
    _english_locale(monkeypatch)
    assert GradeOptions().lang == "en"
    monkeypatch.setenv("LANG", "ru_RU.UTF-8")
    assert GradeOptions().lang == "ru"
    monkeypatch.setenv("RL4LLM_LANG", "en")
    assert GradeOptions().lang == "en"
    monkeypatch.setenv("RL4LLM_LANG", "ru")
    assert GradeOptions().lang == "ru" and GradeOptions(lang="en").lang == "en"


def test_a_notebook_check_follows_rl4llm_lang(monkeypatch):
    _english_locale(monkeypatch)
    english = grade_exercise("module_9_reference.k3_kl", 42, namespace={})
    monkeypatch.setenv("RL4LLM_LANG", "ru")
    russian = grade_exercise("module_9_reference.k3_kl", 42, namespace={})
    assert english["feedback"] == "missing: k3_kl is not a function (got int)"
    assert russian["feedback"] == "не найдено: k3_kl — не функция (получено: int)"
    assert {k: v for k, v in russian.items() if k != "feedback"} == {k: v for k, v in english.items() if k != "feedback"}


# ---------------------------------------------------------------------------
# Grading end to end, in both languages
# ---------------------------------------------------------------------------
MIXED = '''

_given_loo = leave_one_out_baseline


def k3_kl(logprobs, ref_logprobs):
    return np.zeros_like(np.asarray(logprobs, dtype=float)) + 0.5


def categorical_entropy(probabilities):
    raise RuntimeError("boom")


def leave_one_out_baseline(rewards):
    out = _given_loo(rewards)
    if isinstance(rewards, np.ndarray) and rewards.size:
        rewards.flat[0] = 42.0
    return out


def pass_at_k_independent(p, k):
    import subprocess
    subprocess.run(["true"])
    return 0.0


del overlong_penalty
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, Path]:
    """The same submissions graded three times: ``--lang en`` under RL4LLM_LANG=ru, RL4LLM_LANG=ru, ``--lang ru``."""
    root = tmp_path_factory.mktemp("languages")
    reference = DEFAULT_KIT.solution_path("module_9_reference").read_text(encoding="utf-8")
    sources = {"mutant": mutant_source(GRA, "sample_std"),
               "starter": DEFAULT_KIT.starter_path("module_9_reference").read_text(encoding="utf-8"),
               "mixed": reference + MIXED}
    paths = []
    for name, text in sources.items():
        (root / name).mkdir()
        (root / name / "module_9_reference.py").write_text(text, encoding="utf-8")
        paths.append(str(root / name))
    outs = {}
    with pytest.MonkeyPatch.context() as patch:
        for variable in LOCALE:
            patch.delenv(variable, raising=False)
        patch.setenv("LANG", "C.UTF-8")
        for run, env, flags in (("en", "ru", ["--lang", "en"]), ("env_ru", "ru", []), ("flag_ru", None, ["--lang", "ru"])):
            if env:
                patch.setenv("RL4LLM_LANG", env)
            else:
                patch.delenv("RL4LLM_LANG", raising=False)
            outs[run] = root / run
            assert main(["grade", *paths, "--out", str(outs[run]), "--module", "9", "--quiet", *flags]) == 0
    return outs


def _reports(out: Path) -> dict[str, dict]:
    return {name: json.loads((out / name / "report.json").read_text(encoding="utf-8"))
            for name in ("mutant", "starter", "mixed")}


def _entries(report: dict) -> dict[str, dict]:
    return {entry["id"]: entry for entry in report["exercises"]}


def _without_feedback(report: dict) -> dict:
    return {**report, "exercises": [{k: v for k, v in e.items() if k != "feedback"} for e in report["exercises"]]}


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_russian_reports_keep_statuses_ids_points_and_misconceptions(graded):
    english, russian = _reports(graded["en"]), _reports(graded["flag_ru"])
    statuses = set()
    for name in english:
        assert _without_feedback(russian[name]) == _without_feedback(english[name]), name
        for entry in russian[name]["exercises"]:
            statuses.add(entry["status"])
            if entry["status"] != "passed":
                assert CYRILLIC.search(entry["feedback"]), (name, entry["id"], entry["feedback"])
    assert {"passed", "failed", "error", "missing"} <= statuses


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_rl4llm_lang_gives_the_same_bytes_as_the_flag(graded):
    for name in ("mutant", "starter", "mixed"):
        for file in ("report.json", "results.json", "junit.xml"):
            assert (graded["env_ru"] / name / file).read_bytes() == (graded["flag_ru"] / name / file).read_bytes()


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_russian_feedback_of_a_failed_a_missing_and_an_error_exercise(graded):
    mutant, starter, mixed = (_entries(r) for r in _reports(graded["flag_ru"]).values())
    failed = mutant[GRA]
    assert failed["status"] == "failed" and failed["misconceptions"] == ["sample_std"]
    assert re.match(r"пройдено проверок: \d+ из \d+\.\n- '", failed["feedback"])
    assert "ожидалось: [" in failed["feedback"] and "не совпадают элементы: " in failed["feedback"]
    assert "    типичная ошибка 'sample_std': похоже на выборочное std (ddof=1)" in failed["feedback"]  # the hint too
    # and report.json carries the hint in every language, for the class report and the LMS export to read
    assert set(failed["hints"]["sample_std"]) == {"en", "ru"}
    assert failed["hints"]["sample_std"]["ru"].startswith("похоже на выборочное std (ddof=1)")

    missing = mutant["module_9_training.grpo_loss"]
    assert missing["status"] == "missing"
    assert missing["feedback"] == "не найдено: в сдаче нет файла module_9_training.py"
    assert mixed["module_9_reference.overlong_penalty"]["feedback"] == \
        "не найдено: в module_9_reference.py нет функции overlong_penalty"

    stub = starter["module_9_reference.k3_kl"]
    assert stub["status"] == "error"
    assert re.fullmatch(r"пройдено проверок: 0 из \d+\.\nmodule_9_reference\.k3_kl: ещё не реализовано — k3 = .*",
                        stub["feedback"], re.DOTALL)
    raised = mixed["module_9_reference.categorical_entropy"]
    assert raised["status"] == "error" and "функция выбросила исключение RuntimeError: boom" in raised["feedback"]
    assert mixed["module_9_reference.pass_at_k_independent"]["feedback"].startswith(
        "упражнение попыталось выполнить запрещённое действие: запуск процесса; ")
    changed = mixed["module_9_reference.leave_one_out_baseline"]
    assert changed["status"] == "failed"
    assert "функция изменила входные данные на месте: rewards; входные данные изменять нельзя" in changed["feedback"]


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_check_labels_are_in_the_language_of_the_report(graded):
    english, russian = (_entries(_reports(graded[run])["mutant"])[GRA]["feedback"] for run in ("en", "flag_ru"))
    assert "\n- 'seed table, standardised' (public): input rewards=" in english
    assert "\n- 'таблица из ноутбука, стандартизация' (открытая), входные данные: rewards=" in russian
    labels = {case.label for case in checks.spec_for(GRA).cases()}
    russian_labels = {case.label.in_("ru") for case in checks.spec_for(GRA).cases()}
    shown = re.findall(r"^- '(.*)' \((?:скрытая|открытая)\)", russian, re.MULTILINE)
    assert shown and all(label in russian_labels and (label not in labels or label.isascii()) for label in shown)


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_english_feedback_is_unchanged(graded):
    mutant, starter, mixed = (_entries(r) for r in _reports(graded["en"]).values())
    failed = mutant[GRA]["feedback"]
    assert re.match(r"\d+/\d+ checks passed\.\n- 'seed table, standardised' \(public\): input rewards=", failed)
    assert "\n    expected [0.999998, 0.999998, -0.999998, -0.999998], got [0.866024, 0.866024, " in failed
    assert "\n    (4 of 4 entries differ; first at index [0]: expected 0.999998, got 0.866024 (rtol " in failed
    assert "\n    misconception 'sample_std': looks like sample std (ddof=1); the lecture uses population std" in failed
    assert mutant["module_9_training.grpo_loss"]["feedback"] == "missing: no module_9_training.py in the submission"
    assert re.fullmatch(r"0/\d+ checks passed\.\nmodule_9_reference\.k3_kl is not implemented yet -- k3 = .*",
                        starter["module_9_reference.k3_kl"]["feedback"], re.DOTALL)
    assert mixed["module_9_reference.overlong_penalty"]["feedback"] == \
        "missing: module_9_reference.py has no function overlong_penalty"
    assert mixed["module_9_reference.pass_at_k_independent"]["feedback"] == (
        "this exercise tried starting a process; the grader refuses access to the reference solutions and hidden "
        "checks, so it scores 0")
    assert "\n    modified its input(s) in place: rewards; inputs must never change" in \
        mixed["module_9_reference.leave_one_out_baseline"]["feedback"]
    assert "\n    raised RuntimeError: boom (module_9_reference.py, line " in \
        mixed["module_9_reference.categorical_entropy"]["feedback"]


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_the_scoreboard_speaks_the_setting(graded, monkeypatch):
    reports = list(_reports(graded["flag_ru"]).values())
    _english_locale(monkeypatch)
    english = scoreboard(reports, feedback=True)
    assert english.startswith("submission   ") and "== mutant: " in english and "exercise(s) not passed)" in english
    monkeypatch.setenv("RL4LLM_LANG", "ru")
    russian = scoreboard(reports, feedback=True)
    assert russian.startswith("сдача   ") and "(не пройдено упражнений: " in russian
    assert scoreboard(reports, feedback=True, language="en") == english  # an explicit language wins
    assert scoreboard([], language="ru") == "ни одна сдача не проверена.\n"
    from graders.engine.values.texts import STATUS_WORDS

    for status in ("passed", "failed", "error", "timeout", "missing"):  # the header says each status in words
        assert STATUS_WORDS[status].in_("ru") in russian.splitlines()[0]
        assert status in english.splitlines()[0]


# ----------------------------------------------------------------------------- the checks' own messages
def test_every_outcome_band_is_said_in_both_languages():
    from graders.checks import module_8_training, module_9_training

    for bands in (module_8_training.OUTCOME_BANDS, module_9_training.OUTCOME_BANDS):
        for key, (_, _, what, advice) in bands.items():
            for english, russian in ((text.in_("en"), text.in_("ru")) for text in (what, advice)):
                assert english and CYRILLIC.search(russian) and not CYRILLIC.search(english), (key, english, russian)


def test_a_band_miss_is_shown_in_the_reports_language():
    from graders.checks.module_9_training import OUTCOME_BANDS, compare_with_bands

    compare = compare_with_bands(OUTCOME_BANDS, checks.close())
    want = {key: 0.5 for key in OUTCOME_BANDS}
    reason = compare(want, {**want, "after_train_kl": 0.9}, checks.Case())
    assert reason == ("the teacher-forced KL to the reference after two updates (after_train_kl) is 0.9, the "
                      "reference gives 0.5 (+- 0.14): the loss trains differently from the reference")
    assert texts.translated(reason, "en") == reason
    assert texts.translated(reason, "ru") == ("KL к эталонной политике (teacher forcing) после двух обновлений "
                                              "(after_train_kl) = 0.9, эталон даёт 0.5 (± 0.14): функция потерь "
                                              "обучает не так, как эталонная")
    assert texts.translated(compare(want, [], checks.Case()), "ru") == "проверка вернула list, а не словарь метрик"
    assert compare(want, dict(want), checks.Case()) is None
    failing = checks.band(lambda expected, got: got > expected, Text("too small", "слишком мало"))
    assert texts.translated(failing(1, 0, checks.Case()), "ru") == "слишком мало"
    assert texts.translated(failing(1, None, checks.Case()), "ru") == "слишком мало (не удалось вычислить: TypeError)"
    assert failing(1, None, checks.Case()) == "too small (could not evaluate: TypeError)"


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_toy_run_that_trains_wrongly_is_explained_in_russian(tmp_path):
    (tmp_path / "flipped").mkdir()
    # right on the value checks, sign-flipped on the toy's batches (groups of 8 responses of up to 6 tokens)
    (tmp_path / "flipped" / "module_9_training.py").write_text(
        DEFAULT_KIT.solution_path("module_9_training").read_text(encoding="utf-8") + "\n\n"
        "_right = grpo_loss\n\n\n"
        "def grpo_loss(new_logprobs, *args, **kwargs):\n"
        "    loss = _right(new_logprobs, *args, **kwargs)\n"
        "    return -loss if new_logprobs.shape[0] % 8 == 0 and new_logprobs.shape[1] == 6 else loss\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["grade", str(tmp_path / "flipped"), "--out", str(out), "--module", "9", "--quiet", "--lang", "ru"]) == 0
    entry = _entries(json.loads((out / "flipped" / "report.json").read_text(encoding="utf-8")))["module_9_training.grpo_loss"]
    assert entry["status"] == "failed"
    assert "эталон даёт" in entry["feedback"] and "the reference gives" not in entry["feedback"], entry["feedback"]


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_only_an_untouched_stub_is_marked_not_implemented(graded):
    mutant, starter, mixed = (_entries(r) for r in _reports(graded["en"]).values())
    assert all(entry.get("not_implemented") is True and entry["status"] == "error" and entry["points"] == 0
               for entry in starter.values() if entry["status"] != "missing")
    assert not any("not_implemented" in entry for entry in mutant.values())
    assert not any(entry.get("not_implemented") for entry in mixed.values() if entry["status"] != "error"
                   or "NotImplementedError" not in entry["feedback"])


def test_a_kit_problem_names_the_check_in_the_reports_language():
    case = checks.Case(args=([],), raises=ValueError,
                       label=Text("an empty group is refused", "пустая группа отклоняется"))
    text = texts.detail("kit_no_raise", label=case.label or 4, exception="ValueError")
    assert text == texts.detail("kit_no_raise", label="an empty group is refused", exception="ValueError")
    assert "пустая группа отклоняется" in texts.translated(text, "ru") and CYRILLIC.search(texts.translated(text, "ru"))
    unlabelled = texts.detail("kit_reference_raised", label=checks.Case().label or 4,
                                                message="ValueError: boom")
    assert texts.translated(unlabelled, "ru") == _russian(texts.detail("kit_reference_raised", label=4,
                                                                       message="ValueError: boom"))
