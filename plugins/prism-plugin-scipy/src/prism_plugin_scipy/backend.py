"""The ``scipy`` backend: SciPy on the host CPU, computing on NumPy arrays.

SciPy has no array type of its own: its functions take and return NumPy arrays.  So this backend
owns nothing (:meth:`ScipyBackend.owns` is ``False``, data never "belongs" to it), takes NumPy
arrays and Python scalars as they are (:meth:`ScipyBackend.is_native`), and its array methods are
NumPy's.  What it adds is *how* an op is computed: LAPACK and BLAS called directly, ``scipy.fft``
with worker threads, FFT convolution (see ``prism_plugin_scipy.variants``).

Nothing here imports SciPy or NumPy at import time or when the backend is created:
:meth:`ScipyBackend.availability` imports SciPy, the array methods import NumPy.
"""

from __future__ import annotations

from typing import Any

from prism_core.backend_kit import HostLibraryBackend

__all__ = ["MIN_SCIPY", "ScipyBackend"]

#: The oldest SciPy the plugin's variants are written for (``scipy.fft`` with ``workers``,
#: ``scipy.signal.oaconvolve``, the LAPACK ``*_lwork`` queries).
MIN_SCIPY = "1.10"


class ScipyBackend(HostLibraryBackend):
    """SciPy on the host CPU.  Arrays are NumPy arrays; the backend owns none of them."""

    name = "scipy"
    thread_modules = ("scipy",)
    priority = 5
    description = "SciPy on the host CPU: LAPACK/BLAS, scipy.fft with workers, FFT convolution"
    library = "scipy"
    min_version = MIN_SCIPY
    distribution = "prism-plugin-scipy"

    def capabilities(self) -> dict[str, Any]:
        """SciPy's and NumPy's versions, the BLAS/LAPACK thread pools threadpoolctl sees (each
        marked with the package whose copy it is), and the ``workers`` the FFTs use, with the
        numbers that decided it."""
        import numpy as np
        import scipy
        import scipy.linalg  # loads SciPy's BLAS and LAPACK, so that threadpoolctl sees them

        from prism_plugin_scipy.workers import blas_pools, fft_workers

        workers = fft_workers()
        return {
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "blas": blas_pools(),
            "fft_workers": workers.workers,
            "fft_workers_from": workers.as_dict(),
        }
