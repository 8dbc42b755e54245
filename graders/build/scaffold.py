"""``rl4llm new-exercise FILE FUNCTION``: the skeletons of a new exercise in its four files.

FILE is a learner file of the course (``module_8_reference``), FUNCTION a new identifier.
Appended (never overwritten):

1. the reference: a fenced ``FUNCTION`` at the end of ``solutions/<folder>/FILE.py``, its
   docstring a template, ``raise NotImplementedError`` inside the fence;
2. the public test: ``test_FUNCTION_golden_row`` at the end of ``starter/<folder>/test_FILE.py``;
3. the hidden checks: an ``@exercise("FILE.FUNCTION", points=1)`` generator (a public case, a
   hidden case, a public raises case) at the end of the checks module of FILE (wherever
   ``graders.checks.FILE`` lives: a module or a package's ``__init__.py``) and a ``LATEX`` entry;
4. the catalogue: ``graders/misconceptions/FILE/FUNCTION.py`` with one entry.

Every skeleton carries ``TODO(new-exercise)`` (:data:`graders.build.recipe.SCAFFOLD`), which
``tests/test_recipe.py`` reports until the piece is written.
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from graders import course
from graders.build import recipe
from graders.paths import REPO_ROOT

TODO = recipe.SCAFFOLD


class ScaffoldError(ValueError):
    """The file or the function cannot take a new exercise (the message says why)."""


@dataclass(frozen=True)
class Plan:
    """The four files and what goes into each (path -> new full text)."""

    exercise_id: str
    texts: dict[Path, str]


def _reference(function: str) -> str:
    return f'''

def {function}(x, beta):
    """{TODO}: y = beta * x (the formula in plain text; Author et al. YEAR, eq. N).

    {TODO}: one or two lines on what the formula means and when it is used.

    Args:
        x: {TODO}: what it is, scalar or array of shape (B,).
        beta: {TODO}: what it is, > 0.
    Returns:
        {TODO}: float for scalars, else a float64 array of shape (B,).
    """
    ### BEGIN SOLUTION
    raise NotImplementedError("{TODO}: the reference")
    ### END SOLUTION
'''


def _public_test(function: str, alias: str | None, stem: str) -> str:
    call, imports = (f"{alias}.{function}", "") if alias else (function, f"\n    from {stem} import {function}\n")
    return f'''

def test_{function}_golden_row():
    # {TODO}: a row a learner can check on paper (the same as a hidden=False case of the checks){imports}
    assert {call}(1.0, 2.0) == pytest.approx(2.0)
'''


def _edges(declare: str) -> str:
    """The edge classes' skeleton (:mod:`graders.checks.edges`): every class excused with a TODO reason, so the
    recipe check names it until each class is declared (with its tagged hidden case and public row) or excused."""
    from graders.checks.edges import CLASSES

    reasons = "".join(f'\n    {name}="{TODO}: declare it, or say why it does not apply",' for name in CLASSES)
    return f"{declare}({reasons}\n)"


def _checks(exercise_id: str, function: str, register: str, case: str, text: str, declare: str) -> str:
    return f'''

# --- {function} ({TODO}: written by `rl4llm new-exercise`; fill in, then drop the TODO markers)
# {TODO}: each edge class (graders/checks/edges.py) that applies goes first in declare(...),
# with a hidden Case(..., edge="<class>") and a public row marked pytest.mark.edge("<class>");
# every other class keeps a reason why it does not apply
@{register}("{exercise_id}", points=1, edges={_edges(declare)})
def _{function}_cases():
    # {TODO}: the public tests' golden rows again, hidden=False
    yield {case}(args=(1.0, 2.0), label={text}("public: the golden row", "публичный: эталонная строка"),
               hidden=False)
    # {TODO}: hidden edge cases (extremes, broadcasting), then hypothesis_cases(..., seed=<a new seed>)
    yield {case}(args=(-3.0, 0.5), label={text}("{TODO} hidden case", "{TODO} скрытая проверка"))
    # {TODO}: an input the reference refuses, public so the public tests make it too (_refused.json)
    yield {case}(args=(1.0, 0.0), raises=ValueError, label={text}("beta = 0 is refused", "beta = 0 отклоняется"),
               hidden=False)
'''


def _catalogue(function: str) -> str:
    return f'''"""Wrong versions of {function} ({TODO}: its formula).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def {function}_todo_name_the_mistake(x, beta):
    """{TODO}: looks like <the mistake>; the right formula is <the formula>

    ru: {TODO}: похоже на <ошибку>; правильная формула: <формула>
    """
    return _right(x, beta)  # {TODO}: the reference called with the mistake
'''


def _top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def _module_alias(path: Path, stem: str) -> str | None:
    """The name under which the public test file imports the learner file (``import stem as ref``), or None
    (it imports names from it: the skeleton imports its function in its body)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == stem:
                    return alias.asname or alias.name
    return None


def _bound_name(module, target) -> str | None:
    """The name a checks module binds ``target`` to (``exercise as _register`` -> ``_register``)."""
    return next((name for name, value in vars(module).items() if value is target), None)


def _latex_file_and_line(checks_module) -> tuple[Path, int]:
    """The file holding ``LATEX = {...}`` of a checks module (a package: any of its files) and the line of its
    closing brace."""
    path = Path(checks_module.__file__)
    candidates = [path] + (sorted(p for p in path.parent.glob("*.py") if p != path)
                           if path.name == "__init__.py" else [])
    for candidate in candidates:
        for node in ast.parse(candidate.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LATEX" for t in node.targets)
                    and isinstance(node.value, ast.Dict)):
                return candidate, node.end_lineno
    raise ScaffoldError(f"no `LATEX = {{...}}` table in {path.relative_to(REPO_ROOT)}")


def plan(stem: str, function: str) -> Plan:
    """What ``new-exercise`` writes, checked first: ``ScaffoldError`` names the problem."""
    if stem not in course.STEMS:
        raise ScaffoldError(f"unknown learner file {stem!r}; the course has {', '.join(course.STEMS)} "
                            f"(graders/course.py)")
    if not function.isidentifier() or keyword.iskeyword(function) or not re.fullmatch(r"[a-z][a-z0-9_]*", function):
        raise ScaffoldError(f"{function!r} is not a valid exercise name (a lower-case Python identifier, "
                            f"not starting with _)")
    from graders.checks import REGISTRY, spec_for
    from graders.checks import exercise as register_function

    exercise_id = f"{stem}.{function}"
    solution = recipe.solution_path(stem)
    public = recipe.public_test_path(stem)
    catalogue = recipe.catalogue_path(stem, function)
    spec_for(exercise_id)  # imports the checks module of the file
    try:
        checks = recipe.checks_module(stem)
    except ModuleNotFoundError:
        raise ScaffoldError(f"{stem} has no checks module graders/checks/{stem}.py to add to") from None
    checks_file = Path(checks.__file__)
    latex_file, latex_end = _latex_file_and_line(checks)
    for path in (solution, public):
        if not path.exists():
            raise ScaffoldError(f"{path.relative_to(REPO_ROOT)} does not exist")
    taken = []
    if function in _top_level_names(solution):
        taken.append(f"{solution.relative_to(REPO_ROOT)} already defines {function}")
    if exercise_id in REGISTRY:
        taken.append(f"{checks_file.relative_to(REPO_ROOT)} already registers {exercise_id}")
    if function in getattr(checks, "LATEX", {}):
        taken.append(f"{latex_file.relative_to(REPO_ROOT)} already has a LATEX entry {function!r}")
    if catalogue.exists():
        taken.append(f"{catalogue.relative_to(REPO_ROOT)} already exists")
    existing_tests = [name for name in recipe._test_functions(public) if name.startswith(f"test_{function}_")]
    if existing_tests:
        taken.append(f"{public.relative_to(REPO_ROOT)} already has {existing_tests[0]}")
    if taken:
        raise ScaffoldError(f"{exercise_id} exists already (nothing written): " + "; ".join(taken))

    from graders.checks import Case
    from graders.checks.edges import declare as declare_function
    from graders.text import Text

    register = _bound_name(checks, register_function)
    case = _bound_name(checks, Case)
    text = _bound_name(checks, Text)
    declare = _bound_name(checks, declare_function)
    imports = ""
    if register is None or case is None:
        imports = "\nfrom graders.checks import Case as _NewCase\nfrom graders.checks import exercise as _new_exercise\n"
        register, case = register or "_new_exercise", case or "_NewCase"
    if text is None:
        imports += "\nfrom graders.text import Text as _NewText\n"
        text = "_NewText"
    if declare is None:
        imports += "\nfrom graders.checks.edges import declare as _new_declare\n"
        declare = "_new_declare"
    texts = {
        solution: solution.read_text(encoding="utf-8").rstrip("\n") + "\n" + _reference(function),
        public: public.read_text(encoding="utf-8").rstrip("\n") + "\n" + _public_test(function, _module_alias(public, stem),
                                                                                       stem),
        catalogue: _catalogue(function),
    }
    lines = latex_file.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(latex_end - 1, f'    "{function}": r"{TODO}: the formula in LaTeX",\n')
    latex_text = "".join(lines)
    if latex_file == checks_file:
        texts[checks_file] = (latex_text.rstrip("\n") + "\n" + imports
                              + _checks(exercise_id, function, register, case, text, declare))
    else:
        texts[latex_file] = latex_text
        texts[checks_file] = (checks_file.read_text(encoding="utf-8").rstrip("\n") + "\n" + imports
                              + _checks(exercise_id, function, register, case, text, declare))
    return Plan(exercise_id, texts)


# After the four pieces are filled in: the commands and the records to commit, as docs/contributing.md
# ("Add an exercise") lists them; `rl4llm new-exercise` prints them and tests/test_new_exercise.py checks that
# the page holds each one, so the two cannot drift apart.
NEXT_STEPS = (  # in the order docs/contributing.md's recipe gives them (the fast tier last: it needs the records)
    ".venv/bin/rl4llm build",
    ".venv/bin/rl4llm check-exercise {exercise} --no-mutation",
    ".venv/bin/rl4llm mutate --exercise {exercise} --write-floors",
    ".venv/bin/python -m pytest -q tests/test_catalogue.py tests/test_sweep_record.py tests/test_given_code.py "
    "--update-sweep-record",
    '.venv/bin/python -m pytest -q -m "not slow" -n 2 --dist loadfile',
)
RECORDS = ("tests/sweep_record.json", "tests/given_record.json", "graders/mutation/floors.json")


def next_steps(exercise: str) -> str:
    """What to run once exercise ``exercise``'s four pieces are filled in, and what to commit with it."""
    steps = "\n".join(f"  {step.format(exercise=exercise)}" for step in NEXT_STEPS)
    return (f"fill them in (docs/contributing.md, \"Add an exercise\"), then:\n{steps}\n"
            f"(the fast tier's tests/test_recipe.py names what is still missing) and commit the exercise with "
            f"{', '.join(RECORDS[:-1])} and {RECORDS[-1]}")


def new_exercise(stem: str, function: str) -> list[Path]:
    """Write the skeletons; return the files written (``ScaffoldError`` before anything is written)."""
    planned = plan(stem, function)
    for path, text in planned.texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(planned.texts)
