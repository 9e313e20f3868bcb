"""The NumPy references of the Array API's searching, set and sorting functions where
NumPy's own function is not the standard's: the rows of ``kernel/records/searching.py`` name them.

``argsort`` (``descending`` by a stable sort of the reversed array), ``nonzero``,
``searchsorted``, ``count_nonzero`` and the ``unique_*`` functions (NumPy 2's, computed the same
way on every NumPy from 1.23 on: each NaN a value of its own, the values sorted).  NumPy is
imported inside the functions, never at module import.  How and why each differs from NumPy:
docs/array-api.md, "Where the references differ from NumPy".
"""

from __future__ import annotations

from typing import Any, Literal

from prism_core.kernel.contract.results import (
    UniqueAllResult,
    UniqueCountsResult,
    UniqueInverseResult,
)

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
    import numpy as np

    # kind="stable" rather than NumPy 2's stable=True: the same sort, and NumPy 1.x has it.
    kind: Literal["stable"] | None = "stable" if stable else None
    if not descending:
        return np.argsort(x, axis=axis, kind=kind)
    x = np.asarray(x)
    if axis is None:  # NumPy's argsort(axis=None): of the flattened array
        x, axis = np.reshape(x, -1), 0
    if x.ndim == 0:  # one element: ascending and descending are the same
        return np.argsort(x, axis=axis, kind=kind)
    flipped = np.argsort(np.flip(x, axis=axis), axis=axis, kind=kind)  # AxisError: NumPy's
    last = x.shape[axis] - 1
    return last - np.flip(flipped, axis=axis)


def nonzero(x: Any, /) -> Any:
    import numpy as np

    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError(
            "nonzero: x must have at least one dimension, not be 0-d (the Array API defines no "
            "nonzero of a 0-d array); reshape it to (1,) first"
        )
    return np.nonzero(x)


def searchsorted(
    x1: Any, x2: Any, /, *, side: Literal["left", "right"] = "left", sorter: Any = None
) -> Any:
    import numpy as np

    if np.ndim(x1) != 1:
        raise ValueError(
            f"searchsorted: x1 must be one-dimensional (the sorted vector searched), not of "
            f"shape {np.shape(x1)}; x2, the values to place, may have any shape"
        )
    return np.searchsorted(x1, x2, side=side, sorter=sorter)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    import numpy as np

    out = np.count_nonzero(x, axis=axis, keepdims=keepdims)
    return out if hasattr(out, "dtype") else np.intp(out)  # NumPy 1.x: a Python int


def _sorted_flat(x: Any) -> tuple[Any, Any, Any, Any]:
    """``(x, order, ordered, new)`` for the flattened ``x``: the stable sorting permutation,
    the sorted elements and where each new value starts among them (``!=`` the one before, so
    NaNs never equal one another)."""
    import numpy as np

    x = np.asarray(x)
    order = np.argsort(np.reshape(x, -1), kind="stable")  # stable: first occurrences first
    ordered = np.reshape(x, -1)[order]
    new = np.empty(ordered.shape, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return x, order, ordered, new


def _counts(new: Any) -> Any:
    import numpy as np

    return np.diff(np.append(np.flatnonzero(new), new.size))


def _inverse(x: Any, order: Any, new: Any) -> Any:
    import numpy as np

    inverse = np.empty(order.shape, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return np.reshape(inverse, x.shape)


def unique_all(x: Any, /) -> UniqueAllResult:
    x, order, ordered, new = _sorted_flat(x)
    return UniqueAllResult(ordered[new], order[new], _inverse(x, order, new), _counts(new))


def unique_counts(x: Any, /) -> UniqueCountsResult:
    _, _, ordered, new = _sorted_flat(x)
    return UniqueCountsResult(ordered[new], _counts(new))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    x, order, ordered, new = _sorted_flat(x)
    return UniqueInverseResult(ordered[new], _inverse(x, order, new))


def unique_values(x: Any, /) -> Any:
    import numpy as np

    ordered = np.sort(np.reshape(x, -1))
    new = np.empty(ordered.shape, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return ordered[new]
