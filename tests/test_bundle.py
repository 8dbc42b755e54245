"""The learner bundle (``rl4llm bundle``): what a learner receives, and nothing hidden.

- fast: the bundle's layout; its two READMEs; no hidden part of the kit in it, and the guard that
  says so catches a planted one; a non-empty target is refused;
- slow: installed (``pip install``, the bundle's own pyproject) into a fresh environment that has the
  dependencies but not the kit, then used as a learner would: the kit's hidden parts cannot be
  imported there, the public tests name the stubs not implemented, pass on finished learner files,
  ``-k`` selects one function, and ``rl4llm run`` draws the notebook's figures from the learner's code.
"""

from __future__ import annotations

import os
import shutil
import string
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from graders import course
from graders.build.bundle import README, BundleError, build_bundle, hidden_parts_in
from graders.paths import SOLUTIONS_DIR


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("bundle") / "rl4llm-learner")


def test_the_bundle_holds_the_starter_the_runner_and_two_readmes(bundle):
    assert {p.name for p in bundle.iterdir()} == {"README.md", "README.ru.md", "pyproject.toml", "starter", "graders",
                                                  "constraints"}
    for learner_file in course.learner_files():
        stub = (bundle / "starter" / learner_file.relpath).read_text(encoding="utf-8")
        assert "NotImplementedError" in stub
    for folder in course.FOLDERS:
        names = {p.name for p in (bundle / "starter" / folder).iterdir()}
        assert {"README.md", "_hints.json"} <= names and any(n.startswith("test_") for n in names)
    assert (bundle / "graders" / "seeds" / "module_09_seed.txt").is_file()
    assert "rl4llm = \"graders.learner_cli:main\"" in (bundle / "pyproject.toml").read_text(encoding="utf-8")


def test_the_readmes_say_the_same_in_both_languages():
    def fields(text):
        return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name)

    assert set(README) == set(course.LANGUAGES)
    commands = {lang: [line for line in text.splitlines() if line.startswith(("pytest", "rl4llm", "pip"))]
                for lang, text in README.items()}
    assert fields(README["en"]) == fields(README["ru"]) == ["files"]
    assert [c.split("#")[0] for c in commands["en"]] == [c.split("#")[0] for c in commands["ru"]]


def test_no_hidden_part_is_in_the_bundle_and_the_guard_has_teeth(bundle, tmp_path):
    assert hidden_parts_in(bundle) == []
    planted = tmp_path / "planted"
    shutil.copytree(bundle, planted)
    shutil.copy(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", planted / "starter" / "module_09")
    (planted / "graders" / "checks").mkdir()
    found = hidden_parts_in(planted)
    assert "starter/module_09/module_9_reference.py (holds a fenced solution)" in found
    assert "graders/checks (a hidden part of the kit)" in found


def test_a_non_empty_target_is_refused_unless_forced(bundle):
    with pytest.raises(BundleError, match="not empty"):
        build_bundle(bundle)
    assert (bundle / "starter").is_dir()  # nothing a user gave is lost


# ----------------------------------------------------------------------------- installed and used
def _run(command, cwd, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RL4LLM_", "PYTHON"))}
    return subprocess.run(command, cwd=cwd, env={**clean, "MPLBACKEND": "Agg", **env}, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_a_learner_installs_the_bundle_and_works_without_the_kit(bundle, tmp_path):
    # a fresh environment: the kit's dependencies (a .pth to this environment's site-packages, whose
    # own .pth files -- the kit's editable install among them -- are NOT processed there), not the kit
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path)
    Path(site.stdout.strip(), "kit-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-build-isolation", "--quiet", str(bundle)], tmp_path)
    assert install.returncode == 0, install.stdout + install.stderr

    for hidden in ("solutions", "graders.engine", "graders.checks", "graders.misconceptions", "graders.build"):
        probe = _run([str(python), "-c", f"import {hidden}"], tmp_path)
        assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr, hidden

    stubs = _run([str(python), "-m", "pytest", "starter/module_09", "-k", "group_relative_advantages", "-q",
                  "-p", "no:cacheprovider"], bundle)
    assert stubs.returncode == 1 and "NOT IMPLEMENTED" in stubs.stdout, stubs.stdout[-2000:]

    mine = tmp_path / "mine"  # a learner who has finished module 9: their files beside the bundle's
    shutil.copytree(bundle / "starter", mine / "starter")
    for stem in course.module(9).files:
        shutil.copy(SOLUTIONS_DIR / "module_09" / f"{stem}.py", mine / "starter" / "module_09")
    shutil.copy(bundle / "pyproject.toml", mine)
    done = _run([str(python), "-m", "pytest", "starter/module_09", "-q", "-p", "no:cacheprovider"], mine)
    assert done.returncode == 0, done.stdout[-3000:]

    rl4llm = env_dir / "bin" / "rl4llm"
    run = _run([str(rl4llm), "run", "module09", "--impl", "starter", "--reference-only", "--out", "figures"], mine)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert sorted(p.name for p in (mine / "figures").glob("*.png"))
    help_ru = _run([str(rl4llm), "run", "--help"], mine, RL4LLM_LANG="ru")
    assert "ноутбук курса" in help_ru.stdout


def test_the_shipped_modules_import_only_what_the_bundle_ships():
    """Every `graders` module a shipped module imports (function-local imports included) is shipped too, so a
    new module the learner's commands need cannot be forgotten (caught here, fast, not by the slow installs)."""
    import ast

    from graders.build import bundle
    from graders.paths import REPO_ROOT

    shipped = set(bundle.RUN_MODULES) | set(bundle.CAPSTONE_MODULES)
    package = REPO_ROOT / "graders" / bundle.CAPSTONE_PACKAGE
    shipped |= {path.relative_to(REPO_ROOT / "graders").with_suffix("").as_posix() for path in package.glob("*.py")}
    files = [REPO_ROOT / "graders" / f"{name}.py" for name in sorted(shipped)]

    def module_path(dotted: str) -> str:
        """graders.a.b as the path the bundle lists: a/b for a module, a/b/__init__ for a package."""
        path = "/".join(dotted.split(".")[1:])
        return path if (REPO_ROOT / "graders" / f"{path}.py").is_file() else f"{path}/__init__"

    def is_module(dotted: str) -> bool:
        path = REPO_ROOT / "graders" / "/".join(dotted.split(".")[1:])
        return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

    missing = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "graders" or node.module.startswith("graders."):
                    names = [module_path(f"{node.module}.{alias.name}") if is_module(f"{node.module}.{alias.name}")
                             else module_path(node.module) for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [module_path(alias.name) for alias in node.names if alias.name.startswith("graders.")]
            for name in names:
                # a hidden part (the checks, the capstone's grader) is imported only on the instructor's paths
                # (course.points, `capstone grade`), which the bundle never takes: leaving it out is the point
                if (name not in shipped and name.split("/")[0] not in bundle.HIDDEN_NAMES
                        and f"graders/{name}.py" not in bundle.HIDDEN_PATHS and name != "__init__"):
                    missing.append(f"{path.relative_to(REPO_ROOT)} imports graders/{name}")
    assert not missing, f"add these to graders/build/bundle.py's RUN_MODULES (or stop importing them): {missing}"


def test_the_bundle_readmes_install_torch_within_the_kits_range():
    """The learner installs torch first (an unpinned one may be a version the kit never tested): the bundle's
    READMEs pin the same range as the kit's pyproject.toml, in both languages."""
    import re
    import tomllib

    from graders.build.bundle import README
    from graders.paths import REPO_ROOT

    dependencies = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    (torch,) = [item for item in dependencies if re.match(r"torch\b", item)]
    for language, text in README.items():
        lines = [line for line in str(text).splitlines() if "pip install" in line and "torch" in line]
        assert lines and all(f'"{torch}"' in line for line in lines), (language, lines)
