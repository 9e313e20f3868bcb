"""The variants the ``scipy`` plugin contributes (its ``prism_variants`` hook), and their
per-call checks.

Every variant runs on the ``scipy`` backend, requires a CPU (``{"kind": "cpu"}``) and names its
implementation lazily (``"prism_plugin_scipy.ops:linalg_svd"``), so that building this list
imports neither SciPy nor NumPy.  In automatic mode NumPy arrays stay where they are for both
the numpy and the scipy backend, so priority decides between them:

* :data:`PRIORITY` (5, above NumPy's reference variants, 0) for the ops the plugin does better
  than NumPy on this kind of host, measured (benchmarks/crossover.py): ``linalg.solve`` and
  ``linalg.inv`` (1.1-2x: less overhead per call, and Cholesky for positive definite systems),
  the FFTs (1.1-1.6x from 256 points, more with workers on batches), ``convolve`` above the
  crossover, and ``linalg.svd``, as fast as NumPy's but converging where NumPy's raises
  (``gesvd`` after ``gesdd``);
* :data:`PRIORITY_NAMED` (-1, below NumPy's) for ``matmul``, ``linalg.eigh`` and ``linalg.eig``:
  the same BLAS/LAPACK routines as NumPy's, measured no faster (and up to 2x slower on small
  matrices, where the Python around the call dominates).  Automatic mode keeps NumPy's, and
  wakes no second BLAS thread pool for nothing; they run where the ``scipy`` backend is named
  (``use_backend("scipy")``) and pass the conformance suite like the others.

Per call, each variant's ``can_run`` decides which calls it takes:

* what LAPACK, BLAS and pocketfft compute on: float32, float64, complex64 and complex128 (real
  ones for ``rfft``), 2-D matrices for the linear algebra (NumPy's functions also take stacks
  of matrices, integers, float16, ...: those calls stay NumPy's, which says so in
  ``prism explain``);
* for ``convolve``, only signals long enough that an FFT beats NumPy's direct sum (the
  crossover measured on a 2-core host, :data:`CONVOLVE_MIN_SHORT` and
  :data:`CONVOLVE_MIN_SIZE`), and floating-point ones: NumPy convolves integers exactly, into
  integers, where an FFT would give rounded floats.

A check reads ``shape`` and ``dtype`` only (no data, no import): it also answers for the
:class:`prism_core.ArraySpec` of ``prism explain``.  Anything an op's implementation does not
compute on SciPy after all (a non-square matrix, NaN in a signal) it hands to NumPy's function,
so the caller gets NumPy's result or NumPy's exception (``prism_plugin_scipy.ops``).
"""

from __future__ import annotations

from typing import Any

from prism_core.extending import Variant

__all__ = [
    "CONVOLVE_MIN_SHORT",
    "CONVOLVE_MIN_SIZE",
    "PRIORITY",
    "PRIORITY_NAMED",
    "takes_convolve",
    "takes_fft",
    "takes_matmul",
    "takes_matrix",
    "takes_rfft",
    "takes_solve",
    "variants",
]

#: Priority of the variants measured faster (or more robust) than NumPy's: above NumPy's
#: reference variants (0), so they run where they take the call.
PRIORITY = 5
#: Priority of the variants measured only as fast as NumPy's: below NumPy's reference variants,
#: so they run where the ``scipy`` backend is named.
PRIORITY_NAMED = -1
#: ``convolve`` goes to an FFT only when the shorter signal (``M`` points) has at least this
#: many points, however long the other: below, overlap-add costs more per output point than
#: NumPy's direct sum of ``M`` products (measured: 0.5-0.8x at ``M`` = 128 for ``N`` from
#: 2**17 to 2**20 points; 0.7-1.4x at ``N`` = 2**16, kept on NumPy, whose direct sum is also
#: the more accurate) ...
CONVOLVE_MIN_SHORT = 256
#: ... and ``N * M**2`` is at least this (``N`` the longer length).  NumPy's direct sum costs
#: ``N * M`` multiply-adds; an FFT convolution about ``(N + M) log(N + M)`` plus 80-100 us of
#: fixed cost in ``scipy.signal``.  Measured on the 2-core development host, the plugin wins
#: from ``M`` of about 900, 400, 230 and 110 for ``N`` = 1024, 4096, 16384 and 65536 points:
#: ``M = 2**15 / sqrt(N)``, that is ``N * M**2 = 2**30`` (benchmarks/crossover.py, "convolve";
#: plugins/prism-plugin-scipy/README.md has the table).
CONVOLVE_MIN_SIZE = 1 << 30

_OPS = "prism_plugin_scipy.ops"
_LAPACK_NAMES = "float32, float64, complex64 or complex128"

# The dtypes, as NumPy's: built on the first check, when arrays (so NumPy) exist already.
_lapack_dtypes: frozenset[Any] = frozenset()
_real_dtypes: frozenset[Any] = frozenset()


def _dtypes() -> tuple[frozenset[Any], frozenset[Any]]:
    global _lapack_dtypes, _real_dtypes
    if not _lapack_dtypes:
        import numpy as np

        _real_dtypes = frozenset(np.dtype(c) for c in "fd")
        _lapack_dtypes = frozenset(np.dtype(c) for c in "fdFD")
    return _lapack_dtypes, _real_dtypes


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _name(dt: Any) -> str:
    """Prism's name of a dtype (``"int64"``), for the reasons."""
    import prism_core

    try:
        return prism_core.dtype(dt).name
    except (TypeError, ValueError):
        return str(dt)


def _not_arrays(*values: Any) -> str:
    kinds = ", ".join(type(v).__name__ for v in values if not _is_array(v))
    return f"takes arrays, not {kinds} (NumPy converts those)"


def takes_matmul(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``scipy.matmul``: two 2-D matrices of one LAPACK dtype (BLAS ``gemm``)."""
    if len(args) < 2 or not (_is_array(args[0]) and _is_array(args[1])):
        return _not_arrays(*args[:2])
    x1, x2 = args[0], args[1]
    if len(x1.shape) != 2 or len(x2.shape) != 2:
        return (
            f"BLAS gemm multiplies 2-D matrices, not {len(x1.shape)}-D by {len(x2.shape)}-D "
            "(NumPy's matmul takes vectors and stacks)"
        )
    lapack, _ = _dtypes()
    if x1.dtype != x2.dtype or x1.dtype not in lapack:
        return (
            f"BLAS gemm takes two matrices of one dtype, {_LAPACK_NAMES}; not "
            f"{_name(x1.dtype)} and {_name(x2.dtype)}"
        )
    return True


def takes_matrix(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``inv``, ``svd``, ``eig`` and ``eigh``: a 2-D matrix of a LAPACK dtype."""
    if not args or not _is_array(args[0]):
        return _not_arrays(*args[:1])
    x = args[0]
    if len(x.shape) != 2:
        return (
            f"LAPACK takes one 2-D matrix, not a {len(x.shape)}-D array (NumPy's function "
            "takes stacks of matrices)"
        )
    lapack, _ = _dtypes()
    if x.dtype not in lapack:
        return f"LAPACK computes in {_LAPACK_NAMES}, not {_name(x.dtype)}"
    return True


def takes_solve(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``scipy.linalg.solve``: a 2-D matrix and a 1-D or 2-D right-hand side,
    both of LAPACK dtypes."""
    if len(args) < 2 or not (_is_array(args[0]) and _is_array(args[1])):
        return _not_arrays(*args[:2])
    a, b = args[0], args[1]
    if len(a.shape) != 2 or len(b.shape) not in (1, 2):
        return (
            f"LAPACK solves one 2-D system for a 1-D or 2-D right-hand side, not "
            f"{len(a.shape)}-D and {len(b.shape)}-D (NumPy's solve takes stacks)"
        )
    lapack, _ = _dtypes()
    if a.dtype not in lapack or b.dtype not in lapack:
        return f"LAPACK computes in {_LAPACK_NAMES}, not {_name(a.dtype)} and {_name(b.dtype)}"
    return True


def takes_fft(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``fft`` and ``ifft``: an array of a floating-point or complex dtype."""
    if not args or not _is_array(args[0]):
        return _not_arrays(*args[:1])
    lapack, _ = _dtypes()
    if args[0].dtype not in lapack:
        return f"scipy.fft computes in {_LAPACK_NAMES} here, not {_name(args[0].dtype)}"
    return True


def takes_rfft(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``rfft``: a float32 or float64 array."""
    if not args or not _is_array(args[0]):
        return _not_arrays(*args[:1])
    _, real = _dtypes()
    if args[0].dtype not in real:
        return f"rfft takes real float32 or float64 input, not {_name(args[0].dtype)}"
    return True


def takes_convolve(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``scipy.convolve``: two 1-D floating-point or complex signals, long
    enough that an FFT beats NumPy's direct sum (:data:`CONVOLVE_MIN_SHORT`,
    :data:`CONVOLVE_MIN_SIZE`)."""
    if len(args) < 2 or not (_is_array(args[0]) and _is_array(args[1])):
        return _not_arrays(*args[:2])
    a, v = args[0], args[1]
    if len(a.shape) != 1 or len(v.shape) != 1:
        return f"convolves 1-D signals, not {len(a.shape)}-D and {len(v.shape)}-D arrays"
    lapack, _ = _dtypes()
    if a.dtype not in lapack or v.dtype not in lapack:
        return (
            f"FFT convolution computes in {_LAPACK_NAMES}, not {_name(a.dtype)} and "
            f"{_name(v.dtype)} (NumPy convolves integers exactly, into integers)"
        )
    n, m = int(a.shape[0]), int(v.shape[0])
    short, long_ = (n, m) if n <= m else (m, n)
    if short < CONVOLVE_MIN_SHORT or long_ * short * short < CONVOLVE_MIN_SIZE:
        return (
            f"signals of {long_} and {short} points are too short for an FFT to beat NumPy's "
            f"direct sum (it takes M >= {CONVOLVE_MIN_SHORT} and N * M**2 >= 2**30, N and M "
            "the longer and shorter lengths)"
        )
    return True


def variants() -> list[Variant]:
    """The variants of the ``prism_variants`` hook, all on the ``scipy`` backend."""

    def on_cpu(op: str, function: str, can_run: Any, priority: int = PRIORITY) -> Variant:
        return Variant(
            op,
            f"{_OPS}:{function}",
            backend="scipy",
            requires={"kind": "cpu"},
            priority=priority,
            can_run=can_run,
            name=f"scipy.{op}",
        )

    from . import fft_functions, linalg_functions  # the Array API's other functions

    return [
        *linalg_functions.variants(),
        *fft_functions.variants(),
        on_cpu("matmul", "matmul", takes_matmul, PRIORITY_NAMED),
        on_cpu("linalg.solve", "linalg_solve", takes_solve),
        on_cpu("linalg.inv", "linalg_inv", takes_matrix),
        on_cpu("linalg.svd", "linalg_svd", takes_matrix),
        on_cpu("linalg.eigh", "linalg_eigh", takes_matrix, PRIORITY_NAMED),
        on_cpu("linalg.eig", "linalg_eig", takes_matrix, PRIORITY_NAMED),
        on_cpu("fft.fft", "fft_fft", takes_fft),
        on_cpu("fft.ifft", "fft_ifft", takes_fft),
        on_cpu("fft.rfft", "fft_rfft", takes_rfft),
        on_cpu("convolve", "convolve", takes_convolve),
    ]
