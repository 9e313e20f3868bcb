"""The builtin NumPy reference backend, registered through the plugin contract like any other.

It runs on the host CPU: NumPy executes, and the BLAS NumPy links (OpenBLAS, MKL, ...) is
inspected and limited through threadpoolctl, never by editing environment variables.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from prism_core.kernel.contract.backend import Availability, Backend
from prism_core.kernel.contract.hookspecs import hookimpl

__all__ = ["NumpyBackend"]


class NumpyBackend(Backend):
    """NumPy on the host CPU: the reference every other backend is tested against."""

    transfer = "dlpack"  # numpy.from_dlpack shares host memory

    __module__ = "prism_core._builtin.numpy_backend"

    name = "numpy"
    thread_modules = ("numpy",)
    priority = 0
    description = "NumPy on the host CPU (reference backend)"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> Availability:
        try:
            import numpy as np
        except ImportError as exc:  # pragma: no cover - numpy is a dependency of prism-core
            return Availability(False, f"numpy cannot be imported: {exc}")
        return Availability(True, version=np.__version__)

    def capabilities(self) -> dict[str, Any]:
        import numpy as np

        from prism_core._blas import blas_info

        return {"numpy": np.__version__, "blas": blas_info()}

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        import numpy as np

        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        import numpy as np

        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        import numpy as np

        return isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack__")

    def owns(self, value: Any) -> bool:
        numpy = sys.modules.get("numpy")
        return numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic))

    def from_dlpack(self, obj: Any) -> Any:
        import numpy as np

        if hasattr(obj, "__dlpack__"):
            return np.from_dlpack(obj)
        return np.asarray(obj)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        import numpy as np

        return np.empty(tuple(shape), dtype=dtype)

    @contextmanager
    def threads(self, limit: int) -> Iterator[None]:
        """Limit the BLAS threads NumPy uses inside the ``with`` block (via threadpoolctl)."""
        from prism_core._blas import blas_threads

        with blas_threads(limit):
            yield


@hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {"description": "NumPy reference backend (builtin)", "url": "https://numpy.org"}


@hookimpl
def prism_backends() -> Sequence[Backend]:
    return [NumpyBackend()]


@hookimpl
def prism_variants() -> Sequence[Any]:
    from prism_core._builtin.numpy_ops import variants

    return variants()
