"""The Array API's statistical and utility functions on CuPy (issue 12), where CuPy's own
differ from the standard's (``all`` and ``any`` are CuPy's own: ``families.py``), with the
semantics of Prism's NumPy references (``prism_core/_builtin/numpy_statistics.py``).

* ``prod`` and ``cumulative_prod`` take Prism dtypes (``backend.cupy_dtype``);
  ``cumulative_prod`` is NumPy 2.1's (``axis`` required unless ``x`` is 1-D,
  ``include_initial``), from CuPy's ``cumprod``.
* ``var`` takes ``correction`` (CuPy's ``ddof``).
* ``diff`` moves ``prepend``/``append`` to the GPU and names ``n`` when it is not a
  non-negative integer.

CuPy is imported inside the functions: importing this module imports no CuPy.
"""

from __future__ import annotations

import operator
from typing import Any

from .backend import cupy_dtype

__all__ = ["cumulative_prod", "diff", "prod", "var"]


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    import cupy

    return cupy.prod(x, axis=axis, dtype=cupy_dtype(dtype), keepdims=keepdims)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    import cupy

    return cupy.var(x, axis=axis, ddof=correction, keepdims=keepdims)


def cumulative_prod(
    x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    import cupy

    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is required."
            )
        x, axis = x.reshape(-1), 0  # a 0-d x is a vector of one element, as in NumPy 2.1
    out = cupy.cumprod(x, axis=axis, dtype=cupy_dtype(dtype))
    if not include_initial:
        return out
    shape = list(out.shape)
    shape[axis % out.ndim] = 1
    return cupy.concatenate([cupy.ones(shape, dtype=out.dtype), out], axis=axis)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    import cupy

    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(
            f"diff: n must be an integer (how many times to difference), not {n!r}"
        ) from None
    if count < 0:
        raise ValueError(f"diff: n must be 0 or more (how many times to difference), not {count}")
    ends = {"prepend": cupy.asarray(prepend)} if prepend is not None else {}
    if append is not None:
        ends["append"] = cupy.asarray(append)
    return cupy.diff(x, n=count, axis=axis, **ends)
