"""An unknown ``RL4LLM_LANG`` is ignored and said once, in English and Russian: on the kit's side
(:func:`graders.language.default_language`) and the learner's (``starter/_kit_say.py``); and Gradescope's top-level
output speaks to the learner in the bundle's language."""

from __future__ import annotations

import subprocess
import sys

from graders.paths import REPO_ROOT

READ_TWICE = {
    "kit": "from graders.language import default_language as f; print(f(), f())",
    "learner": "import sys; sys.path.insert(0, 'starter'); from _kit_say import language as f; print(f(), f())",
}


def _run(code: str, value: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "RL4LLM_LANG": value, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_an_unknown_language_warns_once_in_both_languages():
    for side, code in READ_TWICE.items():
        run = _run(code, "de")
        assert run.returncode == 0 and run.stdout.split() == ["en", "en"], (side, run.stderr)
        lines = [line for line in run.stderr.splitlines() if "RL4LLM_LANG" in line]
        assert len(lines) == 1, (side, run.stderr)  # once, however often it is read
        assert "is not a language of the course" in lines[0] and "такого языка в курсе нет" in lines[0]
        known = _run(code, "ru_RU.UTF-8")
        assert known.stdout.split() == ["ru", "ru"] and "RL4LLM_LANG" not in known.stderr, side


def test_gradescope_top_level_output_speaks_to_the_learner():
    from graders.engine.outputs.reports import gradescope_results

    report = {"submission": "submission", "score": 3.0, "max_score": 4.0, "exercises": [
        {"id": "m.f", "status": "passed", "points": 3.0, "max_points": 3.0, "feedback": "", "misconceptions": []},
        {"id": "m.g", "status": "failed", "points": 0.0, "max_points": 1.0, "feedback": "", "misconceptions": []}]}
    assert gradescope_results(report, "ru")["output"] == "Ваш балл: 3 из 4 (1 зачтено, 1 неверно)"
    assert gradescope_results(report, "en")["output"] == "Your score: 3 / 4 (1 passed, 1 failed)"
    assert gradescope_results(report)["output"] == "submission: 3 / 4 (1 passed, 1 failed)"  # rl4llm grade's, as ever
