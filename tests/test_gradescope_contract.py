"""The Gradescope bundle against Gradescope's documented autograder contract.

Written from Gradescope's "Autograder Specifications"
(https://gradescope-autograders.readthedocs.io/en/latest/specs/), not from the kit's code:

- the zip has ``setup.sh`` and ``run_autograder`` at its root (not in a folder), ``run_autograder``
  executable with a ``#!`` line; Gradescope unpacks the zip into ``/autograder/source``, copies
  ``run_autograder`` to ``/autograder/run_autograder`` and runs it there, in ``/autograder``;
- the learner's files are in ``/autograder/submission``; ``run_autograder`` must produce
  ``/autograder/results/results.json``;
- ``results.json``: ``score`` (required unless every test has one; it overrides their sum),
  ``execution_time``, ``output``, ``output_format``, ``test_output_format``, ``test_name_format``,
  ``visibility``, ``stdout_visibility``, ``extra_data``, ``tests``, ``leaderboard``; a test has
  ``score``, ``max_score``, ``status`` (``passed``/``failed``), ``name``, ``name_format``, ``number``,
  ``output``, ``output_format``, ``tags``, ``visibility``, ``extra_data``. Visibility is one of
  ``hidden``, ``after_due_date``, ``after_published``, ``visible``; outputs use Unix line endings.

The kit adds its own expectations on top: every test has a unique name, 0 <= score <= max_score,
the tests' scores add up to ``score``; ``setup.sh`` ends by grading the kit's own solutions as
``run_autograder`` grades (the warm-up: the reference store filled, full marks or a failed set-up), so a
submission is graded without computing any reference outcome. These tests run the bundle in a fake ``/autograder``
(``RL4LLM_AUTOGRADER_ROOT``, ``RL4LLM_PYTHON``), not on Gradescope itself.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import types
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from graders.engine.outputs import reports
from graders.engine.routes.gradescope import build_bundle, gradescope_contract
from graders.engine.judging.kit import DEFAULT_KIT

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
             "visibility", "extra_data"}
GRA = "module_9_reference.group_relative_advantages"


# ---------------------------------------------------------------------------- the schema, as documented
def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _field_problems(where: str, entry: dict, keys: set[str]) -> list[str]:
    """Problems with the fields a results.json object and a test share (formats, visibility, text)."""
    problems = [f"{where}: {key!r} is not a documented key" for key in sorted(set(entry) - keys)]
    for key in ("output_format", "test_output_format", "test_name_format", "name_format"):
        if key in entry and entry[key] not in FORMATS:
            problems.append(f"{where}: {key} {entry[key]!r} is not one of {sorted(FORMATS)}")
    for key in ("visibility", "stdout_visibility"):
        if key in entry and entry[key] not in VISIBILITY:
            problems.append(f"{where}: {key} {entry[key]!r} is not one of {sorted(VISIBILITY)}")
    if "output" in entry and not isinstance(entry["output"], str):
        problems.append(f"{where}: output is not a string")
    elif "\r" in entry.get("output", ""):
        problems.append(f"{where}: output has a carriage return (Gradescope wants Unix line endings)")
    if "extra_data" in entry and not isinstance(entry["extra_data"], dict):
        problems.append(f"{where}: extra_data is not an object")
    return problems


def _test_problems(index: int, test) -> list[str]:
    if not isinstance(test, dict):
        return [f"tests[{index}] is not an object"]
    where = f"tests[{index}] ({test.get('name', 'no name')})"
    problems = _field_problems(where, test, TEST_KEYS)
    if not isinstance(test.get("name"), str) or not test["name"].strip():
        problems.append(f"{where}: no name")
    for key in ("score", "max_score"):
        if key in test and not _is_number(test[key]):
            problems.append(f"{where}: {key} {test[key]!r} is not a finite number")
    if _is_number(test.get("score")) and _is_number(test.get("max_score")) \
            and not 0 <= test["score"] <= test["max_score"]:
        problems.append(f"{where}: score {test['score']} is not within 0..max_score {test['max_score']}")
    if "status" in test and test["status"] not in ("passed", "failed"):
        problems.append(f"{where}: status {test['status']!r} is not 'passed' or 'failed'")
    if "number" in test and not isinstance(test["number"], str):
        problems.append(f"{where}: number is not a string")
    if "tags" in test and not (isinstance(test["tags"], list) and all(isinstance(t, str) for t in test["tags"])):
        problems.append(f"{where}: tags is not a list of strings")
    return problems


def _score_problems(results: dict, tests: list) -> list[str]:
    scored = [t for t in tests if isinstance(t, dict) and _is_number(t.get("score"))]
    if "score" not in results:
        return [] if tests and len(scored) == len(tests) else ["no top-level score and not every test has one"]
    if not _is_number(results["score"]) or results["score"] < 0:
        return [f"score {results['score']!r} is not a finite number >= 0"]
    problems = []
    if tests and len(scored) == len(tests) and abs(sum(t["score"] for t in scored) - results["score"]) > 1e-3:
        problems.append(f"score {results['score']} is not the sum of the tests' scores "
                        f"{sum(t['score'] for t in scored)} (Gradescope would show the top-level one)")
    maxima = [t.get("max_score") for t in tests if isinstance(t, dict)]
    if tests and all(_is_number(m) for m in maxima) and results["score"] > sum(maxima) + 1e-3:
        problems.append(f"score {results['score']} is above the tests' max_score total {sum(maxima)}")
    return problems


def contract_problems(results) -> list[str]:
    """Everything in a parsed ``results.json`` that breaks Gradescope's documented format (empty: none)."""
    if not isinstance(results, dict):
        return ["results.json is not a JSON object"]
    problems = _field_problems("results.json", results, TOP_KEYS)
    if "execution_time" in results and not (_is_number(results["execution_time"]) and results["execution_time"] >= 0):
        problems.append("execution_time is not a number of seconds >= 0")
    tests = results.get("tests", [])
    if not isinstance(tests, list):
        return problems + ["tests is not a list"]
    for index, test in enumerate(tests):
        problems += _test_problems(index, test)
    names = [t.get("name") for t in tests if isinstance(t, dict)]
    problems += [f"test name {name!r} is used twice" for name in sorted({n for n in names if names.count(n) > 1})]
    if "leaderboard" in results and not (isinstance(results["leaderboard"], list) and all(
            isinstance(e, dict) and {"name", "value"} <= set(e) for e in results["leaderboard"])):
        problems.append("leaderboard is not a list of {name, value} objects")
    return problems + _score_problems(results, tests)


def _load_results(path: Path):
    """results.json as Gradescope would read it: UTF-8 JSON without NaN or Infinity (not valid JSON)."""
    def refuse(constant):
        raise ValueError(f"{path} holds {constant}, which is not valid JSON")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


GOOD = {"score": 3.0, "output": "ok", "visibility": "visible", "stdout_visibility": "hidden", "tests": [
    {"name": "a", "score": 2.0, "max_score": 2.0, "status": "passed", "output": "", "visibility": "visible"},
    {"name": "b", "score": 1.0, "max_score": 4.0, "status": "failed", "output": "x\ny", "visibility": "after_due_date"},
]}


def test_the_contract_check_accepts_the_documented_example():
    assert contract_problems(GOOD) == []
    assert contract_problems({"tests": [{"name": "a", "score": 1}]}) == []  # no top-level score: the tests'
    assert contract_problems({"score": 0.0, "output": "could not grade", "tests": []}) == []


@pytest.mark.parametrize("change, problem", [
    ({"visibility": "public"}, "visibility 'public' is not one of"),
    ({"stdout_visibility": "shown"}, "stdout_visibility 'shown' is not one of"),
    ({"score": 4.0}, "is not the sum of the tests' scores"),
    ({"score": -1.0}, "is not a finite number >= 0"),
    ({"score": "3"}, "is not a finite number >= 0"),
    ({"max_score": 6.0}, "'max_score' is not a documented key"),
    ({"output": "a\r\nb"}, "carriage return"),
    ({"tests": {"a": 1}}, "tests is not a list"),
    ({"tests": [{"score": 1.0, "max_score": 1.0}, {"name": "b", "score": 2.0, "max_score": 2.0}]}, "no name"),
    ({"tests": [{"name": "a", "score": 3.0, "max_score": 2.0}]}, "is not within 0..max_score"),
    ({"tests": [{"name": "a", "score": -0.5, "max_score": 2.0}]}, "is not within 0..max_score"),
    ({"tests": [{"name": "a", "score": True, "max_score": 2.0}]}, "score True is not a finite number"),
    ({"tests": [{"name": "a", "score": 1.0, "status": "error"}]}, "status 'error' is not"),
    ({"tests": [{"name": "a", "score": 1.0, "visibility": "secret"}]}, "visibility 'secret' is not one of"),
    ({"tests": [{"name": "a", "score": 1.0}, {"name": "a", "score": 2.0}]}, "test name 'a' is used twice"),
    ({"tests": [{"name": "a", "score": 1.0, "points": 1.0}]}, "'points' is not a documented key"),
])
def test_the_contract_check_catches_each_kind_of_break(change, problem):
    broken = {**GOOD, **change}
    if "tests" in change and isinstance(change["tests"], list):
        broken["score"] = sum(t.get("score", 0) for t in change["tests"] if not isinstance(t.get("score"), bool))
    found = contract_problems(broken)
    assert any(problem in text for text in found), found


def test_the_contract_check_refuses_nan_in_the_file(tmp_path):
    (tmp_path / "results.json").write_text('{"score": NaN, "tests": []}', encoding="utf-8")
    with pytest.raises(ValueError, match="NaN"):
        _load_results(tmp_path / "results.json")


def test_the_kits_results_keep_only_documented_keys():
    """reports.gradescope_results adds a top-level max_score, which Gradescope does not define."""
    report = {"submission": "s", "score": 1.5, "max_score": 4.0, "exercises": [
        {"id": "m.f", "points": 1.5, "max_points": 3.0, "status": "failed", "feedback": "1/2 checks passed.",
         "misconceptions": ["sample_std"]},
        {"id": "m.g", "points": 0.0, "max_points": 1.0, "status": "timeout", "feedback": "", "misconceptions": []},
    ]}
    conformed = gradescope_contract(reports.gradescope_results(report))
    assert contract_problems(conformed) == []
    assert conformed["extra_data"]["max_score"] == 4.0 and "max_score" not in conformed


# ---------------------------------------------------------------------------- the zip
@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("bundle") / "autograder.zip")


def _mode(info: zipfile.ZipInfo) -> int:
    return (info.external_attr >> 16) & 0o7777


def test_the_zip_has_setup_and_run_autograder_at_its_root(bundle):
    with zipfile.ZipFile(bundle) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert "setup.sh" in names and "run_autograder" in names  # not under a folder: the root
        assert len(names) == len(set(names))
        for name in names:
            path = PurePosixPath(name)
            assert not path.is_absolute() and ".." not in path.parts and "\\" not in name, name
        assert {n.split("/", 1)[0] for n in names} == {"setup.sh", "run_autograder", "kit"}


@pytest.mark.parametrize("name", ["run_autograder", "setup.sh"])
def test_the_scripts_are_executable_unix_scripts_with_a_shebang(bundle, name):
    with zipfile.ZipFile(bundle) as archive:
        info = archive.getinfo(name)
        text = archive.read(name).decode("utf-8")
    assert info.create_system == 3, "mode bits count only in a zip entry made on Unix (create_system 3)"
    assert stat.S_ISREG(info.external_attr >> 16) and _mode(info) & 0o111 == 0o111, oct(_mode(info))
    assert text.splitlines()[0] == "#!/usr/bin/env bash" and "\r" not in text


def test_run_autograder_uses_gradescopes_paths(bundle):
    with zipfile.ZipFile(bundle) as archive:
        text = archive.read("run_autograder").decode("utf-8")
        setup = archive.read("setup.sh").decode("utf-8")
    assert "/autograder" in text and "results/results.json" in text and "source/kit" in text
    assert "/autograder/source/kit" in setup  # setup.sh installs the kit from where Gradescope unpacks it


# ---------------------------------------------------------------------------- running it
def _unpack_like_gradescope(bundle: Path, root: Path) -> Path:
    """Unzip into ROOT/source honouring the zip's mode bits (as unzip does), copy run_autograder to ROOT."""
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():
            if _mode(info):
                os.chmod(root / "source" / info.filename, _mode(info))
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "results").mkdir()
    return root


def _run_autograder(root: Path, python: str = sys.executable) -> subprocess.CompletedProcess:
    env = {**os.environ, "RL4LLM_AUTOGRADER_ROOT": str(root), "RL4LLM_PYTHON": python}
    return subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_run_autograder_grades_a_submission_into_valid_results(bundle, tmp_path):
    root = _unpack_like_gradescope(bundle, tmp_path / "autograder")
    (root / "submission").mkdir()
    shutil.copyfile(DEFAULT_KIT.solution_path("module_9_reference"), root / "submission" / "module_9_reference.py")
    completed = _run_autograder(root)
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = _load_results(root / "results" / "results.json")
    assert contract_problems(results) == []
    tests = {t["name"]: t for t in results["tests"]}
    assert list(tests) == DEFAULT_KIT.exercises()  # every exercise, in course order
    assert tests[GRA]["status"] == "passed" and tests[GRA]["score"] == tests[GRA]["max_score"] > 0
    assert tests["module_8_reference.optimal_kl_policy"]["status"] == "failed"  # the file is absent
    assert all(t["score"] == t["max_score"] for t in tests.values() if t["status"] == "passed")
    assert 0 < results["score"] < results["extra_data"]["max_score"]
    assert "Traceback" not in completed.stdout + completed.stderr


@pytest.mark.slow  # run_autograder end to end (about 1.6 s); the results' schema is tested fast above
def test_run_autograder_without_a_submission_still_writes_valid_results(bundle, tmp_path):
    root = _unpack_like_gradescope(bundle, tmp_path / "autograder")  # no ROOT/submission
    completed = _run_autograder(root)
    assert completed.returncode != 0
    results = _load_results(root / "results" / "results.json")
    assert contract_problems(results) == []
    assert results["score"] == 0 and "could not grade" in results["output"]
    assert "no such submission" in results["output"]


def test_a_crash_while_grading_still_writes_valid_results(tmp_path, monkeypatch, capsys):
    from graders.engine.routes import batch, gradescope

    def crash(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(batch, "grade_paths", crash)
    assert gradescope.run(tmp_path) == 2
    results = _load_results(tmp_path / "results" / "results.json")
    assert contract_problems(results) == []
    assert results["score"] == 0 and "internal grader error (RuntimeError)" in results["output"]
    assert "boom" in capsys.readouterr().err  # the traceback goes to the log, not to the learner


def test_run_autograder_writes_valid_results_when_python_cannot_start(bundle, tmp_path):
    """A failed setup.sh leaves no interpreter; Gradescope must still get a results.json."""
    root = _unpack_like_gradescope(bundle, tmp_path / "autograder")
    (root / "submission").mkdir()
    (root / "results" / "results.json").write_text('{"score": 100}', encoding="utf-8")  # never a stale file
    completed = _run_autograder(root, python=str(tmp_path / "no-such-python"))
    assert completed.returncode != 0
    results = _load_results(root / "results" / "results.json")
    assert contract_problems(results) == []
    assert results["score"] == 0 and "could not start" in results["output"]


# ---------------------------------------------------------------------------- one module, one language
M8_PREFIXES = ("module_8_reference.", "module_8_training.")
CYRILLIC = re.compile("[а-яА-Я]")


def _cli(argv: list[str]) -> int:
    from graders.cli import main

    try:
        return main(argv)
    except SystemExit as error:  # argparse's usage errors
        return error.code


@pytest.mark.parametrize("argv, problem", [
    (["--module", "7"], "unknown module '7'; the course has modules 8 (module_08), 9 (module_09)"),
    (["--module", "module_10"], "unknown module 'module_10'"),
    (["--lang", "fr"], "argument --lang: invalid choice: 'fr'"),
])
def test_a_bad_module_or_language_exits_2_naming_it(argv, problem, tmp_path, capsys):
    out = tmp_path / "autograder.zip"
    assert _cli(["gradescope", "--out", str(out), *argv]) == 2
    assert problem in capsys.readouterr().err
    assert not out.exists()


def test_an_out_that_is_a_folder_exits_2_and_keeps_it(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep me", encoding="utf-8")
    assert _cli(["gradescope", "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text(encoding="utf-8") == "keep me"


def test_the_build_helper_refuses_bad_values(tmp_path):
    from graders.engine.routes.gradescope import BundleError

    with pytest.raises(BundleError, match="unknown module"):
        build_bundle(tmp_path / "a.zip", modules=("8", "10"))
    with pytest.raises(BundleError, match="unknown language 'de'"):
        build_bundle(tmp_path / "a.zip", language="de")
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.parametrize("argv, options", [
    ([], "--module 8 --module 9 --lang en"),  # both modules, English: never the container's locale
    (["--module", "9"], "--module 9 --lang en"),
    (["--module", "module_08", "--lang", "ru"], "--module 8 --lang ru"),
])
def test_the_module_and_the_language_are_baked_into_run_autograder(argv, options, tmp_path, capsys):
    out = tmp_path / "autograder.zip"
    assert _cli(["gradescope", "--out", str(out), *argv]) == 0
    assert "points" in capsys.readouterr().out
    with zipfile.ZipFile(out) as archive:
        script = archive.read("run_autograder").decode("utf-8")
    assert f'"$PY" -m graders.engine.routes.gradescope run --root "$ROOT" {options}\n' in script
    assert bool(CYRILLIC.search(script)) == ("ru" in options)  # the could-not-start message too


def test_the_points_of_a_bundle_are_its_modules_points():
    from graders.engine.routes.gradescope import points_of

    assert 0 < points_of(("8",)) < points_of() and 0 < points_of(("9",)) < points_of()
    assert points_of(("8",)) + points_of(("9",)) == points_of()


# ---------------------------------------------------------------------------- the pins setup.sh installs with
def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")  # a constraints file of exact pins only
            assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) and re.fullmatch(r"[0-9][0-9A-Za-z.+]*", version)
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_the_core_pins_agree_with_the_capstone_pins_and_cover_the_core_dependencies():
    import tomllib

    core = _pins(DEFAULT_KIT.root / "constraints" / "core.txt")
    capstone = _pins(DEFAULT_KIT.root / "constraints" / "capstone.txt")
    shared = set(core) & set(capstone)
    assert {"torch", "jinja2", "fsspec"} <= shared
    assert {name: core[name] for name in shared} == {name: capstone[name] for name in shared}
    project = tomllib.loads((DEFAULT_KIT.root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", dep, 1)[0]).lower() for dep in project["dependencies"]}
    assert wanted - set(core) == set(), "constraints/core.txt must pin every core dependency"
    assert {"numpy", "hypothesis", "pandas", "matplotlib", "sympy"} <= set(core)  # sympy: torch's own


def test_setup_sh_installs_with_the_core_pins_and_torch_from_a_local_wheel_when_given(bundle):
    with zipfile.ZipFile(bundle) as archive:
        setup = archive.read("setup.sh").decode("utf-8")
        bundled = archive.read("kit/constraints/core.txt")
    assert bundled == (DEFAULT_KIT.root / "constraints" / "core.txt").read_bytes()
    assert 'pip install -c "$KIT/constraints/core.txt" -e "$KIT"' in setup and "KIT=/autograder/source/kit" in setup
    assert '--no-deps "$RL4LLM_TORCH_WHEEL"' in setup  # the container proof's local wheel
    assert '--no-deps "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu' in setup  # Gradescope's
    completed = subprocess.run(["bash", "-n"], input=setup, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    # the answers unreadable to the workers' user (nobody), each folder one the bundle holds
    hidden = '"$KIT/solutions" "$KIT/graders/checks" "$KIT/graders/misconceptions"'
    assert f"chmod -R go-rwx {hidden}" in setup
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
    for folder in ("solutions/", "graders/checks/", "graders/misconceptions/"):
        assert any(name.startswith(f"kit/{folder}") for name in names), folder


# ---------------------------------------------------------------------------- the container proof's script
CONTAINER = DEFAULT_KIT.root / "examples" / "gradescope" / "container.sh"


def test_the_container_script_parses_and_runs_what_it_says():
    completed = subprocess.run(["bash", "-n", str(CONTAINER)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    text = CONTAINER.read_text(encoding="utf-8")
    assert "debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm" in text
    assert 'graders.cli gradescope --out "$BUNDLE" "${MODULE_ARGS[@]}" --lang "$LANGUAGE"' in text
    assert 'MODULE_ARGS=(--module "$MODULE")' in text and '--lang) LANGUAGE="$2"' in text
    assert "bwrap --bind \"$ROOTFS\" /" in text and "RL4LLM_TORCH_WHEEL=" in text
    assert "bash /autograder/source/setup.sh" in text and "container /autograder/run_autograder" in text
    assert 'unzip -q "$BUNDLE" -d "$ROOTFS/autograder/source"' in text
    for name in ("correct", "typical_mistakes", "hostile"):
        assert name in text


def test_the_container_script_refuses_an_unknown_argument():
    completed = subprocess.run(["bash", str(CONTAINER), "--modul", "9"], capture_output=True, text=True)
    assert completed.returncode == 2 and "unknown argument --modul" in completed.stderr


# ---------------------------------------------------------------------------- running a one-module bundle
@pytest.fixture(scope="module")
def module_9_ru(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("bundle9") / "autograder.zip", modules=("9",), language="ru")


def _grade_in_bundle(bundle: Path, root: Path, files: dict[str, str], **env) -> tuple[dict, subprocess.CompletedProcess]:
    root = _unpack_like_gradescope(bundle, root)
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    completed = subprocess.run([str(root / "run_autograder")], cwd=root, capture_output=True, text=True, timeout=600,
                               env={**os.environ, "RL4LLM_AUTOGRADER_ROOT": str(root), "RL4LLM_PYTHON": sys.executable,
                                    **env})
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = _load_results(root / "results" / "results.json")
    assert contract_problems(results) == []
    return results, completed


def _module_9_solutions() -> dict[str, str]:
    return {f"{stem}.py": DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
            for stem in DEFAULT_KIT.functions_by_stem(("9",))}


@pytest.mark.slow
def test_a_module_9_bundle_gives_a_correct_module_9_submission_full_marks(module_9_ru, tmp_path):
    from graders.engine.routes.gradescope import points_of

    results, _ = _grade_in_bundle(module_9_ru, tmp_path / "autograder", _module_9_solutions())
    names = [t["name"] for t in results["tests"]]
    assert names == DEFAULT_KIT.exercises(("9",)) and not [n for n in names if n.startswith(M8_PREFIXES)]
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in results["tests"])
    assert results["score"] == results["extra_data"]["max_score"] == points_of(("9",))


@pytest.mark.slow
def test_a_russian_bundle_speaks_russian_whatever_the_locale(module_9_ru, tmp_path):
    from graders.engine.routes.demo import assemble_examples

    mistakes = assemble_examples(tmp_path / "examples", modules=("9",))[2]
    files = {path.name: path.read_text(encoding="utf-8") for path in mistakes.glob("*.py")}
    english = {"LANG": "en_US.UTF-8", "LC_ALL": "en_US.UTF-8", "RL4LLM_LANG": "en"}
    results, completed = _grade_in_bundle(module_9_ru, tmp_path / "autograder", files, **english)
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed and all(CYRILLIC.search(t["output"]) for t in failed), [t["output"] for t in failed]
    assert 0 < results["score"] < results["extra_data"]["max_score"]
    assert CYRILLIC.search(completed.stdout)  # the log's scoreboard too


@pytest.mark.slow
def test_a_hostile_submission_cannot_forge_results_or_read_the_bundled_solutions(module_9_ru, tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from hostile_code import gradescope_cheat, placebo

    root = tmp_path / "hostile"
    hostile, _ = _grade_in_bundle(module_9_ru, root, gradescope_cheat(str(root), ("9",)))
    baseline, _ = _grade_in_bundle(module_9_ru, tmp_path / "placebo", {
        f"{stem}.py": placebo(stem, ("9",)) for stem in DEFAULT_KIT.functions_by_stem(("9",))})
    assert not (root / "results" / "forged").exists(), "the learner's code wrote into /autograder/results"
    assert hostile["score"] <= baseline["score"] < hostile["extra_data"]["max_score"]
    assert [t["name"] for t in hostile["tests"]] == [t["name"] for t in baseline["tests"]]
    assert all(h["score"] <= b["score"] for h, b in zip(hostile["tests"], baseline["tests"]))


def test_the_cheat_steals_and_forges_where_nothing_stops_it(tmp_path):
    """The hostile submission above is a real attack: run unconfined, it answers with the bundle's solution
    and forges results.json (so its test can fail)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from hostile_code import gradescope_cheat

    stem = "module_9_reference"
    solution = DEFAULT_KIT.solution_path(stem)
    target = tmp_path / "source" / "kit" / solution.relative_to(DEFAULT_KIT.root)
    target.parent.mkdir(parents=True)
    shutil.copyfile(solution, target)
    (tmp_path / "results").mkdir()
    namespace: dict = {}
    exec(compile(gradescope_cheat(str(tmp_path), ("9",))[f"{stem}.py"], "cheat", "exec"), namespace)
    assert (tmp_path / "results" / "forged").exists()
    assert json.loads((tmp_path / "results" / "results.json").read_text())["score"] == 1000.0
    function = GRA.split(".", 1)[1]
    assert namespace[function] is not namespace["_stolen"][function] and function in namespace["_stolen"]


# ---------------------------------------------------------------------------- the image's warm-up (setup.sh)
def test_setup_sh_warms_the_reference_store_as_run_autograder_grades(module_9_ru):
    """setup.sh's last step grades the kit's own solutions with run_autograder's module and language, into the
    store run_autograder reads (the same $RL4LLM_CACHE default under /autograder)."""
    with zipfile.ZipFile(module_9_ru) as archive:
        setup = archive.read("setup.sh").decode("utf-8")
        run = archive.read("run_autograder").decode("utf-8")
    warm = setup.strip().splitlines()[-1]
    assert warm == 'cd "$KIT" && "$PY" -m graders.engine.routes.gradescope warm --root /autograder --module 9 --lang ru'
    assert re.search(r"graders\.engine\.routes\.gradescope run --root \"\$ROOT\" --module 9 --lang ru", run)
    assert 'export RL4LLM_CACHE="${RL4LLM_CACHE:-/autograder/rl4llm-cache}"' in setup
    assert 'export RL4LLM_CACHE="${RL4LLM_CACHE:-$ROOT/rl4llm-cache}"' in run  # ROOT is /autograder there


def _store(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.arrays")}


@pytest.mark.slow  # the warm-up grades module 9's solutions, then a submission is graded (about 15 s)
def test_after_the_warm_up_a_submission_is_graded_without_computing_any_reference(module_9_ru, tmp_path):
    root = _unpack_like_gradescope(module_9_ru, tmp_path / "autograder")
    store = root / "rl4llm-cache"
    env = {key: value for key, value in os.environ.items() if key != "RL4LLM_CACHE"}
    env["RL4LLM_CACHE"] = str(store)  # what setup.sh exports (/autograder/rl4llm-cache)
    warmed = subprocess.run([sys.executable, "-m", "graders.engine.routes.gradescope", "warm", "--root", str(root),
                             "--module", "9", "--lang", "ru"], cwd=root / "source" / "kit", env=env,
                            capture_output=True, text=True, timeout=600)
    assert warmed.returncode == 0, warmed.stderr[-3000:]
    assert "the reference store is warm" in warmed.stdout
    before = _store(store)
    assert before, "the warm-up kept no reference record"
    (root / "submission").mkdir()
    for name, text in _module_9_solutions().items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    env.pop("RL4LLM_CACHE")  # run_autograder's own default: $ROOT/rl4llm-cache, the one warmed
    env["XDG_CACHE_HOME"] = str(tmp_path / "elsewhere")  # where the kit's default store would be otherwise
    graded = subprocess.run([str(root / "run_autograder")], cwd=root, capture_output=True, text=True, timeout=600,
                            env={**env, "RL4LLM_AUTOGRADER_ROOT": str(root), "RL4LLM_PYTHON": sys.executable})
    assert graded.returncode == 0, graded.stderr[-3000:]
    results = _load_results(root / "results" / "results.json")
    assert contract_problems(results) == [] and results["score"] == results["extra_data"]["max_score"]
    assert _store(store) == before  # every reference outcome was read, none computed or rewritten
    assert not (tmp_path / "elsewhere").exists()  # and read from that store, not from a cold one elsewhere


def test_a_warm_up_that_cannot_grade_fails_the_set_up_saying_why(tmp_path, monkeypatch, capsys):
    from graders.engine.routes import batch, gradescope

    def broken(*_args, **_kwargs):
        raise batch.GraderError("cannot start the grading worker (/no/python)")

    monkeypatch.setattr(batch, "grade_paths", broken)
    assert gradescope.warm(tmp_path, ("9",), "en") == 1
    assert "cannot start the grading worker" in capsys.readouterr().err

    def partial(paths, out, options, **_kwargs):
        return types.SimpleNamespace(reports=[{"score": 3.0, "max_score": 7.0}])  # any score short of the maximum

    monkeypatch.setattr(batch, "grade_paths", partial)
    assert gradescope.warm(tmp_path, ("9",), "en") == 1
    assert "earned 3.0 of 7.0 points" in capsys.readouterr().err
