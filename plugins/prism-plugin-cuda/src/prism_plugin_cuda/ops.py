"""The ``cuda`` backend's functions where CuPy's own differs from the NumPy reference, and the ops
beyond the standard that need more than CuPy's (``CudaBackend.overrides``: ``linalg.inv`` is
:func:`linalg_inv`).  Each comment says which CuPy behaviour is corrected: CuPy 14.2's source,
and what the GPU checks found (benchmarks/results/gpu-2026-11-26.md, gpu-2026-11-27.md).

The namespace backend puts Prism's semantics around these as around CuPy's own functions; for
any exception it raises the reference's own where the reference refuses the call too, so a
check here only refuses what CuPy would compute (the caller reads the reference's words).
Importing this module imports no CuPy: ``cupy`` below is looked up on each use.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

import prism_core
import prism_core.reference as ref
from prism_core.backend_kit import (
    EighResult,
    EigResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    broadcast_shapes,
)


class _Module:
    """A module looked up on each attribute (the tests' stand-in for CuPy is found)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


cupy: Any = _Module("cupy")
cupyx: Any = _Module("cupyx")


def _gpu(value: Any) -> Any:
    """A keyword's array on the GPU (dispatch moves positional arrays only)."""
    if value is None or isinstance(value, (bool, int, float, complex, cupy.ndarray)):
        return value
    return cupy.asarray(value)


# -- creation ----------------------------------------------------------------------------------
# CuPy computes an integer dtype's values with the step cast to it (arange(0, 2, 0.5, dtype=int32)
# is all zeros, as NumPy's); the reference computes them in float64 and casts.
def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None) -> Any:
    start, stop, step, integral = ref.arange_bounds(start, stop, step)
    if dtype is None:
        dtype = "int64" if integral else "float64"
    if integral or cupy.dtype(dtype).kind in "fc":
        return cupy.arange(start, stop, step, dtype=dtype)
    return cupy.arange(start, stop, step, dtype="float64").astype(dtype)


# CuPy's linspace takes real bounds only (it calls float() on them: found on the H100), and
# truncates into an integer dtype where NumPy 2 floors.
def linspace(
    start: Any, stop: Any, /, num: Any, *, dtype: Any = None, endpoint: bool = True
) -> Any:
    count = ref.linspace_count(num)
    if dtype is None:
        complex_bounds = isinstance(start, complex) or isinstance(stop, complex)
        dtype = "complex128" if complex_bounds else "float64"
    dt = cupy.dtype(dtype)
    if dt.kind == "c":  # spaced part by part, then combined
        start, stop = complex(start), complex(stop)
        part = "float32" if dt == cupy.complex64 else "float64"
        real = cupy.linspace(start.real, stop.real, count, endpoint=endpoint, dtype=part)
        imag = cupy.linspace(start.imag, stop.imag, count, endpoint=endpoint, dtype=part)
        return (real + 1j * imag).astype(dt, copy=False)
    if dt.kind == "f":
        return cupy.linspace(start, stop, count, endpoint=endpoint, dtype=dt)
    values = cupy.linspace(start, stop, count, endpoint=endpoint, dtype="float64")
    return cupy.floor(values).astype(dt)


# CuPy casts complex numbers to a real type (the imaginary parts dropped, with a ComplexWarning);
# the standard refuses.
def astype(x: Any, dtype: Any, /, *, copy: bool = True) -> Any:
    if x.dtype.kind == "c" and cupy.dtype(dtype).kind != "c":
        raise TypeError(f"astype: the Array API forbids casting {x.dtype} to {dtype}")
    return x.astype(dtype, copy=copy)


# CuPy's tril and triu take a vector as a matrix of that row (as NumPy's); the standard refuses.
def tril(x: Any, /, *, k: Any = 0) -> Any:
    return cupy.tril(_matrices("tril", x), k=k)


def triu(x: Any, /, *, k: Any = 0) -> Any:
    return cupy.triu(_matrices("triu", x), k=k)


def _matrices(op: str, x: Any) -> Any:
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have 2 dimensions or more, not {x.ndim}")
    return x


# Beyond the standard: drawn on the host by the reference (NumPy's default_rng(seed)) and copied
# to the GPU, so that one seed gives the numbers of every backend; CuPy's generators give others.
def random_normal(shape: Any, mean: Any = 0.0, std: Any = 1.0, **kwargs: Any) -> Any:
    mean, std = (cupy.asnumpy(v) if isinstance(v, cupy.ndarray) else v for v in (mean, std))
    return cupy.asarray(ref.implementation("random.normal")(shape, mean, std, **kwargs))


# Beyond the standard: CuPy has no autograd, x as it is.
def requires_grad(x: Any, /, flag: bool = True) -> Any:
    return x


def detach(x: Any, /) -> Any:
    return x


# -- elementwise, statistics, sorting ----------------------------------------------------------
# CuPy raises integers to negative integer powers (its integral_power gives 0 or 1, "for which
# NumPy would raise errors"): checked, on the GPU for an array of exponents (a synchronisation).
def power(x1: Any, x2: Any, /) -> Any:
    if _integer(x1) and _integer(x2) and bool(x2 < 0 if isinstance(x2, int) else (x2 < 0).any()):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return cupy.power(x1, x2)


def _integer(value: Any) -> bool:
    if isinstance(value, int):
        return not isinstance(value, bool)
    return getattr(getattr(value, "dtype", None), "kind", "") in ("i", "u")


# CuPy's clip names its bounds a_min and a_max (the standard's min= and max= are keywords),
# needs one of them (for bool and complex arrays), and takes no host array.
def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    if min is None and max is None:
        return x.copy()
    return cupy.clip(x, _gpu(min), _gpu(max))


# CuPy's where takes only an array condition (it calls condition.astype); NumPy's a bool too.
def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    return cupy.where(cupy.asarray(condition), x1, x2)


def _adapted(path: str, renames: dict[str, str] | None = None, **fixed: Any) -> Callable[..., Any]:
    """CuPy's function at ``path`` with the standard's keywords renamed to CuPy's and ``fixed``
    ones added."""

    def call(*args: Any, **kwargs: Any) -> Any:
        fn = cupy
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn(*args, **{(renames or {}).get(k, k): v for k, v in kwargs.items()}, **fixed)

    call.__name__ = call.__qualname__ = path.replace(".", "_")
    return call


# CuPy's std and var take NumPy's ddof, not the standard's correction.
std = _adapted("std", {"correction": "ddof"})
var = _adapted("var", {"correction": "ddof"})


# CuPy's reshape names its shape newshape (the standard's shape= is a keyword).
def reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Any:
    return cupy.reshape(x, shape, copy=copy)


# CuPy's expand_dims has no default axis (the standard's is 0).
def expand_dims(x: Any, /, axis: Any = 0) -> Any:
    return cupy.expand_dims(x, axis)


# CuPy's sort and argsort have no descending nor stable (they are always stable): descending
# sorts the reversed array (argsort: its indices counted back), so equal elements keep their order.
def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    if not descending:
        return cupy.sort(x, axis=axis)
    return cupy.flip(cupy.sort(cupy.flip(x, axis=axis), axis=axis), axis=axis)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    if not descending:
        return cupy.argsort(x, axis=axis, kind="stable")
    flipped = cupy.argsort(cupy.flip(x, axis=axis), axis=axis, kind="stable")
    return (x.shape[axis] - 1) - cupy.flip(flipped, axis=axis)


# CuPy's count_nonzero takes no keepdims.
def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return cupy.sum(x != 0, axis=axis, keepdims=keepdims, dtype=cupy.intp)


# CuPy's searchsorted reads any side but "right" as "left" (NumPy refuses it), and takes no host
# array of sorter indices.
def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    return cupy.searchsorted(x1, x2, side=side, sorter=_gpu(sorter))


# -- manipulation and indexing: the reference's computations, with CuPy ------------------------
# CuPy's take and take_along_axis wrap indices out of range (checked first: a synchronisation);
# its take flattens an x of several dimensions without axis, its take_along_axis has no default.
def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    return ref.take_in(cupy, x, indices, axis, bounds=True)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    return ref.take_along_axis_in(cupy, x, indices, axis, bounds=True)


# CuPy's repeat takes no uint64 counts (no safe cast to intp); the reference casts them.
def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    return ref.repeat_in(cupy, x, repeats, axis)


# CuPy has no unstack.
def unstack(x: Any, /, *, axis: int = 0) -> Any:
    return ref.unstack_in(cupy, x, axis)


# -- linear algebra ----------------------------------------------------------------------------
# CuPy has no vecdot: sum(conj(x1) * x2) in the operands' dtype (CuPy's sum would widen small
# integers; NumPy's vecdot does not).
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    axis = ref.negative_axis("vecdot", axis, (tuple(x1.shape), tuple(x2.shape)), None)
    product = (cupy.conj(x1) if x1.dtype.kind == "c" else x1) * x2
    return cupy.sum(product, axis=axis, dtype=product.dtype)


# CuPy's tensordot reads a negative int of axes as none (an outer product); the standard refuses.
def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    return cupy.tensordot(x1, x2, axes=ref.tensordot_axes(axes))


# Beyond the standard: CuPy's convolve flattens an a of several dimensions; NumPy's refuses it.
def convolve(a: Any, v: Any, /, mode: str = "full") -> Any:
    if a.ndim > 1:
        raise ValueError("object too deep for desired array")
    return cupy.convolve(a, v, mode=mode)


# Beyond the standard: NumPy's histogram, counted by NumPy on the host and given back in GPU
# memory (CuPy's places its bin edges otherwise than NumPy, so counts could differ at them).
def histogram(
    a: Any, /, bins: Any = 10, range: Any = None, weights: Any = None, density: Any = None
) -> Any:
    import numpy as np

    host = [cupy.asnumpy(v) if isinstance(v, cupy.ndarray) else v for v in (a, bins, weights)]
    counts, edges = np.histogram(host[0], host[1], range, weights=host[2], density=density)
    return cupy.asarray(counts), cupy.asarray(edges)


def _status() -> Any:
    # CuPy ignores cuSOLVER's status by default (cupyx.errstate(linalg="ignore")) and returns NaNs
    # for a singular matrix or a failed decomposition, where NumPy raises LinAlgError: read here,
    # a synchronisation; not read under choosing(check_errors="deferred").
    deferred = prism_core.current_scope().check_errors == "deferred"
    return cupyx.errstate(linalg="ignore" if deferred else "raise")


def _checked(name: str, result: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """``cupy.linalg.<name>`` with cuSOLVER's status read, its plain tuple as the reference's
    named one (``result``)."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        with _status():
            out = getattr(cupy.linalg, name)(*args, **kwargs)
        return out if result is None else result(*out)

    checked.__name__ = checked.__qualname__ = f"linalg_{name}"
    return checked


linalg_inv = _checked("inv")
linalg_matrix_power = _checked("matrix_power")  # a negative power inverts
linalg_svd = _checked("svd", SVDResult)
linalg_eigh = _checked("eigh", EighResult)


# CuPy's slogdet returns a plain tuple (its status unread: a singular matrix is (0, -inf), as
# NumPy's).
def linalg_slogdet(x: Any, /) -> SlogdetResult:
    return SlogdetResult(*cupy.linalg.slogdet(x))


# CuPy's solve wants equal batch dimensions, which NumPy 2 broadcasts; its status is read.
def linalg_solve(x1: Any, x2: Any, /) -> Any:
    if x2.ndim >= 2 and x1.ndim >= 2 and x1.shape[:-2] != x2.shape[:-2]:
        batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
        # Materialised: cuSOLVER writes into its operands' copies, never into broadcast views.
        x1 = cupy.ascontiguousarray(cupy.broadcast_to(x1, batch + x1.shape[-2:]))
        x2 = cupy.ascontiguousarray(cupy.broadcast_to(x2, batch + x2.shape[-2:]))
    with _status():
        return cupy.linalg.solve(x1, x2)


# CuPy's eig of a real matrix is complex always, also for an empty matrix (found on the H100,
# where NumPy 2.5 gives complex ones): real arrays where every eigenvalue is real and the NumPy
# installed returns them (reference.eig_real_when_real: 2.4 and earlier); its status is read.
def linalg_eig(x: Any, /) -> EigResult:
    with _status():
        w, v = cupy.linalg.eig(x)
    if x.dtype.kind != "c":
        if ref.eig_real_when_real() and not bool(cupy.any(w.imag)):
            w, v = w.real, v.real
        elif w.dtype.kind != "c":
            complex_type = cupy.result_type(w.dtype, cupy.complex64)
            w, v = w.astype(complex_type), v.astype(complex_type)
    return EigResult(w, v)


# CuPy's qr also takes NumPy's modes "r" and "raw" (whose results are no (Q, R)), which the
# standard refuses; and returns a plain tuple.
def linalg_qr(x: Any, /, *, mode: str = "reduced") -> QRResult:
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', not {mode!r}")
    return QRResult(*cupy.linalg.qr(x, mode=mode))


# CuPy's cholesky has no upper (U is L's conjugate transpose); its status is read.
def linalg_cholesky(x: Any, /, *, upper: bool = False) -> Any:
    with _status():
        lower = cupy.linalg.cholesky(x)
    return cupy.swapaxes(lower, -1, -2).conj() if upper else lower


# CuPy has no svdvals; its status is read.
def linalg_svdvals(x: Any, /) -> Any:
    with _status():
        return cupy.linalg.svd(x, compute_uv=False)


def _rtol(x: Any, rtol: Any) -> Any:
    """The standard's ``rtol`` on the GPU, or its default ``max(M, N) * eps``."""
    if rtol is not None:
        return cupy.asarray(rtol)
    inexact = x.dtype if x.dtype.kind in "fc" else cupy.dtype("float64")
    return cupy.asarray(max(x.shape[-2:]) * cupy.finfo(inexact).eps)


# CuPy's matrix_rank takes NumPy's absolute tol, not the standard's relative rtol, and gives a
# vector's rank where the standard refuses one.
def linalg_matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    s = linalg_svdvals(x)
    cutoff = cupy.max(s, axis=-1, keepdims=True) * _rtol(x, rtol)[..., None]
    return cupy.count_nonzero(s > cutoff, axis=-1).astype("int64")


# CuPy's pinv takes NumPy's rcond (default 1e-15), not the standard's rtol (max(M, N) * eps).
def linalg_pinv(x: Any, /, *, rtol: Any = None) -> Any:
    with _status():
        return cupy.linalg.pinv(x, rcond=_rtol(x, rtol))


# CuPy's linalg.cross takes no operands that broadcast, and a non-negative axis (the standard's
# are negative).
def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    shapes = (tuple(x1.shape), tuple(x2.shape))
    return cupy.cross(x1, x2, axis=ref.negative_axis("linalg.cross", axis, shapes, 3))


# CuPy has no linalg.diagonal, trace nor matrix_norm: its diagonal and trace take the first two
# axes, the standard's the last two (as the norm of a matrix).
linalg_diagonal = _adapted("diagonal", axis1=-2, axis2=-1)
linalg_trace = _adapted("trace", axis1=-2, axis2=-1)
linalg_matrix_norm = _adapted("linalg.norm", axis=(-2, -1))


# CuPy has no linalg.outer; cupy.outer flattens arrays of any shape, the standard takes vectors.
def linalg_outer(x1: Any, x2: Any, /) -> Any:
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("linalg.outer: x1 and x2 must be vectors (1-D)")
    return cupy.outer(x1, x2)


# CuPy has no vector_norm, and its norm takes a pair of axes for a matrix norm: the axes are
# moved last and made one, whose norm is taken (as NumPy 2 does).
def linalg_vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    from numpy.lib.array_utils import normalize_axis_tuple

    axes = normalize_axis_tuple(range(x.ndim) if axis is None else axis, x.ndim)
    rest = [d for d in range(x.ndim) if d not in axes]
    size = math.prod(x.shape[d] for d in axes)
    flat = cupy.transpose(x, (*rest, *axes)).reshape((*(x.shape[d] for d in rest), size))
    out = cupy.linalg.norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return out


# -- Fourier transforms ------------------------------------------------------------------------
def _real(op: str, x: Any) -> Any:
    # CuPy's real transforms cast complex input to real (fft._output_dtype): the imaginary part
    # dropped, where the reference refuses.
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: x must be real, not {x.dtype}")
    return x


def fft_rfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return cupy.fft.rfft(_real("fft.rfft", x), n=n, axis=axis, norm=norm)


def fft_ihfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return cupy.fft.ihfft(_real("fft.ihfft", x), n=n, axis=axis, norm=norm)


def _nd(name: str, kind: ref.Kind) -> Callable[..., Any]:
    # CuPy's n-dimensional transforms read s without axes as the last axes (the standard refuses
    # it), know no -1 in s (they cut one element off), transform a repeated axis twice, and
    # return x itself for no axes: the standard's rules (reference.transform_sizes) first.
    op = f"fft.{name}"

    def transform(x: Any, /, *, s: Any = None, axes: Any = None, norm: Any = "backward") -> Any:
        if kind == "real":
            _real(op, x)
        sizes, found = ref.transform_sizes(op, x.shape, s, axes, kind)
        if not found:  # nothing to transform: x as the result's (complex) type
            return x.astype(cupy.result_type(x.dtype, cupy.complex64), copy=True)
        return getattr(cupy.fft, name)(x, s=sizes, axes=found, norm=norm)

    transform.__name__ = transform.__qualname__ = f"fft_{name}"
    return transform


fft_fftn, fft_ifftn = _nd("fftn", "complex"), _nd("ifftn", "complex")
fft_rfftn, fft_irfftn = _nd("rfftn", "real"), _nd("irfftn", "half")


def _frequencies(name: str) -> Callable[..., Any]:
    # CuPy's fftfreq and rfftfreq check neither n nor d, and take no dtype (computed in float64
    # and rounded, as the reference) nor device (CudaBackend.function gives it).
    op = f"fft.{name}"

    def frequencies(n: Any, /, *, d: Any = 1.0, dtype: Any = None) -> Any:
        n, d = ref.frequency_args(op, n, d)
        if dtype is not None and cupy.dtype(dtype).kind != "f":
            raise TypeError(f"{op}: dtype must be a real floating-point type, not {dtype}")
        out = getattr(cupy.fft, name)(n, d)
        return out if dtype is None else out.astype(dtype, copy=False)

    frequencies.__name__ = frequencies.__qualname__ = f"fft_{name}"
    return frequencies


fft_fftfreq, fft_rfftfreq = _frequencies("fftfreq"), _frequencies("rfftfreq")
