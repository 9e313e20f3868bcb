"""The ``numba`` backend: code compiled by Numba on the host CPU, computing on NumPy arrays.

Numba compiles functions over NumPy arrays; it has no array type of its own.  Like the
``scipy`` backend, this one owns nothing (:meth:`NumbaBackend.owns` is ``False``), takes NumPy
arrays and Python scalars as they are, and its array methods are NumPy's.

Nothing here imports Numba or NumPy at import time or when the backend is created:
:meth:`NumbaBackend.availability` imports Numba (about 0.3 s: it loads LLVM).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from prism_core import Availability, Backend

__all__ = ["MIN_NUMBA", "NumbaBackend"]

#: The oldest Numba the kernels are written for (``nogil`` and ``cache`` together, NumPy 2).
MIN_NUMBA = "0.57"

_SCALARS = (bool, int, float, complex)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0].strip() if text else "") or type(exc).__name__


def _probe() -> Availability:
    """Import Numba and check its version; never raises."""
    import importlib

    try:
        numba = importlib.import_module("numba")
    except ModuleNotFoundError as exc:
        if exc.name == "numba":
            return Availability(
                False,
                f"numba is not installed (pip install 'numba>={MIN_NUMBA}', or reinstall "
                "prism-plugin-numba, which depends on it)",
            )
        return Availability(
            False, f"numba cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
        )
    except Exception as exc:  # a Numba too old or too new for this NumPy raises ImportError
        return Availability(
            False, f"numba cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
        )
    version = str(getattr(numba, "__version__", ""))
    try:
        from packaging.version import InvalidVersion, Version

        too_old = Version(version) < Version(MIN_NUMBA)
    except (ImportError, InvalidVersion):
        too_old = False
    if too_old:
        return Availability(
            False,
            f"numba {version} is installed; the numba backend needs numba>={MIN_NUMBA} "
            f"(pip install -U 'numba>={MIN_NUMBA}')",
            version=version,
        )
    return Availability(True, version=version)


class NumbaBackend(Backend):
    """Numba on the host CPU.  Arrays are NumPy arrays; the backend owns none of them."""

    name = "numba"
    thread_modules = ("numba",)
    priority = 3
    description = "Numba on the host CPU: JIT-compiled kernels, cached on disk"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def __init__(self) -> None:
        self._availability: Availability | None = None

    def availability(self) -> Availability:
        """Whether Numba (>= 0.57) imports here; the reason says why not.  Never raises."""
        if self._availability is None:
            self._availability = _probe()
        return self._availability

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

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        import numpy as np

        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        import numpy as np

        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        """NumPy arrays (and NumPy's scalars) and Python scalars, taken as they are.  Never
        imports NumPy."""
        if isinstance(value, _SCALARS):
            return True
        np = sys.modules.get("numpy")
        return np is not None and isinstance(value, (np.ndarray, np.generic))

    def owns(self, value: Any) -> bool:
        """Always ``False``: Numba has no array type; NumPy arrays are the numpy backend's."""
        return False

    def from_dlpack(self, obj: Any) -> Any:
        """A NumPy array sharing memory with ``obj`` through DLPack where it can, else a copy."""
        import numpy as np

        if hasattr(obj, "__dlpack__"):
            try:
                return np.from_dlpack(obj)
            except BufferError:
                pass
        return np.asarray(obj)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        import numpy as np

        return np.empty(tuple(shape), dtype=dtype)
