"""The Array API's ``finfo`` and ``iinfo`` on Prism dtypes: the limits of a floating or
an integer type, as ``prism_core.array_api``'s functions (they are not ops: they take dtypes).

The numbers are constants of the formats (IEEE 754 binary16/32/64, bfloat16 and the OCP and
FNUZ float8 formats, as ``ml_dtypes`` gives them), not NumPy's: a pure module, importing
:mod:`prism_core.kernel.description.dtypes` and nothing else, and the same answer for the types
NumPy lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prism_core.kernel.description.dtypes import DType, complex64, complex128, float32, float64
from prism_core.kernel.description.dtypes import dtype as _dtype

__all__ = ["FInfo", "IInfo", "finfo", "iinfo"]


@dataclass(frozen=True)
class FInfo:
    """The limits of a floating-point type (``finfo``'s result): its size in ``bits``, ``eps``
    (the difference between 1.0 and the next larger number), the largest (``max``) and the most
    negative (``min``) finite numbers, the smallest positive normal number
    (``smallest_normal``), and ``dtype``, the real floating type described (``float32`` for
    ``complex64``).  Numbers are Python floats."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class IInfo:
    """The limits of an integer type (``iinfo``'s result): its size in ``bits``, its largest
    (``max``) and smallest (``min``) values, and the ``dtype`` described.  Numbers are Python
    ints."""

    bits: int
    max: int
    min: int
    dtype: DType


# Shown where users find them (set once the classes exist: the dataclass machinery reads the
# defining module's namespace, which ``prism_core.array_api`` may not be imported into yet).
FInfo.__module__ = IInfo.__module__ = "prism_core.array_api"


#: Floating type name -> (eps, max, smallest_normal), exact binary fractions of each format.
_FLOATS: dict[str, tuple[float, float, float]] = {
    "float16": (2.0**-10, 65504.0, 2.0**-14),
    "bfloat16": (2.0**-7, (2 - 2.0**-7) * 2.0**127, 2.0**-126),
    "float32": (2.0**-23, (2 - 2.0**-23) * 2.0**127, 2.0**-126),
    "float64": (2.0**-52, (2 - 2.0**-52) * 2.0**1023, 2.0**-1022),
    "float8_e4m3fn": (2.0**-3, 448.0, 2.0**-6),
    "float8_e5m2": (2.0**-2, 57344.0, 2.0**-14),
    "float8_e4m3fnuz": (2.0**-3, 240.0, 2.0**-7),
    "float8_e5m2fnuz": (2.0**-2, 57344.0, 2.0**-15),
    "float8_e4m3": (2.0**-3, 240.0, 2.0**-6),
    "float8_e3m4": (2.0**-4, 15.5, 2.0**-2),
}


def _read(value: Any, function: str) -> DType:
    """The Prism dtype of ``value`` (a dtype or an array), or a ``TypeError`` naming it."""
    try:
        return _dtype(value)
    except (TypeError, ValueError):
        raise TypeError(f"{function}: type must be a dtype or an array, not {value!r}") from None


def finfo(type: Any, /) -> FInfo:
    """The limits of the floating-point type ``type`` (a dtype or an array): :class:`FInfo`.
    A complex type's are those of its real and imaginary parts (``dtype`` is that real type).
    A type that is not floating point is a ``ValueError`` naming it (``iinfo`` is for
    integers)."""
    d = _read(type, "finfo")
    real = {complex64.name: float32, complex128.name: float64}.get(d.name, d)
    limits = _FLOATS.get(real.name)
    if limits is None:
        raise ValueError(
            f"finfo: {d.name} is not a floating-point type (finfo takes float16 to float64, "
            "bfloat16, the float8 types, complex64 and complex128; iinfo takes integers)"
        )
    eps, largest, smallest_normal = limits
    return FInfo(8 * real.itemsize, eps, largest, -largest, smallest_normal, real)


def iinfo(type: Any, /) -> IInfo:
    """The limits of the integer type ``type`` (a dtype or an array): :class:`IInfo`.  A type
    that is not an integer is a ``ValueError`` naming it (``finfo`` is for floating point)."""
    d = _read(type, "iinfo")
    if d.kind not in ("i", "u"):
        raise ValueError(
            f"iinfo: {d.name} is not an integer type (iinfo takes int8 to int64 and uint8 to "
            "uint64; finfo takes floating-point types)"
        )
    bits = 8 * d.itemsize
    if d.kind == "u":
        return IInfo(bits, 2**bits - 1, 0, d)
    return IInfo(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), d)
