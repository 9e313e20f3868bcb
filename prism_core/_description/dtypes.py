"""Prism's data types: one name per type, mapped to each backend's own and to the device-file
vocabulary (``fp32``, ``bf16``, ...) that features declare."""

from __future__ import annotations

from typing import Any

__all__ = [
    "DType",
    "bfloat16",
    "bool_",
    "complex64",
    "complex128",
    "dtype",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
]


class DType:
    """A Prism data type.  Compare with ``==``; ``vocab`` is its device-file name."""

    __module__ = "prism_core"
    __slots__ = ("itemsize", "kind", "name", "vocab")

    def __init__(self, name: str, vocab: str, kind: str, itemsize: int) -> None:
        self.name = name
        self.vocab = vocab
        self.kind = kind  # b, i, u, f, c (NumPy's kind letters)
        self.itemsize = itemsize

    def __repr__(self) -> str:
        return f"prism_core.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.name == other.name
        try:
            return self.name == dtype(other).name
        except (TypeError, ValueError):
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self) -> str:
        return self.name


bool_ = DType("bool_", "bool", "b", 1)
int8 = DType("int8", "int8", "i", 1)
int16 = DType("int16", "int16", "i", 2)
int32 = DType("int32", "int32", "i", 4)
int64 = DType("int64", "int64", "i", 8)
uint8 = DType("uint8", "uint8", "u", 1)
float16 = DType("float16", "fp16", "f", 2)
bfloat16 = DType("bfloat16", "bf16", "f", 2)
float32 = DType("float32", "fp32", "f", 4)
float64 = DType("float64", "fp64", "f", 8)
complex64 = DType("complex64", "complex64", "c", 8)
complex128 = DType("complex128", "complex128", "c", 16)
# The FP8 formats, named as ml_dtypes and torch name them.  The OCP formats (NVIDIA Hopper and
# later, Intel Gaudi 3) are e4m3fn (no infinities) and e5m2; the FNUZ variants (no negative zero,
# a single NaN, exponent bias one higher) are what AMD CDNA 3 (gfx942) computes.  The two families
# differ in bit patterns, so a device file declares the one its hardware has.
float8_e4m3fn = DType("float8_e4m3fn", "fp8_e4m3", "f", 1)
float8_e5m2 = DType("float8_e5m2", "fp8_e5m2", "f", 1)
float8_e4m3fnuz = DType("float8_e4m3fnuz", "fp8_e4m3fnuz", "f", 1)
float8_e5m2fnuz = DType("float8_e5m2fnuz", "fp8_e5m2fnuz", "f", 1)

ALL: tuple[DType, ...] = (
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
    float8_e4m3fn,
    float8_e5m2,
    float8_e4m3fnuz,
    float8_e5m2fnuz,
)
_BY_NAME: dict[str, DType] = {}
for _d in ALL:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.vocab] = _d
_BY_NAME.update(
    {"bool": bool_, "half": float16, "float": float64, "double": float64, "complex": complex128}
)


def dtype(value: Any) -> DType:
    """The Prism dtype of ``value``: a DType, a name (``"float32"``, ``"fp32"``), a NumPy dtype
    or scalar type, a Python type (``float``), or an array with a ``dtype``."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is None:
            from prism_core._errors import did_you_mean

            raise ValueError(
                f"unknown data type {value!r}{did_you_mean(value, list(_BY_NAME))}; Prism's "
                f"types are {', '.join(d.name for d in ALL)}"
            )
        return found
    if value is bool:
        return bool_
    if value is int:
        return int64
    if value is float:
        return float64
    if value is complex:
        return complex128
    inner = getattr(value, "dtype", None)
    if inner is not None and not isinstance(value, type):
        return dtype(inner)
    # NumPy dtypes and scalar types have a name; torch dtypes print as "torch.float32".
    name = getattr(value, "name", None) or getattr(value, "__name__", None) or str(value)
    if isinstance(name, str):
        name = name.removeprefix("torch.")
        if name in _BY_NAME:
            return _BY_NAME[name]
    raise TypeError(f"cannot interpret {value!r} as a data type")
