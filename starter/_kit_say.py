"""The learner's language, for the public tests' own failure messages: ``say("english", "русский")``.

``conftest.py`` loads this file before any test module, so a public test writes

    from _kit_say import say

    assert loss.ndim == 0, say("return a 0-dim tensor", "верните тензор размерности 0")

The language is read at each call, as ``conftest.py``'s lines read it: ``RL4LLM_LANG``
(``en`` or ``ru``; ``ru_RU.UTF-8`` reads as ``ru``), else the first of the locale's
``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set, else English.

Written by hand (the kit's build does not generate it).
"""

from __future__ import annotations

import os

LANGUAGES = ("en", "ru")  # the course's languages (graders/course.py; a kit test keeps the two equal)


def language(environ=None) -> str:
    """``RL4LLM_LANG`` (``ru_RU.UTF-8`` reads as ``ru``), else the first of LC_ALL, LC_MESSAGES, LANG set, else en."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("RL4LLM_LANG", "").strip().lower()[:2]
    if chosen in LANGUAGES:
        return chosen
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:
            code = value.strip().lower()[:2]
            return code if code in LANGUAGES else "en"
    return "en"


def say(en: str, ru: str) -> str:
    """``en`` or ``ru``: the text in the learner's language, as set now."""
    return {"en": en, "ru": ru}[language()]
