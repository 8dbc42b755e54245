"""What a seed prints, in the learner's language (``rl4llm run``).

The seeds print prose (``print("beta=1 optimum:", ...)``), show tables whose
headers, index labels and cells hold prose ("moderate DPO", "до RL, train"),
and print Python values (dicts, JSON). :mod:`graders.walkthrough.run` passes every
string a seed prints or shows through :func:`translate`, so the run speaks the
language chosen with ``--lang``:

- prose and labels are looked up in ``SEED_LINES`` (the printed lines and
  table texts) and :data:`graders.walkthrough.figures.SEED_TEXT` (the figures' labels);
- a column header that is a name (one word or snake_case: ``loss``,
  ``expected_reward``) is the code's name, as in the Russian course notebook,
  and stays; a header in words (``draws for 100 informative prompts``), an
  index label and a table cell are translated;
- a text neither table lists is the same in every language: a code identifier
  (``original_grpo``), a symbol (``P_info, G=8``), a path, or the toy tasks'
  own words (the DPO toy's vocabulary is English in both courses);
- Python values the seed prints as values (a dict of results, a JSON dump) are
  code and stay as Python writes them, except the real-model branch's pinned
  library versions, which :func:`software_snapshot` says in words, with what
  is installed here (the branch is off, so none of it is used).

``tests/test_walkthrough_lines.py`` runs both seeds in both languages and
checks that no English prose is left in a Russian run, and no Cyrillic in an
English one.
"""

from __future__ import annotations

from importlib import metadata

from graders.walkthrough.figures import SEED_TEXT
from graders.text import Text

# A seed's text (as the seed writes it) -> the text in every language. Module 8's seed is English,
# Module 9's Russian; each entry keeps the seed's own text in its language.
SEED_LINES = {
    # Module 8: printed lines
    "beta=1 optimum:": Text("beta=1 optimum:", "оптимум при beta=1:"),
    "sum of active shaped rewards:": Text("sum of active shaped rewards:",
                                          "сумма наград на активных токенах:"),
    "teacher-forced KL on chosen prefixes:": Text("teacher-forced KL on chosen prefixes:",
                                                  "KL при teacher forcing на префиксах выбранных ответов:"),
    "teacher-forced KL on rejected prefixes:": Text("teacher-forced KL on rejected prefixes:",
                                                    "KL при teacher forcing на префиксах отвергнутых ответов:"),
    "constrained Lagrangian:": Text("constrained Lagrangian:", "лагранжиан с ограничениями:"),
    "Inspect feedback, reference anchor, normalization, and constraints before choosing a method.": Text(
        "Inspect feedback, reference anchor, normalization, and constraints before choosing a method.",
        "Прежде чем выбрать метод, посмотрите на вид обратной связи, опорную модель, нормировку и ограничения."),
    # Module 8: table cells
    "reference": Text("reference", "опорная модель"),
    "moderate DPO": Text("moderate DPO", "умеренный DPO"),
    "high-pressure DPO": Text("high-pressure DPO", "DPO с сильным давлением"),
    "no": Text("no", "нет"),
    "pairs": Text("pairs", "пары"),
    "pairs + chosen NLL": Text("pairs + chosen NLL", "пары + NLL выбранного"),
    # Module 9: the verifier's examples (prose around the boxed answer the verifier reads)
    r"Final: \\boxed{3/7}": Text(r"Final: \\boxed{3/7}", r"Ответ: \\boxed{3/7}"),
    "The reference number 42 is mentioned, but the answer is 41": Text(
        "The reference number 42 is mentioned, but the answer is 41",
        "Эталонное число 42 упомянуто, но ответ 41"),
    r"First \\boxed{2}, then corrected: \\boxed{3}": Text(r"First \\boxed{2}, then corrected: \\boxed{3}",
                                                         r"Сначала \\boxed{2}, потом исправлено: \\boxed{3}"),
    "No numerical answer": Text("No numerical answer", "Числового ответа нет"),
    # Module 9: a table header and cells
    "draws for 100 informative prompts": Text("draws for 100 informative prompts",
                                              "попыток на 100 информативных промптов"),
    "correct": Text("correct", "верно"),
    "wrong": Text("wrong", "неверно"),
}

SNAPSHOT = {
    "pinned": Text("The real-model branch pins {pins}.", "Ветвь с реальной моделью закрепляет версии {pins}."),
    "installed": Text("Installed here: {found}.", "Установлено здесь: {found}."),
    "nothing": Text("none of them is installed here", "ни одна из них здесь не установлена"),
    "absent": Text("not installed: {names}", "не установлены: {names}"),
}


def translate(text: str, language: str) -> str:
    """``text`` (a string a seed prints, shows in a table or puts on a figure) in ``language``."""
    found = SEED_LINES.get(text)
    if found is None:
        found = SEED_TEXT.get(text)
    return found.in_(language) if found is not None else text


def software_snapshot(snapshot: dict, language: str) -> str:
    """The real-model branch's pinned versions in words, and which of those libraries are installed here.

    ``snapshot``: the seed's ``SOFTWARE_SNAPSHOT`` (library -> version; ``model`` -> the Hub id).
    """
    libraries = {name: str(version) for name, version in snapshot.items() if name != "model"}
    pins = ", ".join(f"{name}=={version}" for name, version in libraries.items())
    if "model" in snapshot:
        pins += f", {snapshot['model']}"
    installed, absent = [], []
    for name in libraries:
        try:
            installed.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            absent.append(name)
    if not installed:
        found = SNAPSHOT["nothing"].in_(language)
    else:
        found = ", ".join(installed)
        if absent:
            found += "; " + SNAPSHOT["absent"].in_(language, names=", ".join(absent))
    return SNAPSHOT["pinned"].in_(language, pins=pins) + " " + SNAPSHOT["installed"].in_(language, found=found)


def is_dump(values: tuple) -> bool:
    """Whether a ``print`` shows a raw Python value rather than prose: one dict (a config, a metrics dict) or one
    JSON text (``json.dumps`` of token ids). ``rl4llm run`` hides these unless ``--verbose``."""
    if len(values) != 1:
        return False
    value = values[0]
    return isinstance(value, dict) or (isinstance(value, str) and value.lstrip()[:1] in ("{", "["))


def install(namespace: dict, language: str, shown: list, hidden: list | None = None) -> None:
    """Make the seed's ``display()`` and ``print()`` speak ``language``; ``shown`` collects every table shown;
    with ``hidden`` (a list), a print of a raw value (:func:`is_dump`) is counted there instead of printed.

    ``display`` shows a translated copy of a table (its index labels, its string cells and its headers in
    words) and appends the table as the seed made it to ``shown``; ``print`` translates each string it is
    given and says the real-model branch's ``SOFTWARE_SNAPSHOT`` in words.
    """
    import builtins

    import IPython.display

    original = IPython.display.display

    def words(key):
        return translate(key, language) if isinstance(key, str) else key

    def relabel(value):
        if not (hasattr(value, "rename") and hasattr(value, "index") and hasattr(value, "columns")):
            return value
        shown.append(value)
        table = value.rename(index=words, columns=lambda key: words(key) if isinstance(key, str) and " " in key
                             else key)
        return table.map(words) if hasattr(table, "map") else table.applymap(words)

    def display(*objects, **kwargs):
        return original(*(relabel(value) for value in objects), **kwargs)

    def seed_print(*values, **kwargs):
        snapshot = namespace.get("SOFTWARE_SNAPSHOT")
        if hidden is not None and is_dump(values) and values[0] is not snapshot:
            hidden.append(values[0])
            return
        said = [software_snapshot(value, language) if value is snapshot and isinstance(value, dict)
                else words(value) for value in values]
        builtins.print(*said, **kwargs)

    IPython.display.display = display
    namespace["print"] = seed_print
