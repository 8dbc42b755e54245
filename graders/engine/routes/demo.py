"""``rl4llm demo``: grade the bundled example submissions and print the scoreboard with feedback.

Three submissions, assembled at run time in a temporary folder so that none
of them can drift from the kit:

- ``correct``: copies of the reference solution files (full marks);
- ``untouched_starter``: copies of the starter files (0, every exercise says
  "not implemented yet");
- ``typical_mistakes``: the reference files with the wrong definitions of
  ``graders/examples/typical_mistakes/<file stem>.overrides.py`` appended (a later
  ``def`` overrides the right one), so a few exercises lose points and the
  feedback names the misconception.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from graders.cleaner import say
from graders.engine.judging.kit import DEFAULT_KIT, EXAMPLES_DIR, Kit

MISTAKES_DIR = EXAMPLES_DIR / "typical_mistakes"


def assemble_examples(target: Path, kit: Kit = DEFAULT_KIT, modules=None) -> list[Path]:
    """Write the three example submissions under ``target``; return their folders."""
    correct, starter, mistakes = (target / "correct", target / "untouched_starter", target / "typical_mistakes")
    for folder in (correct, starter, mistakes):
        folder.mkdir(parents=True, exist_ok=True)
    for learner_file in kit.files(modules):
        solution = kit.solution_path(learner_file.stem)
        if solution.exists():
            shutil.copyfile(solution, correct / solution.name)
            overrides = MISTAKES_DIR / f"{solution.stem}.overrides.py"
            if overrides.exists():
                text = solution.read_text(encoding="utf-8").rstrip("\n") + "\n\n\n" + \
                    overrides.read_text(encoding="utf-8")
                (mistakes / solution.name).write_text(text, encoding="utf-8")
            else:
                shutil.copyfile(solution, mistakes / solution.name)
        stub = kit.starter_path(learner_file.stem)
        if stub.exists():
            shutil.copyfile(stub, starter / stub.name)
    return [correct, starter, mistakes]


def run_demo(out_dir: Path, *, jobs: int = 2, kit: Kit = DEFAULT_KIT) -> int:
    from graders.engine.routes.batch import GraderError, grade_paths
    from graders.engine.routes.grading import GradeOptions
    from graders.engine.outputs.reports import scoreboard

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rl4llm-demo-") as temp:
        paths = assemble_examples(Path(temp), kit)
        say("grading the bundled examples: correct, untouched_starter, typical_mistakes ...", flush=True)
        try:
            result = grade_paths(paths, out_dir, GradeOptions(), jobs=jobs, kit=kit)
        except GraderError as error:
            say(f"rl4llm demo: the grader could not work: {error}", file=sys.stderr)
            return 2
    say(scoreboard(result.reports, feedback=True), end="")
    from graders.classreport import build_class_report

    report = build_class_report(out_dir)["report"]
    say(f"\nreports in {out_dir}/, the class report in {report} ({time.monotonic() - started:.1f} s)")
    return 1 if result.internal_errors else 0
