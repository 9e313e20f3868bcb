"""A test-only plugin for the split's pinned host buffers: a GPU that is not here, simulated from
its description, whose backend offers page-locked memory.

It reports one ``nvidia.h100-pcie`` as detected (no GPU is on the machines the tests run on)
and a ``pinnedgpu`` backend that drives NVIDIA devices, whose arrays are a type of their own
(NumPy data behind it, so dispatch moves NumPy arguments to it and the result back, as with a
real GPU), and whose ``pinned_empty`` returns plain NumPy arrays standing for page-locked ones,
counting the calls and keeping the buffers it gave, so that a test can tell which arguments
came through them.  Nothing here is faster: whether staging pays is the performance model's
prediction, from the description and the calibration a test stores.  Discovered through a real
``prism.plugins`` entry point (``tests/test_split_decline.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import prism_core
from tests.loopback_plugin import Wrapped


class PinnedGpuBackend(prism_core.extending.Backend):
    name = "pinnedgpu"
    priority = 0
    description = "NumPy behind a GPU's array type with 'pinned' host buffers (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({"vendor": "nvidia"})

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.buffers: list[np.ndarray] = []

    def availability(self) -> prism_core.extending.Availability:
        return prism_core.extending.Availability(True, version=np.__version__)

    def owns(self, value: Any) -> bool:
        return isinstance(value, Wrapped)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, Wrapped) or not hasattr(value, "__dlpack__")

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        if isinstance(obj, Wrapped) and dtype is None:
            return obj
        return Wrapped(np.asarray(obj, dtype))

    def to_numpy(self, array: Any) -> Any:
        return array.data.copy() if isinstance(array, Wrapped) else np.asarray(array)

    def from_dlpack(self, obj: Any) -> Any:
        return Wrapped(np.from_dlpack(obj))

    def pinned_empty(self, shape: Sequence[int], dtype: Any) -> Any:
        buffer = np.empty(tuple(shape), dtype)
        with self.lock:
            self.calls += 1
            self.buffers.append(buffer)
        return buffer

    def came_pinned(self, value: Any) -> bool:
        """Whether ``value`` (an argument a variant got) is one of the buffers given out."""
        data = value.data if isinstance(value, Wrapped) else value
        with self.lock:
            return any(np.shares_memory(data, b) for b in self.buffers)


BACKEND = PinnedGpuBackend()
#: For each call of a variant: whether its first argument came through a pinned buffer.
SEEN: list[bool] = []


def gpu_matmul(a: Any, b: Any) -> Any:
    assert isinstance(a, Wrapped) and isinstance(b, Wrapped), "arguments were not moved"
    SEEN.append(BACKEND.came_pinned(a))
    return Wrapped(a.data @ b.data)


def gpu_exp(x: Any) -> Any:
    assert isinstance(x, Wrapped), "the argument was not moved"
    SEEN.append(BACKEND.came_pinned(x))
    return Wrapped(np.exp(x.data))


@prism_core.extending.hookimpl
def prism_detect_devices(library: Any) -> prism_core.extending.Detection:
    return prism_core.extending.Detection(
        (
            prism_core.extending.DetectedDevice(
                "nvidia.h100-pcie", index=0, name="simulated H100", uuid="GPU-pinned"
            ),
        )
    )


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [BACKEND]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant(
            "matmul", gpu_matmul, backend="pinnedgpu", name="pinnedgpu.matmul"
        ),
        prism_core.extending.Variant("exp", gpu_exp, backend="pinnedgpu", name="pinnedgpu.exp"),
    ]
