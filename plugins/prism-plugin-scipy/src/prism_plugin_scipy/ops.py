"""The implementations of the ``scipy`` backend's variants.

Each function takes what the op's NumPy reference takes and returns what it returns: the same
type (NumPy arrays; NumPy's own named tuples for the decompositions), dtype and shape, with
values equal to rounding.  Each computes the common case its variant's ``can_run`` accepts
(2-D matrices of a LAPACK type, 1-D signals, ...) on SciPy, and hands everything else to NumPy's
function with the same arguments: a caller's mistake (a non-square matrix, a bad ``axis``, an
empty signal) therefore raises exactly what NumPy raises (``ValueError``,
``numpy.linalg.LinAlgError``, ``TypeError``, ``IndexError``), and inputs SciPy would treat
differently (subclasses such as ``numpy.matrix``, NaN and infinity where LAPACK or an FFT would
spread them) get NumPy's answer.  Dispatch then never mistakes a caller's error for a backend
failure.

The linear algebra calls LAPACK and BLAS directly through ``scipy.linalg.lapack`` and
``scipy.linalg.blas`` (``get_lapack_funcs``), not through ``scipy.linalg.solve`` and friends:

* NumPy never warns about an ill-conditioned matrix; ``scipy.linalg.solve`` and ``inv`` emit a
  ``LinAlgWarning``, which a caller running with warnings as errors would receive as an
  exception NumPy would not raise (and catching it would need ``warnings.catch_warnings``, which
  is not thread-safe);
* the drivers are chosen here, by name: ``posv`` (Cholesky) for a matrix found Hermitian with a
  positive diagonal, else ``gesv`` (LU) -- ``scipy.linalg.solve``'s ``assume_a="pos"`` and
  ``"gen"``; ``gesdd`` for the SVD, ``gesvd`` when ``gesdd`` does not converge (the
  ``lapack_driver`` of ``scipy.linalg.svd``);
* the Python-level checks of the high-level functions cost more than a small factorisation:
  ``scipy.linalg.solve`` of an 8 by 8 system takes about 30 us, its LAPACK ``gesv`` 2 us, and
  NumPy's ``solve`` 8 us (benchmarks/crossover.py, "solve").

This module imports NumPy and ``scipy.linalg``/``scipy.fft``; it is imported when dispatch
first runs one of its functions, never at plugin discovery.  ``scipy.signal`` is imported on the
first convolution.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any, cast

import numpy as np
from numpy.linalg import LinAlgError
from scipy import fft as _scipy_fft
from scipy.linalg import blas as _blas
from scipy.linalg import lapack as _lapack

from prism_plugin_scipy.workers import workers_for


def _named_tuples() -> tuple[Any, Any, Any]:
    """``(SVDResult, EighResult, EigResult)``: NumPy's own (NumPy >= 2.0 names its
    decompositions' results), so that the types are exactly the reference's; on NumPy 1.x,
    Prism's tuples with NumPy's field names."""
    import importlib

    for where in ("numpy.linalg._linalg", "prism_core.backend_kit"):
        try:
            module = importlib.import_module(where)
            return module.SVDResult, module.EighResult, module.EigResult
        except (ImportError, AttributeError):  # pragma: no cover - NumPy 1.x
            continue
    raise ImportError("neither NumPy nor prism_core.backend_kit has SVDResult")  # pragma: no cover


SVDResult, EighResult, EigResult = _named_tuples()

__all__ = [
    "CHOLESKY_MIN_N",
    "CONVOLVE_OA_RATIO",
    "convolve",
    "fft_fft",
    "fft_ifft",
    "fft_rfft",
    "linalg_eig",
    "linalg_eigh",
    "linalg_inv",
    "linalg_solve",
    "linalg_svd",
    "matmul",
    "maybe_positive_definite",
]

logger = logging.getLogger("prism_plugin_scipy")

#: The dtypes LAPACK and BLAS compute in (native byte order).
LAPACK_DTYPES = frozenset(np.dtype(c) for c in "fdFD")
#: The dtypes ``rfft`` takes (real).
REAL_DTYPES = frozenset(np.dtype(c) for c in "fd")
#: The complex dtype of each real LAPACK dtype.
_COMPLEX = {np.dtype("f"): np.dtype("F"), np.dtype("d"): np.dtype("D")}
_NORMS = frozenset({None, "backward", "ortho", "forward"})
_CONVOLVE_MODES = frozenset({"full", "same", "valid"})

#: ``linalg.solve`` looks for a symmetric (Hermitian) positive definite matrix, and solves it by
#: Cholesky (``posv``, n^3/3 flops) instead of LU (``gesv``, 2n^3/3), from this order on.  The
#: look costs well under a microsecond for almost every matrix that is not symmetric (two
#: mirrored pairs of elements differ) and O(n^2) for one that is (an exact comparison of the
#: triangles, 0.8 ms at n = 512, where Cholesky saves 1.8 ms on one thread); measured, the
#: Cholesky path is 0.8-0.9x of NumPy's LU at n = 64 and 96 and 1.04-1.44x from 128 to 1024
#: (benchmarks/crossover.py, "solve").
CHOLESKY_MIN_N = 128
#: The tile edge of the symmetry check: compares a block of rows with the block of columns it
#: mirrors, so that both stay in cache (a whole ``a == a.T`` strides through memory).
_SYMMETRY_BLOCK = 64
#: ``convolve`` uses overlap-add (``oaconvolve``) when the longer signal is at least this many
#: times the shorter, else one FFT of the whole (``fftconvolve``): measured, overlap-add is 2-4x
#: slower at a ratio of 16 (65536 and 4096 points), about even at 64, and 1.5-3x faster at 128
#: and more (benchmarks/crossover.py, "convolve").
CONVOLVE_OA_RATIO = 64


def _plain(x: Any) -> bool:
    """A NumPy array proper (not a subclass such as ``numpy.matrix`` or a masked array, whose
    own rules NumPy's functions follow)."""
    return type(x) is np.ndarray


@functools.lru_cache(maxsize=512)
def _lwork(query: Any, *args: Any, **kwargs: Any) -> int:
    """The optimal workspace a LAPACK ``*_lwork`` query returns, as an ``int`` (remembered per
    routine and arguments: the query costs as much as a small factorisation).

    Single-precision routines return it as a float32, which rounds large sizes down; LAPACK
    advises asking for a little more.
    """
    out = query(*args, **kwargs)
    info = int(out[-1])
    if info != 0:
        raise RuntimeError(f"LAPACK workspace query {query.__name__} failed (info={info})")
    return _size(out[0])


def _size(work: Any) -> int:
    """A workspace size LAPACK returned as a floating-point number, rounded up."""
    return max(1, math.ceil(float(np.real(work)) * (1 + 2.0**-20)))


def _internal(routine: str, info: int) -> RuntimeError:
    """A LAPACK routine rejected an argument the plugin passed (``info < 0``): the plugin's
    failure, not the caller's, so dispatch may fall back to NumPy."""
    return RuntimeError(
        f"LAPACK {routine} rejected its argument {-info} (a bug of prism-plugin-scipy)"
    )


# -- matmul ---------------------------------------------------------------------------------------


def _as_fortran(m: Any) -> tuple[Any, int]:
    """``m`` as a Fortran-ordered operand of BLAS, with the ``trans`` flag that gives ``m``:
    a C-ordered matrix is its transpose in Fortran order, so it is passed as it is, transposed
    (no copy); only a matrix in neither order is copied."""
    if m.flags.f_contiguous:
        return m, 0
    if m.flags.c_contiguous:
        return m.T, 1
    return np.asfortranarray(m), 0


@functools.cache
def _gemm(dtype: np.dtype[Any]) -> Any:
    """BLAS ``gemm`` for ``dtype``, looked up once (``get_blas_funcs`` costs ~3 µs a call)."""
    return _blas.get_blas_funcs("gemm", dtype=dtype)


def matmul(x1: Any, x2: Any, /) -> Any:
    """``x1 @ x2`` for two 2-D matrices of one LAPACK dtype, through BLAS ``gemm``.

    BLAS writes a Fortran-ordered product; computing ``(x2.T @ x1.T)`` there gives
    ``x1 @ x2`` in C order, as NumPy returns it, with no copy of either operand.
    """
    if not (
        _plain(x1)
        and _plain(x2)
        and x1.ndim == 2
        and x2.ndim == 2
        and x1.dtype == x2.dtype
        and x1.dtype in LAPACK_DTYPES
    ):
        return np.matmul(x1, x2)
    m, k = x1.shape
    k2, n = x2.shape
    if k != k2 or m == 0 or n == 0 or k == 0:
        return np.matmul(x1, x2)  # NumPy's ValueError, or its empty (or zero) product
    gemm = _gemm(x1.dtype)
    left, trans_left = _as_fortran(x2.T)
    right, trans_right = _as_fortran(x1.T)
    return gemm(1.0, left, right, trans_a=trans_left, trans_b=trans_right).T


# -- solve and inv --------------------------------------------------------------------------------


def _hermitian(a: Any) -> bool:
    """Whether the square matrix ``a`` equals its conjugate transpose, exactly, tile by tile."""
    n = a.shape[0]
    conj = a.dtype.kind == "c"
    step = _SYMMETRY_BLOCK
    for i in range(0, n, step):
        rows = a[i : i + step, i:]
        mirror = a[i:, i : i + step].T
        if not np.array_equal(rows, mirror.conj() if conj else mirror):
            return False
    return True


def maybe_positive_definite(a: Any) -> bool:
    """Whether ``a`` qualifies for Cholesky: of order :data:`CHOLESKY_MIN_N` or more,
    Hermitian (symmetric), with a positive real diagonal.

    These are necessary conditions of positive definiteness, not sufficient: ``posv`` finds out
    (and ``linalg_solve`` falls back to LU when it fails).  NaN never passes (it compares
    unequal), so such matrices take NumPy's path, LU.
    """
    n = a.shape[0]
    if n < CHOLESKY_MIN_N:
        return False
    complex_ = a.dtype.kind == "c"
    # Cheapest first: two pairs of mirrored elements reject almost every matrix that is not
    # symmetric (well under a microsecond), the diagonal most that are symmetric but not
    # positive definite, the first and last rows most of what is left; then the whole check.
    if n > 1:
        if complex_:
            if a[1, 0] != a[0, 1].conjugate() or a[-1, 0] != a[0, -1].conjugate():
                return False
        elif a[1, 0] != a[0, 1] or a[-1, 0] != a[0, -1]:
            return False
    diagonal = a.diagonal()
    if complex_:
        if diagonal.imag.any():
            return False
        diagonal = diagonal.real
    if not (diagonal > 0).all():
        return False
    column0, column1 = a[:, 0], a[:, -1]
    if complex_:
        column0, column1 = column0.conj(), column1.conj()
    if not (np.array_equal(a[0], column0) and np.array_equal(a[-1], column1)):
        return False
    return _hermitian(a)


def linalg_solve(x1: Any, x2: Any, /) -> Any:
    """The solution of ``x1 @ x = x2`` for a square ``x1`` and a vector (1-D) or matrix (2-D)
    ``x2``: LAPACK ``posv`` (``assume_a="pos"``) where :func:`maybe_positive_definite`, and
    ``gesv`` (``assume_a="gen"``, NumPy's own driver) otherwise or when ``posv`` finds the
    matrix is not positive definite."""
    if not (
        _plain(x1)
        and _plain(x2)
        and x1.ndim == 2
        and x2.ndim in (1, 2)
        and x1.dtype in LAPACK_DTYPES
        and x2.dtype in LAPACK_DTYPES
    ):
        return np.linalg.solve(x1, x2)
    n = x1.shape[0]
    if x1.shape[1] != n or x2.shape[0] != n or n == 0 or x2.size == 0:
        return np.linalg.solve(x1, x2)  # NumPy's error, or its empty solution
    dtype = np.promote_types(x1.dtype, x2.dtype)
    a = x1.astype(dtype, copy=False)
    b = x2.astype(dtype, copy=False)
    if maybe_positive_definite(a):
        posv = _lapack.get_lapack_funcs("posv", (a, b))
        _, x, info = posv(a, b)
        if info == 0:
            return x
        if info < 0:
            raise _internal("posv", info)
        # info > 0: not positive definite after all; LU decides (and reports a singular one).
    gesv = _lapack.get_lapack_funcs("gesv", (a, b))
    _, _, x, info = gesv(a, b)
    if info > 0:
        raise LinAlgError("Singular matrix")
    if info < 0:
        raise _internal("gesv", info)
    return x


def linalg_inv(x: Any, /) -> Any:
    """The inverse of a square matrix by LU factorisation and its inverse (``getrf``,
    ``getri``)."""
    if not (_plain(x) and x.ndim == 2 and x.dtype in LAPACK_DTYPES):
        return np.linalg.inv(x)
    n = x.shape[0]
    if x.shape[1] != n or n == 0:
        return np.linalg.inv(x)  # NumPy's LinAlgError, or its empty inverse
    getrf, getri, getri_lwork = _lapack.get_lapack_funcs(("getrf", "getri", "getri_lwork"), (x,))
    lu, piv, info = getrf(x)
    if info > 0:
        raise LinAlgError("Singular matrix")
    if info < 0:
        raise _internal("getrf", info)
    inverse, info = getri(lu, piv, lwork=_lwork(getri_lwork, n), overwrite_lu=1)
    if info > 0:
        raise LinAlgError("Singular matrix")
    if info < 0:
        raise _internal("getri", info)
    return inverse


# -- decompositions -------------------------------------------------------------------------------


def _svd_with(driver: str, x: Any, full_matrices: int) -> tuple[Any, Any, Any, int]:
    routine, query = _lapack.get_lapack_funcs((driver, driver + "_lwork"), (x,))
    m, n = x.shape
    lwork = _lwork(query, m, n, compute_uv=1, full_matrices=full_matrices)
    u, s, vt, info = routine(x, compute_uv=1, full_matrices=full_matrices, lwork=lwork)
    if info < 0:
        raise _internal(driver, info)
    return u, s, vt, int(info)


def linalg_svd(x: Any, /, *, full_matrices: bool = True) -> Any:
    """The SVD of a matrix by LAPACK ``gesdd`` (divide and conquer, NumPy's driver); when it
    does not converge, by ``gesvd`` (QR iteration: slower, and converging where ``gesdd``
    does not), where NumPy would raise.  Returns NumPy's ``SVDResult(U, S, Vh)``."""
    if not (_plain(x) and x.ndim == 2 and x.dtype in LAPACK_DTYPES) or x.size == 0:
        return np.linalg.svd(x, full_matrices=full_matrices)
    if not np.isfinite(x).all():
        # NaN or infinity: NumPy raises LinAlgError ("SVD did not converge"); LAPACK may
        # instead reject the argument or run long.
        return np.linalg.svd(x, full_matrices=full_matrices)
    full = 1 if full_matrices else 0
    u, s, vt, info = _svd_with("gesdd", x, full)
    if info > 0:
        logger.debug("gesdd did not converge (info=%d) on a %s matrix; using gesvd", info, x.shape)
        u, s, vt, info = _svd_with("gesvd", x, full)
        if info > 0:
            raise LinAlgError("SVD did not converge")
    return SVDResult(u, s, vt)


@functools.lru_cache(maxsize=512)
def _evd_workspace(query: Any, n: int) -> tuple[int, ...]:
    """``(lwork, liwork)`` of ``syevd``, ``(lwork, liwork, lrwork)`` of ``heevd``."""
    out = query(n, compute_v=1, lower=1)
    info = int(out[-1])
    if info != 0:
        raise RuntimeError(f"LAPACK workspace query {query.__name__} failed (info={info})")
    sizes = (_size(out[0]), int(out[1]))
    return (*sizes, _size(out[2])) if len(out) == 4 else sizes


def linalg_eigh(x: Any, /) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a real symmetric or complex Hermitian matrix
    by LAPACK ``syevd``/``heevd`` on its lower triangle, as NumPy.  Returns NumPy's
    ``EighResult``."""
    if not (_plain(x) and x.ndim == 2 and x.dtype in LAPACK_DTYPES):
        return np.linalg.eigh(x)
    n = x.shape[0]
    if x.shape[1] != n or n == 0 or not np.isfinite(x).all():
        # NumPy's error for a non-square matrix; for NaN or infinity NumPy's own answer (it
        # reads only the lower triangle, and raises LinAlgError where that is not finite).
        return np.linalg.eigh(x)
    routine = "heevd" if x.dtype.kind == "c" else "syevd"
    evd, query = _lapack.get_lapack_funcs((routine, routine + "_lwork"), (x,))
    sizes = _evd_workspace(query, n)
    if routine == "heevd":
        w, v, info = evd(x, compute_v=1, lower=1, lwork=sizes[0], liwork=sizes[1], lrwork=sizes[2])
    else:
        w, v, info = evd(x, compute_v=1, lower=1, lwork=sizes[0], liwork=sizes[1])
    if info > 0:
        raise LinAlgError("Eigenvalues did not converge")
    if info < 0:
        raise _internal("syevd/heevd", int(info))
    return EighResult(w, v)


def linalg_eig(x: Any, /) -> Any:
    """Eigenvalues and right eigenvectors of a square matrix by LAPACK ``geev``, as NumPy: real
    types when every eigenvalue is real, complex ones otherwise.  Returns NumPy's
    ``EigResult``."""
    if not (_plain(x) and x.ndim == 2 and x.dtype in LAPACK_DTYPES):
        return np.linalg.eig(x)
    n = x.shape[0]
    if x.shape[1] != n or n == 0 or not np.isfinite(x).all():
        # NumPy's errors: not square, or "Array must not contain infs or NaNs".
        return np.linalg.eig(x)
    geev, query = _lapack.get_lapack_funcs(("geev", "geev_lwork"), (x,))
    lwork = _lwork(query, n, compute_vl=0, compute_vr=1)
    if x.dtype.kind == "c":
        w, _, vr, info = geev(x, compute_vl=0, compute_vr=1, lwork=lwork)
        if info > 0:
            raise LinAlgError("Eigenvalues did not converge")
        if info < 0:
            raise _internal("geev", int(info))
        return EigResult(w, vr)
    wr, wi, _, vr, info = geev(x, compute_vl=0, compute_vr=1, lwork=lwork)
    if info > 0:
        raise LinAlgError("Eigenvalues did not converge")
    if info < 0:
        raise _internal("geev", int(info))
    if not wi.any():
        return EigResult(wr, vr)  # all real: NumPy returns real types
    complex_type = _COMPLEX[x.dtype]
    w = np.empty(n, dtype=complex_type)
    w.real, w.imag = wr, wi
    # geev stores a complex conjugate pair (j, j+1) as the real part in column j and the
    # imaginary part in column j+1; the first of a pair has the positive imaginary part.
    v = vr.astype(complex_type)
    first = np.flatnonzero(wi > 0)
    v[:, first] = vr[:, first] + 1j * vr[:, first + 1]
    v[:, first + 1] = v[:, first].conj()
    return EigResult(w, v)


# -- Fourier transforms ---------------------------------------------------------------------------


def _transform(
    scipy_fn: Any,
    numpy_fn: Any,
    dtypes: frozenset[Any],
    x: Any,
    n: Any,
    axis: Any,
    norm: Any,
) -> Any:
    """``scipy_fn`` with ``workers`` for a plain array of ``dtypes`` and arguments NumPy would
    accept; NumPy's function (its result or its error) for anything else."""
    if (
        not _plain(x)
        or x.dtype not in dtypes
        or type(axis) is not int
        or not -x.ndim <= axis < x.ndim
        or not (n is None or (type(n) is int and n >= 1))
        or norm not in _NORMS
    ):
        return numpy_fn(x, n=n, axis=axis, norm=norm)
    length = x.shape[axis] if n is None else n
    if length == 0:
        return numpy_fn(x, n=n, axis=axis, norm=norm)  # NumPy's ValueError
    if x.ndim == 1:  # one transform: one thread, and no arithmetic on the hot path
        return scipy_fn(x, n=n, axis=axis, norm=norm, workers=1)
    batch = math.prod(s for i, s in enumerate(x.shape) if i != axis % x.ndim)
    return scipy_fn(x, n=n, axis=axis, norm=norm, workers=workers_for(batch, length))


def fft_fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    """``scipy.fft.fft`` with ``workers`` (:mod:`prism_plugin_scipy.workers`)."""
    return _transform(_scipy_fft.fft, np.fft.fft, LAPACK_DTYPES, x, n, axis, norm)


def fft_ifft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    """``scipy.fft.ifft`` with ``workers``."""
    return _transform(_scipy_fft.ifft, np.fft.ifft, LAPACK_DTYPES, x, n, axis, norm)


def fft_rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    """``scipy.fft.rfft`` with ``workers`` (real input; NumPy's TypeError for complex)."""
    return _transform(_scipy_fft.rfft, np.fft.rfft, REAL_DTYPES, x, n, axis, norm)


# -- convolution ----------------------------------------------------------------------------------


def convolve(a: Any, v: Any, /, mode: Any = "full") -> Any:
    """NumPy's ``convolve`` of two 1-D floating-point or complex signals by FFT:
    ``scipy.signal.oaconvolve`` (overlap-add) when one signal is at least
    :data:`CONVOLVE_OA_RATIO` times the other, ``fftconvolve`` otherwise.

    The result has NumPy's dtype, shape and ``mode`` semantics (the signals are swapped so the
    longer comes first, as NumPy does, which makes SciPy's ``"same"`` NumPy's).  Its error is
    the FFT's: about the dtype's epsilon times the largest output magnitude, on every element,
    where NumPy's direct sum is accurate element by element.  Signals with NaN or infinity take
    NumPy's direct sum, which keeps them where they are (an FFT spreads them everywhere).
    """
    if not (
        _plain(a)
        and _plain(v)
        and a.ndim == 1
        and v.ndim == 1
        and a.dtype in LAPACK_DTYPES
        and v.dtype in LAPACK_DTYPES
        and a.size
        and v.size
        and isinstance(mode, str)
        and mode in _CONVOLVE_MODES
    ):
        return np.convolve(a, v, mode=mode)
    if not (np.isfinite(a).all() and np.isfinite(v).all()):
        return np.convolve(a, v, mode=cast(Any, mode))
    if v.size > a.size:
        a, v = v, a
    from scipy import signal

    method = signal.oaconvolve if a.size >= CONVOLVE_OA_RATIO * v.size else signal.fftconvolve
    out = method(a, v, mode=mode)
    return out.astype(np.result_type(a.dtype, v.dtype), copy=False)
