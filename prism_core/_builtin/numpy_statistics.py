"""The NumPy references of the Array API's statistical and utility functions where
NumPy's own function is not the standard's: the rows of ``kernel/records/statistics.py`` name them
(``all`` and ``any`` are NumPy's own).

``prod`` (Prism dtypes, the standard's accumulation type), ``var`` (``correction``),
``cumulative_prod`` (NumPy 2.1's, from ``cumprod`` on older NumPy) and ``diff`` (``prepend``
and ``append`` of ``None``, ``n`` checked).  NumPy is imported inside the functions.  How each
differs from NumPy: docs/array-api.md, "Where the references differ from NumPy".
"""

from __future__ import annotations

import operator
from typing import Any

from prism_core._builtin.numpy_ops import numpy_dtype

__all__ = ["cumulative_prod", "diff", "prod", "var"]


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.prod(x, axis=axis, dtype=numpy_dtype(dtype), keepdims=keepdims)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    import numpy as np

    return np.var(x, axis=axis, ddof=correction, keepdims=keepdims)


def cumulative_prod(
    x: Any,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
) -> Any:
    import numpy as np

    dt = numpy_dtype(dtype)
    if hasattr(np, "cumulative_prod"):  # NumPy >= 2.1
        return np.cumulative_prod(x, axis=axis, dtype=dt, include_initial=include_initial)
    return _cumulative_prod(np, x, axis, dt, include_initial)  # pragma: no cover


def _cumulative_prod(np: Any, x: Any, axis: int | None, dt: Any, include_initial: bool) -> Any:
    """``numpy.cumulative_prod`` for NumPy < 2.1, from ``cumprod``, with NumPy 2.1's errors."""
    x = np.asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is required."
            )
        x, axis = np.reshape(x, -1), 0  # a 0-d x is a vector of one element, as in NumPy 2.1
    out = np.cumprod(x, axis=axis, dtype=dt)  # an axis out of range: NumPy's AxisError
    if include_initial:
        shape = list(out.shape)
        shape[axis % out.ndim] = 1
        out = np.concatenate([np.ones(shape, dtype=out.dtype), out], axis=axis)
    return out


def _check_n(n: Any) -> int:
    """``diff``'s ``n`` as an int: ``TypeError`` for a non-integer, ``ValueError`` for a
    negative one, each naming ``n``."""
    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(
            f"diff: n must be an integer (how many times to difference), not {n!r}"
        ) from None
    if count < 0:
        raise ValueError(f"diff: n must be 0 or more (how many times to difference), not {count}")
    return count


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    import numpy as np

    ends = {"prepend": prepend} if prepend is not None else {}
    if append is not None:
        ends["append"] = append
    return np.diff(x, n=_check_n(n), axis=axis, **ends)
