"""The NumPy implementations of the builtin ops: the reference variants every backend is tested
against.

Each function calls NumPy the way NumPy users would, so results (arrays, or NumPy scalars where
NumPy gives them, e.g. 0-d reductions), dtype promotion, warnings and errors are NumPy's own:
a caller's mistake raises NumPy's exception unchanged.  Array arguments may be anything NumPy
accepts (arrays, nested lists, scalars); Python scalars keep NumPy's "weak" promotion (NEP 50),
which is why operands are not passed through ``np.asarray`` first.  ``dtype=`` arguments accept
Prism dtypes, NumPy dtypes and names (:func:`numpy_dtype`).

NumPy is imported inside the functions, not at module import: plugin discovery calls
:func:`variants`, and must stay cheap (``prism plugins`` does not import NumPy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from prism_core._description.dtypes import DType, float64
from prism_core._description.dtypes import dtype as prism_dtype
from prism_core._knowledge.variant import Variant

if TYPE_CHECKING:
    import numpy as np

__all__ = ["numpy_dtype", "variants"]

BFLOAT16_MESSAGE = "numpy has no bfloat16; use float32 or a backend that has it"
_COPY_MESSAGE = "Unable to avoid copy while creating an array as requested."
Norm = Literal["backward", "ortho", "forward"]
ConvolveMode = Literal["full", "same", "valid"]


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
def asarray(obj: Any, /, *, dtype: Any = None, copy: bool | None = None) -> Any:
    import numpy as np

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


def zeros(shape: Any, *, dtype: Any = None) -> Any:
    import numpy as np

    return np.zeros(shape, dtype=numpy_dtype(dtype))


def ones(shape: Any, *, dtype: Any = None) -> Any:
    import numpy as np

    return np.ones(shape, dtype=numpy_dtype(dtype))


def full(shape: Any, fill_value: Any, *, dtype: Any = None) -> Any:
    import numpy as np

    return np.full(shape, fill_value, dtype=numpy_dtype(dtype))


def to_numpy(x: Any, /) -> Any:
    import numpy as np

    return np.asarray(x)


# -- elementwise ops are NumPy's own functions (FUNCTIONS below) -----------------------


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


# -- linear algebra --------------------------------------------------------------------------


def einsum(subscripts: Any, /, *operands: Any, dtype: Any = None, optimize: Any = False) -> Any:
    import numpy as np

    return np.einsum(subscripts, *operands, dtype=numpy_dtype(dtype), optimize=optimize)


def linalg_svd(x: Any, /, *, full_matrices: bool = True) -> Any:
    import numpy as np

    return np.linalg.svd(x, full_matrices=full_matrices)


# -- Fourier transforms ----------------------------------------------------------------------
def fft_fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Any:
    import numpy as np

    return np.fft.fft(x, n=n, axis=axis, norm=norm)


def fft_ifft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Any:
    import numpy as np

    return np.fft.ifft(x, n=n, axis=axis, norm=norm)


def fft_rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Any:
    import numpy as np

    return np.fft.rfft(x, n=n, axis=axis, norm=norm)


# -- signal processing and random numbers ----------------------------------------------------
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


#: Op name -> its NumPy implementation.
#: Pass-through ops are NumPy's own functions, named as strings: imported when first chosen
#: (discovery imports no NumPy) and called with no wrapper in between (the hot path).
FUNCTIONS: dict[str, Callable[..., Any] | str] = {
    "asarray": asarray,
    "zeros": zeros,
    "ones": ones,
    "full": full,
    "to_numpy": to_numpy,
    "add": "numpy:add",
    "subtract": "numpy:subtract",
    "multiply": "numpy:multiply",
    "divide": "numpy:divide",
    "power": "numpy:power",
    "square": "numpy:square",
    "sqrt": "numpy:sqrt",
    "exp": "numpy:exp",
    "log": "numpy:log",
    "abs": "numpy:abs",
    "real": "numpy:real",
    "conj": "numpy:conj",
    "sum": sum_,
    "mean": mean,
    "std": std,
    "min": min_,
    "max": max_,
    "reshape": reshape,
    "transpose": transpose,
    "moveaxis": "numpy:moveaxis",
    "expand_dims": expand_dims,
    "matmul": "numpy:matmul",
    "dot": "numpy:dot",
    "einsum": einsum,
    "linalg.inv": "numpy.linalg:inv",
    "linalg.solve": "numpy.linalg:solve",
    "linalg.svd": linalg_svd,
    "linalg.eig": "numpy.linalg:eig",
    "linalg.eigh": "numpy.linalg:eigh",
    "fft.fft": fft_fft,
    "fft.ifft": fft_ifft,
    "fft.rfft": fft_rfft,
    "convolve": convolve,
    "random.normal": random_normal,
}


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
