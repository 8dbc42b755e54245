"""Gradescope: ``rl4llm gradescope --out autograder.zip`` and the bundle's ``run_autograder``.

The bundle holds ``setup.sh`` (a virtual environment, torch==2.13.0 CPU first,
then this kit installed from the bundled source), ``run_autograder`` and the
kit's source under ``kit/``. Gradescope unpacks it into
``/autograder/source``; ``run_autograder`` grades ``/autograder/submission``
with the same engine as ``rl4llm grade`` (hidden inputs withheld) and writes
``/autograder/results/results.json``: always, even when grading fails (a
zero score whose ``output`` says why), since Gradescope shows an opaque error
when the file is missing. ``results.json`` holds only the keys Gradescope
documents (its "Autograder Specifications"); anything else the kit's report
carries moves into ``extra_data``.

For tests, ``RL4LLM_AUTOGRADER_ROOT`` replaces ``/autograder`` and
``RL4LLM_PYTHON`` the bundle's interpreter. Choose a Gradescope base image
whose ``python3`` the pinned torch supports (e.g. Ubuntu 24.04, Python 3.12).
Gradescope runs the autograder as root, so workers run as user ``nobody``.

    python -m graders.engine.gradescope run [--root /autograder]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path

from graders import settings
from graders.engine.kit import DEFAULT_KIT, Kit

TORCH_PIN = "torch==2.13.0"
BUNDLED = ("pyproject.toml", "README.md", "graders", "solutions", "starter")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope set-up: a virtual environment with torch (CPU) first, then this kit from the bundled source.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --upgrade pip
/autograder/venv/bin/python -m pip install "{TORCH_PIN}" --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/python -m pip install -e /autograder/source/kit
/autograder/venv/bin/python -c "import graders.engine.grading, torch; print('rl4llm-kit ready, torch', torch.__version__)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grade /autograder/submission with the rl4llm-kit engine; results go to /autograder/results/results.json.
set -uo pipefail
ROOT="${RL4LLM_AUTOGRADER_ROOT:-/autograder}"
PY="${RL4LLM_PYTHON:-$ROOT/venv/bin/python}"
RESULTS="$ROOT/results/results.json"
rm -f "$RESULTS"
cd "$ROOT/source/kit" && "$PY" -m graders.cli doctor   # the sandbox layers of this container, in the log
"$PY" -m graders.engine.gradescope run --root "$ROOT"
status=$?
if [ ! -s "$RESULTS" ]; then   # Python could not even start (a failed setup.sh?); Gradescope still needs it
  mkdir -p "$ROOT/results"
  MESSAGE="The autograder could not start, so this submission was not graded; please tell the course staff."
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


def _bundled_files(kit: Kit) -> list[tuple[Path, str]]:
    files = []
    for name in BUNDLED:
        path = kit.root / name
        if path.is_file():
            files.append((path, f"kit/{name}"))
        elif path.is_dir():
            for item in sorted(path.rglob("*")):
                if item.is_file() and not item.is_symlink() and not SKIP_PARTS & set(item.parts) \
                        and item.suffix != ".pyc":
                    files.append((item, f"kit/{item.relative_to(kit.root).as_posix()}"))
    return files


def _write(archive: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.create_system = 3  # Unix: unzip honours the mode bits only then (a bundle built on Windows too)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_bundle(out: Path, kit: Kit = DEFAULT_KIT) -> Path:
    """Write the autograder zip to ``out`` and return its path."""
    out = Path(out)
    if out.parent:
        out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as archive:
        _write(archive, "setup.sh", SETUP_SH.encode(), 0o755)
        _write(archive, "run_autograder", RUN_AUTOGRADER.encode(), 0o755)
        for path, name in _bundled_files(kit):
            _write(archive, name, path.read_bytes(), 0o644)
    return out


def _failure_results(message: str) -> dict:
    return {"score": 0.0, "output": f"The autograder could not grade this submission: {message}",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def _documented_only(entry: dict, keys: set[str]) -> dict:
    """``entry`` with every key Gradescope does not document moved into its ``extra_data``."""
    kept = {key: value for key, value in entry.items() if key in keys}
    extra = {key: value for key, value in entry.items() if key not in keys}
    if extra:
        kept["extra_data"] = {**entry.get("extra_data", {}), **extra}
    return kept


def gradescope_contract(results: dict) -> dict:
    """The kit's ``results.json`` (:func:`graders.engine.reports.gradescope_results`) in Gradescope's
    documented keys only: e.g. the top-level ``max_score``, which Gradescope does not define, goes to
    ``extra_data``."""
    conformed = _documented_only(results, RESULTS_KEYS)
    if "tests" in conformed:
        conformed["tests"] = [_documented_only(test, TEST_KEYS) for test in conformed["tests"]]
    return conformed


def _write_results(target: Path, results: dict) -> None:
    target.write_text(json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``."""
    from graders.engine.batch import GraderError, grade_paths
    from graders.engine.grading import GradeOptions
    from graders.engine.reports import gradescope_results, scoreboard

    root = Path(root)
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    target = results_dir / "results.json"
    with tempfile.TemporaryDirectory(prefix="rl4llm-gradescope-") as temp:
        try:
            result = grade_paths([root / "submission"], Path(temp) / "out",
                                 GradeOptions(hide_hidden_inputs=True), jobs=1, progress=False)
        except GraderError as error:
            _write_results(target, _failure_results(str(error)))
            print(f"run_autograder: {error}", file=sys.stderr)
            return 2
        except Exception as error:  # noqa: BLE001 - a crash still owes Gradescope a results.json
            _write_results(target, _failure_results(f"internal grader error ({type(error).__name__}); "
                                                    "please tell the course staff"))
            print(f"run_autograder: internal error:\n{traceback.format_exc()}", file=sys.stderr)
            return 2
        print(scoreboard(result.reports, feedback=True), end="")
        _write_results(target, gradescope_contract(gradescope_results(result.reports[0])))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.engine.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="grade ROOT/submission into ROOT/results/results.json")
    p_run.add_argument("--root", default=str(settings.get("RL4LLM_AUTOGRADER_ROOT")))
    p_build = sub.add_parser("build", help="write the autograder zip")
    p_build.add_argument("--out", default="autograder.zip")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(Path(args.root))
    print(build_bundle(Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
