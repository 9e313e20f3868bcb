"""The NumPy implementations of the builtin ops: the reference variants every backend is tested
against.

Each function calls NumPy the way NumPy users would, so results, dtype promotion (operands are
not passed through ``np.asarray``: Python scalars stay weak), warnings and errors are NumPy's
own; ``dtype=`` takes Prism dtypes, NumPy dtypes and names (:func:`numpy_dtype`).  NumPy is
imported inside the functions: discovery calls :func:`variants`, and must stay cheap.  A
function newer than NumPy 1.23 is computed from older ones.  docs/array-api.md, "Where the
references differ from NumPy".
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from prism_core.kernel.contract.device_argument import host_only
from prism_core.kernel.contract.variant import Variant
from prism_core.kernel.description.dtypes import DType, float64
from prism_core.kernel.description.dtypes import dtype as prism_dtype
from prism_core.kernel.records.families import RECORDS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["numpy_dtype", "variants"]

BFLOAT16_MESSAGE = "numpy has no bfloat16; use float32 or a backend that has it"
_COPY_MESSAGE = "Unable to avoid copy while creating an array as requested."
ConvolveMode = Literal["full", "same", "valid"]
QRMode = Literal["reduced", "complete"]


def numpy_dtype(value: Any) -> np.dtype[Any] | None:
    """The NumPy dtype for a ``dtype=`` argument: a Prism dtype, a NumPy dtype or scalar type,
    a Python type, or a name (Prism's, ``"fp32"`` included, or NumPy's); ``None`` stays
    ``None``.  Names neither knows are NumPy's ``TypeError``; bfloat16 is a ``TypeError``."""
    if value is None:
        return None
    import numpy as np

    if isinstance(value, str):
        try:
            value = prism_dtype(value)
        except ValueError:
            # NumPy's own names ("f4", "<i2"), or NumPy's TypeError for an unknown one.
            by_numpy: np.dtype[Any] = np.dtype(value)
            return by_numpy
    if isinstance(value, DType):
        if value.name == "bfloat16":
            raise TypeError(BFLOAT16_MESSAGE)
        return np.dtype("bool" if value.name == "bool_" else value.name)
    result: np.dtype[Any] = np.dtype(value)
    return result


# -- creation and conversion -----------------------------------------------------------------
def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
) -> Any:
    import numpy as np

    if device is not None:
        host_only("asarray", device)
    dt = numpy_dtype(dtype)
    if copy is None:
        return np.asarray(obj, dtype=dt)
    if copy:
        return np.array(obj, dtype=dt, copy=True)
    if int(np.__version__.split(".")[0]) >= 2:
        return np.asarray(obj, dtype=dt, copy=False)
    result = np.asarray(obj, dtype=dt)  # pragma: no cover - NumPy 1.x has no copy=False here
    if result is not obj and not np.may_share_memory(result, obj):  # pragma: no cover
        raise ValueError(_COPY_MESSAGE)
    return result  # pragma: no cover


def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("zeros", device)

    return np.zeros(shape, dtype=numpy_dtype(dtype))


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("ones", device)

    return np.ones(shape, dtype=numpy_dtype(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("full", device)

    return np.full(shape, fill_value, dtype=numpy_dtype(dtype))


def to_numpy(x: Any, /) -> Any:
    import numpy as np

    return np.asarray(x)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    import numpy as np

    if device is not None:
        host_only("from_dlpack", device)

    if not hasattr(x, "__dlpack__"):
        # NumPy says AttributeError, which dispatch would take for a failing backend.
        raise TypeError(
            f"from_dlpack: x must be an array that supports DLPack (has __dlpack__, as NumPy, "
            f"torch and CuPy arrays do), not {type(x).__name__}; use asarray for other data"
        )
    out = np.from_dlpack(x)  # shares x's memory, or raises BufferError where it cannot
    return out.copy() if copy else out


# -- elementwise ops are NumPy's own functions (FUNCTIONS below) -----------------------
def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    import numpy as np

    try:
        return np.clip(x, min, max)
    except ValueError:
        if min is None and max is None:  # NumPy < 2.1: "One of max or min must be given"
            return np.array(x, copy=True)
        raise


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    """All three arguments required: ``numpy.where(condition)`` alone is another function."""
    import numpy as np

    return np.where(condition, x1, x2)


# -- reductions ------------------------------------------------------------------------------
def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.sum(x, axis=axis, dtype=numpy_dtype(dtype), keepdims=keepdims)


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.mean(x, axis=axis, keepdims=keepdims)


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    import numpy as np

    return np.std(x, axis=axis, ddof=correction, keepdims=keepdims)


def min_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.min(x, axis=axis, keepdims=keepdims)


def max_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.max(x, axis=axis, keepdims=keepdims)


# -- searching, sorting and running sums -----------------------------------------------------
def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    import numpy as np

    return np.argmin(x, axis=axis, keepdims=keepdims)


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    import numpy as np

    # kind="stable" rather than NumPy 2's stable=True: the same sort, and NumPy 1.x has it.
    kind: Literal["stable"] | None = "stable" if stable else None
    if not descending:
        return np.sort(x, axis=axis, kind=kind)
    # Reversed, sorted stably ascending and reversed back: descending, and equal elements keep
    # their order (sorting ascending and reversing would reverse them).
    return np.flip(np.sort(np.flip(x, axis=axis), axis=axis, kind=kind), axis=axis)


def cumulative_sum(
    x: Any,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
) -> Any:
    import numpy as np

    dt = numpy_dtype(dtype)
    if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
        return np.cumulative_sum(x, axis=axis, dtype=dt, include_initial=include_initial)
    return _cumulative_sum(np, x, axis, dt, include_initial)


def _cumulative_sum(np: Any, x: Any, axis: int | None, dt: Any, include_initial: bool) -> Any:
    """``numpy.cumulative_sum`` for NumPy < 2.1, from ``cumsum``, with NumPy 2.1's errors."""
    x = np.asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is required."
            )
        x, axis = np.reshape(x, -1), 0  # a 0-d x is a vector of one element, as in NumPy 2.1
    out = np.cumsum(x, axis=axis, dtype=dt)  # an axis out of range: NumPy's AxisError
    if include_initial:
        shape = list(out.shape)
        shape[axis % out.ndim] = 1
        out = np.concatenate([np.zeros(shape, dtype=out.dtype), out], axis=axis)
    return out


# -- shape -----------------------------------------------------------------------------------
def reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Any:
    import numpy as np

    if copy:
        return np.reshape(np.array(x, order="C", copy=True), shape)
    result = np.reshape(x, shape)
    if (
        copy is False
        and isinstance(x, np.ndarray)
        and x.size
        and not np.may_share_memory(result, x)
    ):
        raise ValueError("Unable to avoid creating a copy while reshaping.")  # NumPy's words
    return result


def transpose(x: Any, /, axes: Any = None) -> Any:
    import numpy as np

    return np.transpose(x, axes)


def expand_dims(x: Any, /, axis: Any = 0) -> Any:
    import numpy as np

    return np.expand_dims(x, axis)


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    import numpy as np

    return np.stack(arrays, axis=axis)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    import numpy as np

    return np.concatenate(arrays, axis=axis)


# -- linear algebra --------------------------------------------------------------------------


def einsum(subscripts: Any, /, *operands: Any, dtype: Any = None, optimize: Any = False) -> Any:
    import numpy as np

    return np.einsum(subscripts, *operands, dtype=numpy_dtype(dtype), optimize=optimize)


def linalg_svd(x: Any, /, *, full_matrices: bool = True) -> Any:
    import numpy as np

    return np.linalg.svd(x, full_matrices=full_matrices)


def linalg_qr(x: Any, /, *, mode: QRMode = "reduced") -> Any:
    import numpy as np

    if mode not in ("reduced", "complete"):  # NumPy's "r" and "raw" are not the Array API's
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', not {mode!r}")
    result = np.linalg.qr(x, mode=mode)
    if hasattr(result, "Q"):  # NumPy >= 1.25: QRResult
        return result
    from prism_core.kernel.contract.results import (
        QRResult,  # pragma: no cover - older NumPy's plain tuple
    )

    return QRResult(*result)  # pragma: no cover


def linalg_cholesky(x: Any, /, *, upper: bool = False) -> Any:
    import numpy as np

    if not upper:
        return np.linalg.cholesky(x)
    if int(np.__version__.split(".")[0]) >= 2:
        return np.linalg.cholesky(x, upper=True)
    # NumPy 1.x: U is the conjugate transpose of L (x == L @ L^H == U^H @ U).
    return np.conj(np.swapaxes(np.linalg.cholesky(x), -1, -2))  # pragma: no cover


def linalg_vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    import numpy as np

    if hasattr(np.linalg, "vector_norm"):  # NumPy >= 2
        return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    return _vector_norm(np, x, axis, keepdims, ord)


def _vector_norm(np: Any, x: Any, axis: Any, keepdims: bool, ord: Any) -> Any:
    """``numpy.linalg.vector_norm`` for NumPy 1.x, computed as NumPy 2 does: the axes reduced
    are moved to the end and made one, whose ``linalg.norm`` is taken."""
    x = np.asarray(x)
    shape = x.shape
    if axis is None:
        axes = tuple(range(x.ndim))
        x, last = np.reshape(x, -1), 0
    else:
        axes = tuple(_axis(np, a, x.ndim) for a in (axis if isinstance(axis, tuple) else (axis,)))
        rest = [d for d in range(x.ndim) if d not in axes]
        size = math.prod(shape[d] for d in axes)
        x = np.reshape(np.transpose(x, (*rest, *axes)), (*(shape[d] for d in rest), size))
        last = -1
    norm = np.linalg.norm(x, ord=ord, axis=last)
    if keepdims:
        norm = np.reshape(norm, tuple(1 if d in axes else n for d, n in enumerate(shape)))
    return norm


def _axis(np: Any, axis: int, ndim: int) -> int:
    """``axis`` counted from 0, or NumPy's AxisError (a ValueError) when it is out of range."""
    if not -ndim <= axis < ndim:
        raise (getattr(np, "exceptions", None) or np).AxisError(axis, ndim)
    return axis % ndim


def linalg_matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    import numpy as np

    if hasattr(np.linalg, "matrix_norm"):  # NumPy >= 2
        return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
    return np.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)  # what NumPy 2 does


def convolve(a: Any, v: Any, /, mode: ConvolveMode = "full") -> Any:
    import numpy as np

    return np.convolve(a, v, mode=mode)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    std: Any = 1.0,
    *,
    seed: Any = None,
    dtype: Any = float64,
) -> Any:
    """Draw in float64 and round to ``dtype``, so one seed gives the same numbers (rounded) in
    every floating-point type."""
    import numpy as np

    dt = numpy_dtype(dtype)
    if dt is None or dt.kind != "f":
        raise TypeError(
            f"random.normal draws real floating-point numbers; dtype {dtype!r} is not one "
            "(use float16, float32 or float64)"
        )
    rng = np.random.default_rng(seed)
    return np.asarray(rng.normal(mean, std, size=shape)).astype(dt, copy=False)


# -- gradients: NumPy has no autograd ----------------------------------------------------------
def requires_grad(x: Any, /, flag: bool = True) -> Any:
    """``x`` itself: NumPy arrays track no gradients (``value_and_grad`` uses finite
    differences on NumPy)."""
    return x


def detach(x: Any, /) -> Any:
    """``x`` itself: a NumPy array is never part of a gradient graph."""
    return x


#: Op name -> its NumPy implementation, as its record names it (``"module:attribute"``): NumPy's
#: own function where it is the standard's, else one of this module's.  Imported when first
#: chosen (discovery imports no NumPy) and called with no wrapper in between (the hot path).
FUNCTIONS: dict[str, str] = {r.name: r.numpy for r in RECORDS}


def variants() -> list[Variant]:
    """One NumPy reference variant per builtin op (what the builtin plugin's
    ``prism_variants`` hook returns)."""
    return [
        Variant(
            op_name,
            fn,
            backend="numpy",
            reference=True,
            name=f"numpy.{op_name}",
            source="plugin:numpy",
        )
        for op_name, fn in FUNCTIONS.items()
    ]
