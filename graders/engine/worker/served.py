"""A learner's function served to a trusted process: its calls and their gradients over a pipe pair.

A harness's *trusted* part (``Harness(trusted=...)``: the toy experiments, with the other exercise's
formula written in the harness) never runs where learner code runs. The worker's parent forks two
processes for such an exercise: the learner's child (:class:`graders.engine.worker.child.Child`) and a
trusted process (:mod:`graders.engine.worker.trusted`) that loads no learner file. When the child reaches
a trusted case it says so (``ready``) and *serves* the learner's function (:func:`serve`); the trusted
process runs the harness's trusted function with :class:`Remote` as ``fn``: each call sends the call's
inputs, the child calls the learner's function on copies of them and sends the outputs back; a backward
pass through an output sends its gradient, and the child answers with the gradients of the call's inputs
(``torch.autograd.grad`` on the graph it kept). So the trusted process trains exactly as if the learner's
function ran in it, and the learner's process sees only the inputs of each call and the gradients of its
outputs: no code, no reference value, no trusted formula.

Messages are JSON lines, values in :mod:`graders.engine.values.codec`'s encoding; a message's arrays follow
its line as raw bytes (``"arrays"``: their index, :func:`graders.engine.values.bundles.pack_raw`; ``"bytes"``:
how many), not as base64 inside it (a third of a call's cost). The trusted side reads the child's with caps
(:data:`MAX_LINE` bytes a line, :data:`MAX_ARRAY_BYTES` of arrays, dtypes from :data:`DTYPES` only,
outputs' gradients checked against their inputs' shapes and dtypes): anything else is the learner's
error (:class:`ServedError`), never the grader's.

- child -> trusted: ``{"ready": [exercise, case]}``; for a call, ``{"value": ..., "arrays": ...,
  "grads": [bool, ...], "bytes": n}`` (per tensor of the output, whether it carries a gradient) or ``{"raised":
  <describe_exception>}``; for a backward, ``{"grads": ..., "arrays": ...}``;
- trusted -> child: ``{"call": id, "inputs": [args, kwargs], "arrays": ...}``, ``{"backward": id,
  "grads": ..., "arrays": ...}``, ``{"end": [exercise, case]}``.
"""

from __future__ import annotations

import json
import os

import numpy as np

from graders.engine.values import bundles, codec
from graders.engine.values.kit_messages import kit_message, kit_text

MAX_LINE = 64 << 20  # one message
MAX_ARRAY_BYTES = 48 << 20  # the arrays of one message, decoded
MAX_PENDING = 64  # calls whose graphs the child keeps for a backward pass
DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


class ServedError(Exception):
    """What the learner's side sent cannot be used, or it raised (``served_raised``: ``exception`` is then the
    learner's own exception, when it came as one): a kit message, ``key`` and its fields
    (:data:`graders.engine.values.kit_messages.KIT_EXCEPTIONS`), kept as ``kit_said``."""

    def __init__(self, key: str, exception: dict | None = None, **fields) -> None:
        self.kit_said = kit_message(key, **fields)
        super().__init__(kit_text(self.kit_said, "en"))
        self.exception = exception


class Lines:
    """Messages over a pipe pair: a JSON line, then the message's arrays as raw bytes (``"bytes": n``, at most
    :data:`MAX_ARRAY_BYTES`), each line at most ``limit`` bytes; ``read`` returns None at EOF. A message read
    carries its arrays' bytes in ``"bytes"`` (:func:`_unpack` reads them with their index, ``"arrays"``)."""

    def __init__(self, read_fd: int, write_fd: int, limit: int = MAX_LINE) -> None:
        self.read_fd, self.write_fd, self.limit = read_fd, write_fd, limit
        self.buffer = bytearray()

    def write(self, message: dict, raw: bytes = b"") -> None:
        # a plain JSON line: a lone surrogate in a learner's exception text travels escaped, and is read back
        data = json.dumps({**message, "bytes": len(raw)} if raw else message, allow_nan=True).encode() + b"\n" + raw
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            chunk = os.read(self.read_fd, max(1 << 20, size - len(self.buffer)))
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def read(self):
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > self.limit:
                raise ServedError("served_too_long", limit=self.limit)
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise ServedError("served_unreadable_message", detail=str(error)[:100]) from None
        if isinstance(message, dict) and "bytes" in message:
            size = message["bytes"]
            if not (isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_ARRAY_BYTES):
                raise ServedError("served_too_long", limit=self.limit)
            if not self._fill(size):
                return None
            message["bytes"] = bytes(self.buffer[:size])
            del self.buffer[:size]
        return message


def _pack(value) -> tuple[object, list, bytes]:
    """``(data, index, raw)``: a value in the codec's encoding, its arrays' index and their bytes."""
    encoder = codec.Encoder("s")
    data = encoder.encode(codec.as_input_specs(value))
    return (data, *bundles.pack_raw(encoder.arrays))


def _tensor(spec: codec.TensorSpec):
    import torch

    if spec.dtype not in DTYPES:
        raise ServedError("served_dtype", dtype=repr(str(spec.dtype)[:40]))
    return torch.tensor(np.array(spec.data), dtype=getattr(torch, spec.dtype))


def _unpack(data, message: dict, make_tensor=_tensor):
    """The value ``data`` of ``message``, its arrays read from the message's index and bytes."""
    try:
        arrays = bundles.unpack_raw(message.get("arrays", []), message.get("bytes", b""), MAX_ARRAY_BYTES)
        return codec.decode(data, arrays, make_tensor=make_tensor)
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as error:
        raise ServedError("served_unreadable_value", detail=str(error)[:100]) from None


def _tensors(value, torch) -> list:
    """The tensors of a value, in :func:`graders.engine.values.codec.decode`'s order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item, torch)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item, torch)]
    return []


# ---------------------------------------------------------------------------
# The learner's side
# ---------------------------------------------------------------------------
def serve(function, lines: Lines, where: list[int], describe) -> str | None:
    """Answer the trusted process's calls of ``function`` until it ends case ``where``; None, or why not.

    ``describe(exception)`` turns a learner exception into what is sent back (the child's
    ``describe_exception``). Each call runs on fresh copies of its inputs (leaf tensors with the same
    ``requires_grad``); its graph is kept until its backward pass (at most :data:`MAX_PENDING` calls).
    """
    import torch

    pending: dict[int, tuple[list, list]] = {}
    lines.write({"ready": where})
    while True:
        message = lines.read()
        if message is None:
            return "the trusted process stopped"
        if not isinstance(message, dict):
            return "an unreadable request"
        if message.get("end") == where:
            return None
        try:
            if "call" in message:
                args, kwargs = _unpack(message["inputs"], message, codec.make_torch_tensor)
                args, kwargs = tuple(args), dict(kwargs)
                inputs = [t for t in _tensors((args, kwargs), torch) if t.requires_grad]
                try:
                    value = function(*args, **kwargs)
                except BaseException as exc:  # noqa: BLE001 - the learner's exception goes back as data
                    lines.write({"raised": describe(exc)})
                    continue
                outputs = _tensors(value, torch)
                grads = [bool(t.requires_grad and t.is_floating_point()) for t in outputs]
                if inputs and any(grads):
                    pending[int(message["call"])] = ([t for t, g in zip(outputs, grads) if g], inputs)
                    while len(pending) > MAX_PENDING:
                        del pending[next(iter(pending))]
                try:
                    data, index, raw = _pack(value)
                except Exception as exc:  # noqa: BLE001 - a value that cannot be sent: the learner's error
                    lines.write({"raised": describe(exc)})
                    continue
                lines.write({"value": data, "arrays": index, "grads": grads}, raw)
            elif "backward" in message:
                outputs, inputs = pending.pop(int(message["backward"]))
                upstream = _unpack(message["grads"], message, codec.make_torch_tensor)
                try:
                    if not (isinstance(upstream, list) and len(upstream) == len(outputs)
                            and all(isinstance(g, torch.Tensor) and g.shape == o.shape for g, o in zip(upstream, outputs))):
                        return "gradients that do not match the call's outputs"
                    # the vector-Jacobian product as the gradient of sum(<output, upstream>): the same numbers
                    # (d/d output is upstream * 1, exactly), and no grad_outputs, whose check imports sympy
                    surrogate = sum((o * g.to(o.dtype)).sum() for o, g in zip(outputs, upstream))
                    computed = torch.autograd.grad(surrogate, inputs, allow_unused=True)
                except BaseException as exc:  # noqa: BLE001
                    lines.write({"raised": describe(exc)})
                    continue
                data, index, raw = _pack([torch.zeros_like(i) if g is None else g for g, i in zip(computed, inputs)])
                lines.write({"grads": data, "arrays": index}, raw)
            else:
                return "an unknown request"
        except (ServedError, KeyError, TypeError, ValueError) as error:
            return f"a request it could not answer ({str(error)[:100]})"


# ---------------------------------------------------------------------------
# The trusted side
# ---------------------------------------------------------------------------
class Remote:
    """``fn`` for a trusted harness: each call answered by the learner's child (see the module's docstring)."""

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.calls = 0

    def _ask(self, message: dict, raw: bytes) -> dict:
        self.lines.write(message, raw)
        reply = self.lines.read()
        if reply is None:
            raise ServedError("served_stopped")
        if isinstance(reply, dict) and "raised" in reply:
            raise ServedError("served_raised", reply["raised"])
        if not isinstance(reply, dict):
            raise ServedError("served_unreadable_answer")
        return reply

    def __call__(self, *args, **kwargs):
        import torch

        self.calls += 1
        call = self.calls
        wanted = [t for t in _tensors((args, kwargs), torch) if t.requires_grad and torch.is_grad_enabled()]
        data, index, raw = _pack((tuple(_detached(args, torch)), _detached(kwargs, torch)))
        reply = self._ask({"call": call, "inputs": data, "arrays": index}, raw)
        if not {"value", "arrays", "grads"} <= set(reply) <= {"value", "arrays", "grads", "bytes"}:
            raise ServedError("served_no_value")
        value = _unpack(reply["value"], reply)
        outputs = _tensors(value, torch)
        grads = reply["grads"]
        if not (isinstance(grads, list) and len(grads) == len(outputs) and all(isinstance(g, bool) for g in grads)):
            raise ServedError("served_grad_flags")
        if not (wanted and any(grads)):
            return value
        return _replaced(value, iter(_Link(self, call, wanted, outputs, grads).attach(torch)), torch)

    def backward(self, call: int, wanted: list, grads: list) -> list:
        import torch

        data, index, raw = _pack(grads)
        reply = self._ask({"backward": call, "grads": data, "arrays": index}, raw)
        if not {"grads", "arrays"} <= set(reply) <= {"grads", "arrays", "bytes"}:
            raise ServedError("served_no_gradients")
        got = _unpack(reply["grads"], reply)
        if not (isinstance(got, list) and len(got) == len(wanted)
                and all(isinstance(g, torch.Tensor) and g.shape == w.shape for g, w in zip(got, wanted))):
            raise ServedError("served_grads_mismatch")
        return [g.to(w.dtype) for g, w in zip(got, wanted)]


def _replaced(value, tensors, torch):
    """``value`` with its tensors (in :func:`_tensors`'s order) replaced by the next ones of ``tensors``."""
    if isinstance(value, torch.Tensor):
        return next(tensors)
    if isinstance(value, tuple):
        return tuple(_replaced(item, tensors, torch) for item in value)
    if isinstance(value, list):
        return [_replaced(item, tensors, torch) for item in value]
    if isinstance(value, dict):
        return {key: _replaced(item, tensors, torch) for key, item in value.items()}
    return value


def _detached(value, torch):
    """``value`` with each tensor detached (its ``requires_grad`` kept as a flag for the child)."""
    if isinstance(value, torch.Tensor):
        flag = bool(value.requires_grad and torch.is_grad_enabled())
        out = value.detach()
        return out.requires_grad_(True) if flag and out.is_floating_point() else out
    if isinstance(value, tuple):
        return tuple(_detached(item, torch) for item in value)
    if isinstance(value, list):
        return [_detached(item, torch) for item in value]
    if isinstance(value, dict):
        return {key: _detached(item, torch) for key, item in value.items()}
    return value


class _Link:
    """One served call in the trusted process's autograd graph: its outputs, differentiable where the
    learner's were, whose backward pass asks the learner's child for the inputs' gradients."""

    def __init__(self, remote: Remote, call: int, wanted: list, outputs: list, grads: list) -> None:
        self.remote, self.call, self.wanted, self.outputs, self.grads = remote, call, wanted, outputs, grads

    def attach(self, torch) -> list:
        link = self

        class _Served(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs):
                outs = tuple(o.clone() for o in link.outputs)
                ctx.mark_non_differentiable(*[o for o, g in zip(outs, link.grads) if not g])
                return outs

            @staticmethod
            def backward(ctx, *upstream):
                differentiable = [g if g is not None else torch.zeros_like(o)
                                  for g, o, flag in zip(upstream, link.outputs, link.grads) if flag]
                return tuple(link.remote.backward(link.call, link.wanted, differentiable))

        out = _Served.apply(*self.wanted)
        return list(out) if isinstance(out, tuple) else [out]
