"""Gradescope: ``rl4llm gradescope --out autograder.zip`` and the bundle's ``run_autograder``.

The bundle holds ``setup.sh`` (a virtual environment, torch==2.13.0 CPU first,
then this kit installed from the bundled source, then :func:`warm`: the kit's own
solutions graded as ``run_autograder`` grades, which fills the reference store and
fails the set-up unless they earn every point), ``run_autograder`` and the
kit's source under ``kit/``. Gradescope unpacks it into
``/autograder/source``; ``run_autograder`` grades ``/autograder/submission``
with the same engine as ``rl4llm grade`` (hidden inputs withheld) and writes
``/autograder/results/results.json``: always, even when grading fails (a
zero score whose ``output`` says why), since Gradescope shows an opaque error
when the file is missing. ``results.json`` holds only the keys Gradescope
documents (its "Autograder Specifications"); anything else the kit's report
carries moves into ``extra_data``.

A bundle grades the modules and speaks the language it was built for
(``build_bundle(modules=..., language=...)``, ``rl4llm gradescope --module 9
--lang ru``): both are written into ``run_autograder``'s command line, so the
container's locale changes nothing, and ``results.json`` has that module's
tests and points only. Without a language the bundle speaks English.
``setup.sh`` installs with ``constraints/core.txt`` (the versions the kit's
tests passed with), so the hidden cases Hypothesis draws are the ones drawn
locally; ``RL4LLM_TORCH_WHEEL`` (a local torch file) replaces the PyTorch CPU
index (``examples/gradescope/container.sh`` uses it).

For tests, ``RL4LLM_AUTOGRADER_ROOT`` replaces ``/autograder`` and
``RL4LLM_PYTHON`` the bundle's interpreter. Choose a Gradescope base image
whose ``python3`` the pinned torch supports (e.g. Ubuntu 24.04, Python 3.12).
Gradescope runs the autograder as root, so workers run as user ``nobody``.

    python -m graders.engine.routes.gradescope run|warm [--root /autograder] [--module 8|9] [--lang en|ru]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path

from graders import course, settings
from graders.cleaner import FIELD_LIMIT, clean, say
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.text import Text

TORCH_PIN = "torch==2.13.0"
CONSTRAINTS = "constraints/core.txt"  # in the kit and in the bundle (under kit/)
DEFAULT_LANGUAGE = "en"  # a bundle built without --lang: English, whatever the container's locale
BUNDLED = ("pyproject.toml", "README.md", CONSTRAINTS, "graders", "solutions", "starter")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope set-up: a virtual environment with torch (CPU) first, then this kit from the bundled source,
# every other package at the version the kit was tested with ({CONSTRAINTS}).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
KIT=/autograder/source/kit
PY=/autograder/venv/bin/python
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip libseccomp2
python3 -m venv /autograder/venv
"$PY" -m pip install --upgrade pip
if [ -n "${{RL4LLM_TORCH_WHEEL:-}}" ]; then   # a local torch==2.13.0 CPU wheel (examples/gradescope/container.sh)
  "$PY" -m pip install --no-deps "$RL4LLM_TORCH_WHEEL"
else
  "$PY" -m pip install --no-deps "{TORCH_PIN}" --index-url https://download.pytorch.org/whl/cpu
fi
"$PY" -m pip install -c "$KIT/{CONSTRAINTS}" -e "$KIT"   # torch's own dependencies come pinned from here too
"$PY" -m pip check
# The answers are the grading process's alone (it runs as root); workers run as user nobody and need none of
# them, so where Landlock is missing, file permissions still keep them from the learner's code.
chmod -R go-rwx "$KIT/solutions" "$KIT/graders/checks" "$KIT/graders/misconceptions"
"$PY" -c "import graders.engine.routes.grading, torch; print('rl4llm-kit ready, torch', torch.__version__)"
# the reference store, filled once here by grading the kit's own solutions as run_autograder grades (and
# checked at full marks): every submission of this image is then graded warm, without the reference's runs
export RL4LLM_CACHE="${{RL4LLM_CACHE:-/autograder/rl4llm-cache}}"
cd "$KIT" && "$PY" -m graders.engine.routes.gradescope warm --root /autograder @OPTIONS@
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grade /autograder/submission with the rl4llm-kit engine; results go to /autograder/results/results.json.
set -uo pipefail
ROOT="${RL4LLM_AUTOGRADER_ROOT:-/autograder}"
PY="${RL4LLM_PYTHON:-$ROOT/venv/bin/python}"
RESULTS="$ROOT/results/results.json"
rm -f "$RESULTS"
export RL4LLM_CACHE="${RL4LLM_CACHE:-$ROOT/rl4llm-cache}"   # filled by setup.sh (gradescope warm)
cd "$ROOT/source/kit" && "$PY" -m graders.cli doctor   # the sandbox layers of this container, in the log
"$PY" -m graders.engine.routes.gradescope run --root "$ROOT" @OPTIONS@
status=$?
if [ ! -s "$RESULTS" ]; then   # Python could not even start (a failed setup.sh?); Gradescope still needs it
  mkdir -p "$ROOT/results"
  MESSAGE="@NOT_STARTED@"
  printf '{"score": 0.0, "output": "%s", "visibility": "visible", "stdout_visibility": "hidden", "tests": []}\\n' \\
    "$MESSAGE" > "$RESULTS"
fi
exit "$status"
"""
# the keys of results.json that Gradescope documents (top level, and per test)
RESULTS_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
                "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
             "visibility", "extra_data"}


TEXT = {
    "not_started": Text("The autograder could not start, so this submission was not graded; please tell the course "
                        "staff.",
                        "Автогрейдер не смог запуститься, поэтому эта работа не проверена; сообщите, пожалуйста, "
                        "преподавателям."),
    "not_graded": Text("The autograder could not grade this submission: {message}",
                       "Автогрейдер не смог проверить эту работу: {message}"),
    "internal": Text("internal grader error ({name}); please tell the course staff",
                     "внутренняя ошибка грейдера ({name}); сообщите, пожалуйста, преподавателям"),
}


class BundleError(ValueError):
    """A bundle that cannot be built as asked (an unknown module or language, an --out that is a folder)."""


def _modules(modules) -> tuple[str, ...]:
    """The module numbers a bundle grades, in course order (``None``: every module)."""
    if modules is None:
        return course.NUMBERS
    try:
        chosen = {course.module(name).number for name in ([modules] if isinstance(modules, (str, int))
                                                          else modules)}
    except ValueError as error:
        raise BundleError(str(error)) from None
    if not chosen:
        raise BundleError("no module chosen; the course has modules " + ", ".join(course.NUMBERS))
    return tuple(number for number in course.NUMBERS if number in chosen)


def _language(language) -> str:
    if language is None:
        return DEFAULT_LANGUAGE
    if language not in course.LANGUAGES:
        raise BundleError(f"unknown language {language!r}; the course speaks {', '.join(course.LANGUAGES)}")
    return language


def run_autograder_script(modules=None, language=None) -> str:
    """``run_autograder`` for a bundle of ``modules`` in ``language`` (both on its command line)."""
    modules, language = _modules(modules), _language(language)
    options = " ".join([f"--module {number}" for number in modules] + [f"--lang {language}"])
    message = TEXT["not_started"].in_(language).replace("\\", "\\\\").replace('"', '\\"')
    return RUN_AUTOGRADER.replace("@OPTIONS@", options).replace("@NOT_STARTED@", message)


def setup_script(modules=None, language=None) -> str:
    """``setup.sh`` for a bundle of ``modules`` in ``language`` (its warm-up grades as ``run_autograder`` does)."""
    modules, language = _modules(modules), _language(language)
    return SETUP_SH.replace("@OPTIONS@", " ".join([f"--module {number}" for number in modules] + [f"--lang {language}"]))


def points_of(modules=None, kit: Kit = DEFAULT_KIT) -> float:
    """The points a bundle of ``modules`` grades out of (results.json's ``extra_data.max_score``)."""
    from graders.checks import spec_for
    from graders.engine.routes.grading import Exercise

    return sum(Exercise(i, *i.split(".", 1), spec_for(i)).max_points for i in kit.exercises(_modules(modules)))


def _bundled_files(kit: Kit) -> list[tuple[Path, str]]:
    files = []
    for name in BUNDLED:
        path = kit.root / name
        if path.is_file():
            files.append((path, f"kit/{name}"))
        elif path.is_dir():
            for item in sorted(path.rglob("*")):
                # a link inside the kit (solutions/module_0X/toy_optim.py -> ../common/) travels as the file
                # it names; a link out of the kit is left out
                inside = not item.is_symlink() or item.resolve().is_relative_to(kit.root.resolve())
                if item.is_file() and inside and not SKIP_PARTS & set(item.parts) and item.suffix != ".pyc":
                    files.append((item, f"kit/{item.relative_to(kit.root).as_posix()}"))
    return files


def _write(archive: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.create_system = 3  # Unix: unzip honours the mode bits only then (a bundle built on Windows too)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_bundle(out: Path | str, kit: Kit = DEFAULT_KIT, *, modules=None, language=None) -> Path:
    """Write the autograder zip of ``modules`` (default: every one) speaking ``language`` (default: English)
    to ``out`` and return its path; :class:`BundleError` for an unknown module or language, an ``out`` that is or
    names a folder (``newdir/``), or one that cannot be written (said in one line; a zip already there is replaced
    only once the new one is whole)."""
    named_folder = isinstance(out, str) and out.endswith(("/", os.sep))
    out = Path(out)
    script = run_autograder_script(modules, language)  # refuses bad values before anything is written
    if out.is_dir() or named_folder:
        raise BundleError(f"--out {out}/ is a folder; give the zip file's name, e.g. {out / 'autograder.zip'}")
    if not (kit.root / CONSTRAINTS).is_file():
        raise BundleError(f"{kit.root / CONSTRAINTS} is missing: setup.sh installs with it")
    partial = out.with_name(f".{out.name}.writing")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(partial, "w") as archive:
            _write(archive, "setup.sh", setup_script(modules, language).encode(), 0o755)
            _write(archive, "run_autograder", script.encode(), 0o755)
            for path, name in _bundled_files(kit):
                _write(archive, name, path.read_bytes(), 0o644)
        os.replace(partial, out)
    except OSError as error:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise BundleError(f"--out {out} cannot be written ({error.strerror or error}); nothing else was changed") \
            from None
    return out


def _failure_results(message: str, language: str = DEFAULT_LANGUAGE) -> dict:
    return {"score": 0.0, "output": TEXT["not_graded"].in_(language, message=message),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def _documented_only(entry: dict, keys: set[str]) -> dict:
    """``entry`` with every key Gradescope does not document moved into its ``extra_data``."""
    kept = {key: value for key, value in entry.items() if key in keys}
    extra = {key: value for key, value in entry.items() if key not in keys}
    if extra:
        kept["extra_data"] = {**entry.get("extra_data", {}), **extra}
    return kept


def gradescope_contract(results: dict) -> dict:
    """The kit's ``results.json`` (:func:`graders.engine.outputs.reports.gradescope_results`) in Gradescope's
    documented keys only: e.g. the top-level ``max_score``, which Gradescope does not define, goes to
    ``extra_data``."""
    conformed = _documented_only(results, RESULTS_KEYS)
    if "tests" in conformed:
        conformed["tests"] = [_documented_only(test, TEST_KEYS) for test in conformed["tests"]]
    return conformed


def _write_results(target: Path, results: dict) -> None:
    """Gradescope's ``results.json``, every string cleaned (a failure's text may be a learner's)."""
    target.write_text(json.dumps(clean(results, FIELD_LIMIT), indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                      encoding="utf-8")


def run(root: Path, modules=None, language=None) -> int:
    """Grade ``root/submission`` (only ``modules``, feedback in ``language``) into ``root/results/results.json``."""
    from graders.engine.routes.batch import GraderError, grade_paths
    from graders.engine.outputs.reports import gradescope_results, scoreboard

    root, modules, language = Path(root), _modules(modules), _language(language)
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    target = results_dir / "results.json"
    with tempfile.TemporaryDirectory(prefix="rl4llm-gradescope-") as temp:
        try:
            result = grade_paths([root / "submission"], Path(temp) / "out", _options(modules, language),
                                 jobs=1, progress=False)
        except GraderError as error:
            _write_results(target, _failure_results(str(error), language))
            say(f"run_autograder: {error}", file=sys.stderr)
            return 2
        except Exception as error:  # noqa: BLE001 - a crash still owes Gradescope a results.json
            _write_results(target, _failure_results(TEXT["internal"].in_(language, name=type(error).__name__),
                                                    language))
            say(f"run_autograder: internal error:\n{traceback.format_exc()}", file=sys.stderr)
            return 2
        say(scoreboard(result.reports, feedback=True, language=language), end="")
        _write_results(target, gradescope_contract(gradescope_results(result.reports[0], language)))
    return 0


def _options(modules, language):
    """How a bundle grades (``run``, and ``warm`` the same way: the reference store's keys are the same)."""
    from graders.engine.routes.grading import GradeOptions

    return GradeOptions(modules=modules, hide_hidden_inputs=True, lang=language)


def warm(root: Path, modules=None, language=None, kit: Kit = DEFAULT_KIT) -> int:
    """``setup.sh``'s last step: grade the kit's own solutions of ``modules`` exactly as :func:`run` grades, so the
    reference store (``$RL4LLM_CACHE``) holds every reference outcome before the first submission; 0 when they
    earn every point, else 1 with the reason (an image that cannot grade its own answers fails its set-up)."""
    from graders.engine.routes.batch import GraderError, grade_paths

    modules, language = _modules(modules), _language(language)
    with tempfile.TemporaryDirectory(prefix="rl4llm-warm-") as temp:
        submission = Path(temp) / "submission"
        submission.mkdir()
        for learner_file in kit.files(modules):
            shutil.copy(kit.solution_path(learner_file.stem), submission / f"{learner_file.stem}.py")
        try:
            report = grade_paths([submission], Path(temp) / "out", _options(modules, language), kit=kit, jobs=1,
                                 progress=False).reports[0]
        except GraderError as error:
            say(f"gradescope warm: the kit's own solutions could not be graded in {root}: {error}", file=sys.stderr)
            return 1
    if report.get("score") != report.get("max_score"):
        say(f"gradescope warm: the kit's own solutions earned {report.get('score')} of {report.get('max_score')} "
            "points; this image does not grade as the kit does (see the log above)", file=sys.stderr)
        return 1
    say(f"rl4llm-kit: the reference store is warm ({report['score']:g} of {report['max_score']:g} points on the "
        "kit's own solutions)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.engine.routes.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="grade ROOT/submission into ROOT/results/results.json")
    p_run.add_argument("--root", default=str(settings.get("RL4LLM_AUTOGRADER_ROOT")))
    p_warm = sub.add_parser("warm", help="fill the reference store by grading the kit's own solutions (setup.sh)")
    p_warm.add_argument("--root", default=str(settings.get("RL4LLM_AUTOGRADER_ROOT")))
    p_build = sub.add_parser("build", help="write the autograder zip")
    p_build.add_argument("--out", default="autograder.zip")
    for sub_parser in (p_run, p_warm, p_build):
        sub_parser.add_argument("--module", action="append", default=None, help="8 or 9 (repeatable; default: both)")
        sub_parser.add_argument("--lang", default=None, help=f"en or ru (default: {DEFAULT_LANGUAGE})")
    args = parser.parse_args(argv)
    try:
        if args.command in ("run", "warm"):
            command = run if args.command == "run" else warm
            return command(Path(args.root), args.module, args.lang)
        say(build_bundle(args.out, modules=args.module, language=args.lang))
    except BundleError as error:
        say(f"python -m graders.engine.routes.gradescope {args.command}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
