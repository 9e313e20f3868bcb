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

import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from prism_core import Availability, Backend

__all__ = ["MIN_SCIPY", "ScipyBackend"]

#: The oldest SciPy the plugin's variants are written for (``scipy.fft`` with ``workers``,
#: ``scipy.signal.oaconvolve``, the LAPACK ``*_lwork`` queries).
MIN_SCIPY = "1.10"

_SCALARS = (bool, int, float, complex)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0].strip() if text else "") or type(exc).__name__


def _probe() -> Availability:
    """Import SciPy and check its version; never raises."""
    import importlib

    try:
        scipy = importlib.import_module("scipy")
    except ModuleNotFoundError as exc:
        if exc.name == "scipy":
            return Availability(
                False,
                "scipy is not installed (pip install 'scipy>=1.10', or reinstall "
                "prism-plugin-scipy, which depends on it)",
            )
        return Availability(
            False, f"scipy cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
        )
    except Exception as exc:  # an installed SciPy that fails to load (a broken build)
        return Availability(
            False, f"scipy cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
        )
    version = str(getattr(scipy, "__version__", ""))
    try:
        from packaging.version import InvalidVersion, Version

        too_old = Version(version) < Version(MIN_SCIPY)
    except (ImportError, InvalidVersion):
        too_old = False  # an unreadable version: let the variants try
    if too_old:
        return Availability(
            False,
            f"scipy {version} is installed; the scipy backend needs scipy>={MIN_SCIPY} "
            f"(pip install -U 'scipy>={MIN_SCIPY}')",
            version=version,
        )
    return Availability(True, version=version)


class ScipyBackend(Backend):
    """SciPy on the host CPU.  Arrays are NumPy arrays; the backend owns none of them."""

    name = "scipy"
    thread_modules = ("scipy",)
    priority = 5
    description = "SciPy on the host CPU: LAPACK/BLAS, scipy.fft with workers, FFT convolution"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def __init__(self) -> None:
        # Creating the backend must be cheap: nothing is imported or probed here.
        self._availability: Availability | None = None

    # -- availability ---------------------------------------------------------------------------
    def availability(self) -> Availability:
        """Whether SciPy (>= 1.10) imports here; the reason says why not.  Never raises."""
        if self._availability is None:
            self._availability = _probe()
        return self._availability

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

    # -- arrays: NumPy's --------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        import numpy as np

        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        import numpy as np

        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        """NumPy arrays (and NumPy's scalars) and Python scalars: what SciPy takes as it is.

        Everything else (torch tensors, other libraries' arrays) is moved by the dispatcher
        through :meth:`from_dlpack`.  Never imports NumPy: before NumPy is imported, no value
        can be a NumPy array.
        """
        if isinstance(value, _SCALARS):
            return True
        np = sys.modules.get("numpy")
        return np is not None and isinstance(value, (np.ndarray, np.generic))

    def owns(self, value: Any) -> bool:
        """Always ``False``: SciPy has no array type; NumPy arrays are the numpy backend's."""
        return False

    def from_dlpack(self, obj: Any) -> Any:
        """A NumPy array sharing memory with ``obj`` through DLPack where it can (host memory),
        else a copy; objects without DLPack go through ``numpy.asarray``."""
        import numpy as np

        if hasattr(obj, "__dlpack__"):
            try:
                return np.from_dlpack(obj)
            except BufferError:  # e.g. a tensor that requires grad, or a read-only export
                pass
        return np.asarray(obj)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        import numpy as np

        return np.empty(tuple(shape), dtype=dtype)
