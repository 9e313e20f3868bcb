"""The ``numba`` backend: code compiled by Numba on the host CPU, computing on NumPy arrays.

Numba compiles functions over NumPy arrays; it has no array type of its own.  Like the
``scipy`` backend, this one owns nothing (:meth:`NumbaBackend.owns` is ``False``), takes NumPy
arrays and Python scalars as they are, and its array methods are NumPy's.

Nothing here imports Numba or NumPy at import time or when the backend is created:
:meth:`NumbaBackend.availability` imports Numba (about 0.3 s: it loads LLVM).
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Any

from prism_core.backend_kit import HostLibraryBackend
from prism_core.extending import Availability

__all__ = ["MIN_NUMBA", "NumbaBackend", "NumbaCudaBackend", "cuda_unavailable"]

#: The oldest Numba the kernels are written for (``nogil`` and ``cache`` together, NumPy 2).
MIN_NUMBA = "0.57"


class NumbaBackend(HostLibraryBackend):
    """Numba on the host CPU.  Arrays are NumPy arrays; the backend owns none of them."""

    name = "numba"
    thread_modules = ("numba",)
    priority = 3
    description = "Numba on the host CPU: JIT-compiled kernels, cached on disk"
    library = "numba"
    min_version = MIN_NUMBA
    distribution = "prism-plugin-numba"

    def settings(self) -> dict[str, str]:
        """Numba's thread count and threading layer where the environment sets them: they
        change how fast the batch kernels run (part of the tuning fingerprint)."""
        names = ("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER", "NUMBA_OPT")
        return {name: os.environ[name] for name in names if name in os.environ}

    def capabilities(self) -> dict[str, Any]:
        """Numba's and llvmlite's versions, where the kernels are cached, and the threads a
        batch uses."""
        import llvmlite  # type: ignore[import-untyped, unused-ignore]
        import numba

        from prism_plugin_numba.kernels import batch_threads, cache_location

        return {
            "numba": numba.__version__,
            "llvmlite": llvmlite.__version__,
            "cache_dir": cache_location()
            or "numba's default (NUMBA_CACHE_DIR or beside the module)",
            "batch_threads": batch_threads(),
        }


def cuda_unavailable() -> str | None:
    """Why ``numba.cuda`` cannot run kernels on a GPU here (imports it); ``None`` when it can.
    The CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) counts as no GPU: it runs kernels as
    Python, thousands of times slower than the CPU variants."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return "NUMBA_ENABLE_CUDASIM is set: numba.cuda is the simulator, not a GPU"
    try:
        import numba.cuda

        cuda: Any = numba.cuda
        if cuda.is_available():
            return None
    except Exception as exc:  # a broken CUDA installation: say what numba said
        return f"numba.cuda cannot be used: {type(exc).__name__}: {exc}"
    return "numba.cuda finds no CUDA driver and GPU (numba.cuda.is_available() is False)"


class NumbaCudaBackend(HostLibraryBackend):
    """Numba's CUDA target on NVIDIA GPUs, for variants that take NumPy arrays in host memory
    and copy them to the GPU themselves (sequences read from files are host data).  Like
    :class:`NumbaBackend` it owns no arrays; it drives ``{vendor: nvidia, kind: gpu}`` and is
    available where ``numba.cuda`` finds a GPU (:func:`cuda_unavailable`)."""

    name = "numba-cuda"
    priority = 3
    description = "Numba's CUDA target on NVIDIA GPUs: kernels on host data, copied there"
    library = "numba"
    min_version = MIN_NUMBA
    distribution = "prism-plugin-numba"
    drives = MappingProxyType({"vendor": "nvidia", "kind": "gpu"})

    def availability(self) -> Availability:
        """Numba imports (at least :data:`MIN_NUMBA`) and ``numba.cuda`` finds a GPU; the
        reason says which is missing.  Never raises."""
        if self._availability is None:
            found = super().availability()
            why = cuda_unavailable() if found else None
            self._availability = found if why is None else Availability(False, why)
        return self._availability

    def capabilities(self) -> dict[str, Any]:
        """Numba's version and the current GPU's name and compute capability."""
        import numba
        import numba.cuda

        cuda: Any = numba.cuda
        device = cuda.get_current_device()
        return {
            "numba": numba.__version__,
            "device": str(device.name),
            "compute_capability": ".".join(map(str, device.compute_capability)),
        }
