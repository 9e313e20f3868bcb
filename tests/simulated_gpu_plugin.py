"""A test-only plugin: a GPU that is not here, simulated from its description.

It reports one ``nvidia.h100-pcie`` as detected (no such GPU is on the machines the tests run
on) and a ``simgpu`` backend that drives NVIDIA devices, whose arrays are a type of their own
(NumPy data behind it: dispatch must move NumPy arguments to it and the result back, as with a
real GPU) and which computes with NumPy.  Dispatch's modelled choices and execution policies
are exercised through it: the times compared are the performance model's, from the
descriptions, not this plugin's.  Discovered through a real ``prism.plugins`` entry point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import prism_core
from tests.loopback_plugin import Wrapped


class SimulatedGpuBackend(prism_core.extending.Backend):
    name = "simgpu"
    priority = 0
    description = "NumPy behind a GPU's array type, on a simulated H100 (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({"vendor": "nvidia"})

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
        return array.data if isinstance(array, Wrapped) else np.asarray(array)

    def from_dlpack(self, obj: Any) -> Any:
        return Wrapped(np.from_dlpack(obj))


def gpu_matmul(a: Any, b: Any) -> Any:
    assert isinstance(a, Wrapped) and isinstance(b, Wrapped), "arguments were not moved"
    return Wrapped(a.data @ b.data)


@prism_core.extending.hookimpl
def prism_detect_devices(library: Any) -> prism_core.extending.Detection:
    return prism_core.extending.Detection(
        (
            prism_core.extending.DetectedDevice(
                "nvidia.h100-pcie", index=0, name="simulated H100", uuid="GPU-sim"
            ),
        )
    )


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [SimulatedGpuBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant("matmul", gpu_matmul, backend="simgpu", name="simgpu.matmul")
    ]
