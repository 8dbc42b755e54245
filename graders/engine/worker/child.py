"""A worker's confined child: take its cases from the parent, confine itself, load the learner file, run them.

:class:`Child` runs in a process forked by the worker's parent (:class:`graders.engine.worker.parent.Parent`,
its ``parent``) for one group of exercises; it speaks only to that parent, through its own pipe.
:class:`CappedWriter` keeps a case's printed output, :func:`describe_exception` what a learner's
exception says. How the worker is laid out: :mod:`graders.engine.worker.parent`.
"""

from __future__ import annotations

import os
import shutil
import sys
import traceback
from pathlib import Path

import numpy as np

from graders.engine.judging import calls
from graders.engine.sandbox import confine, layers as sandbox
from graders.engine.values import bundles, codec, shared_inputs
from graders.engine.values.door_errors import kit_said_of
from graders.engine.values.kit_messages import KitError, kit_message, kit_text
from graders.engine.worker.missing import MissingPackages
from graders.engine.worker.process import closed_root_folder, dumps, private_namespaces, _write_line

OUTPUT_LIMIT = 4000  # characters of printed output kept per case
NAME_LIMIT = 500  # characters of an exception's type name, each name of its MRO, and its "where"
HARNESS_PREFIX = "_rl4llm_given_"  # the harness's own copies of given modules (never in sys.modules)


class CappedWriter:
    """A text stream that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n...[{self.dropped} more characters of output dropped]"
        return out


def read_exercise(job_dir: Path, index: int) -> tuple[dict, dict]:
    """Exercise ``index``'s entry (cases, call mode) and its input arrays (``ex_<index>.json`` + ``.arrays``)."""
    return bundles.read_bundle(job_dir / f"ex_{index}")


class Child:
    """Exercises of one learner file in a forked process: take their cases from the parent, confine, load the file, run.

    A harness's exercise always has a child of its own (:meth:`Parent.groups`).
    """

    def __init__(self, parent, indices: list[int], stem: str, scratch: Path, write_fd: int, shared,
                 channel=None) -> None:
        self.parent = parent
        # the parent's shared inputs (:class:`graders.engine.worker.parent.Shared`): the exercises it read for
        # this child, and (unless the job turns it off) their array inputs in a region it reads back
        self.shared = shared
        self.indices = indices
        self.stem = stem
        self.scratch = scratch
        self.files_dir = scratch / "files"
        self.given_dir = scratch / "given"
        self.write_fd = write_fd
        self.starters: dict[str, object] = {}
        self.kept: dict[str, tuple[dict, dict]] = {}  # given module -> its kept state from the job
        self.fence: sandbox.Fence | None = None
        # the pipe pair to the trusted process that runs these exercises' trusted cases (the toy experiments):
        # this child serves the learner's function to it (graders.engine.worker.served); None: it has none
        self.channel = channel

    def report(self, **event) -> None:
        _write_line(self.write_fd, event)

    def run(self) -> None:
        exercises = list(self.shared.exercises)
        # (a trusted part is in the child's call mode only under the kit's control switch, TRUSTED_APART)
        given = [[*exercise["call"].get("given", ()), *exercise["call"].get("trusted", {}).get("given", ())]
                 for exercise, _ in exercises]
        self.enter({name for names in given for name in names})
        for names in given:
            self.load_given(names)
        module = self.load()
        if module is not None:
            for number, (exercise, inputs) in enumerate(exercises):
                self.run_exercise(module, exercise, inputs, number)

    def enter(self, needed: set[str], learner_files: bool = True) -> None:
        """Everything before the first given module loads: the scratch folder, the files, the confinement,
        the import path, the audit hook; then the sandbox report. ``needed``: the given modules whose kept
        state (an earlier batch's warm-ups) is read now, while the job can still be read."""
        parent = self.parent
        self.kept = {name: bundles.read_bundle(parent.job_dir / f"given_{name}")  # read now: confined, it cannot
                     for name in parent.job.get("given_state", ()) if name in needed}
        settings = parent.job["sandbox"]
        layers = {"namespaces": parent.namespaced, "scratch_quota": False}
        root = None  # where the closed root is built: only in a mount namespace of its own
        if parent.namespaced and private_namespaces():
            layers["scratch_quota"] = confine.mount_scratch(self.scratch, settings.get("scratch_bytes", 128 << 20))
            root = closed_root_folder(self.scratch)
            root.mkdir(mode=0o700, exist_ok=True)
        for folder in ("files", "given", "work"):
            (self.scratch / folder).mkdir(exist_ok=True)
        for source in (parent.sub_dir / "files").glob("*.py") if learner_files else ():
            shutil.copyfile(source, self.files_dir / source.name)
        for name, text in parent.job.get("given_sources", {}).items():
            (self.given_dir / f"{name}.py").write_text(text, encoding="utf-8")
        os.chdir(self.scratch / "work")
        layers = confine.confine(self.scratch, settings, layers, readable=parent.readable, root=root)
        if settings.get("landlock_required") and not layers.get("landlock_files"):
            # the grader let learner code start before loading the kit's files, counting on Landlock
            raise KitError("no_landlock")
        root = os.path.realpath(settings["kit_root"])
        self.fence = sandbox.Fence(parent.forbidden, settings["forbidden_modules"], allowed_paths=[str(self.scratch)])
        # the kit's own folder and every forbidden one (the server's working folder, say) are not on the
        # learner's import path: an innocent import must never make the import system list them; the kit's
        # given modules and the learner's own files are (given first: a learner file never stands in for one)
        sys.path[:] = [str(self.given_dir), str(self.files_dir)] + [
            p for p in sys.path if p and os.path.realpath(p) != root and not self.fence.path_is_forbidden(p)]
        sandbox.install_audit_hook(self.fence)
        self.report(sandbox=layers, identity=parent.identity)  # before any learner code runs

    def load_given(self, names) -> None:
        """The harness's own copies of the given modules it declares, loaded before any learner code runs.

        They are then taken out of ``sys.modules``: learner code finds them under no name (its own
        ``import grpo_toy`` loads another copy, from ``given/``).
        """
        from graders.loader import load_module

        files = {name: self.given_dir / f"{name}.py" for name in self.parent.job.get("given_sources", {})}
        for name in names:
            self.starters[name] = load_module(files[name], f"{HARNESS_PREFIX}{name}", given=files)
            if name in self.kept:  # an earlier batch's warm-ups of the same code
                bundles.fill_kept_state(self.starters[name], *self.kept[name])
        for key in [key for key in sys.modules if key.startswith(HARNESS_PREFIX)]:
            del sys.modules[key]

    # -- learner code -----------------------------------------------------
    def starter(self, name: str):
        """The starter's given module ``name`` as the harness loaded it (see :meth:`load_given`)."""
        if name not in self.starters:
            raise ValueError(f"the harness declares no given module {name!r} (Harness(given=...))")
        return self.starters[name]

    def load(self):
        from graders.loader import load_module

        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        error = module = None
        path = self.files_dir / f"{self.stem}.py"
        # a package the grader lacks costs only the functions that use it (graders.engine.worker.missing); the
        # kit's own packages are never stood in for
        forbidden = {name.partition(".")[0] for name in self.parent.job["sandbox"].get("forbidden_modules", ())}
        missing = MissingPackages(forbidden | {"graders", "solutions"}, str(path))
        sys.meta_path.append(missing)
        try:
            module = load_module(path, f"_rl4llm_learner_{self.stem}")
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is the learner's error
            error = describe_exception(exc, self.files_dir)
        finally:
            sys.stdout, sys.stderr = saved
            missing.loading = False  # from now on a placeholder raises on any use
            sys.meta_path.remove(missing)
        violations = self.fence.take_violations()
        if violations:
            error = {"type": "PermissionError", "mro": ["PermissionError"], "message": "", "where": "",
                     "sandbox": True, "refusal": violations[0]}
        if error:
            error["output"] = capture.text()
        self.report(loaded=error)
        return None if error else module

    def run_exercise(self, module, exercise: dict, inputs: dict, number: int = 0) -> None:
        name = exercise["function"]
        encoder = codec.Encoder()
        result: dict = {"cases": [], "missing": False, "violations": []}
        function = getattr(module, name, None)
        if not callable(function):
            result["missing"] = True  # the grader words it (the file and the function are its own)
        else:
            apart = set(calls.trusted_positions(exercise)) if self.channel is not None else set()
            for position, case in enumerate(exercise["cases"]):
                if position in apart:  # a trusted case: the trusted process runs it, this child serves
                    result["cases"].append(self.serve_case(function, number, position))
                    continue
                outcome = self.run_case(exercise, function, module, case, inputs, encoder,
                                        self.shared_views(exercise, number, position, case))
                result["cases"].append(outcome)
                if outcome.get("exception", {}).get("type") == "MemoryError":
                    # the process is near its memory limit: the remaining cases are not run
                    skipped = len(exercise["cases"]) - position - 1
                    result["cases"] += [{"outcome": "raised", "exception": outcome["exception"]}] * skipped
                    break
        result["violations"] = self.fence.take_violations()[:64]
        self.report(result=dumps(result), arrays=bundles.pack_blob(encoder.arrays))

    def serve_case(self, function, number: int, position: int) -> dict:
        """A trusted case: serve ``function`` to the trusted process while it runs the case
        (:func:`graders.engine.worker.served.serve`). The outcome is a placeholder with what the function
        printed: the grader takes the case's value from the trusted process, never from here."""
        from graders.engine.worker import served

        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        try:
            served.serve(function, self.channel, [number, position], lambda exc: describe_exception(exc, self.files_dir))
        except BaseException:  # noqa: BLE001 - the channel broke: the trusted process reports nothing for it
            pass
        finally:
            sys.stdout, sys.stderr = saved
        return {"outcome": "ok", "value": None, "type": codec.type_of(None), "output": capture.text()}

    def shared_views(self, exercise: dict, number: int, position: int, case: dict):
        """Case ``position`` of this child's exercise ``number``: its array inputs as views of the parent's
        region, one item per array node (None: decoded as before); None without a region."""
        if self.shared.region is None:
            return None
        slots = self.shared.layout[number][position]
        tensor = _shared_tensor if exercise.get("torch") else (lambda array, slot: None)
        return iter(shared_inputs.views(self.shared.region, slots, len(shared_inputs.case_slots(case)), tensor))

    def run_case(self, exercise: dict, function, module, case: dict, inputs: dict, encoder: codec.Encoder,
                 given=None) -> dict:
        make = codec.make_torch_tensor if exercise.get("torch") else None
        args = tuple(codec.decode(case["args"], inputs, make_tensor=make, given=given))
        kwargs = codec.decode(case["kwargs"], inputs, make_tensor=make, given=given)
        capture = CappedWriter()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        outcome: dict
        try:
            raw = calls.call_case(exercise["call"], function, module, self.starter, args, kwargs, case.get("answers"))
            value = codec.normalise(raw)
            outcome = {"outcome": "ok", "value": encoder.encode(value), "type": codec.type_of(raw)}
        except BaseException as exc:  # noqa: BLE001 - sys.exit inside an exercise is its error
            outcome = {"outcome": "raised", "exception": describe_exception(exc, self.files_dir)}
        finally:
            sys.stdout, sys.stderr = saved
        if outcome["outcome"] == "ok":
            # the inputs as they are after the call: the grader decides whether they changed
            try:
                outcome["inputs_after"] = encoder.encode(codec.as_input_specs((args, kwargs)))
            except (TypeError, ValueError, RuntimeError):
                outcome["inputs_after"] = None
        outcome["output"] = capture.text()
        return outcome


def _shared_tensor(array: np.ndarray, slot):
    """A tensor input on the parent's memory: ``torch.from_numpy`` of its view (no copy), as
    :func:`graders.engine.values.codec.make_torch_tensor` builds it otherwise (dtype, shape, grad)."""
    import torch

    tensor = torch.from_numpy(array)
    if slot.grad:
        tensor.requires_grad_(True)
    return tensor


def describe_exception(exc: BaseException, files: Path) -> dict:
    """Type, MRO names, message and the learner-file line where it happened; where the kit wrote the message,
    what it says as data too (``"kit"``: :mod:`graders.engine.values.kit_messages`), so that no reader of the
    report reads the message's words back."""
    kit = None
    if isinstance(exc, SystemExit):
        kit = kit_message("sys_exit", code=repr(exc.code))
    elif isinstance(exc, MemoryError):
        kit = kit_message("out_of_memory")
    else:
        try:
            message = str(exc)
            kit = kit_said_of(exc.__dict__.get("kit_said"))  # a KitError's, a served error's, a placeholder's
        except Exception:  # noqa: BLE001 - a learner's exception whose str (or __dict__) raises
            kit = kit_message("unprintable")
    if kit is not None:
        message = kit_text(kit, "en")
    where = ""
    files_dir = str(files)
    # no source lines are looked up: they live in files the worker may no longer read
    frames = traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)
    for frame in reversed(frames):
        if frame.filename.startswith(files_dir):
            where = f"{Path(frame.filename).name}, line {frame.lineno}, in {frame.name}"
            break
    if not where and isinstance(exc, SyntaxError) and exc.filename and str(exc.filename).startswith(files_dir):
        where = f"{Path(exc.filename).name}, line {exc.lineno}"
    # each field within what the grader's door accepts (graders.engine.values.door.LearnerError): a class or a
    # function of any name length is still an ordinary error, not an unreadable report
    return {"type": str(type(exc).__name__)[:NAME_LIMIT], "mro": [str(c.__name__)[:NAME_LIMIT]
                                                                  for c in type(exc).__mro__][:64],
            "message": str(message)[:2000], "where": where[:NAME_LIMIT], **({"kit": kit} if kit else {})}
