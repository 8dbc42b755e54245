"""The recipe, proved on a copy of the kit: an exercise is four hand-written files, the rest generated.

In a copy of the kit (its git-tracked files), ``rl4llm new-exercise module_8_reference
throwaway_margin`` writes the four skeletons, which the recipe check (``graders/build/recipe.py``,
``tests/test_recipe.py``) reports as skeletons; the test fills them with a real tiny exercise
(m = beta (chosen - rejected), ``ValueError`` for beta <= 0, one misconception) and runs ``rl4llm
build``. Then: the files a person edited (every change but those the build wrote) are exactly the
four; the recipe check and ``rl4llm build --check`` pass; the exercise's public tests pass on the
reference; and leaving out any one of the four pieces makes the recipe check name it.

The refusals of the unit: ``new-exercise`` refuses an unknown file, an invalid or taken name, and
writes nothing then (fast).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import course
from graders.build import scaffold
from graders.paths import REPO_ROOT

STEM, FUNCTION = "module_8_reference", "throwaway_margin"
EXERCISE = f"{STEM}.{FUNCTION}"
FOUR = {"solutions/module_08/module_8_reference.py", "starter/module_08/test_module_8_reference.py",
        "graders/checks/module_8_reference/__init__.py", f"graders/misconceptions/{STEM}/{FUNCTION}.py"}

REFERENCE = '''

def throwaway_margin(chosen, rejected, beta):
    """m = beta (chosen - rejected) (the scaled implicit-reward margin of DPO; Rafailov et al. 2023, eq. 7).

    The margin before the sigmoid: positive when the chosen response is preferred.

    Args:
        chosen, rejected: log-ratios, scalars or arrays of shape (B,).
        beta: > 0.
    Returns:
        float for scalars, else a float64 array of shape (B,).
    """
    ### BEGIN SOLUTION
    chosen = _as_array("chosen", chosen)
    rejected = _as_array("rejected", rejected)
    beta = _positive("beta", beta)
    return _out(beta * (chosen - rejected), chosen, rejected, beta)
    ### END SOLUTION
'''
PUBLIC_TESTS = '''

def test_throwaway_margin_golden_row():
    assert ref.throwaway_margin(1.0, 0.5, 2.0) == pytest.approx(1.0)  # 2 (1 - 0.5)


@pytest.mark.parametrize("args, kwargs, error", _refused("throwaway_margin"))
def test_throwaway_margin_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        ref.throwaway_margin(*args, **kwargs)
'''
CHECKS = '''
import numpy as np  # noqa: E402 - the new exercise's own imports, below the package's parts

from graders.checks import Case  # noqa: E402
from graders.checks import exercise as _register  # noqa: E402
from graders.text import Text  # noqa: E402


@_register("module_8_reference.throwaway_margin", points=1)
def _throwaway_margin_cases():
    yield Case(args=(1.0, 0.5, 2.0), label=Text("the golden row", "эталонная строка"), hidden=False)
    yield Case(args=(np.array([1.0, -2.0]), np.array([0.0, 3.0]), 0.5), label=Text("two pairs", "две пары"))
    yield Case(args=(1.0, 0.5, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"),
               hidden=False)
    yield Case(args=(1.0, 0.5, -1.0), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
'''
LATEX = 'r"m = \\beta\\,(c - r)"'
CATALOGUE = '''"""Wrong versions of m = beta (chosen - rejected) (throwaway_margin).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def beta_left_out(chosen, rejected, beta):
    """looks like chosen - rejected without beta; the margin is beta (chosen - rejected)

    ru: похоже на chosen - rejected без beta; отступ равен beta (chosen - rejected)
    """
    return _right(chosen, rejected, 1.0)
'''


def _run(kit: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(kit), "MPLBACKEND": "Agg"}
    env.pop("RL4LLM_IMPL_ROOT", None)
    done = subprocess.run([sys.executable, *args], cwd=kit, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _recipe_lines(kit: Path) -> str:
    return _run(kit, "-c", "from graders.build import recipe; print('\\n'.join(recipe.problems()))").stdout


def _state(kit: Path) -> dict[str, str]:
    """relpath -> digest of every file of the copy that git would not ignore (caches, .hypothesis/ left out)."""
    found = {path.relative_to(kit).as_posix(): path for path in kit.rglob("*")
             if path.is_file() and "__pycache__" not in path.parts}
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=REPO_ROOT, input="\n".join(found),
                             capture_output=True, text=True).stdout.split("\n")
    return {relpath: hashlib.sha256(path.read_bytes()).hexdigest()
            for relpath, path in found.items() if relpath not in set(ignored)}


def _copy_kit(tmp: Path) -> Path:
    kit = tmp / "kit"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for relpath in filter(None, listed):
        source = REPO_ROOT / relpath
        if source.is_file():
            target = kit / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return kit


def _fill(kit: Path) -> None:
    """The four skeletons filled with the real exercise (each skeleton's appended part replaced)."""
    def replace_from(relpath: str, marker: str, text: str) -> None:
        path = kit / relpath
        source = path.read_text(encoding="utf-8")
        assert marker in source, (relpath, marker)
        path.write_text(source[:source.index(marker)].rstrip("\n") + "\n" + text, encoding="utf-8")

    replace_from("solutions/module_08/module_8_reference.py", f"\n\ndef {FUNCTION}(", REFERENCE)
    replace_from("starter/module_08/test_module_8_reference.py", f"\n\ndef test_{FUNCTION}_golden_row", PUBLIC_TESTS)
    checks = kit / "graders/checks/module_8_reference/__init__.py"
    text = checks.read_text(encoding="utf-8")
    text = text.replace(f'r"{scaffold.TODO}: the formula in LaTeX"', LATEX)
    checks.write_text(text, encoding="utf-8")
    replace_from("graders/checks/module_8_reference/__init__.py", f"\n\n# --- {FUNCTION} (", CHECKS)
    (kit / "graders/misconceptions" / STEM / f"{FUNCTION}.py").write_text(CATALOGUE, encoding="utf-8")


@pytest.mark.slow  # two builds of a copy of the kit (about 2 min on 2 busy cores)
def test_a_new_exercise_is_four_files_and_every_omission_is_named(tmp_path):
    kit = _copy_kit(tmp_path)
    assert _run(kit, "-c", "import graders; print(graders.__file__)").stdout.strip().startswith(str(kit))
    before = _state(kit)
    originals = {relpath: (kit / relpath).read_text(encoding="utf-8") for relpath in FOUR if (kit / relpath).exists()}

    made = _run(kit, "-m", "graders.cli", "new-exercise", STEM, FUNCTION).stdout
    assert all(relpath in made for relpath in FOUR) and "rl4llm build" in made, made
    skeleton = _recipe_lines(kit)
    for piece in ("reference is still the scaffold", "public test test_throwaway_margin_golden_row is still the scaffold",
                  "hidden checks are still the scaffold", "LATEX entry is still the scaffold",
                  "catalogue is still the scaffold"):
        assert f"{FUNCTION}'s {piece}" in skeleton, skeleton
    refused = _run(kit, "-m", "graders.cli", "new-exercise", STEM, FUNCTION, check=False)
    assert refused.returncode != 0 and "exists already" in refused.stderr

    _fill(kit)
    built = _run(kit, "-m", "graders.cli", "build").stdout
    wrote = {line.removeprefix("wrote ").strip() for line in built.splitlines() if line.startswith("wrote ")}
    after = _state(kit)
    changed = {path for path in set(before) | set(after) if before.get(path) != after.get(path)}
    for relpath in wrote:  # what the build wrote is generated: a header, generated blocks, or data
        text = (kit / relpath).read_text(encoding="utf-8")
        assert (relpath.endswith((".json", ".ipynb")) or text.startswith("# GENERATED")
                or "<!-- generated:" in text or relpath.startswith("assignments/")), relpath
    assert changed - wrote == FOUR, sorted(changed - wrote)
    assert {"docs/design.md", "starter/module_08/README.md", "starter/module_08/README.ru.md",
            "starter/module_08/_refused.json", "starter/module_08/module_8_reference.py"} <= wrote
    assert "`throwaway_margin`" in (kit / "starter/module_08/README.ru.md").read_text(encoding="utf-8")
    rows = json.loads((kit / "starter/module_08/_refused.json").read_text(encoding="utf-8"))[EXERCISE]
    assert [row["label"] for row in rows] == ["beta = 0 is refused"]  # the hidden beta < 0 is not published

    assert _recipe_lines(kit).strip() == ""
    assert "up to date" in _run(kit, "-m", "graders.cli", "build", "--check").stdout
    public_env_run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "starter/module_08/test_module_8_reference.py",
         "-k", FUNCTION], cwd=kit, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(kit), "RL4LLM_IMPL_ROOT": str(kit / "solutions")})
    assert public_env_run.returncode == 0 and "2 passed" in public_env_run.stdout, public_env_run.stdout[-2000:]

    filled = {relpath: (kit / relpath).read_text(encoding="utf-8") for relpath in FOUR}
    omitted = {
        "solutions/module_08/module_8_reference.py": "no fenced reference function throwaway_margin",
        "starter/module_08/test_module_8_reference.py": "no public test named test_throwaway_margin_<what>",
        "graders/checks/module_8_reference/__init__.py": "throwaway_margin: no hidden checks",
        f"graders/misconceptions/{STEM}/{FUNCTION}.py": "throwaway_margin: no misconception catalogue",
    }
    for relpath, message in omitted.items():
        path = kit / relpath
        if relpath in originals:
            path.write_text(originals[relpath], encoding="utf-8")
        else:
            path.unlink()
        lines = _recipe_lines(kit)
        assert message in lines and relpath in lines, (relpath, lines)
        path.write_text(filled[relpath], encoding="utf-8")


def test_new_exercise_refuses_and_writes_nothing(tmp_path):
    with pytest.raises(scaffold.ScaffoldError, match="unknown learner file 'module_7_reference'"):
        scaffold.plan("module_7_reference", "x")
    for bad in ("Margin", "_private", "class", "two words", ""):
        with pytest.raises(scaffold.ScaffoldError, match="not a valid exercise name"):
            scaffold.plan(STEM, bad)
    with pytest.raises(scaffold.ScaffoldError, match="exists already"):
        scaffold.plan(STEM, "ipo_loss")


def test_new_exercise_plans_the_four_files_only():
    planned = scaffold.plan(STEM, FUNCTION)
    assert {path.relative_to(REPO_ROOT).as_posix() for path in planned.texts} == FOUR
    for path, text in planned.texts.items():
        assert scaffold.TODO in text
        if path.exists():  # appended: what was there stays as it was (the LATEX table gains one line)
            old = path.read_text(encoding="utf-8")
            assert len(text) > len(old)
            assert set(old.splitlines()) <= set(text.splitlines())


@pytest.mark.parametrize("stem", course.STEMS)
def test_every_learner_file_takes_a_new_exercise(stem):
    for path, text in scaffold.plan(stem, "zz_new_exercise").texts.items():
        compile(text, str(path), "exec")  # the skeletons parse where they land
