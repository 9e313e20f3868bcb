"""`prism_core.array_api`: the Python Array API standard (2024.12) as Prism ops.

Every function here is a Prism op, dispatched like any (``prism explain sin``): on NumPy arrays
NumPy computes it, on torch tensors (or under ``use_backend("torch")``) torch, on a GPU whatever
plugin runs the op there; the arrays returned are the backend's own, with no wrapper.  Every
function, constant and data type of the standard 2024.12 is here, with the ``linalg`` and
``fft`` extensions and ``__array_namespace_info__()``; type promotion is the backend's.
Importing it is cheap: the ops are made when first used.  docs/array-api.md lists the functions
by family and says where the standard and NumPy part.
"""

from __future__ import annotations

import math
from typing import Any

from prism_core.kernel.description.dtypes import (
    DType,
    bool_,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from prism_core.kernel.records.standard import STANDARD_OPS

#: This namespace's function name -> the Prism op that is it (the extensions' are in ``linalg``
#: and ``fft``).
_OPS: dict[str, str] = {name: op for name, op in STANDARD_OPS.items() if "." not in name}

#: This namespace's functions that are not ops (they take dtypes or shapes, not arrays):
#: name -> ``"module:attribute"``.
_PLAIN: dict[str, str] = {
    "can_cast": "prism_core._promotion:can_cast",
    "result_type": "prism_core._promotion:result_type",
    "isdtype": "prism_core._promotion:isdtype",
    "finfo": "prism_core._dtype_info:finfo",
    "iinfo": "prism_core._dtype_info:iinfo",
    "broadcast_shapes": "prism_core._broadcasting:broadcast_shapes",
}

#: The extensions, submodules of this package.
_EXTENSIONS = ("linalg", "fft")

__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "bool",
    "complex64",
    "complex128",
    "e",
    "float32",
    "float64",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "nan",
    "newaxis",
    "pi",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "fft",
    "linalg",
    *_OPS,
    *_PLAIN,
]

#: The version of the standard this namespace follows.
__array_api_version__ = "2024.12"

bool = bool_
e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

_REAL_FLOATING = (float32, float64)
_COMPLEX_FLOATING = (complex64, complex128)
_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8, uint16, uint32, uint64)
#: The standard's dtype kinds -> the Prism dtypes of each.
_KINDS: dict[str, tuple[DType, ...]] = {
    "bool": (bool_,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX_FLOATING,
    "numeric": _SIGNED + _UNSIGNED + _REAL_FLOATING + _COMPLEX_FLOATING,
}


class Info:
    """What ``__array_namespace_info__()`` returns: the namespace's capabilities, devices and
    dtypes, as the standard's inspection API describes them."""

    __module__ = "prism_core.array_api"

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes are the backend's (NumPy, torch and CuPy
        have both); the dimensions are NumPy's limit."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Any:
        """The device of the current scope (``prism_core.device(...)``), else the host CPU
        Prism describes."""
        from prism_core.kernel.dispatch.scope import current_scope
        from prism_core.kernel.host import host_cpu_instance

        device = current_scope().device
        return host_cpu_instance() if device is None else device

    def devices(self) -> list[Any]:
        """The devices Prism describes on this host (``prism_core.hardware.present_devices()``): the
        host CPU and each accelerator a plugin detected."""
        from prism_core.kernel.host import present_devices

        return list(present_devices().devices)

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType]:
        """The default dtypes (NumPy's on every device): float64, complex128 and int64."""
        return {
            "real floating": float64,
            "complex floating": complex128,
            "integral": int64,
            "indexing": int64,
        }

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, DType]:
        """The dtypes of ``kind`` (a kind of the standard, a tuple of kinds, or ``None`` for
        all), by name.  An unknown kind is a ``ValueError`` naming the kinds there are."""
        kinds = ("bool", "numeric") if kind is None else (kind,) if isinstance(kind, str) else kind
        found: dict[str, DType] = {}
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(
                    f"dtypes: kind {k!r} is not a kind of the Array API; the kinds are "
                    f"{', '.join(repr(n) for n in _KINDS)}"
                )
            for dt in _KINDS[k]:
                found["bool" if dt is bool_ else dt.name] = dt
        return found


def __array_namespace_info__() -> Info:
    """The inspection API of the standard: capabilities, devices and dtypes."""
    return Info()


def __getattr__(name: str) -> Any:
    """The functions: each the Prism op of its name (``pow`` is ``power``), made on first use;
    the functions of dtypes and shapes (``result_type``, ``finfo``, ``broadcast_shapes``, ...);
    and the extensions ``linalg`` and ``fft``."""
    import importlib

    op = _OPS.get(name)
    value: Any
    if op is not None:
        from prism_core.kernel.dispatch.ops import get_op

        value = get_op(op).function
    elif name in _PLAIN:
        module, _, attribute = _PLAIN[name].partition(":")
        value = getattr(importlib.import_module(module), attribute)
    elif name in _EXTENSIONS:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(
            f"module 'prism_core.array_api' has no attribute {name!r}: it has the functions, "
            "dtypes and constants of the Array API standard 2024.12 (dir(prism_core.array_api) "
            "lists them)"
        )
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
