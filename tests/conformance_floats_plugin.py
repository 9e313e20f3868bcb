"""A test-only plugin whose backends hold floating-point arrays only (``Backend.dtypes``), for
the conformance suite's checks of declared dtypes (tests/test_conformance_mutants.py).

``floats`` declares its dtypes for every device; ``loosefloats`` only for its default device
(``dtypes(None)``), not for the device dispatch plans on, so dispatch is never told: the
defect ``BACKEND-dtypes-declined`` finds.  Both refuse to convert an array of another dtype
(a ``TypeError``, as a framework without it does).  Discovered through a real
``prism.plugins`` entry point (``floats = tests.conformance_floats_plugin``) that the tests put
on the path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import prism_core

FLOATING = frozenset({"float64", "float32", "complex128", "complex64"})


class FloatsBackend(prism_core.extending.Backend):
    name = "floats"
    priority = -10
    description = "NumPy's floating-point arrays only (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism_core.extending.Availability:
        return prism_core.extending.Availability(True, version=np.__version__)

    def dtypes(self, device: Any = None) -> frozenset[str] | None:
        return FLOATING

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        out = np.asarray(obj, dtype=dtype)
        if out.dtype.kind not in "fc":
            raise TypeError(f"{self.name} holds no {out.dtype}")
        return out

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack__")

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        return np.empty(tuple(shape), dtype=dtype)


class LooseFloatsBackend(FloatsBackend):
    name = "loosefloats"

    def dtypes(self, device: Any = None) -> frozenset[str] | None:
        return FLOATING if device is None else None  # the defect: not for a device


def add(x1: Any, x2: Any, /) -> Any:
    return np.add(x1, x2)


def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    dt = None if dtype is None else prism_core.dtype(dtype).numpy
    return np.sum(x, axis=axis, dtype=dt, keepdims=keepdims)


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [FloatsBackend(), LooseFloatsBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant(op, fn, backend=backend, priority=-10, name=f"{backend}.{op}")
        for backend in ("floats", "loosefloats")
        for op, fn in (("add", add), ("sum", sum_))
    ]
