"""The named result tuples of the ops that return several arrays, named as NumPy's and the Array
API's: every backend returns these, so that ``U, S, Vh = svd(a)`` and ``svd(a).S`` mean the same
whichever backend ran the call (``prism_core.backend_kit`` exports them to plugins)."""

from __future__ import annotations

from typing import NamedTuple

from prism_core.kernel.contract.array import Array

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

    U: Array
    S: Array
    Vh: Array


class EighResult(NamedTuple):
    """``linalg.eigh``'s result, named as NumPy's."""

    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    """``linalg.eig``'s result, named as NumPy's."""

    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """``linalg.qr``'s result, named as NumPy's: ``(Q, R)``."""

    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """``linalg.slogdet``'s result, named as NumPy's: ``(sign, logabsdet)``."""

    sign: Array
    logabsdet: Array


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result, named as the Array API's (and NumPy 2's):
    ``(values, indices, inverse_indices, counts)``."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result, named as the Array API's: ``(values, counts)``."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result, named as the Array API's: ``(values, inverse_indices)``."""

    values: Array
    inverse_indices: Array
