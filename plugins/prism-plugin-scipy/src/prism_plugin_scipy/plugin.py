"""The hook implementations of the ``scipy`` plugin (entry point ``scipy`` in ``prism.plugins``).

Every hook is cheap: importing this module imports neither SciPy nor NumPy, nor does any hook
(the backend imports SciPy in ``availability()``; the variants name their functions as
``"prism_plugin_scipy.ops:linalg_svd"``, imported when dispatch first chooses one).  The plugin
ships no device descriptions and detects no devices: it computes on the host CPU, which Prism
describes itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import prism_core

from .backend import MIN_SCIPY, ScipyBackend

if TYPE_CHECKING:
    from prism_core.extending import Backend, Variant

__all__ = ["prism_backends", "prism_plugin_info", "prism_variants"]


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "SciPy on the host CPU: LAPACK/BLAS, scipy.fft with workers, "
        "FFT convolution",
        "url": "https://scipy.org",
        "requires": [f"scipy>={MIN_SCIPY}"],
    }


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [ScipyBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """matmul, linalg.solve/inv/svd/eigh/eig, fft.fft/ifft/rfft and convolve on the ``scipy``
    backend; see ``prism_plugin_scipy.variants``."""
    from .variants import variants

    return variants()
