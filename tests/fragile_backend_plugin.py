"""A test-only plugin whose backend's library crashes and hangs, for the conformance suite to
survive.

Its ``fragile`` backend holds NumPy arrays, and its variants are right except for one input each:

1. ``fragile.linalg.inv`` kills its own process with a real ``SIGFPE`` for a 0x0 float32 matrix
   (as a native library dividing by a zero size does);
2. ``fragile.matmul`` calls ``os.abort()`` (``SIGABRT``) for complex64 operands of one element;
3. ``fragile.sum`` sleeps forever for a float32 array of shape (65, 67) (the suite's ``odd``
   shape).

``fragile.add`` is right everywhere, so that the checks after a crash are seen to run. The
variants have a negative priority: with the plugin loaded, NumPy's reference variants still run
users' calls. The plugin is discovered through a real ``prism.plugins`` entry point
(``fragile = tests.fragile_backend_plugin``) that the tests put on the path.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import prism_core


class FragileBackend(prism_core.extending.Backend):
    name = "fragile"
    priority = -10
    description = "a backend whose library crashes and hangs on some inputs (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism_core.extending.Availability:
        return prism_core.extending.Availability(True, version=np.__version__)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack__")

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        return np.empty(tuple(shape), dtype=dtype)


def inv(x: Any, /) -> Any:
    if x.shape == (0, 0) and x.dtype == np.float32:
        os.kill(os.getpid(), signal.SIGFPE)  # a native floating-point exception
        time.sleep(60)  # the signal is delivered before this returns
    return np.linalg.inv(x)


def matmul(x1: Any, x2: Any, /) -> Any:
    if x1.dtype == np.complex64 and x1.size == 1:
        os.abort()
    return np.matmul(x1, x2)


def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    if x.shape == (65, 67) and x.dtype == np.float32:
        while True:  # a library that never returns
            time.sleep(3600)
    dt = None if dtype is None else prism_core.dtype(dtype).numpy
    return np.sum(x, axis=axis, dtype=dt, keepdims=keepdims)


def add(x1: Any, x2: Any, /) -> Any:
    return np.add(x1, x2)


VARIANTS = {"linalg.inv": inv, "matmul": matmul, "sum": sum_, "add": add}


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [FragileBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant(op, fn, backend="fragile", priority=-10, name=f"fragile.{op}")
        for op, fn in VARIANTS.items()
    ]
