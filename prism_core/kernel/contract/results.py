"""The named result tuples of the ops that return several arrays, named as NumPy's and the Array
API's: every backend returns these, so that ``U, S, Vh = svd(a)`` and ``svd(a).S`` mean the same
whichever backend ran the call (``prism_core.backend_kit`` exports them to plugins)."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
]


class SVDResult(NamedTuple):
    """``linalg.svd``'s result, named as NumPy's: ``(U, S, Vh)``."""

    U: Any
    S: Any
    Vh: Any


class EighResult(NamedTuple):
    """``linalg.eigh``'s result, named as NumPy's."""

    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    """``linalg.eig``'s result, named as NumPy's."""

    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """``linalg.qr``'s result, named as NumPy's: ``(Q, R)``."""

    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    """``linalg.slogdet``'s result, named as NumPy's: ``(sign, logabsdet)``."""

    sign: Any
    logabsdet: Any


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result, named as the Array API's (and NumPy 2's):
    ``(values, indices, inverse_indices, counts)``."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result, named as the Array API's: ``(values, counts)``."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result, named as the Array API's: ``(values, inverse_indices)``."""

    values: Any
    inverse_indices: Any
