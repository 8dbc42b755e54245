"""A batch's submissions read ahead of their grading, in order, in a thread of their own.

Reading a submission (:func:`graders.engine.intake.submission.discover`: the capped reader, and for notebooks a
budgeted child that reduces them) takes a notebook about 0.25 s, most of it in that child. Read where it is graded,
it sat between one submission's workers and the next's; read ahead, it overlaps the job's preparation and the
grading of the submissions before it. At most ``ahead`` submissions are read and not yet taken, so a class of
large submissions never sits in memory at once (each is within the reader's caps). Each submission is read
alone, by the same code as before: nothing one learner sends changes what is read for another.
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class ReadAhead(Generic[T]):
    """``read(0)``, ``read(1)``, ... in a thread of its own, at most ``ahead`` results waiting; :meth:`take`
    hands each out (raising what its ``read`` raised). :meth:`stop` ends the thread after the read in hand."""

    def __init__(self, count: int, read: Callable[[int], T], ahead: int) -> None:
        self._read, self._ahead = read, max(1, ahead)
        self._results: dict[int, tuple[bool, object]] = {}
        self._taken = 0
        self._stopped = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, args=(count,), name="read-ahead", daemon=True)
        self._thread.start()

    def _run(self, count: int) -> None:
        for index in range(count):
            with self._changed:
                while not self._stopped and index - self._taken >= self._ahead:
                    self._changed.wait()
                if self._stopped:
                    return
            try:
                found: tuple[bool, object] = (True, self._read(index))
            except BaseException as error:  # noqa: BLE001 - raised again where it is taken
                found = (False, error)
            with self._changed:
                self._results[index] = found
                self._changed.notify_all()

    def take(self, index: int) -> T:
        """The result of ``read(index)``, once read; raises what it raised, or ``RuntimeError`` once stopped."""
        with self._changed:
            while index not in self._results:
                if self._stopped:
                    raise RuntimeError("reading was stopped")
                self._changed.wait()
            ok, value = self._results.pop(index)
            self._taken += 1
            self._changed.notify_all()
        if not ok:
            raise value  # type: ignore[misc]
        return value  # type: ignore[return-value]

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._results.clear()
            self._changed.notify_all()
