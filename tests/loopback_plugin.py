"""A test-only plugin (networkx's ``nx_loopback`` idea): a backend that drives *any* device and
executes with NumPy, so that selection on simulated accelerators runs through the full
dispatcher in CI.  It is discovered through a real ``prism.plugins`` entry point that the tests
put on ``sys.path`` (see ``loopback`` in test_dispatch.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import prism_core


class LoopbackBackend(prism_core.extending.Backend):
    name = "loopback"
    priority = 5
    description = "NumPy pretending to drive every device (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({})

    def availability(self) -> prism_core.extending.Availability:
        return prism_core.extending.Availability(True, version=np.__version__)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack__")

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def from_dlpack(self, obj: Any) -> Any:
        return np.from_dlpack(obj)


def tensor_core_matmul(a: Any, b: Any) -> Any:
    return np.matmul(a, b)


class Wrapped:
    """The array type of the ``wrapped`` backend: NumPy data behind a type of its own, as a
    GPU library's arrays are (NumPy cannot take them without a move)."""

    def __init__(self, data: Any) -> None:
        self.data = np.asarray(data)
        self.dtype = self.data.dtype
        self.shape = self.data.shape
        self.size = self.data.size

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.data.__dlpack_device__()


class WrappedBackend(LoopbackBackend):
    name = "wrapped"
    aliases = ("wrapper",)
    description = "a backend whose arrays are not NumPy's (tests only)"

    def owns(self, value: Any) -> bool:
        return isinstance(value, Wrapped)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, Wrapped) or not hasattr(value, "__dlpack__")

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        if isinstance(obj, Wrapped) and dtype is None:
            return obj
        return Wrapped(np.asarray(obj, dtype))

    def to_numpy(self, array: Any) -> Any:
        return array.data if isinstance(array, Wrapped) else np.asarray(array)

    def from_dlpack(self, obj: Any) -> Any:
        return Wrapped(np.from_dlpack(obj))


def big_add(a: Any, b: Any) -> Any:
    # Arrays arrive moved; a Python scalar operand arrives as it is (dispatch moves arrays).
    moved = [isinstance(x, Wrapped) or not hasattr(x, "__dlpack__") for x in (a, b)]
    assert all(moved), "arguments were not moved"
    return Wrapped(_data(a) + _data(b))


def _data(x: Any) -> Any:
    return x.data if isinstance(x, Wrapped) else x


def big_only(a: Any, b: Any) -> bool | str:
    size = max(getattr(a, "size", 1), getattr(b, "size", 1))
    return True if size >= 100 else f"too small ({size} elements)"


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [LoopbackBackend(), WrappedBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant(
            "matmul",
            tensor_core_matmul,
            backend="loopback",
            requires={"kind": "gpu", "tensor_cores": ">=3"},
            dtype_support=True,
            priority=10,
            name="loopback.tensor_core_matmul",
        ),
        prism_core.extending.Variant(
            "add", big_add, backend="wrapped", priority=50, can_run=big_only, name="wrapped.add"
        ),
    ]
