"""The standard's dtypes by kind, as the Array API test modules draw them."""

from __future__ import annotations

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
REAL_FLOATING = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
#: torch has too few functions for these to be Prism dtypes on torch: not drawn there.
NOT_ON_TORCH = frozenset({"uint16", "uint32", "uint64"})
