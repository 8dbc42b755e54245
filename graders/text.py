"""One learner-facing text in every language of the course: :class:`Text`, and its one accessor.

Every text the kit shows a learner or an instructor (a feedback line, a check's
label, a comparison's reason, a notebook paragraph, a capstone message, a
public test's message) is a ``Text``, written where it is used or in a table of
them, its languages side by side in the order of ``graders.course.LANGUAGES``::

    LINES = {"checks_passed": Text("{passed}/{checks} checks passed.",
                                   "пройдено проверок: {passed}/{checks}.")}
    LINES["checks_passed"].in_("ru", passed=3, checks=4)

A ``Text`` *is* its English string (a ``str``), so a label keeps its English
identity in reports, caches and tests, and English output reads exactly as the
plain string did. ``in_(language, **fields)`` is the one way to read it in a
language (formatted when fields are given). Both languages must be non-empty
and name the same ``{placeholders}``; the constructor refuses anything else.

This module uses the standard library only: ``rl4llm build`` copies it into the
learner's folder as ``_kit_text.py`` (the public tests' ``say`` reads through it).
"""

from __future__ import annotations

import string

#: The languages a Text holds, in the order its constructor takes them (``graders.course.LANGUAGES``).
LANGUAGES = ("en", "ru")


def placeholders(template: str) -> set[str]:
    """The names of the ``{placeholders}`` of a format string (``"{a} of {b:g}"`` -> ``{"a", "b"}``)."""
    try:
        return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template)
                if name is not None and name != ""}
    except ValueError:  # a stray brace: the text is used literally, it has no placeholders
        return set()


class Text(str):
    """A text in every language: the English string itself, and the others in ``translations``."""

    __slots__ = ("translations",)

    def __new__(cls, en: str, ru: str) -> Text:
        given = dict(zip(LANGUAGES, (en, ru)))
        for language, value in given.items():
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a Text needs a non-empty {language!r} string, got {value!r} "
                                 f"(English: {str(en)[:60]!r})")
        if placeholders(en) != placeholders(ru):
            raise ValueError(f"the languages of a Text name different placeholders: "
                             f"en {sorted(placeholders(en))} vs ru {sorted(placeholders(ru))} in {str(en)[:60]!r}")
        text = super().__new__(cls, en)
        text.translations = {language: str(value) for language, value in given.items()}
        return text

    def in_(self, language: str, **fields) -> str:
        """This text in ``language`` (English for a language the course lacks), formatted with ``fields``."""
        chosen = self.translations.get(language, self.translations["en"])
        return chosen.format(**fields) if fields else chosen

    def __reduce__(self):  # pickles (and copies) as itself, with both languages
        return (Text, tuple(self.translations[language] for language in LANGUAGES))

    def __repr__(self) -> str:
        return f"Text({self.translations['en']!r}, {self.translations['ru']!r})"


def in_(text: str, language: str, **fields) -> str:
    """``text`` in ``language``: a :class:`Text`'s translation, a plain string as it is (both formatted)."""
    if isinstance(text, Text):
        return text.in_(language, **fields)
    return text.format(**fields) if fields else str(text)


def table_in(table, language: str):
    """A table of texts (nested dicts, lists and tuples of them) read in one ``language``: every :class:`Text`
    through its accessor, anything else as it is -- for code that fills a whole page or parser from one table."""
    if isinstance(table, dict):
        return {key: table_in(value, language) for key, value in table.items()}
    if isinstance(table, (list, tuple)):
        return type(table)(table_in(value, language) for value in table)
    return in_(table, language) if isinstance(table, str) else table
