"""The Array API's creation and data-type functions on CuPy (issue 12; the ops of
``prism_core._knowledge.creation``), with the NumPy reference's semantics where CuPy's functions
have NumPy's: the standard's default dtypes (int64 and float64), ``device=`` (read by
``ops.gpu_device``: ``None`` is the current GPU), ``linspace`` floored into integer dtypes,
``tril``/``triu`` refusing one dimension, ``meshgrid``'s list of one dtype, ``astype``
refusing complex-to-real casts.  The arrays of the ``*_like`` functions are made on the current
GPU (where dispatch moved ``x``).

CuPy is imported inside the functions, as in ``ops.py``: importing this module imports no CuPy.
"""

from __future__ import annotations

from typing import Any

import prism_core.reference as ref

from .backend import cupy_dtype
from .ops import gpu_device

__all__ = [
    "arange",
    "astype",
    "empty",
    "empty_like",
    "eye",
    "full_like",
    "linspace",
    "meshgrid",
    "ones_like",
    "tril",
    "triu",
    "zeros_like",
]

_SCALARS = (bool, int, float, complex)



def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> Any:
    import cupy

    start, stop, step, integral = ref.arange_bounds(start, stop, step)
    dt = cupy_dtype(dtype)
    with gpu_device("arange", device):
        if dt is None:
            return cupy.arange(start, stop, step, dtype="int64" if integral else "float64")
        if integral or dt.kind in "fc":
            return cupy.arange(start, stop, step, dtype=dt)
        return cupy.arange(start, stop, step, dtype="float64").astype(dt)


def linspace(
    start: Any,
    stop: Any,
    /,
    num: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: bool = True,
) -> Any:
    import cupy

    count = ref.linspace_count(num)
    dt = cupy_dtype(dtype)
    if dt is None:
        complex_bounds = isinstance(start, complex) or isinstance(stop, complex)
        dt = cupy_dtype("complex128" if complex_bounds else "float64")
    with gpu_device("linspace", device):
        if dt.kind == "c":  # CuPy's linspace takes real bounds only (it calls float())
            start, stop = complex(start), complex(stop)
            part = cupy.empty(0, dt).real.dtype
            real = cupy.linspace(start.real, stop.real, count, endpoint=endpoint, dtype=part)
            imag = cupy.linspace(start.imag, stop.imag, count, endpoint=endpoint, dtype=part)
            return (real + 1j * imag).astype(dt)
        if dt.kind == "f":
            return cupy.linspace(start, stop, count, endpoint=endpoint, dtype=dt)
        values = cupy.linspace(start, stop, count, endpoint=endpoint, dtype="float64")
        return cupy.floor(values).astype(dt)  # towards minus infinity, as NumPy 2


def eye(
    n_rows: Any, n_cols: Any = None, /, *, k: Any = 0, dtype: Any = None, device: Any = None
) -> Any:
    import cupy

    dt = cupy_dtype(dtype)
    with gpu_device("eye", device):
        return cupy.eye(n_rows, n_cols, k=k, dtype="float64" if dt is None else dt)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    dt = cupy_dtype(dtype)
    with gpu_device("empty", device):
        return cupy.empty(shape, dtype="float64" if dt is None else dt)


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    with gpu_device("empty_like", device):
        return cupy.empty(x.shape, dtype=cupy_dtype(dtype) or x.dtype)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    with gpu_device("zeros_like", device):
        return cupy.zeros(x.shape, dtype=cupy_dtype(dtype) or x.dtype)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    with gpu_device("ones_like", device):
        return cupy.ones(x.shape, dtype=cupy_dtype(dtype) or x.dtype)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    if not (isinstance(fill_value, _SCALARS) or getattr(fill_value, "shape", None) == ()):
        raise TypeError(
            f"full_like: fill_value must be a Python bool, int, float or complex, not "
            f"{type(fill_value).__name__}"
        )
    with gpu_device("full_like", device):
        return cupy.full_like(x, fill_value, dtype=cupy_dtype(dtype))


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    import cupy

    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    names = {str(a.dtype) for a in arrays}
    if len(names) > 1:
        raise ValueError(
            f"meshgrid: arrays must all have one dtype (the standard promotes none), got "
            f"{', '.join(sorted(names))}; convert them with astype first"
        )
    for i, a in enumerate(arrays):
        if a.ndim > 1:
            raise ValueError(
                f"meshgrid: arrays[{i}] must be 1-D (a vector of coordinates), not of shape "
                f"{tuple(a.shape)}"
            )
    return list(cupy.meshgrid(*arrays, indexing=indexing))


def _matrices(op: str, x: Any) -> None:
    if x.ndim < 2:
        raise ValueError(
            f"{op}: x must have 2 dimensions or more (a matrix, or a stack of them), not {x.ndim}"
        )


def tril(x: Any, /, *, k: Any = 0) -> Any:
    import cupy

    _matrices("tril", x)
    return cupy.tril(x, k=k)


def triu(x: Any, /, *, k: Any = 0) -> Any:
    import cupy

    _matrices("triu", x)
    return cupy.triu(x, k=k)


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    import cupy

    dt = cupy_dtype(dtype)
    if dt is None:
        raise TypeError("astype: dtype is required (a Prism dtype, a NumPy dtype or a name)")
    if x.dtype.kind == "c" and dt.kind != "c":
        raise TypeError(
            f"astype: x is {x.dtype}; the Array API forbids casting complex numbers to {dt} "
            "(it would drop the imaginary parts): take real(x) or abs(x) first"
        )
    if device is None:
        if not copy and x.dtype == dt:
            return x
        return x.astype(dt, copy=True)
    with gpu_device("astype", device):  # a copy on that GPU
        return cupy.array(x, dtype=dt, copy=True)
