"""The Array API's searching, set and sorting functions on CuPy (issue 12), where CuPy's own
differ from the standard's (``families.py`` names CuPy's own where they do not), with the
semantics of Prism's NumPy references (``prism_core/_builtin/numpy_searching.py``).

* ``argsort``: CuPy has no ``descending`` nor ``stable`` (its sort is always stable, and
  ``kind="stable"`` is said anyway, which CuPy accepts and NumPy standing in needs); a
  descending sort is the reversed array sorted ascending, its indices counted back, so equal
  elements keep their order.
* ``nonzero`` of a 0-d array and ``searchsorted`` of an ``x1`` that is not a vector are
  ``ValueError`` naming the argument, as on NumPy.
* ``count_nonzero`` takes ``keepdims`` (CuPy's does not).
* the ``unique_*`` functions are one stable sort of the flattened array and a new value
  wherever an element is ``!=`` the one before it, as the NumPy reference (sorted values, each
  NaN its own value), whatever CuPy's version has; the results are
  ``prism_core.backend_kit``'s named tuples.

CuPy is imported inside the functions: importing this module imports no CuPy.
"""

from __future__ import annotations

from typing import Any

from prism_core.backend_kit import UniqueAllResult, UniqueCountsResult, UniqueInverseResult

__all__ = [
    "argsort",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    import cupy

    if not descending:
        return cupy.argsort(x, axis=axis, kind="stable")
    if axis is None:  # NumPy's argsort(axis=None): of the flattened array
        x, axis = x.reshape(-1), 0
    if x.ndim == 0:  # one element: ascending and descending are the same
        return cupy.argsort(x, axis=axis, kind="stable")
    flipped = cupy.argsort(cupy.flip(x, axis=axis), axis=axis, kind="stable")
    return (x.shape[axis] - 1) - cupy.flip(flipped, axis=axis)


def nonzero(x: Any, /) -> Any:
    import cupy

    if x.ndim == 0:
        raise ValueError(
            "nonzero: x must have at least one dimension, not be 0-d (the Array API defines no "
            "nonzero of a 0-d array); reshape it to (1,) first"
        )
    return cupy.nonzero(x)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    import cupy

    if x1.ndim != 1:
        raise ValueError(
            f"searchsorted: x1 must be one-dimensional (the sorted vector searched), not of "
            f"shape {x1.shape}; x2, the values to place, may have any shape"
        )
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")  # NumPy's
    if sorter is not None:
        sorter = cupy.asarray(sorter)
    if hasattr(x2, "dtype"):
        x2 = cupy.asarray(x2)
    return cupy.searchsorted(x1, x2, side=side, sorter=sorter)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    import cupy

    return cupy.sum(x != 0, axis=axis, keepdims=keepdims, dtype=cupy.intp)


def _sorted_flat(x: Any) -> tuple[Any, Any, Any]:
    """``(order, ordered, new)`` of the flattened ``x``: the stable sorting permutation, the
    sorted elements and where each new value starts among them (NaN != NaN: each its own)."""
    import cupy

    flat = x.reshape(-1)
    order = cupy.argsort(flat, kind="stable")  # first occurrences first
    ordered = flat[order]
    new = cupy.empty(ordered.shape, dtype=bool)
    new[:1] = True
    cupy.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return order, ordered, new


def _counts(new: Any) -> Any:
    import cupy

    starts = cupy.flatnonzero(new)
    return cupy.diff(cupy.concatenate([starts, cupy.asarray([new.size], dtype=starts.dtype)]))


def _inverse(x: Any, order: Any, new: Any) -> Any:
    import cupy

    inverse = cupy.empty(order.shape, dtype=cupy.intp)
    inverse[order] = cupy.cumsum(new) - 1
    return inverse.reshape(x.shape)


def unique_all(x: Any, /) -> UniqueAllResult:
    order, ordered, new = _sorted_flat(x)
    return UniqueAllResult(ordered[new], order[new], _inverse(x, order, new), _counts(new))


def unique_counts(x: Any, /) -> UniqueCountsResult:
    _, ordered, new = _sorted_flat(x)
    return UniqueCountsResult(ordered[new], _counts(new))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    order, ordered, new = _sorted_flat(x)
    return UniqueInverseResult(ordered[new], _inverse(x, order, new))


def unique_values(x: Any, /) -> Any:
    _, ordered, new = _sorted_flat(x)
    return ordered[new]
