"""Every learner-facing text is a :class:`graders.text.Text` in every language, and no old form is left.

(a) Every ``Text`` reachable from the globals of every kit module (``graders/``,
the learner's ``starter/conftest.py`` and the generated ``_kit_*.py``: tables,
nested dicts, lists and tuples) holds every language of the course, non-empty,
with the same ``{placeholders}``; a table that holds Texts holds nothing but
Texts; every ``Text(...)`` and ``say(...)`` written with literal arguments in
``graders/``, ``starter/`` (the public tests included) and ``tests/`` has both
texts non-empty and naming the same fields; every check label of every
registered exercise is a Text; every catalogue hint is one.

(b) The old forms are gone from ``graders/`` and ``starter/``: no dict literal
keyed by a language (``{"en": ..., "ru": ...}``) or by ``(key, language)``, no
``label_ru``, ``said(``, ``Particular`` or ``spoken(`` (:data:`ALLOWED` lists the
exceptions, each with its reason). Module pages and notebooks are documents, one
file per language, and are not texts of this kind.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import string

import pytest

from graders import checks, course, text
from graders.build.hints import starter_conftest
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import all_catalogue_files, read_entries
from graders.loader import load_module
from graders.paths import REPO_ROOT, STARTER_DIR
from graders.text import Text, placeholders

OLD_NAMES = re.compile(r"\blabel_ru\b|\bsaid\(|\bSaid\b|\bspoken\(")
# path (from the repository root) -> why a dict keyed by language may stay there
ALLOWED = {
    # the learner bundle's README.md and README.ru.md: two documents, one file per language, like the module pages
    "graders/build/bundle.py": "README",
}


def _kit_module_names() -> list[str]:
    """Every module of ``graders/`` except the misconception catalogue (entries, loaded by its own loader)."""
    names = []
    for path in sorted((REPO_ROOT / "graders").rglob("*.py")):
        relative = path.relative_to(REPO_ROOT).with_suffix("")
        packages = [REPO_ROOT.joinpath(*relative.parts[:i]) for i in range(1, len(relative.parts))]
        if "misconceptions" in relative.parts[1:2] or not all((p / "__init__.py").exists() for p in packages):
            continue  # the catalogue, and folders of example submissions (not modules of the kit)
        names.append(".".join(relative.parts).removesuffix(".__init__"))
    return names


def _learner_modules() -> list:
    conftest = starter_conftest()  # loaded afresh at each call: one load for this whole file
    return [conftest, conftest.kit_text, conftest.kit_say, conftest.kit_compare, conftest.kit_course]


LEARNER = _learner_modules()


def _modules() -> list:
    return [importlib.import_module(name) for name in _kit_module_names()] + LEARNER




def _is_text(value) -> bool:
    """The kit's Text, or the learner's copy of it (starter/_kit_text.py: another class of the same source)."""
    return isinstance(value, str) and type(value).__name__ == "Text" and hasattr(value, "translations")


def _walk(value, where: str, seen: set, found: list, tables: list, depth: int = 0) -> None:
    """Collect every Text under ``value`` (dict keys and values, lists, tuples, sets) and the containers holding one."""
    if _is_text(value):
        found.append((where, value))
        return
    if depth > 8 or id(value) in seen or not isinstance(value, (dict, list, tuple, set, frozenset)):
        return
    seen.add(id(value))
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    for key, item in items:
        if _is_text(key):
            found.append((f"{where} key", key))
        _walk(item, f"{where}[{key!r}]", seen, found, tables, depth + 1)
    texts = [item for _, item in items if isinstance(item, str)]
    if any(_is_text(item) for item in texts):
        tables.append((where, [item for item in texts if not _is_text(item)]))


@functools.lru_cache(maxsize=None)
def _reachable():
    """Every Text reachable from the kit's modules, and the tables that hold texts (computed when a test first
    asks: importing every module, nbgrader's included, is not a cost of collecting the suite)."""
    found, tables, seen = [], [], set()
    for module in _modules():
        for name, value in vars(module).items():
            if not name.startswith("__"):
                _walk(value, f"{module.__name__}.{name}", seen, found, tables)
    return found, tables



def _fields(template: str) -> set[str]:
    return placeholders(template)


def test_the_accessor_speaks_the_courses_languages():
    assert text.LANGUAGES == course.LANGUAGES
    conftest = LEARNER[0]
    assert conftest.kit_text.LANGUAGES == course.LANGUAGES and conftest.kit_say.LANGUAGES == course.LANGUAGES
    sample = Text("{n} checks", "{n} проверок")
    assert sample == "{n} checks" and sample.in_("ru", n=2) == "2 проверок" and sample.in_("xx") == "{n} checks"
    assert text.in_("plain", "ru") == "plain" and text.in_(sample, "en", n=1) == "1 checks"
    for wrong in (("", "б"), ("a", " "), ("{a}", "{b}"), ("a", None)):
        with pytest.raises(ValueError):
            Text(*wrong)


def test_the_texts_are_found():
    from graders import classreport, learner_cli
    from graders.walkthrough import figures, run as walkthrough
    from graders.build.notebooks import texts as notebook_texts
    from graders.capstone.run import texts as capstone_texts
    from graders.engine.nbgrader import scoring as nbgrader_scoring
    from graders.engine.values import kit_messages, texts as engine_texts

    tables = [engine_texts.FEEDBACK, engine_texts.SCOREBOARD, engine_texts.DETAILS, engine_texts.KINDS, kit_messages.KIT_EXCEPTIONS,
              nbgrader_scoring.TEXT, capstone_texts.TEXT, notebook_texts.TEXT, notebook_texts.MODULE_TEXT,
              walkthrough.TEXT, figures.FIGURE_TEXT, classreport.TEXT, learner_cli.HELP, starter_conftest().MESSAGES]
    FOUND = _reachable()[0]
    seen = {repr(found) for _, found in FOUND}
    for table in tables:
        inner = []
        _walk(table, "", set(), inner, [])
        assert inner and all(repr(found) in seen for _, found in inner)
    assert repr(notebook_texts.HOW_TO) in seen and len(FOUND) > 500


def test_every_text_reachable_from_the_kit_has_every_language():
    for where, found in _reachable()[0]:
        assert list(found.translations) == list(course.LANGUAGES), where
        for language in course.LANGUAGES:
            assert found.in_(language).strip(), (where, language)
            assert _fields(found.in_(language)) == _fields(found), (where, language)


def test_a_table_of_texts_holds_nothing_else():
    mixed = [(where, plain) for where, plain in _reachable()[1] if plain]
    assert not mixed, f"texts without their Russian, next to Texts: {mixed[:5]}"


# ----------------------------------------------------------------------------- Text(...) and say(...) as written
def _sources() -> list:
    paths = [*(REPO_ROOT / "graders").rglob("*.py"), *STARTER_DIR.rglob("*.py"), *(REPO_ROOT / "tests").rglob("*.py")]
    return sorted(p for p in paths if ".venv" not in p.parts)


def _literal_fields(node) -> set[str] | None:
    """The fields a literal text names (an f-string's expressions; ``x.in_(...)``, ``x_ru`` read as ``x``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _fields(node.value)
    if isinstance(node, ast.JoinedStr):
        names = set()
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = part.value
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "in_":
                    value = value.func.value
                names.add(re.sub(r"_(?:en|ru)$", "", ast.unparse(value)))
        return names
    return None


def _literal_nonempty(node) -> bool:
    if isinstance(node, ast.Constant):
        return bool(node.value.strip())
    return bool(node.values)


@functools.cache  # each file parsed once for this file's scans (the cache is emptied after its last test)
def _tree(path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _written_texts():
    for path in _sources():
        source = path.read_text(encoding="utf-8")
        if "Text(" not in source and "say(" not in source:
            continue
        for node in ast.walk(_tree(path)):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("Text", "say")
                    and len(node.args) == 2 and not node.keywords):
                fields = [_literal_fields(arg) for arg in node.args]
                if None not in fields:
                    yield f"{path.relative_to(REPO_ROOT)}:{node.lineno}", node, fields


def test_every_text_written_has_both_languages_naming_the_same_fields():
    written = list(_written_texts())
    assert len(written) > 500
    for where, node, (english, russian) in written:
        assert all(_literal_nonempty(arg) for arg in node.args), where
        assert english == russian, f"{where}: en names {sorted(english)}, ru {sorted(russian)}"


# ----------------------------------------------------------------------------- labels and hints
def test_every_check_label_is_a_text():
    labelled = plain = 0
    for exercise_id in DEFAULT_KIT.exercises():
        for index, case in enumerate(checks.spec_for(exercise_id).cases()):
            assert isinstance(case.label, Text), (exercise_id, index, case.label)
            labelled += 1
            plain += case.label.in_("ru") == case.label
    assert labelled > 300 and plain < labelled / 10


def test_every_catalogue_hint_is_a_text():
    entries = [entry for path in all_catalogue_files() for entry in read_entries(path)]
    assert len(entries) >= 150
    for entry in entries:
        assert isinstance(entry.hint, Text) and all(entry.hint.in_(language).strip() for language in course.LANGUAGES)


def test_a_plain_label_is_refused_where_the_case_is_made():
    with pytest.raises(TypeError, match="'two groups' has no Russian label"):
        checks.Case(label="two groups")


# ----------------------------------------------------------------------------- (b) no old form
def _language_keyed(node: ast.Dict) -> bool:
    for key in node.keys:
        if isinstance(key, ast.Constant) and key.value in course.LANGUAGES:
            return True
        if (isinstance(key, ast.Tuple) and key.elts and isinstance(key.elts[-1], ast.Constant)
                and key.elts[-1].value in course.LANGUAGES):
            return True
    return False


def _kit_sources() -> list:
    return sorted([*(REPO_ROOT / "graders").rglob("*.py"), *STARTER_DIR.rglob("*.py")])


def test_no_table_keyed_by_language_is_left():
    found = []
    for path in _kit_sources():
        relative = str(path.relative_to(REPO_ROOT))
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Dict) and _language_keyed(node):
                found.append(f"{relative}:{node.lineno}")
    allowed = [where for where in found if where.split(":")[0] in ALLOWED]
    assert [where for where in found if where not in allowed] == [], "write {key: Text(en, ru)} instead"
    assert len(allowed) == len(ALLOWED)  # each exception is still needed


def test_no_old_name_is_left():
    found = [f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
             for path in _kit_sources()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if OLD_NAMES.search(line)]
    assert not found, found


# ----------------------------------------------------------------------------- the generated copy
def test_the_learners_copy_of_text_is_the_kits():
    generated = (STARTER_DIR / "_kit_text.py").read_text(encoding="utf-8")
    assert generated.startswith("# GENERATED by `rl4llm build`")
    assert generated.endswith((REPO_ROOT / "graders" / "text.py").read_text(encoding="utf-8"))
    copy = load_module(STARTER_DIR / "_kit_text.py", "_rl4llm_kit_text_copy")
    assert copy.Text("a {x}", "б {x}").in_("ru", x=1) == "б 1"


# ----------------------------------------------------------------------------- the capstone's texts
CAPSTONE_CODE = sorted([*(REPO_ROOT / "graders" / "capstone").glob("*.py"),
                        *(REPO_ROOT / "graders" / "capstone" / "run").glob("*.py")])
# call -> the position of its text key: text(language, KEY), say(KEY), CapstoneError(KEY), PreflightLine(status, KEY)
KEY_ARGUMENT = {"text": 1, "say": 0, "CapstoneError": 0, "PreflightLine": 1}


def _capstone_keys_named() -> dict[str, str]:
    """{text key: where} for every key the capstone's code names literally: in a text call (an ``a if c else b``
    of keys too) and in the (passed, key, values) a passport check returns."""
    named = {}
    for path in CAPSTONE_CODE:
        for node in ast.walk(_tree(path)):
            found = None
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name in KEY_ARGUMENT and len(node.args) > KEY_ARGUMENT[name]:
                    found = node.args[KEY_ARGUMENT[name]]
            elif (isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 3
                  and path.name == "passport.py" and path.parent.name == "capstone"):
                found = node.value.elts[1]
            for key in _literal_keys(found):
                named[key] = f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
    return named


def _literal_keys(expression) -> set[str]:
    """The keys an expression names: a string, or either branch of ``a if c else b`` (a built key, none)."""
    if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
        return {expression.value}
    if isinstance(expression, ast.IfExp):
        return _literal_keys(expression.body) | _literal_keys(expression.orelse)
    return set()


def test_every_capstone_text_is_in_both_languages_and_every_key_named_exists():
    from graders.capstone.run import texts as capstone_texts

    table = capstone_texts.TEXT
    assert table and all(isinstance(value, Text) for value in table.values())
    named = _capstone_keys_named()
    assert {"passport_verifier_version", "consistency_dry_run", "reeval_claim_wrong", "error_no_verifier",
            "help_verifier", "preflight_no_cuda"} <= set(named)  # the scan sees every kind of use
    missing = {key: where for key, where in named.items() if key not in table}
    assert not missing, f"keys named in the capstone's code but not in its TEXT: {missing}"
    for key, value in table.items():  # a Russian text is Russian, unless it is only names and numbers
        english, russian = value.in_("en"), value.in_("ru")
        assert re.search("[а-яё]", russian, re.IGNORECASE) or russian == english, key
        assert {f for _, f, _, _ in string.Formatter().parse(english) if f} == \
            {f for _, f, _, _ in string.Formatter().parse(russian) if f}, key
