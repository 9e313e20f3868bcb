"""The NumPy references of the Array API's linear algebra functions where NumPy's own function is
not the standard's (the rows are ``kernel/records/linalg_functions.py``).

Each differs from NumPy's function of the same name by the standard's axes (``diagonal``,
``trace``, ``cross``, ``vecdot``), its checks (``outer``, ``tensordot``, ``cross``), its
tolerance (``matrix_rank``, ``pinv``), or by being computed where NumPy is older than the
function (``matrix_transpose``, ``vecdot``, ``svdvals``, ``slogdet``'s named tuple).  NumPy is
imported inside the functions.  How each differs: docs/array-api.md, "Where the references
differ from NumPy".
"""

from __future__ import annotations

import operator
from typing import Any

from prism_core._builtin.numpy_ops import numpy_dtype

__all__ = [
    "cross",
    "diagonal",
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


def _np() -> Any:
    import numpy as np

    return np


def _matrices(op: str, x: Any) -> None:
    """A ``ValueError`` naming ``x`` unless it is a matrix or a stack of matrices."""
    shape = _np().shape(x)
    if len(shape) < 2:
        raise ValueError(
            f"{op}: x must be a matrix or a stack of matrices (2 or more dimensions); got an "
            f"array of shape {shape}"
        )


def _integer(op: str, name: str, value: Any) -> int:
    """``value`` as an int (NumPy's integers too), or a ``TypeError`` naming the argument."""
    if isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be an int, not a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {value!r}") from None


def negative_axis(op: str, axis: Any, shapes: tuple[tuple[int, ...], ...], size: int | None) -> int:
    """The ``axis`` of ``cross`` and ``vecdot`` checked as the standard says: an int in
    ``[-N, -1]`` (``N`` the smaller number of dimensions), counted from the end so that it
    means the same axis before and after broadcasting; the operands' sizes along it must be
    equal (and ``size`` where one is required: 3 for ``cross``).  Raises ``TypeError`` or
    ``ValueError`` naming what is wrong; shared by the backends (pure Python on shapes)."""
    found = _integer(op, "axis", axis)
    n = min(len(s) for s in shapes)
    if n == 0:
        raise ValueError(
            f"{op}: x1 and x2 must have at least one dimension; got shapes "
            f"{' and '.join(map(str, shapes))}"
        )
    if not -n <= found <= -1:
        raise ValueError(
            f"{op}: axis must be a negative int in [-{n}, -1] (counted from the last "
            f"dimension, as the Array API requires), got {found}"
        )
    sizes = [s[found] for s in shapes]
    if size is not None and any(d != size for d in sizes):
        raise ValueError(
            f"{op}: x1 and x2 must have {size} elements along axis {found}; got shapes "
            f"{' and '.join(map(str, shapes))}"
        )
    if sizes[0] != sizes[1]:
        raise ValueError(
            f"{op}: x1 and x2 must have the same size along axis {found} (it is not "
            f"broadcast); got shapes {' and '.join(map(str, shapes))}"
        )
    return found


def tensordot_axes(axes: Any) -> Any:
    """The ``axes`` of ``tensordot`` checked: a non-negative int, or a pair of sequences of
    ints of one length; a ``TypeError`` or ``ValueError`` naming ``axes`` otherwise."""
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2 or not all(isinstance(a, (tuple, list)) for a in axes):
            raise ValueError(
                "tensordot: axes must be a non-negative int or a pair of sequences of axes "
                f"(x1's, x2's), got {axes!r}"
            )
        first, second = ([_integer("tensordot", "axes", a) for a in seq] for seq in axes)
        if len(first) != len(second):
            raise ValueError(
                f"tensordot: the two sequences of axes must have one length, got {axes!r}"
            )
        return (first, second)
    n = _integer("tensordot", "axes", axes)
    if n < 0:
        raise ValueError(
            f"tensordot: axes must be a non-negative int (the number of axes contracted) or a "
            f"pair of sequences of axes, got {n}"
        )
    return n


def _inexact(np: Any, dt: Any) -> Any:
    """The floating-point type the linear algebra of ``dt`` computes in (float64 for
    integers and bool, as NumPy's)."""
    return dt if np.dtype(dt).kind in "fc" else np.dtype("float64")


def _rtol(np: Any, op: str, x: Any, rtol: Any) -> Any:
    """The relative tolerance: ``rtol`` (a real number, or an array of them broadcasting
    against the stack of matrices), or the standard's default ``max(M, N) * eps`` of ``x``'s
    floating-point type."""
    if rtol is None:
        return max(x.shape[-2:]) * np.finfo(_inexact(np, x.dtype)).eps
    value = np.asarray(rtol)
    if isinstance(rtol, bool) or value.dtype.kind not in "iuf":
        raise TypeError(
            f"{op}: rtol must be a real number or an array of real numbers (or None, for "
            f"max(M, N) * eps), got {rtol!r}"
        )
    return value


# -- the main namespace ------------------------------------------------------------------------
def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped (a view); ``numpy.matrix_transpose`` is NumPy 2.0's."""
    np = _np()
    _matrices("matrix_transpose", x)
    return np.swapaxes(x, -1, -2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """``numpy.tensordot`` with ``axes`` checked first (:func:`tensordot_axes`)."""
    np = _np()
    return np.tensordot(x1, x2, axes=tensordot_axes(axes))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The dot product of the vectors along ``axis`` (``x1`` conjugated), the other axes
    broadcast; ``numpy.vecdot`` (NumPy 2.0's), or its computation where it is missing."""
    np = _np()
    a, b = np.asarray(x1), np.asarray(x2)
    axis = negative_axis("vecdot", axis, (a.shape, b.shape), None)
    if hasattr(np, "vecdot"):
        return np.vecdot(a, b, axis=axis)
    a, b = np.broadcast_arrays(a, b)  # pragma: no cover - NumPy 1.x
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)  # pragma: no cover
    return (np.conj(a)[..., None, :] @ b[..., None])[..., 0, 0]  # pragma: no cover


# -- the linalg extension ----------------------------------------------------------------------
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``numpy.cross`` of 3-element vectors along a negative ``axis``, checked first."""
    np = _np()
    a, b = np.asarray(x1), np.asarray(x2)
    axis = negative_axis("linalg.cross", axis, (a.shape, b.shape), 3)
    return np.cross(a, b, axis=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonals of the last two axes (NumPy's ``diagonal`` takes the first two)."""
    np = _np()
    _matrices("linalg.diagonal", x)
    return np.diagonal(x, offset=_integer("linalg.diagonal", "offset", offset), axis1=-2, axis2=-1)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    """The number of singular values above ``rtol`` times the largest, as int64."""
    np = _np()
    x = np.asarray(x)
    _matrices("linalg.matrix_rank", x)
    tolerance = _rtol(np, "linalg.matrix_rank", x, rtol)
    s = svdvals(x)
    if s.shape[-1] == 0:  # an empty matrix has rank 0 (NumPy's max of nothing would raise)
        return np.zeros(s.shape[:-1], dtype=np.int64)
    cutoff = np.max(s, axis=-1, keepdims=True) * np.asarray(tolerance)[..., np.newaxis]
    return np.asarray(np.count_nonzero(s > cutoff, axis=-1), dtype=np.int64)


def outer(x1: Any, x2: Any, /) -> Any:
    """``numpy.outer`` of two vectors (NumPy's flattens arrays of any shape first)."""
    np = _np()
    for name, x in (("x1", x1), ("x2", x2)):
        shape = np.shape(x)
        if len(shape) != 1:
            raise ValueError(f"linalg.outer: {name} must be a vector (1-D); got shape {shape}")
    return np.outer(x1, x2)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """``numpy.linalg.pinv`` with the standard's ``rtol`` (NumPy's ``rcond``, whose default
    is 1e-15 rather than ``max(M, N) * eps``)."""
    np = _np()
    x = np.asarray(x)
    _matrices("linalg.pinv", x)
    return np.linalg.pinv(x, rcond=_rtol(np, "linalg.pinv", x, rtol))


def slogdet(x: Any, /) -> Any:
    """``numpy.linalg.slogdet`` as the named tuple ``(sign, logabsdet)`` on every NumPy."""
    np = _np()
    result = np.linalg.slogdet(x)
    if hasattr(result, "logabsdet"):  # NumPy >= 2.0: its SlogdetResult
        return result
    from prism_core.kernel.contract.results import SlogdetResult  # pragma: no cover - NumPy 1.x

    return SlogdetResult(*result)  # pragma: no cover


def svdvals(x: Any, /) -> Any:
    """The singular values, descending; ``numpy.linalg.svdvals`` is NumPy 2.0's."""
    np = _np()
    if hasattr(np.linalg, "svdvals"):
        return np.linalg.svdvals(x)
    return np.linalg.svd(x, compute_uv=False)  # pragma: no cover - NumPy 1.x


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sums of the diagonals of the last two axes (NumPy's ``trace`` takes the first two),
    accumulated as ``sum`` does."""
    np = _np()
    _matrices("linalg.trace", x)
    offset = _integer("linalg.trace", "offset", offset)
    return np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=numpy_dtype(dtype))
