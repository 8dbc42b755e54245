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

A :class:`Particular` is a particular as data: a template (a ``Text``), the fields that fill it,
and which of those fields are *data* (values a check or the learner's code produced) rather than the
kit's own words. It is a ``Text`` whose every language is rendered from the same fields, and
``withheld_in`` renders it with each data field replaced, which is how hide mode drops what a learner's
code made without reading any text back::

    said = Particular("compare_values", COMPARE["compare_values"], data=("expected", "got"), expected="1", got="2")
    said.in_("ru")             # "ожидалось: 1, получено: 2"
    said.withheld_in("en", W)  # "expected <W>, got <W>"

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


class Particular(Text):
    """A particular as data: ``key`` (its template's name in the kit's tables), ``template`` (a Text),
    ``fields`` (str, int, float, a Text or another Particular) and ``data``: the names of the fields that are values
    (a check's or the learner's), never the kit's words. The English rendering is the string itself."""

    __slots__ = ("key", "template", "fields", "data")

    def __new__(cls, key: str, template: Text, /, data=(), **fields) -> Particular:
        if not isinstance(template, Text):
            raise TypeError(f"a Particular needs its template as a Text, got {type(template).__name__} for {key!r}")
        unknown = set(data) - set(fields)
        if unknown or placeholders(template) != set(fields):
            raise ValueError(f"{key!r}: the template names {sorted(placeholders(template))}, the fields are "
                             f"{sorted(fields)} (data {sorted(data)})")
        rendered = {language: template.translations[language].format(**_fields_in(fields, language))
                    for language in LANGUAGES}
        said = str.__new__(cls, rendered["en"])
        said.translations, said.key, said.template = rendered, key, template
        said.fields, said.data = dict(fields), tuple(data)
        return said

    def in_(self, language: str, **fields) -> str:
        """This particular in ``language`` (English for a language the course lacks); it is filled in already."""
        if fields:
            raise TypeError(f"{self.key!r} is filled in already; it takes no fields")
        return self.translations.get(language, self.translations["en"])

    def withheld_in(self, language: str, mark: Text) -> str:
        """This particular in ``language`` with every data field, here and in the Particulars it holds, replaced by
        ``mark`` (read in that language): only the kit's words are left."""
        fields = {name: mark if name in self.data else value for name, value in self.fields.items()}
        template = self.template.translations.get(language, self.template.translations["en"])
        return template.format(**_fields_in(fields, language, mark))

    def __reduce__(self):  # pickles (and copies) as itself: key, template, data and fields
        return (_particular_again, (self.key, self.template, self.data, self.fields))

    def __repr__(self) -> str:
        return f"Particular({self.key!r}, {self.fields!r}, data={self.data!r})"


def _particular_again(key: str, template: Text, data: tuple, fields: dict) -> Particular:
    return Particular(key, template, data, **fields)


def _fields_in(fields: dict, language: str, mark: Text | None = None) -> dict:
    """``fields`` ready to fill a template in ``language``: a Particular read (withheld when ``mark`` is given), a
    Text read, anything else as it is."""
    out = {}
    for name, value in fields.items():
        if isinstance(value, Particular) and mark is not None:
            out[name] = value.withheld_in(language, mark)
        elif isinstance(value, Text):
            out[name] = value.in_(language)
        else:
            out[name] = value
    return out


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
