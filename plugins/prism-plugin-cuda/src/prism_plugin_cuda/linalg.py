"""The ``cuda`` backend's linear algebra functions of the Array API where CuPy's differ from the
standard's (issue 12; ``families.LINALG`` passes CuPy's own ``linalg.det`` and
``linalg.eigvalsh`` through).

What differs, function by function: CuPy's ``diagonal`` and ``trace`` take the first two axes
(the standard the last two); CuPy has no ``matrix_transpose``, ``vecdot`` or ``svdvals`` in
every version this plugin supports; ``cross``, ``outer`` and ``tensordot`` take what the
standard rejects (2-element vectors, arrays of any shape, a negative int of axes);
``slogdet`` returns a plain tuple (the standard a named one); ``matrix_rank`` and ``pinv`` take
an absolute ``tol`` or NumPy's ``rcond`` (the standard a relative ``rtol``); and a singular
matrix raised to a negative power gives NaNs unless cuSOLVER's status is read.  The checks are
prism-core's own (``numpy_linalg.negative_axis``, ``tensordot_axes``), so that the errors have
the words they have on NumPy and torch.

Arguments are CuPy arrays (the dispatcher moves the others); CuPy is imported inside the
functions, as in ``ops``.
"""

from __future__ import annotations

import operator
from typing import Any

from prism_core.backend_kit import SlogdetResult
from prism_core.reference import negative_axis, tensordot_axes

from .backend import cupy_dtype
from .ops import _linalg_errors, _on_device

__all__ = [
    "cross",
    "diagonal",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "slogdet",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
]


def _stack_of_matrices(op: str, x: Any) -> None:
    if x.ndim < 2:
        raise ValueError(
            f"{op}: x must be a matrix or a stack of matrices (2 or more dimensions); got an "
            f"array of shape {tuple(x.shape)}"
        )


def _offset(op: str, offset: Any) -> int:
    if isinstance(offset, bool):
        raise TypeError(f"{op}: offset must be an int, not a bool")
    try:
        return operator.index(offset)
    except TypeError:
        raise TypeError(f"{op}: offset must be an int, got {offset!r}") from None


# -- the main namespace ------------------------------------------------------------------------
def matrix_transpose(x: Any, /) -> Any:
    import cupy

    _stack_of_matrices("matrix_transpose", x)
    return cupy.swapaxes(x, -1, -2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    import cupy

    return cupy.tensordot(x1, x2, axes=tensordot_axes(axes))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``sum(conj(x1) * x2)`` along ``axis``, in the operands' promoted type (CuPy's ``sum``
    would widen small integers; NumPy's ``vecdot`` does not)."""
    import cupy

    axis = negative_axis("vecdot", axis, (tuple(x1.shape), tuple(x2.shape)), None)
    product = cupy.conj(x1) * x2 if x1.dtype.kind == "c" else x1 * x2
    return cupy.sum(product, axis=axis, dtype=product.dtype)


# -- the linalg extension ----------------------------------------------------------------------
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    import cupy

    axis = negative_axis("linalg.cross", axis, (tuple(x1.shape), tuple(x2.shape)), 3)
    return cupy.cross(x1, x2, axis=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    import cupy

    for name, x in (("x1", x1), ("x2", x2)):
        if x.ndim != 1:
            raise ValueError(f"linalg.outer: {name} must be a vector (1-D); got shape {x.shape}")
    return cupy.outer(x1, x2)


def matrix_power(x: Any, n: Any, /) -> Any:
    """CuPy's ``matrix_power``, with cuSOLVER's status read for a negative ``n`` (the inverse
    of a singular matrix is NumPy's ``LinAlgError``)."""
    import cupy

    if not isinstance(n, bool):
        try:
            if operator.index(n) < 0:
                with _linalg_errors("Singular matrix"):
                    return cupy.linalg.matrix_power(x, n)
        except TypeError:
            pass  # NumPy's TypeError, from CuPy's check below
    return cupy.linalg.matrix_power(x, n)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    import cupy

    _stack_of_matrices("linalg.diagonal", x)
    return cupy.diagonal(x, offset=_offset("linalg.diagonal", offset), axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    import cupy

    _stack_of_matrices("linalg.trace", x)
    offset = _offset("linalg.trace", offset)
    return cupy.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=cupy_dtype(dtype))


def slogdet(x: Any, /) -> SlogdetResult:
    import cupy

    sign, logabsdet = cupy.linalg.slogdet(x)
    return SlogdetResult(sign, logabsdet)


def svdvals(x: Any, /) -> Any:
    import cupy

    with _linalg_errors("SVD did not converge"):
        return cupy.linalg.svd(x, compute_uv=False)


def _rtol(op: str, x: Any, rtol: Any) -> Any:
    """The relative tolerance: ``rtol`` (a real number or array, on the GPU), or the standard's
    ``max(M, N) * eps`` of ``x``'s floating-point type."""
    import cupy
    import numpy as np

    if rtol is None:
        inexact = x.dtype if x.dtype.kind in "fc" else np.dtype("float64")
        return cupy.asarray(max(x.shape[-2:]) * np.finfo(inexact).eps)
    value = _on_device(rtol)
    kind = getattr(value, "dtype", np.asarray(rtol).dtype).kind
    if isinstance(rtol, bool) or kind not in "iuf":
        raise TypeError(
            f"{op}: rtol must be a real number or an array of real numbers (or None, for "
            f"max(M, N) * eps), got {rtol!r}"
        )
    return cupy.asarray(value)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    import cupy

    _stack_of_matrices("linalg.matrix_rank", x)
    tolerance = _rtol("linalg.matrix_rank", x, rtol)
    s = svdvals(x)
    if s.shape[-1] == 0:  # an empty matrix has rank 0
        return cupy.zeros(s.shape[:-1], dtype="int64")
    cutoff = cupy.max(s, axis=-1, keepdims=True) * tolerance[..., None]
    return cupy.asarray(cupy.count_nonzero(s > cutoff, axis=-1), dtype="int64")


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """``V diag(1/S) U^H`` from the thin SVD, the singular values up to ``rtol`` times the
    largest taken as zero (NumPy's computation, with the standard's tolerance)."""
    import cupy

    _stack_of_matrices("linalg.pinv", x)
    tolerance = _rtol("linalg.pinv", x, rtol)
    if x.size == 0:  # the pseudo-inverse of an empty matrix: empty, transposed
        inexact = x.dtype if x.dtype.kind in "fc" else "float64"
        return cupy.zeros((*x.shape[:-2], x.shape[-1], x.shape[-2]), dtype=inexact)
    with _linalg_errors("SVD did not converge"):
        u, s, vh = cupy.linalg.svd(x, full_matrices=False)
    cutoff = cupy.max(s, axis=-1, keepdims=True) * tolerance[..., None]
    large = s > cutoff
    inverse = cupy.where(large, 1 / cupy.where(large, s, 1), 0)
    v = cupy.swapaxes(vh, -1, -2).conj()
    return cupy.matmul(v * inverse[..., None, :], cupy.swapaxes(u, -1, -2).conj())
