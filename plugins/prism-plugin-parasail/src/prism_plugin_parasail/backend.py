"""The ``parasail`` backend: parasail's C library on the host CPU, computing on NumPy arrays.

parasail has no array type: its functions take byte strings.  Like the ``scipy`` backend, this
one owns nothing (:meth:`ParasailBackend.owns` is ``False``), takes NumPy arrays and Python
scalars as they are, and its array methods are NumPy's.  What it adds is the alignment
kernels (``prism_plugin_parasail.kernels``).

Nothing here imports parasail or NumPy at import time or when the backend is created:
:meth:`ParasailBackend.availability` imports parasail (which loads its C library, about
4 MB, and imports NumPy).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from prism_core import Availability, Backend

__all__ = ["MIN_PARASAIL", "ParasailBackend"]

#: The oldest parasail whose per-instruction-set kernels and profile functions the plugin
#: binds (``parasail_sw_striped_profile_avx2_256_sat`` and the like: parasail 2.x's C library,
#: which the Python package 1.3 ships).
MIN_PARASAIL = "1.3"

_SCALARS = (bool, int, float, complex)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0].strip() if text else "") or type(exc).__name__


def _probe() -> Availability:
    """Import parasail and check its version; never raises."""
    import importlib

    try:
        parasail = importlib.import_module("parasail")
    except ModuleNotFoundError as exc:
        if exc.name == "parasail":
            return Availability(
                False,
                f"parasail is not installed (pip install 'parasail>={MIN_PARASAIL}', or "
                "reinstall prism-plugin-parasail, which depends on it)",
            )
        return Availability(
            False, f"parasail cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
        )
    except Exception as exc:  # parasail raises a bare Exception when its library is missing
        return Availability(
            False, f"parasail cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
        )
    version = str(getattr(parasail, "__version__", ""))
    try:
        from packaging.version import InvalidVersion, Version

        too_old = Version(version) < Version(MIN_PARASAIL)
    except (ImportError, InvalidVersion):
        too_old = False  # an unreadable version: let the variants try
    if too_old:
        return Availability(
            False,
            f"parasail {version} is installed; the parasail backend needs "
            f"parasail>={MIN_PARASAIL} (pip install -U 'parasail>={MIN_PARASAIL}')",
            version=version,
        )
    return Availability(True, version=version)


class ParasailBackend(Backend):
    """parasail on the host CPU.  Arrays are NumPy arrays; the backend owns none of them."""

    name = "parasail"
    thread_modules = ("parasail",)
    priority = 5
    description = "parasail on the host CPU: striped SIMD Smith-Waterman per instruction set"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def __init__(self) -> None:
        # Creating the backend must be cheap: nothing is imported or probed here.
        self._availability: Availability | None = None

    # -- availability ---------------------------------------------------------------------------
    def availability(self) -> Availability:
        """Whether parasail (>= 1.3) imports here; the reason says why not.  Never raises."""
        if self._availability is None:
            self._availability = _probe()
        return self._availability

    def capabilities(self) -> dict[str, Any]:
        """parasail's version and C library version, the library's path, which instruction
        sets this CPU executes by parasail's own checks, and the threads a batch uses."""
        import parasail  # type: ignore[import-untyped, unused-ignore]

        from prism_plugin_parasail.kernels import ISAS, batch_threads, isa_usable

        return {
            "parasail": parasail.__version__,
            "library": ".".join(str(v) for v in parasail.version()),
            "library_path": parasail.get_library(),
            "instruction_sets": {name: isa_usable(name) for name in ISAS},
            "batch_threads": batch_threads(),
        }

    # -- arrays: NumPy's --------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        import numpy as np

        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        import numpy as np

        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        """NumPy arrays (and NumPy's scalars) and Python scalars, taken as they are; other
        arrays are moved by the dispatcher through :meth:`from_dlpack`.  Never imports NumPy."""
        if isinstance(value, _SCALARS):
            return True
        np = sys.modules.get("numpy")
        return np is not None and isinstance(value, (np.ndarray, np.generic))

    def owns(self, value: Any) -> bool:
        """Always ``False``: parasail has no array type; NumPy arrays are the numpy backend's."""
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
