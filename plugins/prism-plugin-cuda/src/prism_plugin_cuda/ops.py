"""The ``cuda`` backend's implementations of Prism's ops, on CuPy.

The variants (``prism_plugin_cuda.variants``: its ``FUNCTIONS`` maps each op to its function
here) name them in the lazy form ``"prism_plugin_cuda.ops:add"``: this module is imported when
dispatch first chooses one of them, never at plugin discovery, and importing it imports no CuPy
either (each function imports CuPy when called, as ``prism_core._builtin.numpy_ops`` does
NumPy).

* **Pass-through ops** (:data:`PASSTHROUGH`): CuPy's function has NumPy's semantics for what
  the catalogue documents, so the variant runs CuPy's own function with no Python wrapper in
  between (the hot path).  They are attributes of this module resolved on first access
  (``ops.add`` is ``cupy.add``, through the module's ``__getattr__``, PEP 562).
* **Wrapped ops**: the functions below, where CuPy differs from NumPy's semantics: results
  NumPy gives as named tuples (:class:`~prism_core.backend_kit.SVDResult`, ...), ``dtype=``
  arguments in Prism's names, keyword names (``correction``, ``upper``, ``descending``),
  errors NumPy raises and CuPy does not (a singular matrix, integers to negative powers, a
  complex ``rfft``), and functions CuPy lacks (``linalg.vector_norm``,
  ``linalg.matrix_norm``).
* **Arguments** are CuPy arrays or Python scalars: the dispatcher moves any other array to the
  GPU first (:meth:`CudaBackend.to_device`).  The functions that take arrays in other places
  (the items of ``stack``'s sequence, ``clip``'s bounds, ``random.normal``'s ``mean``) move
  those themselves.
* **Results are CuPy arrays** on the GPU (reductions to 0-d too: CuPy has no scalars); the
  dispatcher copies them back for NumPy callers in automatic mode.
* **Where NumPy's semantics cost a synchronisation**, they are kept: the linear algebra ops
  read cuSOLVER's status (``cupyx.errstate(linalg="raise")``) so that a singular matrix raises
  ``numpy.linalg.LinAlgError`` as on NumPy instead of returning NaNs, ``linalg.eig`` of a real
  matrix checks whether every eigenvalue is real (NumPy 2.4 and earlier then return real
  arrays), and
  ``power`` of integers checks the exponents' signs.
* **Random numbers** (``random.normal``) are drawn on the host with NumPy's
  ``default_rng(seed)`` and copied to the GPU: one seed gives the same numbers on every backend
  (what the catalogue promises), at the cost of drawing on the CPU and one copy.  Code that
  needs many random numbers fast on the GPU and not these ones should call ``cupy.random``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

from prism_core.backend_kit import (
    EighResult,
    EigResult,
    QRResult,
    SVDResult,
    linalg_error,
    requested_device,
)
from prism_core.reference import eig_real_when_real

from .backend import cupy_dtype
from .elementwise import ELEMENTWISE
from .families import FAMILY_FUNCTIONS, attribute

__all__ = [
    "PASSTHROUGH",
    "asarray",
    "clip",
    "concat",
    "convolve",
    "cumulative_sum",
    "detach",
    "einsum",
    "expand_dims",
    "fft_rfft",
    "from_dlpack",
    "full",
    "gpu_device",
    "linalg_cholesky",
    "linalg_eig",
    "linalg_eigh",
    "linalg_inv",
    "linalg_matrix_norm",
    "linalg_qr",
    "linalg_solve",
    "linalg_svd",
    "linalg_vector_norm",
    "ones",
    "power",
    "random_normal",
    "requires_grad",
    "reshape",
    "sort",
    "stack",
    "std",
    "sum_",
    "to_numpy",
    "where",
    "zeros",
]

#: Attribute of this module -> the CuPy function it is (``"linalg.norm"``: ``cupy.linalg.norm``).
PASSTHROUGH: dict[str, str] = {
    "add": "add",
    "subtract": "subtract",
    "multiply": "multiply",
    "divide": "divide",
    "square": "square",
    "sqrt": "sqrt",
    "exp": "exp",
    "log": "log",
    "abs": "abs",
    "real": "real",
    "conj": "conj",
    "maximum": "maximum",
    "minimum": "minimum",
    "mean": "mean",
    "min_": "min",
    "max_": "max",
    "argmax": "argmax",
    "argmin": "argmin",
    "transpose": "transpose",
    "moveaxis": "moveaxis",
    "matmul": "matmul",
    "dot": "dot",
    "triu_indices": "triu_indices",
    "linalg_norm": "linalg.norm",
    "fft_fft": "fft.fft",
    "fft_ifft": "fft.ifft",
}
# The Array API's other elementwise functions (issue 12), under NumPy's names in CuPy.
PASSTHROUGH.update(ELEMENTWISE)
# The Array API's other families (issue 12): CuPy's own functions where ``families.py`` names
# one; :data:`WRAPPED` the functions of this plugin's family modules.
PASSTHROUGH.update(
    {attribute(op): target for op, target in FAMILY_FUNCTIONS.items() if ":" not in target}
)
#: Attribute of this module -> ``"module:function"`` of a family module of this plugin.
WRAPPED: dict[str, str] = {
    attribute(op): target for op, target in FAMILY_FUNCTIONS.items() if ":" in target
}

_COPY_MESSAGE = "Unable to avoid copy while creating an array as requested."  # NumPy's words


def __getattr__(name: str) -> Any:
    """The pass-through ops: CuPy's own functions, looked up when first asked for; and the
    family modules' functions (:data:`WRAPPED`)."""
    target = PASSTHROUGH.get(name)
    if target is None:
        wrapped = WRAPPED.get(name)
        if wrapped is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        module, _, function = wrapped.partition(":")
        return getattr(importlib.import_module(module), function)
    import cupy

    obj: Any = cupy
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _on_device(value: Any) -> Any:
    """``value`` where CuPy takes it: CuPy arrays, scalars and ``None`` as they are, other
    arrays (NumPy's, torch's) copied to the GPU."""
    import cupy

    if value is None or isinstance(value, (bool, int, float, complex, cupy.ndarray)):
        return value
    return cupy.asarray(value)


@contextmanager
def _linalg_errors(message: str) -> Iterator[None]:
    """Run a cuSOLVER routine with its status read (a synchronisation), so that a failure is
    NumPy's ``LinAlgError`` with NumPy's ``message`` instead of NaNs in the result."""
    import cupyx
    import numpy as np

    try:
        with cupyx.errstate(linalg="raise"):
            yield
    except np.linalg.LinAlgError as exc:
        if str(exc).startswith("Error reported by"):  # a cuSOLVER/cuBLAS status, not a shape
            raise linalg_error(message) from exc
        raise


# -- creation and conversion -----------------------------------------------------------------
def gpu_device(op: str, device: Any) -> Any:
    """A context manager making ``device`` (a creation function's ``device=``, read by
    :func:`prism_core.backend_kit.requested_device`) CuPy's current device: ``None`` keeps the
    current one, Prism's description of a GPU selects its ``index``, an int or a
    ``cupy.cuda.Device`` selects that one.  Host memory (``"cpu"``, Prism's CPUs) is a
    ``ValueError`` naming the op: CuPy creates arrays on GPUs only."""
    what, value = requested_device(device)
    if what == "default":
        return nullcontext()
    if what == "cpu":
        raise ValueError(
            f"{op}: device={device!r} is host memory; CuPy creates arrays on a GPU: give "
            "None, a GPU index, a cupy.cuda.Device or Prism's description of an NVIDIA GPU"
        )
    import cupy

    if what == "gpu":
        return cupy.cuda.Device(getattr(value, "index", 0) or 0)
    try:
        return cupy.cuda.Device(value if isinstance(value, int) else value.id)
    except (AttributeError, TypeError):
        raise ValueError(
            f"{op}: device={value!r} is not a device CuPy knows; it takes None, a GPU index, "
            "a cupy.cuda.Device or Prism's description of an NVIDIA GPU"
        ) from None


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
) -> Any:
    """``obj`` as a CuPy array: ``copy=False`` only for a CuPy array of that dtype already (an
    array anywhere else must be copied to the GPU: NumPy's ``ValueError``)."""
    import cupy

    dt = cupy_dtype(dtype)
    with gpu_device("asarray", device):
        if copy is None:
            return cupy.asarray(obj, dtype=dt)
        if copy:
            return cupy.array(obj, dtype=dt, copy=True)
    if isinstance(obj, cupy.ndarray) and (dt is None or obj.dtype == dt):
        return obj
    raise ValueError(_COPY_MESSAGE)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    dt = cupy_dtype(dtype)
    with gpu_device("zeros", device):
        return cupy.zeros(shape, dtype="float64" if dt is None else dt)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    dt = cupy_dtype(dtype)
    with gpu_device("ones", device):
        return cupy.ones(shape, dtype="float64" if dt is None else dt)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    import cupy

    with gpu_device("full", device):
        return cupy.full(shape, fill_value, dtype=cupy_dtype(dtype))


def to_numpy(x: Any, /) -> Any:
    """``x`` copied to the host, as a NumPy array."""
    import cupy

    return cupy.asnumpy(x)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """``x`` as a CuPy array sharing its memory where it is on the GPU (a copy from the host);
    an ``x`` without DLPack is a ``TypeError``, as on NumPy; ``copy=True`` always copies,
    ``device`` as in ``zeros``."""
    import prism_core

    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: x must be an array that supports DLPack (has __dlpack__, as NumPy, "
            f"torch and CuPy arrays do), not {type(x).__name__}; use asarray for other data"
        )
    with gpu_device("from_dlpack", device):
        out = prism_core.plugins().backend("cuda").from_dlpack(x)
        return out.copy() if copy else out


def requires_grad(x: Any, /, flag: bool = True) -> Any:
    """CuPy has no autograd: ``x`` as it is."""
    return x


def detach(x: Any, /) -> Any:
    """CuPy has no autograd: ``x`` as it is."""
    return x


def random_normal(
    shape: Any, mean: Any = 0.0, std: Any = 1.0, *, seed: Any = None, dtype: Any = "float64"
) -> Any:
    """Drawn on the host by NumPy's ``default_rng(seed)`` in float64, rounded to ``dtype`` and
    copied to the GPU: the numbers of every other backend for the same seed."""
    import cupy
    import numpy as np

    dt = cupy_dtype(dtype)
    if dt is None or dt.kind != "f":
        raise TypeError(
            f"random.normal draws real floating-point numbers; dtype {dtype!r} is not one "
            "(use float16, float32 or float64)"
        )
    mean, std = (cupy.asnumpy(v) if isinstance(v, cupy.ndarray) else v for v in (mean, std))
    rng = np.random.default_rng(seed)
    return cupy.asarray(np.asarray(rng.normal(mean, std, size=shape)).astype(dt, copy=False))


# -- elementwise -----------------------------------------------------------------------------
def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    return kind in ("i", "u")


def power(x1: Any, x2: Any, /) -> Any:
    """``x1 ** x2``; integers to negative integer powers are NumPy's ``ValueError`` (CuPy would
    return zeros), checked on the GPU when the exponents are an array."""
    import cupy

    if _is_integer(x1) and _is_integer(x2):
        negative = x2 < 0 if isinstance(x2, int) else bool((x2 < 0).any())
        if negative:
            raise ValueError("Integers to negative integer powers are not allowed.")
    return cupy.power(x1, x2)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """``x`` limited to ``[min, max]`` (either may be ``None``; both ``None``: a copy)."""
    import cupy

    if min is None and max is None:
        return cupy.array(x, copy=True)
    return cupy.clip(x, _on_device(min), _on_device(max))


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    """``x1`` where ``condition``, else ``x2``; a Python bool ``condition`` too (CuPy's
    ``where`` takes only an array there)."""
    import cupy

    if not isinstance(condition, cupy.ndarray):
        condition = cupy.asarray(condition)
    return cupy.where(condition, x1, x2)


# -- reductions ------------------------------------------------------------------------------
def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    import cupy

    return cupy.sum(x, axis=axis, dtype=cupy_dtype(dtype), keepdims=keepdims)


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    import cupy

    return cupy.std(x, axis=axis, ddof=correction, keepdims=keepdims)


def cumulative_sum(
    x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """The cumulative sum along ``axis`` (required unless ``x`` is 1-D), as NumPy's
    ``cumulative_sum``; ``include_initial`` starts with a zero."""
    import cupy

    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is required."
            )
        x, axis = x.reshape(-1), 0  # a 0-d x is a vector of one element, as in NumPy 2.1
    out = cupy.cumsum(x, axis=axis, dtype=cupy_dtype(dtype))
    if not include_initial:
        return out
    shape = list(out.shape)
    shape[axis % out.ndim] = 1
    return cupy.concatenate([cupy.zeros(shape, dtype=out.dtype), out], axis=axis)


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """``x`` sorted along ``axis``.  CuPy's sort is always stable; descending order reverses
    a stable sort of the reversed array, which keeps equal elements in their order."""
    import cupy

    if not descending:
        return cupy.sort(x, axis=axis)
    return cupy.flip(cupy.sort(cupy.flip(x, axis=axis), axis=axis), axis=axis)


# -- shape -----------------------------------------------------------------------------------
def reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Any:
    import cupy

    if copy:
        return cupy.reshape(cupy.array(x, order="C", copy=True), shape)
    result = cupy.reshape(x, shape)
    if copy is False and x.size and not cupy.may_share_memory(result, x):
        raise ValueError("Unable to avoid creating a copy while reshaping.")  # NumPy's words
    return result


def expand_dims(x: Any, /, axis: Any = 0) -> Any:
    import cupy

    return cupy.expand_dims(x, axis)


def _arrays(arrays: Sequence[Any]) -> list[Any]:
    import cupy

    return [a if isinstance(a, cupy.ndarray) else cupy.asarray(a) for a in arrays]


def stack(arrays: Sequence[Any], /, *, axis: int = 0) -> Any:
    import cupy

    return cupy.stack(_arrays(arrays), axis=axis)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """The arrays joined along ``axis`` (``None``: flattened first)."""
    import cupy

    return cupy.concatenate(_arrays(arrays), axis=axis)


# -- linear algebra --------------------------------------------------------------------------
def einsum(subscripts: Any, /, *operands: Any, dtype: Any = None, optimize: Any = False) -> Any:
    import cupy

    return cupy.einsum(subscripts, *operands, dtype=cupy_dtype(dtype), optimize=optimize)


def linalg_inv(x: Any, /) -> Any:
    import cupy

    with _linalg_errors("Singular matrix"):
        return cupy.linalg.inv(x)


def linalg_solve(x1: Any, x2: Any, /) -> Any:
    """The solution of ``x1 @ x = x2``: ``x2`` is a vector only when it is 1-D, and the batch
    dimensions broadcast (CuPy wants them equal)."""
    import cupy

    if x2.ndim >= 2 and x1.ndim >= 2 and x1.shape[:-2] != x2.shape[:-2]:
        from prism_core.backend_kit import broadcast_shapes

        batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
        # Materialised: cuSOLVER writes into its operands' copies, never into broadcast views.
        x1 = cupy.ascontiguousarray(cupy.broadcast_to(x1, batch + x1.shape[-2:]))
        x2 = cupy.ascontiguousarray(cupy.broadcast_to(x2, batch + x2.shape[-2:]))
    with _linalg_errors("Singular matrix"):
        return cupy.linalg.solve(x1, x2)


def linalg_svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    import cupy

    with _linalg_errors("SVD did not converge"):
        u, s, vh = cupy.linalg.svd(x, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def linalg_eig(x: Any, /) -> EigResult:
    """Eigenvalues and right eigenvectors, complex (CuPy's); for a real matrix whose
    eigenvalues are all real, real arrays where the installed NumPy returns them
    (``reference.eig_real_when_real``: NumPy 2.4 and earlier)."""
    import cupy

    with _linalg_errors("Eigenvalues did not converge"):
        w, v = cupy.linalg.eig(x)
    if x.dtype.kind != "c":
        if eig_real_when_real() and not bool(cupy.any(w.imag)):
            w, v = w.real, v.real
        elif w.dtype.kind != "c":  # CuPy gives an empty matrix real arrays; NumPy complex
            complex_type = cupy.result_type(w.dtype, cupy.complex64)
            w, v = w.astype(complex_type), v.astype(complex_type)
    return EigResult(w, v)


def linalg_eigh(x: Any, /) -> EighResult:
    import cupy

    with _linalg_errors("Eigenvalues did not converge"):
        w, v = cupy.linalg.eigh(x)
    return EighResult(w, v)


def linalg_qr(x: Any, /, *, mode: str = "reduced") -> Any:
    """``QRResult(Q, R)``; ``mode`` is ``"reduced"`` or ``"complete"`` (NumPy's ``"r"`` and
    ``"raw"`` are not the Array API's)."""
    import cupy

    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', not {mode!r}")
    return QRResult(*cupy.linalg.qr(x, mode=mode))


def linalg_cholesky(x: Any, /, *, upper: bool = False) -> Any:
    """The lower-triangular ``L`` with ``x == L @ L.conj().T`` (``upper``: its conjugate
    transpose); a matrix that is not positive definite is NumPy's ``LinAlgError``."""
    import cupy

    with _linalg_errors("Matrix is not positive definite"):
        lower = cupy.linalg.cholesky(x)
    return cupy.swapaxes(lower, -1, -2).conj() if upper else lower


def linalg_vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The vector norm over ``axis`` (an int, a tuple of ints: their elements as one vector,
    or ``None``: all elements), as NumPy's ``linalg.vector_norm`` (CuPy has none)."""
    import cupy
    from numpy.lib.array_utils import normalize_axis_tuple

    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors")  # NumPy's words
    shape = x.shape
    if axis is None:
        flat, inner = x.ravel(), 0
    elif isinstance(axis, tuple):
        axes = normalize_axis_tuple(axis, x.ndim)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        size = 1
        for i in axes:
            size *= shape[i]
        flat = cupy.transpose(x, axes + rest).reshape((size, *(shape[i] for i in rest)))
        inner = 0
    else:
        flat, inner = x, axis
    result = cupy.linalg.norm(flat, ord=ord, axis=inner)
    if keepdims:
        kept = list(shape)
        for i in normalize_axis_tuple(range(len(shape)) if axis is None else axis, len(shape)):
            kept[i] = 1
        result = result.reshape(tuple(kept))
    return result


def linalg_matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """The matrix norm of the last two axes, as NumPy's ``linalg.matrix_norm``."""
    import cupy

    return cupy.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# -- Fourier transforms ----------------------------------------------------------------------
def fft_rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    """The transform of real input; complex input is a ``TypeError``, as on NumPy (CuPy would
    drop the imaginary part)."""
    import cupy

    if x.dtype.kind == "c":
        raise TypeError(f"fft.rfft takes real input, not {x.dtype}; use fft.fft for complex data")
    return cupy.fft.rfft(x, n=n, axis=axis, norm=norm)


# -- signal processing -----------------------------------------------------------------------
def convolve(a: Any, v: Any, /, mode: str = "full") -> Any:
    """NumPy's ``convolve``, whose checks CuPy skips: ``mode`` must be one NumPy knows, and
    both operands 1-D (CuPy flattens ``a``)."""
    import cupy

    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if a.ndim > 1 or v.ndim > 1:
        raise ValueError("object too deep for desired array")
    return cupy.convolve(a, v, mode=mode)
