"""Which language of the course (``graders.course.LANGUAGES``) a learner-facing command speaks.

One setting chooses it: ``RL4LLM_LANG`` (``en`` or ``ru``; ``ru_RU.UTF-8``
reads as ``ru``), else the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, the
first one set, as POSIX reads them), else English. A command's ``--lang``
overrides both. A ``RL4LLM_LANG`` that names no language of the course is ignored, and a
warning says so once per process, in English and Russian, on stderr (:func:`warn_unknown`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from graders import settings
from graders.course import LANGUAGES

ENV_VAR = "RL4LLM_LANG"
FALLBACK = "en"


def _language_of(value: str) -> str | None:
    """``"ru"`` for ``ru``, ``RU``, ``ru_RU.UTF-8``; ``None`` when the course has no such language."""
    code = value.strip().lower()[:2]
    return code if code in LANGUAGES else None


_WARNED: set[str] = set()  # the unknown values already warned about in this process


def warn_unknown(value: str, stream=None) -> bool:
    """Say once per process (per value), in English and Russian, that ``RL4LLM_LANG=value`` names no language of
    the course and is ignored; ``True`` when it was said now."""
    from graders.text import Text  # the learner bundle ships this module and graders/text.py, not the engine

    said = Text("RL4LLM_LANG={value} is not a language of the course (en, ru) and is ignored",
                "RL4LLM_LANG={value}: такого языка в курсе нет (en, ru), значение не учитывается")
    value = value.strip()
    if not value or _language_of(value) or value in _WARNED:
        return False
    _WARNED.add(value)
    shown = repr(value)[1:-1][:40]
    print(" / ".join(said.in_(language, value=shown) for language in LANGUAGES),
          file=stream or sys.stderr, flush=True)
    return True


def default_language(environ: Mapping[str, str] | None = None) -> str:
    """The language from ``RL4LLM_LANG``, else the locale's, else English (an unknown ``RL4LLM_LANG`` warns once)."""
    environ = os.environ if environ is None else environ
    chosen = _language_of(settings.get(ENV_VAR, environ))
    if chosen:
        return chosen
    warn_unknown(str(settings.raw(ENV_VAR, environ) or ""))
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:  # the first one set decides, even when it names a language the course lacks
            return _language_of(value) or FALLBACK
    return FALLBACK
