"""The one decoder of the kit's tagged values, for the learner's side: ``untagged``.

The kit's build writes inputs and values in a JSON form that keeps their types (``{"float": 0.5}``,
``{"ndarray": "<f8", "shape": [2], "data": [...]}``, ``{"tuple": [...]}``, ``{"dict": {...}}``, ...): the
likely-mistake tables of ``_hints.json`` (``conftest.py`` writes the form with ``tagged`` and reads it here)
and the refusal rows of ``_refused.json`` (the public tests read them here). One reading of the form, so the
conftest and the public tests cannot differ on it; the notebooks' helper cell holds the same function (the
kit's build copies it by name). Written by hand (the kit's build does not generate it); the standard library
and NumPy only (torch only for a tagged tensor).
"""

from __future__ import annotations

import numpy as np


def untagged(norm, module=None):
    """A fresh Python value from a tagged one: arrays and tensors with their dtypes, a dataclass of
    ``module`` (without one, the dict of its fields)."""
    if norm is None or isinstance(norm, (bool, int)):
        return norm
    if isinstance(norm, dict):
        if "float" in norm:
            return float(norm["float"])
        if "bigint" in norm:
            return int(norm["bigint"])
        if "str" in norm:
            return norm["str"]
        if "ndarray" in norm:
            data = [float(x) if isinstance(x, str) else x for x in norm["data"]]
            return np.asarray(data, dtype=np.dtype(norm["ndarray"])).reshape(norm["shape"])
        if "tensor" in norm:
            import torch  # a tensor was tagged, so torch is installed

            data = [float(x) if isinstance(x, str) else x for x in norm["data"]]
            tensor = torch.tensor(data, dtype=getattr(torch, norm["tensor"])).reshape(norm["shape"])
            return tensor.requires_grad_(True) if norm.get("requires_grad") else tensor
        if "list" in norm:
            return [untagged(x, module) for x in norm["list"]]
        if "tuple" in norm:
            return tuple(untagged(x, module) for x in norm["tuple"])
        if "dict" in norm:
            return {k: untagged(v, module) for k, v in norm["dict"].items()}
        if "dataclass" in norm:
            fields = {k: untagged(v, module) for k, v in norm["fields"].items()}
            return getattr(module, norm["dataclass"])(**fields) if module is not None else fields
    raise ValueError(f"cannot rebuild {norm!r}")
