"""The hook implementations of the ``cuda`` plugin (entry point ``cuda`` in ``prism.plugins``).

Every hook is cheap: nothing here imports CuPy (the backend imports it in its methods; the
variants' functions are made when dispatch first calls them), and ``nvidia-smi`` runs only when
Prism inspects the host.
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
        "description": "NVIDIA GPUs: CUDA backend on CuPy, nvidia-smi detection, boards",
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
    from .detect import detect

    return detect(library)
