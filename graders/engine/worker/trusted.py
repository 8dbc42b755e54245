"""A worker's trusted process: a harness's trusted cases (the toy experiments), with no learner code in it.

For a group of exercises whose harness has a trusted part (``Harness(trusted=...)``), the worker's parent
forks this process beside the learner's child (:meth:`graders.engine.worker.parent.Parent.run_child`). It
reads the trusted part (``JOB_DIR/trusted_<i>.json``: the trusted function's source, its prelude and the
given modules it runs) before it confines itself exactly as a child does, loads its given modules, and
never loads a learner file. Each time the learner's child reaches a trusted case it says ``ready``; this
process runs the case's trusted function with :class:`graders.engine.worker.served.Remote` as ``fn`` (each
call answered by the child) and reports the case's outcome to the parent on its own pipe (``{"served":
exercise, "position": case, "result": ..., "arrays": ...}``), then ends the case for the child. The
parent attaches the reports to the exercise's ``done`` event (``served``); the grader takes a trusted
case's value only from there. The learner's child holds no end of this process's pipe to the parent.
"""

from __future__ import annotations

import json
import os

from graders.engine.judging import calls
from graders.engine.values import bundles, codec
from graders.engine.values.kit_messages import KitError
from graders.engine.worker import served
from graders.engine.worker.child import Child, describe_exception
from graders.engine.worker.process import MAX_CHILD_BYTES, complete_events, dumps


class Trusted(Child):
    """The trusted cases of a child's exercises, in this process, with the learner's function served by the child."""

    def __init__(self, parent, indices: list[int], scratch, write_fd: int, shared, channel) -> None:
        super().__init__(parent, indices, "", scratch, write_fd, shared, channel)
        self.trusted = {number: json.loads((parent.job_dir / f"trusted_{index}.json").read_text(encoding="utf-8"))
                        for number, index in enumerate(indices)
                        if (parent.job_dir / f"trusted_{index}.json").exists()}

    def run(self) -> None:
        exercises = list(self.shared.exercises)
        given = {name for part in self.trusted.values() for name in part.get("given", ())}
        self.enter(given, learner_files=False)
        self.load_given(sorted(given))
        expected = [(number, position) for number, (exercise, _) in enumerate(exercises)
                    if number in self.trusted for position in calls.trusted_positions(exercise)]
        while expected:
            message = self.channel.read()
            if not (isinstance(message, dict) and isinstance(message.get("ready"), list)):
                return  # the child ended (or wrote what no child of the kit writes): nothing more to run
            where = tuple(message["ready"])
            if where not in expected:
                return
            del expected[:expected.index(where) + 1]
            number, position = where
            exercise, _ = exercises[number]
            self.run_trusted(exercise, number, position)
            self.channel.write({"end": [number, position]})

    def run_trusted(self, exercise: dict, number: int, position: int) -> None:
        """One trusted case: its trusted function with the served learner function; its outcome to the parent."""
        case = exercise["cases"][position]
        call = {**exercise["call"], "trusted": self.trusted[number]}
        encoder = codec.Encoder(f"t{position}_")
        try:
            args = tuple(codec.decode(case["args"], {}, make_tensor=codec.make_torch_tensor))
            kwargs = codec.decode(case["kwargs"], {}, make_tensor=codec.make_torch_tensor)
            raw = calls.call_case(call, served.Remote(self.channel), None, self.starter, args, kwargs)
            outcome = {"outcome": "ok", "value": encoder.encode(codec.normalise(raw)), "type": codec.type_of(raw),
                       # the case's own inputs (a check keyword and its options), which the learner never saw
                       "inputs_after": encoder.encode(codec.as_input_specs((args, kwargs)))}
        except served.ServedError as error:
            outcome = {"outcome": "raised", "exception": error.exception if isinstance(error.exception, dict)
                       else describe_exception(KitError("toy_stopped", reason=error.kit_said), self.files_dir)}
        except BaseException as exc:  # noqa: BLE001 - what the learner's values made the toy raise
            outcome = {"outcome": "raised", "exception": describe_exception(exc, self.files_dir)}
        self.report(served=number, position=position, result=dumps({"cases": [outcome]}),
                    arrays=bundles.pack_blob(encoder.arrays))


class TrustedReports:
    """What the trusted process reports on its pipe: per exercise number, its served cases' outcomes, read as
    they come (so it never blocks on a full pipe) and taken when the child's result for the exercise comes."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.fds = [] if fd is None else [fd]
        self.buffer = bytearray()
        self.size = 0
        self.cases: dict[int, list[dict]] = {}
        self.layers: dict | None = None  # its sandbox report, until the parent has passed it on
        self.reported = False
        if fd is not None:
            os.set_blocking(fd, False)

    def read(self) -> None:
        """Everything the trusted process has written so far (at most MAX_CHILD_BYTES in all)."""
        while self.fds:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            self.size += len(chunk)
            if not chunk or self.size > MAX_CHILD_BYTES:
                self.close()
                return
            self.buffer += chunk
            for event in complete_events(self.buffer):
                if "sandbox" in event and not self.reported and isinstance(event["sandbox"], dict):
                    self.layers, self.reported = dict(event["sandbox"]), True
                if isinstance(event.get("served"), int):
                    self.cases.setdefault(event["served"], []).append(
                        {"position": event.get("position"), "result": event.get("result"),
                         "arrays": event.get("arrays")})

    def take(self, number: int) -> list[dict] | None:
        """The served cases of the child's exercise ``number`` (None: these exercises have no trusted process)."""
        if self.fd is None:
            return None
        self.read()
        return self.cases.pop(number, [])

    def close(self) -> None:
        if self.fds:
            os.close(self.fd)
            self.fds = []
