"""The ``numba`` backend: code compiled by Numba on the host CPU, computing on NumPy arrays.

Numba compiles functions over NumPy arrays; it has no array type of its own.  Like the
``scipy`` backend, this one owns nothing (:meth:`NumbaBackend.owns` is ``False``), takes NumPy
arrays and Python scalars as they are, and its array methods are NumPy's.

Nothing here imports Numba or NumPy at import time or when the backend is created:
:meth:`NumbaBackend.availability` imports Numba (about 0.3 s: it loads LLVM).
"""

from __future__ import annotations

import os
from typing import Any

from prism_core.backend_kit import HostLibraryBackend

__all__ = ["MIN_NUMBA", "NumbaBackend"]

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
