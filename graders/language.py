"""Which language of the course (``graders.course.LANGUAGES``) a learner-facing command speaks.

One setting chooses it: ``RL4LLM_LANG`` (``en`` or ``ru``; ``ru_RU.UTF-8``
reads as ``ru``), else the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, the
first one set, as POSIX reads them), else English. A command's ``--lang``
overrides both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from graders import settings
from graders.course import LANGUAGES

ENV_VAR = "RL4LLM_LANG"
FALLBACK = "en"


def _language_of(value: str) -> str | None:
    """``"ru"`` for ``ru``, ``RU``, ``ru_RU.UTF-8``; ``None`` when the course has no such language."""
    code = value.strip().lower()[:2]
    return code if code in LANGUAGES else None


def default_language(environ: Mapping[str, str] | None = None) -> str:
    """The language from ``RL4LLM_LANG``, else the locale's, else English."""
    environ = os.environ if environ is None else environ
    chosen = _language_of(settings.get(ENV_VAR, environ))
    if chosen:
        return chosen
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:  # the first one set decides, even when it names a language the course lacks
            return _language_of(value) or FALLBACK
    return FALLBACK
