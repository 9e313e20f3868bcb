"""Prism's data types: one name per type, mapped to each backend's own and to the device-file
vocabulary (``fp32``, ``bf16``, ...) that features declare."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DType", "bfloat16", "bool_", "complex64", "complex128", "dtype", "dtype_name", "float8_e3m4",
    "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float16",
    "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
]  # fmt: skip


class DType:
    """A Prism data type.  Compare with ``==``; ``vocab`` is its device-file name.

    A DType stands for the NumPy dtype of the same type where NumPy has one (``numpy``; ``None``
    for bfloat16): it equals it and hashes like it, so either finds the other in a set or as a
    dict key, and NumPy takes it wherever it takes a dtype (``numpy.zeros(3, prism.float32)``,
    through NumPy's ``.dtype`` protocol).  It also equals NumPy's scalar types, torch's dtypes
    and the names :func:`dtype` reads (``"float32"``, ``"fp32"``).
    """

    __module__ = "prism_core"
    __slots__ = ("_hash", "_numpy", "itemsize", "kind", "name", "vocab")

    def __init__(self, name: str, vocab: str, kind: str, itemsize: int) -> None:
        self.name = name
        self.vocab = vocab
        self.kind = kind  # b, i, u, f, c (NumPy's kind letters)
        self.itemsize = itemsize
        self._hash: int | None = None
        self._numpy: np.dtype[np.generic] | bool | None = False  # False: not looked up yet

    @property
    def numpy(self) -> np.dtype[np.generic] | None:
        """The NumPy dtype of this type (``numpy.dtype("float32")``), or ``None`` where NumPy has
        none (bfloat16, the FP8 types).  NumPy is imported the first time it is asked for."""
        found = self._numpy
        if isinstance(found, bool):
            found = None
            if self.name != "bfloat16" and not self.name.startswith("float8"):
                import numpy as np

                found = np.dtype(self.name.rstrip("_"))
            self._numpy = found
        return found

    @property
    def dtype(self) -> np.dtype[np.generic]:
        """NumPy's protocol for objects that stand for a dtype: the NumPy dtype, or
        ``AttributeError`` for the types NumPy lacks."""
        found = self.numpy
        if found is None:
            raise AttributeError(f"numpy has no {self.name}")
        return found

    def __repr__(self) -> str:
        return f"prism_core.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.name == other.name
        if other is not None and other is self._numpy:  # NumPy's dtype itself: the usual case
            return True
        try:
            return self is dtype(other)
        except (TypeError, ValueError):
            return False

    def __hash__(self) -> int:
        # Objects that compare equal must hash alike: a type NumPy has hashes like NumPy's dtype
        # (computed once; NumPy is imported only when a DType is first hashed).
        if self._hash is None:
            numpy_dtype = self.numpy
            self._hash = hash(self.name) if numpy_dtype is None else hash(numpy_dtype)
        return self._hash

    def __reduce__(self) -> str:
        return self.name


bool_ = DType("bool_", "bool", "b", 1)
int8 = DType("int8", "int8", "i", 1)
int16 = DType("int16", "int16", "i", 2)
int32 = DType("int32", "int32", "i", 4)
int64 = DType("int64", "int64", "i", 8)
uint8 = DType("uint8", "uint8", "u", 1)
uint16 = DType("uint16", "uint16", "u", 2)
uint32 = DType("uint32", "uint32", "u", 4)
uint64 = DType("uint64", "uint64", "u", 8)
float16 = DType("float16", "fp16", "f", 2)
bfloat16 = DType("bfloat16", "bf16", "f", 2)
float32 = DType("float32", "fp32", "f", 4)
float64 = DType("float64", "fp64", "f", 8)
complex64 = DType("complex64", "complex64", "c", 8)
complex128 = DType("complex128", "complex128", "c", 16)
# The FP8 formats, named as ml_dtypes and torch name them.  The OCP formats (NVIDIA Hopper and
# later, Intel Gaudi 3) are e4m3fn (no infinities) and e5m2; the FNUZ variants (no negative zero,
# a single NaN, exponent bias one higher) are what AMD CDNA 3 (gfx942) computes.  The two families
# differ in bit patterns, so a device file declares the one its hardware has.  The IEEE 754-style
# E4M3 (with infinities; ml_dtypes float8_e4m3, the vocabulary's fp8_e4m3_ieee) and E3M4 are
# what AWS Trainium and Inferentia2 compute.
float8_e4m3fn = DType("float8_e4m3fn", "fp8_e4m3", "f", 1)
float8_e5m2 = DType("float8_e5m2", "fp8_e5m2", "f", 1)
float8_e4m3fnuz = DType("float8_e4m3fnuz", "fp8_e4m3fnuz", "f", 1)
float8_e5m2fnuz = DType("float8_e5m2fnuz", "fp8_e5m2fnuz", "f", 1)
float8_e4m3 = DType("float8_e4m3", "fp8_e4m3_ieee", "f", 1)
float8_e3m4 = DType("float8_e3m4", "fp8_e3m4", "f", 1)

ALL: tuple[DType, ...] = (
    *(bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16),
    *(float32, float64, complex64, complex128, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz),
    *(float8_e5m2fnuz, float8_e4m3, float8_e3m4),
)
#: The device-file vocabulary of data types (the schema's ``data_type``, in its order): what
#: ``data_types``, ``peak_tflops`` and the ``sparsity`` requirement clause name.
VOCABULARY: tuple[str, ...] = (
    *("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz"),
    *("fp8_e5m2fnuz", "fp8_e4m3_ieee", "fp8_e3m4", "fp6", "fp4", "bfp8", "bfp4", "bfp2"),
    *("mxfp8", "mxfp6", "mxfp4", "nvfp4", "int64", "int32", "int16", "int8", "int4", "uint8"),
    *("uint16", "uint32", "uint64", "uint4", "complex64", "complex128", "bool"),
)
_BY_NAME: Mapping[str, DType] = MappingProxyType(
    {key: d for d in ALL for key in (d.name, d.vocab)}
    | {"bool": bool_, "half": float16, "float": float64, "double": float64, "complex": complex128}
)
_PYTHON_TYPES = MappingProxyType({bool: bool_, int: int64, float: float64, complex: complex128})
#: Foreign dtype objects already read (NumPy's, torch's), by their type and themselves.
_SEEN: dict[tuple[type, object], DType] = {}


def dtype(value: object) -> DType:
    """The Prism dtype of ``value``: a DType, a name (``"float32"``, ``"fp32"``), a NumPy dtype
    or scalar type, a Python type (``float``), or an array with a ``dtype``."""
    if isinstance(value, DType):
        return value
    if type(value).__hash__ is not None:
        try:
            # NumPy dtypes and scalar types, torch dtypes: read once, then looked up (can_run
            # checks compare dtypes on every call).  Keyed with the type: a library's dtype equal
            # to NumPy's (array-api-strict's warns when compared with one) is never compared with
            # another library's.
            seen = _SEEN.get((type(value), value))
        except TypeError:  # a tuple holding something unhashable
            seen = None
        if seen is not None:
            return seen
    if isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is None:
            from prism_core.kernel.errors import did_you_mean

            raise ValueError(
                f"unknown data type {value!r}{did_you_mean(value, list(_BY_NAME))}; Prism's "
                f"types are {', '.join(d.name for d in ALL)}"
            )
        return found
    if isinstance(value, type) and value in _PYTHON_TYPES:
        return _PYTHON_TYPES[value]
    inner = None if isinstance(value, type) else getattr(value, "dtype", None)
    if inner is not None:  # an array, an ArraySpec, a tensor
        return dtype(inner)
    # NumPy dtypes and scalar types have a name; other libraries' dtypes print as
    # "torch.float32", "array_api_strict.float64".
    name = getattr(value, "name", None) or getattr(value, "__name__", None) or str(value)
    if isinstance(name, str):
        name = name.rpartition(".")[2]
        if name in _BY_NAME:
            found = _BY_NAME[name]
            if len(_SEEN) < 1024 and type(value).__hash__ is not None:
                with contextlib.suppress(TypeError):  # a tuple holding something unhashable
                    _SEEN[type(value), value] = found
            return found
    raise TypeError(f"cannot interpret {value!r} as a data type")


def dtype_name(dt: object) -> str:
    """Prism's name of a dtype of any framework (``"float32"``), or its text when Prism does
    not know it."""
    try:
        return dtype(dt).name
    except (TypeError, ValueError):
        return str(dt).rpartition(".")[2]
