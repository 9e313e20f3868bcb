"""The hook implementations of the ``numba`` plugin (entry point ``numba`` in
``prism.plugins``).

Every hook is cheap: importing this module imports neither Numba nor NumPy, nor does any hook
(the backend imports Numba in ``availability()``; the variants name their functions as
``"prism_plugin_numba.ops:sw_align"``, imported when dispatch first chooses one).  The plugin
ships no device descriptions; it detects the host's NVIDIA GPUs with ``nvidia-smi``, as the torch
and cuda plugins do, so that the GPU variants find their devices with this plugin alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import prism_core

from .backend import MIN_NUMBA, NumbaBackend, NumbaCudaBackend

if TYPE_CHECKING:
    from prism_core.extending import Backend, Detection, Variant
    from prism_core.hardware import DeviceLibrary

__all__ = ["prism_backends", "prism_detect_devices", "prism_plugin_info", "prism_variants"]


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "Numba on the host CPU: a JIT-compiled Smith-Waterman (Gotoh) kernel, "
        "cached on disk, batches on every core; and on NVIDIA GPUs (numba.cuda): an "
        "inter-sequence batch kernel",
        "url": "https://numba.pydata.org",
        "requires": [f"numba>={MIN_NUMBA}"],
    }


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [NumbaBackend(), NumbaCudaBackend()]


@prism_core.extending.hookimpl
def prism_detect_devices(library: DeviceLibrary) -> Detection:
    """The NVIDIA GPUs of this host (``nvidia-smi``: no Numba import, no CUDA context); with
    the torch or cuda plugin as well, each GPU is present once (one per UUID)."""
    from prism_core.nvidia_smi import detect

    return detect(library)


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """``genomics.sw_align`` and ``genomics.sw_align_batch``; see
    ``prism_plugin_numba.variants``.  The ops are prism-plugin-genomics' (a dependency):
    importing ``prism_genomics.ops`` declares them if the genomics plugin has not loaded yet, so
    that these variants find them whatever the order in which plugins load."""
    import prism_genomics.ops  # noqa: F401  (declares the ops)

    from .variants import variants

    return variants()
