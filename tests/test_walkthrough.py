"""``rl4llm run``: the course notebook against a learner's own folder, with figures a person can read.

Fast tests: where ``--impl`` looks and what it says when it finds nothing, the
language setting, the seed's cells and line numbers, the one-line failure
messages, the text tables (every text in every language) and the finishing of
a figure. Slow tests (``-m slow``) run the seed notebooks in a fresh
interpreter: a learner's folder (copies of the reference files), a folder of
stubs, a learner install without ``solutions/``, Russian labels, Module 8.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from graders import cli, course  # noqa: E402
from graders.walkthrough import figures, run as walkthrough, seed as walkthrough_seed
from graders.language import default_language  # noqa: E402
from graders.paths import REPO_ROOT, SEEDS_DIR, SOLUTIONS_DIR, STARTER_DIR  # noqa: E402
from graders.text import table_in
from graders.text import Text
from graders.walkthrough.values import PAGE_VALUES

CYRILLIC = re.compile("[А-Яа-яЁё]")
M9_FIGURES = ["module09_accuracy_by_prompt.png", "module09_exact_updates.png", "module09_heldout_accuracy.png",
              "module09_importance_ratios.png", "module09_informative_groups.png", "module09_training_curves.png"]
M8_FIGURES = ["module08_dpo_gradient_weight.png", "module08_likelihood_displacement.png",
              "module08_reward_kl_frontier.png", "module08_sequence_logprobs.png"]


def _learner_folder(root: Path, folder: str, files: dict[str, Path]) -> Path:
    """``root/<folder>/`` holding copies of ``files`` (name -> source): a learner's folder laid out like starter/."""
    target = root / folder
    target.mkdir(parents=True)
    for name, source in files.items():
        shutil.copy(source, target / name)
    return root


def _reference_learner(root: Path) -> Path:
    """A learner whose two Module 9 files are copies of the reference (and nothing else: no given modules)."""
    return _learner_folder(root, "module_09", {name: SOLUTIONS_DIR / "module_09" / name
                                              for name in ("module_9_reference.py", "module_9_training.py")})


def _stub_learner(root: Path) -> Path:
    """A learner who has implemented nothing in module_9_reference.py yet (the starter's stubs)."""
    return _learner_folder(root, "module_09", {
        "module_9_reference.py": STARTER_DIR / "module_09" / "module_9_reference.py",
        "module_9_training.py": SOLUTIONS_DIR / "module_09" / "module_9_training.py"})


def _summary(out: Path) -> dict:
    return json.loads((out / walkthrough.SUMMARY_FILE).read_text(encoding="utf-8"))


def _run_cli(args: list[str], cwd: Path = REPO_ROOT, **env) -> subprocess.CompletedProcess:
    """``python -m graders.cli ARGS`` in a fresh interpreter, from ``cwd`` (whose ``graders`` it imports)."""
    return subprocess.run([sys.executable, "-m", "graders.cli", *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", timeout=300, env={**os.environ, "MPLBACKEND": "Agg", **env})


def _assert_readable(summary: dict, names: list[str], language: str) -> None:
    """Every saved figure has a title, every panel a y-label, the bottom panel an x-label; all in ``language``."""
    assert sorted(item["file"] for item in summary["figures"]) == names
    for item in summary["figures"]:
        assert item["title"].strip(), item
        assert all(panel["ylabel"].strip() for panel in item["panels"]), item
        assert item["panels"][-1]["xlabel"].strip(), item
        texts = [item["title"]] + [text for panel in item["panels"]
                                   for text in (panel["xlabel"], panel["ylabel"], *panel["legend"])]
        if language == "en":
            assert not [text for text in texts if CYRILLIC.search(text)], item
        else:
            assert CYRILLIC.search(item["title"]) and CYRILLIC.search(item["panels"][-1]["xlabel"]), item


# The English words a Russian run may print: the code's names (single-word column headers, which the
# Russian course notebook keeps too), the methods' and libraries' names, and symbols. Anything else in
# Latin letters on a line of a Russian run is a text left untranslated.
CODE_WORDS = set("""
    reward centered standardized ratio surrogate reduction step entropy accuracy update loss before after
    status length terminated text reference observed expected regime prompt chosen generated method feedback
    beta p response smoke profile real root
    DPO cDPO IPO SimPO ORPO GRPO Dr DAPO KL NLL RL eps tau G P info pass LoRA TRL GPU Qwen Qwen3 teacher forcing
    held out held-out dapo trl transformers datasets peft accelerate bitsandbytes boxed nan True False None png eos
    verbose
""".split())
DPO_TOY_WORDS = set("sky colour the is blue green grass two plus three it four five capital of france italy paris "
                    "rome fire hot yes no ice cold".split())


def _english_left(output: str) -> list[str]:
    """The lines of a Russian run that still hold English prose (Python dicts and JSON are code: skipped)."""
    left = []
    for line in output.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in '{}[]"' or re.fullmatch(r"[\d,\s]+", stripped):
            continue  # a dict, a JSON dump: Python values, printed as Python writes them
        words = re.findall(r"[A-Za-z][A-Za-z0-9@+]*(?:-[A-Za-z0-9@+]+)*", re.sub(r"\S*[/_.=]\S*", " ", line))
        if [word for word in words if word not in CODE_WORDS | DPO_TOY_WORDS and len(word) > 1
                and not re.search(r"[\d@]", word)]:
            left.append(line)
    return left


def _assert_in_language(output: str, language: str) -> None:
    if language == "en":
        assert not [line for line in output.splitlines() if CYRILLIC.search(line)], output[-3000:]
    else:
        assert _english_left(output) == [], _english_left(output)


def test_the_prose_check_finds_an_english_line_in_a_russian_run():
    assert _english_left("оптимум при beta=1: [0.3 0.5]\n{'root': '/x', 'profile': 'smoke'}") == []
    assert _english_left("constrained Lagrangian: 1.335") == ["constrained Lagrangian: 1.335"]
    assert _english_left("1  moderate DPO  0.515941") == ["1  moderate DPO  0.515941"]


# ----------------------------------------------------------------------------- --impl
@pytest.mark.parametrize("layout", ["starter-like", "module folder", "one learner file"])
def test_impl_accepts_a_starter_like_folder_a_module_folder_or_a_file(tmp_path, layout):
    root = _reference_learner(tmp_path)
    given = {"starter-like": root, "module folder": root / "module_09",
             "one learner file": root / "module_09" / "module_9_reference.py"}[layout]
    assert walkthrough.resolve_impl("9", given) == (root / "module_09").resolve()


def test_impl_that_matches_neither_layout_says_what_was_expected(tmp_path):
    (tmp_path / "module_9_reference.py").write_text("", encoding="utf-8")
    with pytest.raises(walkthrough.ImplError) as raised:
        walkthrough.resolve_impl("module09", tmp_path)
    message = str(raised.value)
    for text in ("module_9_reference.py, module_9_training.py", f"{tmp_path}/module_09/", "like starter/",
                 "the module folder itself", "found module_9_reference.py"):
        assert text in message
    with pytest.raises(walkthrough.ImplError, match="такой папки нет"):
        walkthrough.resolve_impl("9", tmp_path / "nowhere", "ru")


def test_without_impl_a_learner_install_runs_its_starter(monkeypatch, tmp_path):
    assert walkthrough.resolve_impl("8", None) == (SOLUTIONS_DIR / "module_08").resolve()
    monkeypatch.setattr(walkthrough_seed, "SOLUTIONS_DIR", tmp_path / "solutions")  # a learner install has none
    assert walkthrough.resolve_impl("8", None) == (STARTER_DIR / "module_08").resolve()
    monkeypatch.setattr(walkthrough_seed, "STARTER_DIR", tmp_path / "starter")
    with pytest.raises(walkthrough.ImplError, match="pass --impl DIR"):
        walkthrough.resolve_impl("8", None)


def test_cli_run_reports_a_bad_impl_in_one_line_and_exits_2(tmp_path, capsys):
    assert cli.main(["run", "module09", "--impl", str(tmp_path), "--lang", "en"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rl4llm run: --impl") and "found none of them" in err and "Traceback" not in err


def test_cli_run_parses_impl_lang_and_traceback():
    args = cli.build_parser().parse_args(["run", "9", "--impl", "my_work", "--lang", "ru", "--traceback"])
    assert (args.module.folder, args.impl, args.lang, args.traceback) == ("module_09", "my_work", "ru", True)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["run", "9", "--lang", "de"])


# ----------------------------------------------------------------------------- language
@pytest.mark.parametrize("environ, expected", [
    ({}, "en"),
    ({"LANG": "ru_RU.UTF-8"}, "ru"),
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LC_ALL": "en_GB.UTF-8", "LANG": "ru_RU.UTF-8"}, "en"),  # LC_ALL wins, as POSIX reads them
    ({"RL4LLM_LANG": "ru", "LC_ALL": "en_US.UTF-8"}, "ru"),  # the kit's own setting wins over the locale
    ({"RL4LLM_LANG": "RU_ru"}, "ru"),
    ({"RL4LLM_LANG": "de", "LANG": "ru_RU.UTF-8"}, "ru"),  # a language the course lacks: the locale decides
])
def test_default_language(environ, expected):
    assert default_language(environ) == expected


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def _leaves(table: dict, prefix=()) -> dict:
    out = {}
    for key, value in table.items():
        out.update(_leaves(value, prefix + (key,)) if isinstance(value, dict) else {prefix + (key,): value})
    return out


@pytest.mark.parametrize("table", [walkthrough.TEXT, figures.SEED_TEXT, figures.FIGURE_TEXT, figures.WORDS],
                         ids=["walkthrough.TEXT", "figures.SEED_TEXT", "figures.FIGURE_TEXT", "figures.WORDS"])
def test_every_text_exists_in_every_language(table):
    leaves = _leaves(table)
    assert leaves and all(isinstance(text, Text) for text in leaves.values()), \
        [key for key, text in leaves.items() if not isinstance(text, Text)]
    for key, text in leaves.items():
        for language in course.LANGUAGES:
            assert text.in_(language).strip(), (language, key)
            assert _placeholders(text.in_(language)) == _placeholders(text), (language, key)
    assert not [text for text in leaves.values() if CYRILLIC.search(text.in_("en"))]


def test_every_label_the_seeds_put_on_a_figure_is_translated():
    for folder in course.FOLDERS:
        seed = (SEEDS_DIR / f"{folder}_seed.txt").read_text(encoding="utf-8")
        for spec in figures.SEED_FIGURES[folder]:
            assert spec.marker in seed and spec.slug in table_in(figures.FIGURE_TEXT, "en")
        for extra in figures.EXTRA_FIGURES[folder]:
            assert extra.slug in table_in(figures.FIGURE_TEXT, "en")
    seed9 = (SEEDS_DIR / "module_09_seed.txt").read_text(encoding="utf-8")
    russian = set(re.findall(r"^[A-Z_]+ = '([^']*)'$", seed9, flags=re.M))
    assert len(russian) == 19 and russian <= set(table_in(figures.SEED_TEXT, "en"))  # 20 constants, "энтропия" twice
    seed8 = (SEEDS_DIR / "module_08_seed.txt").read_text(encoding="utf-8")
    legends = set(re.findall(r'label="([^"]+)"', seed8))
    assert len(legends) == 7 and legends <= set(table_in(figures.SEED_TEXT, "ru"))


# ----------------------------------------------------------------------------- the seed's cells
@pytest.mark.parametrize("folder", course.FOLDERS)
def test_prepared_code_keeps_the_seed_line_numbers_and_cells_match_the_figure_table(tmp_path, folder):
    seed = (SEEDS_DIR / f"{folder}_seed.txt").read_text(encoding="utf-8")
    code = walkthrough.prepare_seed_code(seed, tmp_path)
    seed_lines, code_lines = seed.splitlines(), code.splitlines()
    assert len(code_lines) == len(seed_lines)
    end = next(i for i, line in enumerate(seed_lines) if line.strip() == walkthrough.DISCOVERY_END)
    assert code_lines[end + 1:] == seed_lines[end + 1:]
    cells = walkthrough.split_cells(code)
    for cell in cells:
        assert cell.source.splitlines()[0] == code_lines[cell.line - 1]
        assert cell.line <= end or cell.source.splitlines()[0] == seed_lines[cell.line - 1]
    showing = [cell for cell in cells if "plt.show()" in cell.source]
    assert len(showing) == len(figures.SEED_FIGURES[folder])
    experiment = next(cell for cell in cells if cell.source.startswith(walkthrough.EXPERIMENT_MARKERS[folder]))
    assert "experiment" in experiment.defines
    assert any("experiment" in cell.needs for cell in cells if cell.line > experiment.line)


def test_a_cell_binding_a_name_in_a_comprehension_does_not_need_it():
    cells = walkthrough.split_cells("rows = [row * 2 for row in data]\nf = lambda p: p + offset\n\nprint(rows)\n")
    assert [cell.line for cell in cells] == [1, 4]
    assert cells[0].needs == {"data", "offset"} and {"rows", "f", "row", "p"} <= cells[0].defines
    assert cells[1].needs == {"print", "rows"}


def _raised(function, *args):
    try:
        function(*args)
    except BaseException as error:  # noqa: BLE001 - the test inspects it
        return error
    raise AssertionError("did not raise")


def test_failures_are_described_in_one_line_naming_the_function(tmp_path):
    stub = tmp_path / "module_9_reference.py"
    stub.write_text("def informative_group_probability(p, group_size):\n"
                    "    raise NotImplementedError('module_9_reference.informative_group_probability is not "
                    "implemented yet -- P_info = 1 - p^G - (1 - p)^G')\n\n"
                    "def buggy(values):\n    return values[10]\n", encoding="utf-8")
    namespace: dict = {}
    exec(compile(stub.read_text(encoding="utf-8"), str(stub), "exec"), namespace)
    impl = tmp_path.resolve()
    error = _raised(namespace["informative_group_probability"], 0.5, 4)
    assert walkthrough.describe_failure(error, "<seed>", impl, "en") == (
        "not implemented yet: module_9_reference.informative_group_probability -- P_info = 1 - p^G - (1 - p)^G")
    assert walkthrough.describe_failure(error, "<seed>", impl, "ru").startswith(
        "ещё не реализовано: module_9_reference.informative_group_probability")
    error = _raised(namespace["buggy"], [1, 2])
    assert walkthrough.describe_failure(error, "<seed>", impl, "en") == (
        "IndexError: list index out of range (at module_9_reference.py:5 in buggy: return values[10])")
    check = compile("\n\nassert [0, 1] == [1, 1]\n", "<seed module_09>", "exec")
    import linecache

    linecache.cache["<seed module_09>"] = (1, None, ["\n", "\n", "assert [0, 1] == [1, 1]\n"], "<seed module_09>")
    error = _raised(exec, check, {})
    assert walkthrough.describe_failure(error, "<seed module_09>", impl, "en") == (
        "a check of the notebook failed: assert [0, 1] == [1, 1]")


# ----------------------------------------------------------------------------- finishing a figure
def test_the_ratio_figure_gets_a_title_labels_clip_bounds_and_a_panel_for_the_mean(tmp_path):
    # what the seed draws: Russian legend, no title, no y-label, the mean ratio under the line at 1
    fig, ax = plt.subplots(figsize=(9.2, 4.8))
    updates = [1, 2, 3]
    ax.plot(updates, [0.2, 0.3, 0.4], label="минимальное отношение")
    ax.plot(updates, [0.99, 1.004, 0.995], label="среднее отношение")
    ax.plot(updates, [3.0, 2.0, 1.5], label="максимальное отношение")
    ax.axhline(1.0, linewidth=1.0, linestyle="--")
    ax.set_xlabel("обновление")
    ax.legend()
    spec = next(s for s in figures.SEED_FIGURES["module_09"] if s.slug == "module09_importance_ratios")
    assert spec.marker in figures.figure_texts(fig)
    context = {"experiment": {"config": SimpleNamespace(eps_low=0.2, eps_high=0.28)}}
    figures.finish_seed_figure(fig, spec, "en", context)
    top, low = fig.axes
    assert top.get_title() == table_in(figures.FIGURE_TEXT, "en")["module09_importance_ratios"]["title"]
    assert top.get_ylabel() and low.get_ylabel() and low.get_xlabel() == "update"
    legend = [text.get_text() for text in top.get_legend().get_texts()]
    assert "clip bound 1 − ε_low = 0.80" in legend and "clip bound 1 + ε_high = 1.28" in legend
    assert "minimum ratio" in legend and "mean ratio" not in legend
    assert [line.get_label() for line in low.get_lines()][0] == "mean ratio"
    lo, hi = low.get_ylim()
    assert hi - lo < 0.05  # the mean ratio's own scale, not the min/max panel's
    fig.savefig(tmp_path / "ratios.png")
    plt.close(fig)


def test_an_extra_figure_is_drawn_from_the_experiment_in_russian():
    metrics = {"accuracy": 0.5}
    experiment = {"prompts": [0] * 16, "heldout_prompts": [0] * 32, "before_train": metrics,
                  "after_train": {"accuracy": 0.7}, "before_heldout": metrics, "after_heldout": {"accuracy": 0.4}}
    extra = figures.EXTRA_FIGURES["module_09"][0]
    fig = extra.draw(experiment, "ru")
    figures.finish(fig, extra.slug, "ru")
    described = figures.describe(fig)
    assert CYRILLIC.search(described["title"]) and described["panels"][0]["legend"] == ["до RL", "после RL"]
    assert [tick.get_text() for tick in fig.axes[0].get_xticklabels()] == [
        "обучающие промпты (16)", "отложенные промпты (32)"]
    plt.close(fig)


def test_a_figure_the_kit_did_not_expect_keeps_the_seeds_drawing_and_a_numbered_name(tmp_path, capsys):
    run = walkthrough.SeedRun(course.module("9"), tmp_path, tmp_path, tmp_path, language="en", readable=True,
                              show_traceback=False)
    run.cell = walkthrough.split_cells("x = 1\n")[0]
    run.expected = {run.cell.line: figures.SEED_FIGURES["module_09"][0]}
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    ax.set_title("a figure the seed did not have")
    run.save_seed_figure(fig)
    plt.close(fig)
    assert (tmp_path / "module09_figure_01.png").is_file()
    assert "not the one the kit expected here (module09_informative_groups)" in capsys.readouterr().out
    assert run.summary.figures[0].slug is None and run.summary.figures[0].title == "a figure the seed did not have"


def test_a_new_run_removes_the_figures_of_the_previous_one_only(tmp_path):
    for name in ("module09_old.png", "mine.png"):
        (tmp_path / name).write_bytes(b"png")
    previous = {"figures": [{"file": "module09_old.png"}, {"file": "../outside.png"}]}
    (tmp_path / walkthrough.SUMMARY_FILE).write_text(json.dumps(previous), encoding="utf-8")
    (tmp_path.parent / "outside.png").write_bytes(b"png")
    walkthrough._forget_previous_run(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine.png"]
    assert (tmp_path.parent / "outside.png").exists()  # only names inside the output folder


# ----------------------------------------------------------------------------- whole runs (slow)
@pytest.mark.slow
def test_run_against_a_learner_folder_saves_readable_figures(tmp_path):
    learner, out = _reference_learner(tmp_path / "learner"), tmp_path / "out"
    completed = _run_cli(["run", "module09", "--impl", str(learner), "--out", str(out), "--lang", "en"])
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert f"against {(learner / 'module_09').resolve()}" in completed.stdout
    assert "arithmetic_toy.py, grpo_toy.py, toy_optim.py: not in" in completed.stdout  # the kit's given modules fill in
    summary = _summary(out)
    _assert_readable(summary, M9_FIGURES, "en")
    assert sorted(path.name for path in out.glob("*.png")) == M9_FIGURES
    assert all((out / name).stat().st_size > 10_000 for name in M9_FIGURES)
    ratios = next(item for item in summary["figures"] if item["slug"] == "module09_importance_ratios")
    assert {"clip bound 1 − ε_low = 0.80", "clip bound 1 + ε_high = 1.28"} <= set(ratios["panels"][0]["legend"])
    assert ratios["panels"][1]["legend"][0] == "mean ratio"
    assert "before RL, held-out" in completed.stdout and "до RL" not in completed.stdout
    _assert_in_language(completed.stdout, "en")
    assert summary["page_values"] and all(record["matches"] for record in summary["page_values"])
    assert "done: 6 figure(s)" in completed.stdout and not summary["failed_cells"]


@pytest.mark.slow
def test_run_with_a_stub_names_the_function_lists_what_is_missing_and_fails(tmp_path):
    learner, out = _stub_learner(tmp_path / "learner"), tmp_path / "out"
    completed = _run_cli(["run", "9", "--impl", str(learner), "--out", str(out), "--lang", "en"])
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output[-3000:]
    assert "Traceback" not in output
    assert ("could not run: not implemented yet: module_9_reference.verify_numeric_answer -- 1 if the final answer"
            in completed.stdout)
    assert "not implemented yet: module_9_reference.informative_group_probability" in completed.stdout
    assert "skipped: it needs `experiment`" in completed.stdout
    assert "Figures not produced (6):" in completed.stdout
    for name in M9_FIGURES:
        assert f"  {name}  (" in completed.stdout
    assert "rl4llm run module09:" in completed.stderr and "exit 1" in completed.stderr
    summary = _summary(out)
    assert summary["figures"] == [] and len(summary["missing_figures"]) == 6
    assert not list(out.glob("*.png"))


@pytest.mark.slow
def test_a_learner_install_without_solutions_runs_in_russian(tmp_path):
    kit = tmp_path / "kit"  # what a learner gets: the kit without solutions/
    for folder in ("graders", "starter"):
        shutil.copytree(REPO_ROOT / folder, kit / folder, ignore=shutil.ignore_patterns("__pycache__"))
    assert not (kit / "solutions").exists()
    learner, out = _reference_learner(tmp_path / "learner"), tmp_path / "out"
    completed = _run_cli(["run", "module09", "--impl", str(learner), "--out", str(out)], cwd=kit, RL4LLM_LANG="ru")
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert f"рядом с файлами набора ({kit / 'starter' / 'module_09'})" in completed.stdout
    summary = _summary(out)
    assert summary["language"] == "ru"
    _assert_readable(summary, M9_FIGURES, "ru")
    curves = next(item for item in summary["figures"] if item["slug"] == "module09_training_curves")
    assert curves["panels"][0]["legend"] == ["точность свежей генерации", "энтропия", "доля информативных групп"]
    assert "готово: рисунков в" in completed.stdout
    _assert_in_language(completed.stdout, "ru")
    # without --impl, a learner install runs the learner's starter/: its stubs say what is not done yet
    completed = _run_cli(["run", "9", "--reference-only", "--out", str(tmp_path / "starter-out"), "--lang", "en"],
                         cwd=kit)
    assert completed.returncode == 1
    assert f"against {(kit / 'starter' / 'module_09').resolve()}" in completed.stdout
    assert "not implemented yet: module_9_reference.verify_numeric_answer" in completed.stdout
    assert "Traceback" not in completed.stdout + completed.stderr


@pytest.mark.slow
def test_module_8_run_saves_readable_figures_in_russian(tmp_path):
    completed = _run_cli(["run", "module08", "--out", str(tmp_path), "--lang", "ru"])
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    summary = _summary(tmp_path)
    _assert_readable(summary, M8_FIGURES, "ru")
    logprobs = next(item for item in summary["figures"] if item["slug"] == "module08_sequence_logprobs")
    assert "сильное давление: отвергнутый" in logprobs["panels"][0]["legend"]
    assert "загрузка модели и обучение на GPU не запускались" in completed.stdout
    _assert_in_language(completed.stdout, "ru")
    assert len(summary["page_values"]) == len(PAGE_VALUES["module_08"]) and all(record["matches"] for record in summary["page_values"])
    assert "✓ лосс ORPO: 0.851109, как на странице модуля" in completed.stdout


@pytest.mark.slow
def test_module_8_run_in_english_prints_no_russian(tmp_path):
    completed = _run_cli(["run", "module08", "--out", str(tmp_path), "--lang", "en"])
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    _assert_in_language(completed.stdout, "en")
    assert "✓ the ORPO loss: 0.851109, as on the module page" in completed.stdout


# ----------------------------------------------------------------------------- printed lines and tables
def test_every_seed_line_is_a_text_a_seed_or_its_toy_prints():
    from graders.walkthrough.lines import SEED_LINES

    sources = "".join(path.read_text(encoding="utf-8") for path in [*SEEDS_DIR.glob("module_0*_seed.txt"),
                                                                    *SOLUTIONS_DIR.glob("module_0*/*.py")])
    assert [key for key in SEED_LINES if key not in sources] == []


def test_a_shown_table_speaks_the_language_but_keeps_the_codes_names(monkeypatch, capsys):
    import IPython.display
    import pandas as pd

    from graders.walkthrough import lines as walkthrough_lines

    seen = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **kwargs: seen.extend(objects))
    namespace, shown = {}, []
    walkthrough_lines.install(namespace, "ru", shown)
    table = pd.DataFrame({"regime": ["reference", "moderate DPO"], "draws for 100 informative prompts": [1.0, 2.0]},
                         index=["до RL, train", "после RL, held-out"])
    IPython.display.display(table)
    assert shown == [table] and list(table["regime"]) == ["reference", "moderate DPO"]  # the seed's own table
    assert list(seen[0].columns) == ["regime", "попыток на 100 информативных промптов"]
    assert list(seen[0]["regime"]) == ["опорная модель", "умеренный DPO"]
    assert list(seen[0].index) == ["до RL, обучающие", "после RL, отложенные"]
    namespace["SOFTWARE_SNAPSHOT"] = snapshot = {"no-such-library-here": "1.0", "model": "Qwen/Qwen3-0.6B"}
    namespace["print"]("constrained Lagrangian:", 1.335)
    namespace["print"](snapshot)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "лагранжиан с ограничениями: 1.335"
    assert printed[1] == ("Ветвь с реальной моделью закрепляет версии no-such-library-here==1.0, Qwen/Qwen3-0.6B. "
                          "Установлено здесь: ни одна из них здесь не установлена.")
