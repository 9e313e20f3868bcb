"""The NumPy references of the Array API's creation and data-type functions
(``kernel/records/creation.py``), where NumPy's own function differs from the standard or lacks its
signature: default dtypes (int64 and float64 on every platform), ``device=``, integer
``linspace``, ``tril``/``triu`` of one dimension, ``astype``'s complex-to-real casts and
``copy=False``, ``meshgrid``'s list and dtypes.

NumPy is imported inside the functions, as in ``numpy_ops.py`` (discovery imports no NumPy);
``dtype=`` accepts Prism dtypes, NumPy dtypes and names (``numpy_ops.numpy_dtype``);
``device=`` is checked by :func:`prism_core.backend_kit.host_only` (NumPy creates in host
memory only).  NumPy 1.23 and later.
"""

from __future__ import annotations

import operator
from typing import Any

from prism_core._builtin.numpy_ops import numpy_dtype
from prism_core.kernel.contract.device_argument import host_only

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


def _integral(value: Any) -> bool:
    """Whether ``value`` is an integer (a Python int or NumPy's; not a bool's float)."""
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def arange_bounds(start: Any, stop: Any, step: Any) -> tuple[Any, Any, Any, bool]:
    """``arange``'s arguments as the standard reads them: ``(start, stop, step, integral)``,
    ``[0, start)`` without ``stop``, and whether all three are integers (the default dtype is
    int64 then, float64 otherwise); ``step=0`` is a ``ValueError``.  Shared by the backends
    (``prism_core.reference``)."""
    if step == 0:
        raise ValueError("arange: step must not be 0 (it is the distance between two values)")
    if stop is None:
        start, stop = 0, start
    return start, stop, step, all(_integral(v) for v in (start, stop, step))


def linspace_count(num: Any) -> int:
    """``linspace``'s ``num``: an integer, 0 or more (``TypeError``, ``ValueError``).  Shared
    by the backends (``prism_core.reference``)."""
    count = operator.index(num)
    if count < 0:
        raise ValueError(f"linspace: num must be 0 or more (the number of values), not {num}")
    return count


# -- from numbers ------------------------------------------------------------------------------
def arange(
    start: Any,
    /,
    stop: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    import numpy as np

    if device is not None:
        host_only("arange", device)
    start, stop, step, integral = arange_bounds(start, stop, step)
    dt = numpy_dtype(dtype)
    if dt is None:
        return np.arange(start, stop, step, dtype=np.int64 if integral else np.float64)
    if integral or dt.kind in "fc":
        return np.arange(start, stop, step, dtype=dt)
    # An integer (or bool) dtype with a fractional bound or step: NumPy would compute the
    # step in the integer type (arange(0, 2, 0.5, dtype=int) is all zeros).
    return np.arange(start, stop, step, dtype=np.float64).astype(dt)


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
    import numpy as np

    if device is not None:
        host_only("linspace", device)
    count = linspace_count(num)
    dt = numpy_dtype(dtype)
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dt is None:
        dt = np.dtype(np.complex128 if is_complex else np.float64)
    if dt.kind in "fc":
        return np.linspace(start, stop, count, endpoint=endpoint, dtype=dt)
    # An integer dtype: floor, as NumPy 2 does (NumPy 1 truncated towards zero).
    values = np.linspace(start, stop, count, endpoint=endpoint, dtype=np.float64)
    return np.floor(values).astype(dt)


def eye(
    n_rows: Any,
    n_cols: Any = None,
    /,
    *,
    k: Any = 0,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    import numpy as np

    if device is not None:
        host_only("eye", device)
    return np.eye(n_rows, n_cols, k=k, dtype=numpy_dtype(dtype) or np.float64)


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("empty", device)
    return np.empty(shape, dtype=numpy_dtype(dtype) or np.float64)


# -- like another array ------------------------------------------------------------------------
def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("empty_like", device)
    return np.empty_like(x, dtype=numpy_dtype(dtype))


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("zeros_like", device)
    return np.zeros_like(x, dtype=numpy_dtype(dtype))


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("ones_like", device)
    return np.ones_like(x, dtype=numpy_dtype(dtype))


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("full_like", device)
    check_fill_value("full_like", fill_value)
    return np.full_like(x, fill_value, dtype=numpy_dtype(dtype))


def check_fill_value(op: str, fill_value: Any) -> None:
    """The standard's ``fill_value``: a Python scalar (NumPy's scalars are Python's subclasses
    or 0-d data: both accepted; an array is a ``TypeError`` naming ``fill_value``)."""
    if isinstance(fill_value, _SCALARS) or getattr(fill_value, "shape", None) == ():
        return
    raise TypeError(
        f"{op}: fill_value must be a Python bool, int, float or complex, not "
        f"{type(fill_value).__name__}"
    )


# -- from arrays ---------------------------------------------------------------------------------
def check_meshgrid(arrays: tuple[Any, ...], indexing: Any) -> None:
    """The standard's ``meshgrid`` arguments: one dtype, 1-D (or 0-d) arrays, ``indexing`` of
    ``'xy'``/``'ij'``; each a ``ValueError`` naming the argument (``dtype`` read as the
    backend's own, compared by Prism's name)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    from prism_core.kernel.description.dtypes import dtype_name

    names = {dtype_name(a.dtype) for a in arrays if hasattr(a, "dtype")}
    if len(names) > 1:
        raise ValueError(
            f"meshgrid: arrays must all have one dtype (the standard promotes none), got "
            f"{', '.join(sorted(names))}; convert them with astype first"
        )
    for i, a in enumerate(arrays):
        if len(getattr(a, "shape", ())) > 1:
            raise ValueError(
                f"meshgrid: arrays[{i}] must be 1-D (a vector of coordinates), not of shape "
                f"{tuple(a.shape)}"
            )


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    import numpy as np

    check_meshgrid(arrays, indexing)
    return list(np.meshgrid(*arrays, indexing="ij" if indexing == "ij" else "xy"))


def check_matrices(op: str, x: Any) -> None:
    """``tril``'s and ``triu``'s ``x``: two dimensions or more (``ValueError`` naming ``x``)."""
    ndim = len(getattr(x, "shape", ()))
    if ndim < 2:
        raise ValueError(
            f"{op}: x must have 2 dimensions or more (a matrix, or a stack of them), not {ndim}"
        )


def tril(x: Any, /, k: Any = 0) -> Any:
    import numpy as np

    check_matrices("tril", x)
    return np.tril(x, k=k)


def triu(x: Any, /, k: Any = 0) -> Any:
    import numpy as np

    check_matrices("triu", x)
    return np.triu(x, k=k)


# -- data types ----------------------------------------------------------------------------------
def check_cast(x_dtype: str, to: str) -> None:
    """The standard forbids casting complex numbers to a real type: a ``TypeError`` naming both
    (dtypes by Prism's names)."""
    if x_dtype.startswith("complex") and not to.startswith("complex"):
        raise TypeError(
            f"astype: x is {x_dtype}; the Array API forbids casting complex numbers to {to} "
            "(it would drop the imaginary parts): take real(x) or abs(x) first"
        )


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("astype", device)
    dt = numpy_dtype(dtype)
    if dt is None:
        raise TypeError("astype: dtype is required (a Prism dtype, a NumPy dtype or a name)")
    x = x if isinstance(x, np.ndarray) else np.asarray(x)
    check_cast(x.dtype.name, dt.name)
    if not copy and x.dtype == dt:
        return x
    return x.astype(dt, copy=True)
