"""A learner's exception as the door reads it (:mod:`graders.engine.values.door`): its report, typed.

:class:`LearnerError` is what :func:`graders.engine.worker.child.describe_exception` sends: the type, the MRO's
names, the message and where; with what the sandbox refused (:class:`Refused`) or what the kit said in place of
the message (:class:`KitSaid`, :mod:`graders.engine.values.kit_messages`), each a key and the fields its text
names, every field the learner's data, never read back as the kit's words.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec
from msgspec import Meta, Struct

from graders.engine.values.kit_messages import FIELD_LIMIT as KIT_FIELD_LIMIT, KIT_KEYS

MAX_MESSAGE = 4000  # an exception's message (the worker keeps 2000 characters)
MAX_OUTPUT = 8000  # a case's printed output (the worker keeps 4000 characters and a note)
MAX_NAME = 1000  # a type name, a "where", a stem, a dict key, a dtype
MAX_ITEMS = 10_000  # entries of an exception's MRO, of violations, of sandbox layers

Name = Annotated[str, Meta(max_length=MAX_NAME)]


REFUSALS = ("refused_process", "refused_fork", "refused_dlopen", "refused_dlsym", "refused_symlink", "refused_link",
            "refused_network", "refused_signal", "refused_path", "refused_import")  # the sandbox's (texts.DETAILS)


class Refused(Struct, forbid_unknown_fields=True):
    """What the sandbox refused (:meth:`graders.engine.sandbox.layers.Fence.refuse`): its key and the fields
    its text names; each field is the learner's data (a path, a module), never read as the kit's words."""

    what: Literal[REFUSALS]
    path: Annotated[str, Meta(max_length=MAX_MESSAGE)] = ""
    event: Name = ""
    module: Name = ""


class KitReason(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A kit message (:mod:`graders.engine.values.kit_messages`): its key and fields, each field the learner's data
    (a sys.exit code, a package name, what a served message held), never read as the kit's words."""

    key: Literal[KIT_KEYS]
    code: Annotated[str, Meta(max_length=KIT_FIELD_LIMIT)] = ""
    what: Annotated[str, Meta(max_length=KIT_FIELD_LIMIT)] = ""
    limit: Annotated[str, Meta(max_length=KIT_FIELD_LIMIT)] = ""
    detail: Annotated[str, Meta(max_length=KIT_FIELD_LIMIT)] = ""
    dtype: Annotated[str, Meta(max_length=KIT_FIELD_LIMIT)] = ""


class KitSaid(KitReason, forbid_unknown_fields=True, omit_defaults=True):
    """A kit message in place of an exception's message; a stopped toy run's says why, one level deep."""

    reason: Union[KitReason, None] = None


class LearnerError(Struct, forbid_unknown_fields=True):
    """An exception raised by learner code, as :func:`graders.engine.worker.child.describe_exception` says."""

    type: Name
    mro: Annotated[list[Name], Meta(max_length=MAX_ITEMS)]
    message: Annotated[str, Meta(max_length=MAX_MESSAGE)]
    where: Name = ""
    sandbox: bool = False
    output: Annotated[str, Meta(max_length=MAX_OUTPUT)] = ""
    refusal: Union[Refused, None] = None  # a load the sandbox refused: what it refused
    kit: Union[KitSaid, None] = None  # a message the kit wrote: what it says (kit_messages)


def kit_said_of(value) -> dict | None:
    """``value`` read as the door reads a kit message (:class:`KitSaid`), as built-ins without its empty fields;
    None where the door would refuse it. The worker's child checks what an exception carried with it before it
    travels (a malformed one, a learner's forgery, is dropped there rather than making the result unreadable)."""
    try:
        return msgspec.to_builtins(msgspec.convert(value, KitSaid))
    except Exception:  # noqa: BLE001 - anything a learner's object does while it is read is "not a kit message"
        return None
