"""The capstone in the learner bundle: what a capstone student gets, and nothing of the reference solutions.

- fast: the bundle ships the capstone's runner (``graders/capstone/run/``), its passport checks and its
  commands, and not the instructor's side (grading, re-evaluation with the kit's verifier); no file of
  it imports ``solutions`` or holds a fenced reference body; the expected VERIFIER_VERSION is the
  reference's; the learner's ``rl4llm capstone`` has the instructor's arguments for preflight, run, check;
- slow: from the bundle alone (a fresh interpreter without the kit, the bundle folder the only source of
  ``graders``, the working folder outside the repository), ``capstone preflight``, a refused run without
  ``--verifier`` (in both languages), the tiny GRPO run with a learner's verifier and ``capstone check``.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from graders.build import solution_files
from graders.build.bundle import build_bundle, hidden_parts_in
from graders.capstone.run.profiles import VERIFIER_VERSION
from graders.fences import find_fences
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

REFERENCE_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
MIN_DISTINCTIVE = 30  # a fenced body's line this long (stripped) is the reference's own code, not a common idiom


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("capstone-bundle") / "rl4llm-learner")


def _fenced_bodies() -> dict[str, list[str]]:
    """{"<file>:<function>": the stripped code lines of its fenced body}, every reference solution's."""
    bodies = {}
    for path in solution_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for fence in find_fences("\n".join(lines), str(path)):
            code = [line.strip() for line in lines[fence.begin + 1:fence.end]]
            bodies[f"{path.name}:{fence.function}"] = [line for line in code if line and not line.startswith("#")]
    return bodies


def _python_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.py") if "__pycache__" not in path.parts)


def _version_in(path: Path) -> str:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VERIFIER_VERSION" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} defines no VERIFIER_VERSION")


def test_the_bundle_ships_the_capstone_runner_not_the_instructors_side(bundle):
    package = bundle / "graders"
    shipped = {path.name for path in (package / "capstone" / "run").glob("*.py")}
    assert shipped == {path.name for path in (REPO_ROOT / "graders" / "capstone" / "run").glob("*.py")}
    assert (package / "capstone" / "passport.py").is_file() and (package / "capstone" / "cli.py").is_file()
    assert not (package / "capstone" / "grade.py").exists() and not (package / "capstone" / "reeval.py").exists()
    constraints = Path("constraints") / "capstone.txt"
    assert (bundle / constraints).read_text() == (REPO_ROOT / constraints).read_text()
    pyproject = (bundle / "pyproject.toml").read_text(encoding="utf-8")
    assert '"graders.capstone.run"' in pyproject and 'capstone = ["trl>=' in pyproject
    assert hidden_parts_in(bundle) == []
    assert not (REPO_ROOT / "solutions" / "capstone").exists()  # one copy of the runner, under graders/


def test_no_bundle_file_imports_the_solutions_or_holds_a_reference_body(bundle):
    bodies = _fenced_bodies()
    assert "module_9_reference.py:verify_numeric_answer" in bodies and len(bodies) >= 10
    distinctive = {line: name for name, lines in bodies.items() for line in lines if len(line) >= MIN_DISTINCTIVE}
    for path in _python_files(bundle):
        relative = path.relative_to(bundle).as_posix()
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "solutions" for a in node.names), relative
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "solutions", relative
            elif isinstance(node, ast.FunctionDef) and relative.startswith("graders/"):
                assert node.name != "verify_numeric_answer", f"{relative} defines verify_numeric_answer"
        lines = {line.strip() for line in source.splitlines()}
        leaked = sorted(f"{distinctive[line]}: {line}" for line in lines & set(distinctive))
        assert not leaked, f"{relative} holds reference code: {leaked[:3]}"
        assert "SOLUTIONS_DIR" not in source or not relative.startswith("graders/capstone"), relative


def test_the_guard_finds_a_reference_body_planted_without_its_fence(bundle, tmp_path):
    """The body check above has teeth: the reference verifier's body, copied without its markers, is found."""
    planted = tmp_path / "planted.py"
    body = _fenced_bodies()["module_9_reference.py:verify_numeric_answer"]
    planted.write_text("def reward(text, reference):\n" + "".join(f"    {line}\n" for line in body), encoding="utf-8")
    distinctive = {line for lines in _fenced_bodies().values() for line in lines if len(line) >= MIN_DISTINCTIVE}
    assert {line.strip() for line in planted.read_text().splitlines()} & distinctive


def test_the_expected_verifier_version_is_the_references():
    assert VERIFIER_VERSION == _version_in(REFERENCE_VERIFIER) == _version_in(
        STARTER_DIR / "module_09" / "module_9_reference.py")


def _options(parser, *path: str) -> dict[str, set[str]]:
    """{action: its option strings} of ``rl4llm capstone`` in ``parser``."""
    sub = parser
    for name in path:
        sub = sub._subparsers._group_actions[0].choices[name]
    choices = sub._subparsers._group_actions[0].choices
    return {action: {o for act in choices[action]._actions for o in act.option_strings} | {
        act.dest for act in choices[action]._actions if not act.option_strings} for action in choices}


def test_the_learner_cli_takes_the_instructors_capstone_arguments():
    from graders import learner_cli
    from graders.cli import build_parser

    learner, instructor = _options(learner_cli.parser("en"), "capstone"), _options(build_parser(), "capstone")
    assert set(learner) == {"preflight", "run", "check"} and "grade" in instructor
    assert {action: instructor[action] for action in learner} == learner
    help_ru = learner_cli.parser("ru")._subparsers._group_actions[0].choices["capstone"].format_help()
    assert "капстоун на TRL" in help_ru and "проверить паспорт запуска" in help_ru


# ----------------------------------------------------------------------------- from the bundle alone
def _fresh_python(tmp_path: Path) -> Path:
    """A fresh environment with the kit's dependencies (this one's site-packages through a .pth, whose own
    .pth files -- the kit's editable install among them -- are not processed there) and not the kit."""
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(site, "kit-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _learner(python: Path, bundle: Path, cwd: Path, *args: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RL4LLM_", "PYTHON"))}
    return subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**clean, "PYTHONPATH": str(bundle), "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg",
                               "HF_HUB_OFFLINE": "1", "RL4LLM_LANG": "en", **env})


@pytest.mark.slow
def test_a_capstone_student_runs_and_checks_the_tiny_grpo_from_the_bundle(bundle, tmp_path):
    python = _fresh_python(tmp_path)
    work = tmp_path / "student"  # outside the repository
    (work / "my").mkdir(parents=True)
    verifier = shutil.copy(REFERENCE_VERIFIER, work / "my" / "module_9_reference.py")  # a finished Module 9 file
    cli = ("-m", "graders.learner_cli", "capstone")

    where = _learner(python, bundle, work, "-c", "import graders, graders.capstone.run; print(graders.__file__)\n"
                                                 "import solutions")
    assert where.stdout.startswith(str(bundle)) and "ModuleNotFoundError" in where.stderr, where.stdout + where.stderr

    preflight = _learner(python, bundle, work, *cli, "preflight", "--algo", "grpo", "--profile", "tiny")
    assert preflight.returncode == 0 and "preflight passed" in preflight.stdout, preflight.stdout + preflight.stderr

    for language, words in (("en", "GRPO needs your verifier"), ("ru", "GRPO нужен ваш верификатор")):
        refused = _learner(python, bundle, work, *cli, "run", "--algo", "grpo", "--out", "refused", "--quiet",
                           RL4LLM_LANG=language)
        assert refused.returncode == 2 and words in refused.stderr and "--verifier" in refused.stderr, refused.stderr
    assert not (work / "refused" / "passport.json").exists()

    run = _learner(python, bundle, work, *cli, "run", "--algo", "grpo", "--profile", "tiny", "--out", "runs/tiny",
                   "--verifier", str(verifier), "--quiet")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "rl4llm capstone check runs/tiny" in run.stdout
    assert (work / "runs" / "tiny" / "adapter" / "adapter_model.safetensors").is_file()

    check = _learner(python, bundle, work, *cli, "check", "runs/tiny", "--lang", "ru")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "баллы: 12/12" in check.stdout and "[ПРОЙДЕНА] verifier" in check.stdout, check.stdout
    assert (work / "runs" / "tiny" / "capstone_report.json").is_file()
