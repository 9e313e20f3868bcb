"""The hook implementations of the ``cuda`` plugin (entry point ``cuda`` in ``prism.plugins``).

Every hook is cheap: nothing here imports CuPy (the backend imports it in its methods; the
variants' functions are made when dispatch first calls them), and ``nvidia-smi`` (``amd-smi``
where the installed CuPy is a ROCm build) runs only when Prism inspects the host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import prism_core

from .backend import CudaBackend

if TYPE_CHECKING:
    from prism_core.extending import Backend, Detection, Variant
    from prism_core.hardware import DeviceLibrary

__all__ = [
    "HARDWARE_DIR",
    "detect_amd",
    "prism_backends",
    "prism_detect_devices",
    "prism_hardware_dirs",
    "prism_plugin_info",
    "prism_variants",
]

#: The device descriptions this plugin ships (inside the package, so in the wheel too).
HARDWARE_DIR = Path(__file__).resolve().parent / "hardware"


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "NVIDIA GPUs (AMD GPUs with a ROCm build of CuPy): a backend on CuPy, "
        "nvidia-smi or amd-smi detection, boards",
        "url": "https://developer.nvidia.com/cuda-zone",
        "requires": ["cupy-cuda12x>=14.2"],
    }


@prism_core.extending.hookimpl
def prism_hardware_dirs() -> Sequence[Path]:
    return [HARDWARE_DIR]


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [CudaBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """One variant of every op of the catalogue on the GPU (``cuda.add``, ...), and
    ``cuda.tensor_core_matmul`` where tensor cores accelerate the dtype
    (:meth:`CudaBackend.variants`)."""
    return CudaBackend().variants(set(prism_core.all_ops()))


@prism_core.extending.hookimpl
def prism_detect_devices(library: DeviceLibrary) -> Detection:
    """The GPUs the installed CuPy runs on: NVIDIA's through ``nvidia-smi``, AMD's through
    ``amd-smi`` with a ROCm build of CuPy (``prism_plugin_cuda.build``)."""
    from .build import cupy_build

    if cupy_build().platform == "rocm":
        return detect_amd(library)
    from .detect import detect

    return detect(library)


def detect_amd(library: DeviceLibrary) -> Detection:
    """The AMD GPUs of this host, through :mod:`prism_core.amd_smi` (never raises); a
    prism-core without that module says so."""
    try:
        from prism_core import amd_smi
    except ImportError as exc:
        return prism_core.extending.Detection(
            (),
            f"CuPy here is a ROCm build, but this prism-core has no AMD GPU detection "
            f"(prism_core.amd_smi: {exc}); upgrade prism-core",
        )
    found: Detection = amd_smi.detect(library)
    return found
