"""The recipe, proved on a copy of the kit: an exercise is four hand-written files, the rest generated.

In one copy of the kit (its git-tracked files), ``rl4llm new-exercise`` writes the four skeletons of
an exercise of each module (``module_8_reference.throwaway_margin``: m = beta (chosen - rejected);
``module_9_reference.throwaway_excess``: e = mean(r) - b), which the recipe check
(``graders/build/recipe.py``, ``tests/test_recipe.py``) reports as skeletons; the test fills them as
docs/contributing.md says (a reference, public tests with a refusal row, checks with a public and a
hidden refusal, one misconception) and runs ``rl4llm build`` once. Then: the files a person edited
(every change but those the build wrote) are exactly the four of each; no total goes stale (the
registry counts one more exercise and point per module; ``rl4llm build --check``,
``tests/test_no_literal_totals.py`` and ``tests/test_layout.py`` pass in the copy); each exercise's
public tests pass on the reference, and the grader gives the reference full marks and names the
catalogued mistake; and leaving out any one of the four pieces makes the recipe check name it.

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
from dataclasses import dataclass
from pathlib import Path

import pytest

from graders import course
from graders.build import scaffold
from graders.paths import REPO_ROOT

STEM, FUNCTION = "module_8_reference", "throwaway_margin"  # the scaffold's unit tests use this one


@dataclass(frozen=True)
class NewExercise:
    """One exercise the proof adds: its learner file, its function and the four pieces a person writes."""

    stem: str
    function: str
    reference: str  # appended to the solution file (the skeleton's function replaced)
    public_tests: str  # appended to the public test file (the skeleton's test replaced)
    checks: str  # appended to the checks package's __init__.py (the skeleton's generator replaced)
    latex: str
    catalogue: str  # the catalogue file
    mistake: str  # the catalogue's entry
    refused: tuple[str, ...]  # the labels of the public refusal rows (_refused.json)

    @property
    def id(self) -> str:
        return f"{self.stem}.{self.function}"

    @property
    def folder(self) -> str:
        return course.module_of(self.stem).folder

    @property
    def four(self) -> dict[str, str]:
        """The four files the recipe lists (docs/contributing.md) -> what the omission check says without each."""
        return {
            f"solutions/{self.folder}/{self.stem}.py": f"no fenced reference function {self.function}",
            f"starter/{self.folder}/test_{self.stem}.py": f"no public test named test_{self.function}_<what>",
            f"graders/checks/{self.stem}/__init__.py": f"{self.function}: no hidden checks",
            f"graders/misconceptions/{self.stem}/{self.function}.py": f"{self.function}: no misconception catalogue",
        }


def _excused(declare: str, **reasons: str) -> str:
    """The source of an ``edges=declare(...)`` that excuses every edge class (graders/checks/edges.py): the
    exercise's own reasons, then those both proof exercises share."""
    shared = {"ties_and_near_ties": "no comparison between inputs", "large_padding": "no padded positions",
              "dtypes": "converts every input to float64 on entry: one dtype path",
              "number_formats": "takes numbers, never answer text",
              "shapes": "a throwaway exercise of the recipe's trial: its one shape is its golden row's",
              "python_types": "a throwaway exercise of the recipe's trial: converts its inputs on entry"}
    return f"{declare}(" + "".join(f"\n    {name}={why!r}," for name, why in {**reasons, **shared}.items()) + "\n)"


MODULE_8 = NewExercise("module_8_reference", "throwaway_margin", reference='''

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
''', public_tests='''

def test_throwaway_margin_golden_row():
    assert ref.throwaway_margin(1.0, 0.5, 2.0) == pytest.approx(1.0)  # 2 (1 - 0.5)


@pytest.mark.parametrize("args, kwargs, error", _refused("throwaway_margin"))
def test_throwaway_margin_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        ref.throwaway_margin(*args, **kwargs)
''', checks='''
import numpy as np  # noqa: E402 - the new exercise's own imports, below the package's parts

from graders.checks import Case  # noqa: E402
from graders.checks import exercise as _register  # noqa: E402
from graders.checks.edges import declare as _declare  # noqa: E402
from graders.text import Text  # noqa: E402


@_register("module_8_reference.throwaway_margin", points=1, edges=''' + _excused(
    "_declare", extremes="a product of finite reals at course scale: nothing to overflow",
    zeros_and_empties="no empty input to reach: scalars or (B,) arrays of log-ratios",
    boundaries="beta > 0 is open: beta = 0 is a refusal row") + ''')
def _throwaway_margin_cases():
    yield Case(args=(1.0, 0.5, 2.0), label=Text("the golden row", "эталонная строка"), hidden=False)
    yield Case(args=(np.array([1.0, -2.0]), np.array([0.0, 3.0]), 0.5), label=Text("two pairs", "две пары"))
    yield Case(args=(1.0, 0.5, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"),
               hidden=False)
    yield Case(args=(1.0, 0.5, -1.0), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
''', latex='r"m = \\beta\\,(c - r)"', catalogue='''"""Wrong versions of m = beta (chosen - rejected) (throwaway_margin).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def beta_left_out(chosen, rejected, beta):
    """looks like chosen - rejected without beta; the margin is beta (chosen - rejected)

    ru: похоже на chosen - rejected без beta; отступ равен beta (chosen - rejected)
    """
    return _right(chosen, rejected, 1.0)


def sides_swapped(chosen, rejected, beta):
    """looks like rejected - chosen; the margin is beta (chosen - rejected)

    ru: похоже на rejected - chosen; отступ равен beta (chosen - rejected)
    """
    return _right(rejected, chosen, beta)


def beta_squared(chosen, rejected, beta):
    """looks like beta is applied twice; the margin is beta (chosen - rejected)

    ru: похоже, beta применена дважды; отступ равен beta (chosen - rejected)
    """
    return _right(chosen, rejected, beta * beta)
''', mistake="beta_left_out", refused=("beta = 0 is refused",))

MODULE_9 = NewExercise("module_9_reference", "throwaway_excess", reference='''

def throwaway_excess(rewards, baseline):
    """e = mean(r) - b (the mean reward of a group above a baseline b; Williams 1992, the REINFORCE baseline).

    Positive when the group did better than the baseline expected.

    Args:
        rewards: the group's rewards, shape (G,), G >= 1.
        baseline: a finite real number.
    Returns:
        float.
    """
    ### BEGIN SOLUTION
    rewards = _float_array(rewards, "rewards", ndims=(1,))
    if rewards.size == 0:
        raise ValueError("rewards must hold at least one reward")
    return float(rewards.mean() - _real(baseline, "baseline", -math.inf, math.inf))
    ### END SOLUTION
''', public_tests='''

def test_throwaway_excess_golden_row():
    assert m9.throwaway_excess([1.0, 0.0, 1.0, 0.0], 0.25) == pytest.approx(0.25)  # 2/4 - 1/4


@pytest.mark.parametrize("args, kwargs, error", _refused("throwaway_excess"))
def test_throwaway_excess_refuses_what_the_grader_refuses(args, kwargs, error):
    with pytest.raises(error):
        m9.throwaway_excess(*args, **kwargs)
''', checks='''
@_new_exercise("module_9_reference.throwaway_excess", points=1, edges=''' + _excused(
    "_new_declare", extremes="a mean and a difference of finite reals at course scale: nothing to overflow",
    zeros_and_empties="an empty group is refused (a public refusal row)",
    boundaries="no domain parameter") + ''')
def _throwaway_excess_cases():
    yield _NewCase(args=([1.0, 0.0, 1.0, 0.0], 0.25), label=_NewText("the golden row", "эталонная строка"),
                   hidden=False)
    yield _NewCase(args=([0.5, 1.5], -1.0), label=_NewText("a negative baseline", "отрицательный baseline"))
    yield _NewCase(args=([], 0.0), raises=ValueError, hidden=False,
                   label=_NewText("no rewards are refused", "пустая группа отклоняется"))
    yield _NewCase(args=((), 1.0), raises=ValueError,
                   label=_NewText("an empty tuple is refused", "пустой кортеж отклоняется"))
''', latex='r"e = \\operatorname{mean}(r) - b"', catalogue='''"""Wrong versions of e = mean(r) - b (throwaway_excess).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def baseline_added(rewards, baseline):
    """looks like the baseline is added; the excess is mean(r) - b

    ru: похоже, baseline прибавлен; превышение равно mean(r) - b
    """
    return _right(rewards, -baseline)


def baseline_ignored(rewards, baseline):
    """looks like the baseline is left out; the excess is mean(r) - b

    ru: похоже, baseline не вычтен; превышение равно mean(r) - b
    """
    return _right(rewards, 0.0)


def last_reward_only(rewards, baseline):
    """looks like only the last reward counts; the excess uses the group's mean, mean(r) - b

    ru: похоже, учтена только последняя награда; превышение использует среднее группы, mean(r) - b
    """
    return _right(list(rewards)[-1:], baseline)
''', mistake="baseline_added", refused=("no rewards are refused",))
NEW = (MODULE_8, MODULE_9)
FOUR = set(MODULE_8.four)  # the files the scaffold writes for STEM.FUNCTION


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
    """The kit's git-tracked and untracked-but-not-ignored files in ``tmp/kit`` (links kept as links)."""
    kit = tmp / "kit"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for relpath in filter(None, listed):
        source, target = REPO_ROOT / relpath, kit / relpath
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():  # a shared given module (solutions/common/) stays one file
                target.symlink_to(os.readlink(source))
            else:
                shutil.copy2(source, target)
    return kit


def _fill(kit: Path, new: NewExercise) -> None:
    """The four skeletons of ``new`` filled with the real exercise (each skeleton's appended part replaced)."""
    def replace_from(relpath: str, marker: str, text: str) -> None:
        path = kit / relpath
        source = path.read_text(encoding="utf-8")
        assert marker in source, (relpath, marker)
        path.write_text(source[:source.index(marker)].rstrip("\n") + "\n" + text, encoding="utf-8")

    solution, public, checks, catalogue = new.four
    replace_from(solution, f"\n\ndef {new.function}(", new.reference)
    replace_from(public, f"\n\ndef test_{new.function}_golden_row", new.public_tests)
    text = (kit / checks).read_text(encoding="utf-8")
    (kit / checks).write_text(text.replace(f'r"{scaffold.TODO}: the formula in LaTeX"', new.latex), encoding="utf-8")
    replace_from(checks, f"\n\n# --- {new.function} (", new.checks)
    (kit / catalogue).write_text(new.catalogue, encoding="utf-8")


def _totals(kit: Path) -> dict:
    """The course's and each module's exercise count and points, from the copy's registry."""
    program = ("import json; from graders import checks, course; groups = {'course': None, '8': ['8'], '9': ['9']}; "
               "print(json.dumps({k: [len(course.exercises(g)), sum(checks.points(e) for e in course.exercises(g))] "
               "for k, g in groups.items()}))")
    return json.loads(_run(kit, "-c", program).stdout)


@pytest.mark.slow  # one build and one grading batch of a copy of the kit (2.5 min; 5 on 2 busy cores)
def test_an_exercise_in_each_module_is_four_files_and_every_omission_is_named(tmp_path):
    kit = _copy_kit(tmp_path)
    assert _run(kit, "-c", "import graders; print(graders.__file__)").stdout.strip().startswith(str(kit))
    before, totals_before = _state(kit), _totals(kit)
    originals = {relpath: (kit / relpath).read_text(encoding="utf-8")
                 for new in NEW for relpath in new.four if (kit / relpath).exists()}

    for new in NEW:  # docs/contributing.md, "Add an exercise": the command, then the four pieces filled in
        made = _run(kit, "-m", "graders.cli", "new-exercise", new.stem, new.function).stdout
        assert all(relpath in made for relpath in new.four) and "rl4llm build" in made, made
    skeleton = _recipe_lines(kit)
    for new in NEW:
        for piece in ("reference is still the scaffold", f"public test test_{new.function}_golden_row is still the "
                      "scaffold", "hidden checks are still the scaffold", "edge classes are still the scaffold",
                      "LATEX entry is still the scaffold", "catalogue is still the scaffold"):
            assert f"{new.function}'s {piece}" in skeleton, skeleton
    refused = _run(kit, "-m", "graders.cli", "new-exercise", MODULE_9.stem, MODULE_9.function, check=False)
    assert refused.returncode != 0 and "exists already" in refused.stderr
    for new in NEW:
        _fill(kit, new)
    built = _run(kit, "-m", "graders.cli", "build").stdout

    # only the four files of each exercise were written by hand; everything else the build wrote is generated
    wrote = {line.removeprefix("wrote ").strip() for line in built.splitlines() if line.startswith("wrote ")}
    after = _state(kit)
    changed = {path for path in set(before) | set(after) if before.get(path) != after.get(path)}
    for relpath in wrote:  # what the build wrote is generated: a header, generated blocks, or data
        text = (kit / relpath).read_text(encoding="utf-8")
        assert (relpath.endswith((".json", ".ipynb")) or text.startswith("# GENERATED")
                or "<!-- generated:" in text or relpath.startswith("assignments/")), relpath
    assert changed - wrote == {relpath for new in NEW for relpath in new.four}, sorted(changed - wrote)
    for new in NEW:
        folder = f"starter/{new.folder}"
        assert {"docs/design.md", f"{folder}/README.md", f"{folder}/README.ru.md", f"{folder}/_refused.json",
                f"{folder}/{new.stem}.py"} <= wrote
        assert f"`{new.function}`" in (kit / folder / "README.ru.md").read_text(encoding="utf-8")
        rows = json.loads((kit / folder / "_refused.json").read_text(encoding="utf-8"))[new.id]
        assert tuple(row["label"] for row in rows) == new.refused  # the hidden refusal is not published

    # no total goes stale: the registry counts the new exercises, every generated block is current, and no
    # test or hand-written page holds a literal total
    totals = _totals(kit)
    assert totals == {key: [count + (2 if key == "course" else 1), points + (2 if key == "course" else 1)]
                      for key, (count, points) in totals_before.items()}, (totals_before, totals)
    assert _recipe_lines(kit).strip() == ""
    assert "up to date" in _run(kit, "-m", "graders.cli", "build", "--check").stdout
    subprocess.run(["git", "init", "-q"], cwd=kit, check=True)  # test_layout asks git which files the kit has
    subprocess.run(["git", "add", "-A"], cwd=kit, check=True)
    # the steps after the build (docs/contributing.md): each new exercise's mutation floor; then the totals and
    # the layout, every fast test of the new exercises (edge classes, catalogue entries, ...), the floor test and
    # the catalogue's rule pass; the two records are left to their own command (their tests name it)
    for new in NEW:
        _run(kit, "-m", "graders.cli", "mutate", "--exercise", new.id, "--write-floors")
    names = " or ".join(new.function for new in NEW)
    for selection in (["tests/test_no_literal_totals.py", "tests/test_layout.py"],
                      ["-m", "not slow", "-k", f"{names} or every_exercise_has_a_floor"],
                      ["tests/test_catalogue.py", "-k", "enough_misconceptions"]):
        rules = _run(kit, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection, check=False)
        assert rules.returncode == 0 and " passed" in rules.stdout, rules.stdout[-3000:]

    # the new exercises' loop as docs/contributing.md runs it (rl4llm check-exercise --no-mutation): the recipe,
    # the build, the reference at full marks and the stub at 0, the catalogued mistake losing points and named,
    # the public tests passing on the reference and failing on the stub and the mistake (with the mutation step,
    # these one-row exercises fail it: a public test passes on some of their point-losing mutants)
    for new in NEW:
        checked = _run(kit, "-m", "graders.cli", "check-exercise", new.id, "--no-mutation", check=False)
        assert checked.returncode == 0 and f"{new.id}: every step passed" in checked.stdout, checked.stdout[-3000:]
        for step in ("recipe", "build", "graded", "public tests"):
            assert f"  {step:<13} ok" in checked.stdout, checked.stdout

    # leaving out any one of the four pieces makes the recipe check name the piece and its file (the same piece
    # of both exercises left out at once: each line names its own function and file)
    filled = {relpath: (kit / relpath).read_text(encoding="utf-8") for new in NEW for relpath in new.four}
    for piece in range(4):
        left_out = {relpath: message for new in NEW for relpath, message in list(new.four.items())[piece:piece + 1]}
        for relpath in left_out:
            if relpath in originals:
                (kit / relpath).write_text(originals[relpath], encoding="utf-8")
            else:
                (kit / relpath).unlink()
        lines = _recipe_lines(kit)
        for relpath, message in left_out.items():
            assert message in lines and relpath in lines, (relpath, lines)
            (kit / relpath).write_text(filled[relpath], encoding="utf-8")


def test_new_exercise_refuses_and_writes_nothing(tmp_path):
    with pytest.raises(scaffold.ScaffoldError, match="unknown learner file 'module_7_reference'"):
        scaffold.plan("module_7_reference", "x")
    for bad in ("Margin", "_private", "class", "two words", ""):
        with pytest.raises(scaffold.ScaffoldError, match="not a valid exercise name"):
            scaffold.plan(STEM, bad)
    with pytest.raises(scaffold.ScaffoldError, match="exists already"):
        scaffold.plan(STEM, "ipo_loss")


def test_the_commands_new_exercise_prints_are_the_ones_the_docs_list():
    page = (REPO_ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    for step in scaffold.NEXT_STEPS:
        assert step.format(exercise="<file>.<function>") in page, step
    recipe = page[page.index("## Add an exercise"):]  # the recipe gives them in the order new-exercise prints
    places = [recipe.index(step.format(exercise="<file>.<function>")) for step in scaffold.NEXT_STEPS]
    assert places == sorted(places), scaffold.NEXT_STEPS
    for record in scaffold.RECORDS:
        assert f"`{record}`" in page, record
    printed = scaffold.next_steps(f"{STEM}.{FUNCTION}")
    assert all(step.format(exercise=f"{STEM}.{FUNCTION}") in printed for step in scaffold.NEXT_STEPS)
    assert all(record in printed for record in scaffold.RECORDS)


def test_new_exercise_plans_the_four_files_only():
    # a name no contributor would give (the recipe's own throwaway names are free to become real exercises)
    planned = scaffold.plan(STEM, "zz_new_exercise")
    assert {path.relative_to(REPO_ROOT).as_posix() for path in planned.texts} == {
        path.replace(FUNCTION, "zz_new_exercise") for path in FOUR}
    for path, text in planned.texts.items():
        assert scaffold.TODO in text
        if path.exists():  # appended: what was there stays as it was (the LATEX table gains one line)
            old = path.read_text(encoding="utf-8")
            assert len(text) > len(old)
            assert set(old.splitlines()) <= set(text.splitlines())


@pytest.mark.parametrize("stem", course.STEMS)
def test_every_learner_file_takes_a_new_exercise(stem):
    from graders.checks.edges import CLASSES

    texts = scaffold.plan(stem, "zz_new_exercise").texts
    for path, text in texts.items():
        compile(text, str(path), "exec")  # the skeletons parse where they land
    # the checks' skeleton excuses every edge class with a TODO reason (the recipe names it until it is replaced)
    checks = next(text for path, text in texts.items() if "_zz_new_exercise_cases" in text)
    skeleton = checks[checks.index("# --- zz_new_exercise ("):]
    assert all(f'    {name}="{scaffold.TODO}: ' in skeleton for name in CLASSES), skeleton[:1500]
