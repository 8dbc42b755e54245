"""The layout table of graders/ in docs/design.md and the tree agree: every path it names exists, every module is named."""

from __future__ import annotations

import re

from graders.paths import REPO_ROOT

README = REPO_ROOT / "docs" / "design.md"
LISTED_FOLDERS = ("graders", "graders/engine", "graders/build", "graders/capstone", "graders/walkthrough", "devtools",
                 "devtools/benchmark", *(f"graders/engine/{package}" for package in (
    "values", "sandbox", "worker", "judging", "intake", "outputs", "routes", "nbgrader")))  # every module and package in these is named


def _layout_paths() -> set[str]:
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- layout:begin -->", 1)[1].split("<!-- layout:end -->", 1)[0]
    paths: set[str] = set()
    for row in block.splitlines():
        if not row.startswith("| `"):
            continue
        first = row.split("|")[1]
        names = re.findall(r"`([^`]+)`", first)
        folder = names[0].rsplit("/", 1)[0] if "/" in names[0].rstrip("/") else ""
        for name in names:  # `graders/engine/routes/batch.py`, `grading.py`: later names share the first one's folder
            path = name if "/" in name.rstrip("/") or not folder else f"{folder}/{name}"
            paths.add(path.rstrip("/"))
    return paths


def _tree() -> set[str]:
    found = set()
    for folder in LISTED_FOLDERS:
        for entry in (REPO_ROOT / folder).iterdir():
            if entry.name.startswith(("_", ".")):
                continue
            if entry.suffix == ".py" or entry.is_dir():
                found.add(f"{folder}/{entry.name}")
    return found


def test_every_path_in_the_layout_table_exists():
    missing = sorted(path for path in _layout_paths() if not (REPO_ROOT / path).exists())
    assert not missing, f"docs/design.md's layout table names paths that do not exist: {missing}"


def test_every_module_of_graders_is_in_the_layout_table():
    listed = _layout_paths()
    unlisted = sorted(path for path in _tree() if path not in listed)
    assert not unlisted, f"docs/design.md's layout table does not name: {unlisted}"


def _tracked_text_files() -> list:
    import subprocess
    names = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    found = []
    for name in names.splitlines():
        path = REPO_ROOT / name
        if path.suffix in {".py", ".md", ".sh", ".toml", ".txt", ".cfg", ".sbatch", ".yaml", ".yml", ".ipynb"} \
                or name == ".ci/run":
            if path.is_file():
                found.append(path)
    return found


def test_nothing_in_the_repository_points_outside_it():
    """A clone is understood without the workplace's notes: no path to a folder beside the checkout."""
    outside = re.compile(r"\.\./shared\b|/work/shared\b|/work/\.library\b|parent\s*/\s*\"shared\"")
    hits = [f"{path.relative_to(REPO_ROOT)}:{number}"
            for path in _tracked_text_files() if path.name != "test_layout.py"
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if outside.search(line)]
    assert not hits, f"these lines point outside the repository (say it in docs/ instead): {hits}"


def test_every_relative_link_of_the_docs_resolves():
    """README.md and docs/*.md link to files that exist (anchors and web links aside)."""
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://|#|mailto:", target):
                continue
            if not (page.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{page.relative_to(REPO_ROOT)} -> {target}")
    assert not broken, f"broken links: {broken}"


def test_the_readme_fits_a_screen_or_two():
    """What it is, the two commands, the three routes, links: the depth lives in docs/ (style rule 18)."""
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 90, f"README.md has {len(lines)} lines; move the detail to a docs/ page"
    for page in ("learners.md", "instructors.md", "security.md", "capstone.md", "contributing.md",
                 "design.md", "style.md", "timings.md", "settings.md"):
        assert (REPO_ROOT / "docs" / page).is_file(), f"docs/{page} is missing"


def test_no_file_of_graders_is_over_400_lines():
    """Files that do one job (style rule 5): split a longer one by job, not by line count."""
    long = {str(path.relative_to(REPO_ROOT)): n for path in sorted((REPO_ROOT / "graders").rglob("*.py"))
            if "__pycache__" not in path.parts and (n := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"over 400 lines: {long}"
