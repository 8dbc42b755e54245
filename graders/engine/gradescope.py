"""Gradescope: ``rl4llm gradescope --out autograder.zip`` and the bundle's ``run_autograder``.

The bundle holds ``setup.sh`` (a virtual environment, torch==2.13.0 CPU first,
then this kit installed from the bundled source), ``run_autograder`` and the
kit's source under ``kit/``. Gradescope unpacks it into
``/autograder/source``; ``run_autograder`` grades ``/autograder/submission``
with the same engine as ``rl4llm grade`` (hidden inputs withheld) and writes
``/autograder/results/results.json``.

For tests, ``RL4LLM_AUTOGRADER_ROOT`` replaces ``/autograder`` and
``RL4LLM_PYTHON`` the bundle's interpreter. Choose a Gradescope base image
whose ``python3`` the pinned torch supports (e.g. Ubuntu 24.04, Python 3.12).
Gradescope runs the autograder as root, so workers run as user ``nobody``.

    python -m graders.engine.gradescope run [--root /autograder]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

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
cd "$ROOT/source/kit"
"$PY" -m graders.cli doctor || true   # the sandbox layers of this container, in the autograder log
exec "$PY" -m graders.engine.gradescope run --root "$ROOT"
"""


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


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``."""
    from graders.engine.batch import GraderError, grade_paths
    from graders.engine.grading import GradeOptions
    from graders.engine.reports import scoreboard

    root = Path(root)
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    target = results_dir / "results.json"
    with tempfile.TemporaryDirectory(prefix="rl4llm-gradescope-") as temp:
        try:
            result = grade_paths([root / "submission"], Path(temp) / "out",
                                 GradeOptions(hide_hidden_inputs=True), jobs=1, progress=False)
        except GraderError as error:
            target.write_text(json.dumps(_failure_results(str(error)), indent=2), encoding="utf-8")
            print(f"run_autograder: {error}", file=sys.stderr)
            return 2
        print(scoreboard(result.reports, feedback=True), end="")
        shutil.copyfile(Path(temp) / "out" / result.names[0] / "results.json", target)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.engine.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="grade ROOT/submission into ROOT/results/results.json")
    p_run.add_argument("--root", default=os.environ.get("RL4LLM_AUTOGRADER_ROOT", "/autograder"))
    p_build = sub.add_parser("build", help="write the autograder zip")
    p_build.add_argument("--out", default="autograder.zip")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(Path(args.root))
    print(build_bundle(Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
