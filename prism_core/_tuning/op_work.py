"""The work of one call, and how much of it each builtin op does: floating-point operations and
main-memory bytes, from the shapes of its array arguments.

:class:`Work` is the amount; :data:`BUILTIN` maps each builtin op to the function that counts
its work, from its record's ``work`` kind (``oprecord.py``), the kind ``own`` from a
declaration here (``einsum``'s is ``unknown``).  The counts are the textbook ones, each
declaration saying which; ``bytes`` is the minimum main-memory traffic, and ``unit`` the
execution unit that does the arithmetic (``matrix`` for matrix products, ``vector`` for
everything else).  ``work.py`` looks them up, with the work users declare.  The counts and
their sources: docs/performance.md, "Work: what an op does".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prism_core.kernel.description.throughput import UNITS
from prism_core.kernel.oprecord import OpRecord
from prism_core.kernel.public import home
from prism_core.kernel.records.families import RECORDS

__all__ = ["BUILTIN", "Shape", "Shapes", "Work"]

Shape = tuple[int, ...]
Shapes = tuple[Shape, ...]
#: What the builtin declarations are: they also know whether the input is complex.
_Builtin = Callable[[Shapes, int, bool], "Work"]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"Work(): {what} must be a number, got {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"Work(): {what} must be finite and >= 0, got {value!r}")
    return float(value)


@home("prism_core.extending")
@dataclass(frozen=True)
class Work:
    """The work of one call of an op: ``flops`` (real floating-point operations; integer
    operations for integer types) and ``bytes`` (minimum main-memory traffic: inputs read once,
    outputs written once).

    ``io_bytes`` is the size of the arguments and results, what moving them to and from a device
    costs; it defaults to ``bytes`` and differs only for ops whose memory traffic is not their
    arguments' size (a view such as ``reshape`` reads nothing, but its argument must still reach
    the device).

    ``out_bytes`` is the part of ``io_bytes`` that is the results, the bytes that come back
    from a device (the rest are the arguments, which go to it); the performance model prices
    each direction at its own host-link rate.  ``None`` (the default): the split is not known,
    and everything moved is priced at the slower direction.  It is not compared.

    ``unit`` is the execution unit that does the arithmetic: ``"matrix"`` for work dominated by
    matrix-matrix products (the device's Tensor Cores, Matrix Cores, XMX, systolic arrays),
    ``"vector"`` (the default) for everything else.  The performance model takes the rate of
    that unit from the device's ``throughput``.  It is not compared: the amount of work is the
    same whichever unit does it.
    """

    flops: float
    bytes: float
    io_bytes: float | None = None
    unit: str = field(default="vector", compare=False)
    out_bytes: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "flops", _number(self.flops, "flops"))
        object.__setattr__(self, "bytes", _number(self.bytes, "bytes"))
        if self.io_bytes is not None:
            object.__setattr__(self, "io_bytes", _number(self.io_bytes, "io_bytes"))
        if self.out_bytes is not None:
            out = _number(self.out_bytes, "out_bytes")
            if out > self.moved_bytes:
                raise ValueError(
                    f"Work(): out_bytes ({out:g}) is the results' part of the bytes moved, so "
                    f"it cannot exceed them ({self.moved_bytes:g}: io_bytes, else bytes)"
                )
            object.__setattr__(self, "out_bytes", out)
        if self.unit not in UNITS:
            raise ValueError(
                f"Work(): unit must be one of {', '.join(map(repr, UNITS))} (the execution unit "
                f"that does the arithmetic), got {self.unit!r}"
            )

    @property
    def moved_bytes(self) -> float:
        """The bytes that cross a host link when the arguments start on the host and the
        results return to it: ``io_bytes``, or ``bytes`` when that is not given."""
        return self.bytes if self.io_bytes is None else self.io_bytes

    @property
    def in_bytes(self) -> float | None:
        """The arguments' part of :attr:`moved_bytes` (what goes to a device), ``None`` when
        ``out_bytes`` is not given."""
        return None if self.out_bytes is None else self.moved_bytes - self.out_bytes

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, flops per byte (``inf`` for work that moves no bytes)."""
        if self.bytes == 0:
            return math.inf if self.flops else 0.0
        return self.flops / self.bytes

    def as_dict(self) -> dict[str, float | str]:
        out: dict[str, float | str] = {"flops": self.flops, "bytes": self.bytes}
        if self.io_bytes is not None:
            out["io_bytes"] = self.io_bytes
        out["unit"] = self.unit
        if self.out_bytes is not None:
            out["out_bytes"] = self.out_bytes
        return out


# -- shapes -----------------------------------------------------------------------------------


def _size(shape: Shape) -> int:
    return math.prod(shape)


def _broadcast(shapes: Sequence[Shape], op: str) -> Shape:
    """NumPy's broadcast of ``shapes``; a ``ValueError`` naming ``op`` when they do not."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(-ndim, 0):
        dims = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(dims) > 1:
            raise ValueError(
                f"{op}: shapes {', '.join(map(str, shapes))} do not broadcast together "
                f"(axis {axis}: {sorted(dims)})"
            )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _need(op: str, shapes: Shapes, count: int | tuple[int, ...]) -> None:
    counts = (count,) if isinstance(count, int) else count
    if len(shapes) not in counts:
        wanted = " or ".join(map(str, counts))
        raise ValueError(
            f"{op} takes {wanted} array argument{'s' if counts != (1,) else ''}; got "
            f"{len(shapes)} shape{'s' if len(shapes) != 1 else ''}: {shapes}"
        )


def _matrix(op: str, shape: Shape) -> tuple[int, int, int]:
    """(batch, rows, columns) of a matrix or a stack of matrices."""
    if len(shape) < 2:
        raise ValueError(f"{op} needs a matrix (2 or more dimensions); got shape {shape}")
    return _size(shape[:-2]), shape[-2], shape[-1]


def _log2(n: int) -> float:
    return math.log2(n) if n > 1 else 0.0


# -- the builtin declarations -----------------------------------------------------------------

#: Each builtin op's work function, by the op's name.
BUILTIN: dict[str, _Builtin] = {}


def _builtin(*names: str) -> Callable[[_Builtin], _Builtin]:
    def register(fn: _Builtin) -> _Builtin:
        for name in names:
            BUILTIN[name] = fn
        return fn

    return register


def _matmul_work(op: str, shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    _need(op, shapes, 2)
    a, b = shapes
    if not a or not b:
        raise ValueError(f"{op}: 0-d operands have no matrix product; got shapes {a} and {b}")
    # A 1-d operand is a matrix of one row (left) or one column (right), as matmul promotes it.
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    m, k = a2[-2], a2[-1]
    k2, n = b2[-2], b2[-1]
    if k != k2:
        raise ValueError(f"{op}: inner dimensions differ: shapes {a} and {b} ({k} != {k2})")
    batch = _size(_broadcast([a2[:-2], b2[:-2]], op))
    # 2mnk: one multiply and one add per term; a complex multiply-add is 4 real ones each.
    flops = 2.0 * batch * m * n * k * (4 if complex_input else 1)
    out = itemsize * batch * m * n
    return Work(
        flops, itemsize * (_size(a) + _size(b)) + out, unit=_product_unit(m, n), out_bytes=out
    )


def _product_unit(rows: int, columns: int) -> str:
    """The unit of a product with a result of ``rows`` x ``columns`` (per batch): a matrix-matrix
    product (Level-3 BLAS, GEMM) runs on the matrix units; one with a single row or column is a
    matrix-vector product (Level-2 BLAS, GEMV), which BLAS libraries run on the vector units and
    which is bound by memory anyway."""
    return "matrix" if rows > 1 and columns > 1 else "vector"


@_builtin("matmul")
def _matmul(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    return _matmul_work("matmul", shapes, itemsize, complex_input)


@_builtin("dot")
def _dot(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    _need("dot", shapes, 2)
    a, b = shapes
    c = 4 if complex_input else 1
    if not a or not b:  # a product with a scalar: elementwise
        out = _size(a) * _size(b)
        return Work(
            float(out * c), itemsize * (_size(a) + _size(b) + out), out_bytes=itemsize * out
        )
    if len(b) == 1:  # sum product over the last axes
        if a[-1] != b[0]:
            raise ValueError(f"dot: shapes {a} and {b} are not aligned ({a[-1]} != {b[0]})")
        out = _size(a[:-1])
        return Work(
            2.0 * out * b[0] * c, itemsize * (_size(a) + _size(b) + out), out_bytes=itemsize * out
        )
    if a[-1] != b[-2]:
        raise ValueError(f"dot: shapes {a} and {b} are not aligned ({a[-1]} != {b[-2]})")
    out = _size(a[:-1]) * _size(b[:-2]) * b[-1]
    unit = _product_unit(_size(a[:-1]), b[-1])
    return Work(
        2.0 * out * a[-1] * c,
        itemsize * (_size(a) + _size(b) + out),
        unit=unit,
        out_bytes=itemsize * out,
    )


# Fourier transforms: 5 n log2 n real flops per complex transform of n points (the count FFTW's
# benchmarks use, that of radix-2 Cooley-Tukey); a transform of real input counts half.  A
# multidimensional transform is one transform per axis, each over every line along it:
# sum over axes of (size / n_axis) * 5 n_axis log2 n_axis = 5 size log2 size.  The transforms of
# real input (fft.fft of a float array) write complex output: twice the itemsize.


def _fft(axes: int | None, real_input: bool) -> _Builtin:
    def work(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
        _need("a Fourier transform", shapes, 1)
        (shape,) = shapes
        if not shape:
            raise ValueError(
                f"a Fourier transform needs an array of 1 or more dimensions; got shape {shape}"
            )
        n_axes = len(shape) if axes is None else min(axes, len(shape))
        size = _size(shape)
        points = _size(shape[len(shape) - n_axes :])
        lines = size // points if points else 0
        flops = lines * (2.5 if real_input else 5.0) * points * _log2(points)
        in_bytes = size * itemsize
        if complex_input:
            out_bytes = in_bytes
        elif real_input:  # rfft: the n // 2 + 1 non-negative frequencies, complex
            last = shape[-1]
            out_bytes = (size // last * (last // 2 + 1) if last else 0) * 2 * itemsize
        else:  # fft of real input: a complex result of the same length
            out_bytes = 2 * in_bytes
        return Work(flops, in_bytes + out_bytes, out_bytes=out_bytes)

    return work


for _name, _axes, _real in (
    ("fft.fft", 1, False),
    ("fft.ifft", 1, False),
    ("fft.rfft", 1, True),
    ("fft.fft2", 2, False),
    ("fft.ifft2", 2, False),
    ("fft.rfft2", 2, True),
    ("fft.fftn", None, False),
    ("fft.ifftn", None, False),
    ("fft.rfftn", None, True),
):
    BUILTIN[_name] = _fft(_axes, _real)


@_builtin("fft.irfft")
def _irfft(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # m complex values in (a half spectrum), n = 2 (m - 1) real values out: 2.5 n log2 n.
    _need("fft.irfft", shapes, 1)
    (shape,) = shapes
    if not shape:
        raise ValueError(f"fft.irfft needs an array of 1 or more dimensions; got shape {shape}")
    m = shape[-1]
    n = 2 * (m - 1) if m > 1 else 1
    lines = _size(shape[:-1])
    real_size = itemsize // 2 if complex_input else itemsize
    flops = lines * 2.5 * n * _log2(n)
    out = lines * n * real_size
    return Work(flops, _size(shape) * itemsize + out, out_bytes=out)


# The Array API's other transforms (fft_functions.py).  ihfft is the conjugate of an
# rfft: rfft's count.  hfft is an irfft of the conjugate, and irfftn the n-dimensional irfft:
# a half spectrum of m values per line of the last axis in, n = 2 (m - 1) real values out, at
# half the complex count, 2.5 N log2 N real flops for a real output of N values (over every
# axis, as for fftn: the sum over the axes of the per-axis counts is N log2 N).  The shapes
# are the input's: sizes given by ``s`` or ``n`` are not seen here.
BUILTIN["fft.ihfft"] = _fft(1, True)


def _half_spectrum(op: str, every_axis: bool) -> _Builtin:
    def work(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
        _need(op, shapes, 1)
        (shape,) = shapes
        if not shape:
            raise ValueError(f"{op} needs an array of 1 or more dimensions; got shape {shape}")
        m = shape[-1]
        n = 2 * (m - 1) if m > 1 else 1
        lines = _size(shape[:-1])
        # every axis: one transform of N = lines * n real values; else one of n per line.
        flops = 2.5 * lines * n * _log2(lines * n if every_axis else n)
        real_size = itemsize // 2 if complex_input else itemsize
        out = lines * n * real_size
        return Work(flops, _size(shape) * itemsize + out, out_bytes=out)

    return work


BUILTIN["fft.hfft"] = _half_spectrum("fft.hfft", every_axis=False)
BUILTIN["fft.irfftn"] = _half_spectrum("fft.irfftn", every_axis=True)


def _square(op: str, shapes: Shapes) -> tuple[int, int]:
    batch, m, n = _matrix(op, shapes[0])
    if m != n:
        raise ValueError(f"{op} needs square matrices; got shape {shapes[0]}")
    return batch, n


# The unit of the linear-algebra functions: "matrix" for the blocked LAPACK factorisations
# (LU: solve, inv, det, slogdet; Cholesky; Householder QR) and matrix_power, whose flops are
# nearly all in the GEMMs of their trailing updates; "vector" for the eigenvalue and singular
# value solvers (eigh, eig, svd and those built on it), whose reductions to tridiagonal,
# Hessenberg or bidiagonal form do about half their flops in Level-2 BLAS and whose iterations
# are not matrix products.


def _linalg(
    op: str,
    shapes: Shapes,
    itemsize: int,
    complex_input: bool,
    flops: float,
    out_elements: int,
    unit: str = "vector",
) -> Work:
    c = 4 if complex_input else 1
    out = itemsize * out_elements
    return Work(flops * c, itemsize * sum(_size(s) for s in shapes) + out, unit=unit, out_bytes=out)


@_builtin("linalg.svd")
def _svd(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Golub & Van Loan (Matrix Computations, 4th ed., Fig. 8.6.1), Golub-Reinsch SVD of an m x n
    # matrix, m >= n, computing S, the full U (m x m) and V: 4 m^2 n + 8 m n^2 + 9 n^3 flops
    # (21 n^3 for a square matrix).  full_matrices=True, the Array API's default, is assumed: the
    # shapes do not say.  A wide matrix costs what its transpose does.
    _need("linalg.svd", shapes, 1)
    batch, m, n = _matrix("linalg.svd", shapes[0])
    m, n = max(m, n), min(m, n)
    flops = batch * (4.0 * m * m * n + 8.0 * m * n * n + 9.0 * n**3)
    return _linalg(
        "linalg.svd", shapes, itemsize, complex_input, flops, batch * (m * m + n + n * n)
    )


@_builtin("linalg.solve")
def _solve(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # LU with partial pivoting (2/3 n^3) and two triangular solves per right-hand side (2 n^2
    # each column): 2/3 n^3 + 2 n^2 k (LAPACK's gesv).
    _need("linalg.solve", shapes, 2)
    a, b = shapes
    _, n = _square("linalg.solve", (a,))
    b_batch: Shape = ()
    if len(b) == 1:  # a vector only when 1-d (the Array API's rule)
        k, rows = 1, b[0]
    elif not b:
        raise ValueError(f"linalg.solve: x2 must be a vector or a matrix; got shape {b}")
    else:
        rows, k, b_batch = b[-2], b[-1], b[:-2]
    if rows != n:
        raise ValueError(f"linalg.solve: shapes {a} and {b} do not match ({n} != {rows})")
    batch = _size(_broadcast([a[:-2], b_batch], "linalg.solve"))
    flops = batch * (2.0 / 3.0 * n**3 + 2.0 * n * n * k)
    return _linalg(
        "linalg.solve", shapes, itemsize, complex_input, flops, batch * n * k, unit="matrix"
    )


@_builtin("linalg.inv")
def _inv(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # LU (2/3 n^3) and the inverse from it (4/3 n^3): 2 n^3, LAPACK's getrf + getri.  NumPy
    # solves against the identity instead (8/3 n^3); the calibration absorbs the difference.
    _need("linalg.inv", shapes, 1)
    batch, n = _square("linalg.inv", shapes)
    flops = batch * 2.0 * n**3
    return _linalg("linalg.inv", shapes, itemsize, complex_input, flops, batch * n * n, "matrix")


@_builtin("linalg.cholesky")
def _cholesky(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # n^3 / 3 (LAPACK's potrf).
    _need("linalg.cholesky", shapes, 1)
    batch, n = _square("linalg.cholesky", shapes)
    flops = batch * n**3 / 3.0
    return _linalg(
        "linalg.cholesky", shapes, itemsize, complex_input, flops, batch * n * n, "matrix"
    )


@_builtin("linalg.qr")
def _qr(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Householder QR (LAPACK Working Note 41): geqrf 2 M N^2 - 2/3 N^3 with M = max(m, n),
    # N = min(m, n), then orgqr forming the reduced Q (m x k, k = min(m, n)): 2 m k^2 - 2/3 k^3.
    # For m >= n: 4 m n^2 - 4/3 n^3.  mode="reduced" (the default) is assumed.
    _need("linalg.qr", shapes, 1)
    batch, m, n = _matrix("linalg.qr", shapes[0])
    big, k = max(m, n), min(m, n)
    flops = batch * ((2.0 * big * k * k - 2.0 / 3.0 * k**3) + (2.0 * m * k * k - 2.0 / 3.0 * k**3))
    out = batch * (m * k + k * n)
    return _linalg("linalg.qr", shapes, itemsize, complex_input, flops, out, unit="matrix")


@_builtin("linalg.eigh")
def _eigh(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Symmetric QR algorithm with eigenvectors: about 9 n^3 (Golub & Van Loan, 4th ed.,
    # section 8.3.6); eigenvalues alone would be 4/3 n^3.
    _need("linalg.eigh", shapes, 1)
    batch, n = _square("linalg.eigh", shapes)
    return _linalg(
        "linalg.eigh", shapes, itemsize, complex_input, batch * 9.0 * n**3, batch * (n + n * n)
    )


@_builtin("linalg.eig")
def _eig(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Hessenberg QR with eigenvectors: about 25 n^3 (Golub & Van Loan, 4th ed., section 7.5.6).
    _need("linalg.eig", shapes, 1)
    batch, n = _square("linalg.eig", shapes)
    # The results are complex in general: twice the itemsize of a real input.
    out = batch * (n + n * n) * (1 if complex_input else 2)
    return _linalg("linalg.eig", shapes, itemsize, complex_input, batch * 25.0 * n**3, out)


@_builtin("linalg.det")
def _det(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # LU: 2/3 n^3 (LAPACK's getrf), then the product of the diagonal.
    _need("linalg.det", shapes, 1)
    batch, n = _square("linalg.det", shapes)
    flops = batch * 2.0 / 3.0 * n**3
    return _linalg("linalg.det", shapes, itemsize, complex_input, flops, batch, unit="matrix")


@_builtin("linalg.slogdet")
def _slogdet(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # LU: 2/3 n^3 (LAPACK's getrf), then a logarithm per diagonal element: two results each.
    _need("linalg.slogdet", shapes, 1)
    batch, n = _square("linalg.slogdet", shapes)
    flops = batch * (2.0 / 3.0 * n**3)
    return _linalg(
        "linalg.slogdet", shapes, itemsize, complex_input, flops, 2 * batch, unit="matrix"
    )


@_builtin("linalg.eigvalsh")
def _eigvalsh(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Symmetric QR algorithm without eigenvectors: about 4/3 n^3, the reduction to tridiagonal
    # form (Golub & Van Loan, 4th ed., section 8.3.6); the QR steps on it are O(n^2).
    _need("linalg.eigvalsh", shapes, 1)
    batch, n = _square("linalg.eigvalsh", shapes)
    flops = batch * 4.0 / 3.0 * n**3
    return _linalg("linalg.eigvalsh", shapes, itemsize, complex_input, flops, batch * n)


def _singular_values(op: str, shapes: Shapes) -> tuple[int, int, int, float]:
    """(batch, max(m, n), min(m, n), flops of the singular values alone): Golub-Reinsch,
    4 m n^2 - 4/3 n^3 for m >= n (Golub & Van Loan, 4th ed., Fig. 8.6.1)."""
    _need(op, shapes, 1)
    batch, m, n = _matrix(op, shapes[0])
    m, n = max(m, n), min(m, n)
    return batch, m, n, batch * max(4.0 * m * n * n - 4.0 / 3.0 * n**3, 0.0)


@_builtin("linalg.svdvals")
def _svdvals(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    batch, _, n, flops = _singular_values("linalg.svdvals", shapes)
    return _linalg("linalg.svdvals", shapes, itemsize, complex_input, flops, batch * n)


@_builtin("linalg.matrix_rank")
def _matrix_rank(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # The singular values, then one comparison each (not counted); one int64 out per matrix.
    batch, _, _, flops = _singular_values("linalg.matrix_rank", shapes)
    return _linalg("linalg.matrix_rank", shapes, itemsize, complex_input, flops, batch)


@_builtin("linalg.pinv")
def _pinv(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # The thin SVD with U1 (m x n) and V: 14 m n^2 + 8 n^3 (Golub-Reinsch, Golub & Van Loan,
    # 4th ed., Fig. 8.6.1; m >= n), then V diag(1/S) U1^H: 2 m n^2.  The result is n x m.
    _need("linalg.pinv", shapes, 1)
    batch, m, n = _matrix("linalg.pinv", shapes[0])
    big, k = max(m, n), min(m, n)
    flops = batch * (16.0 * big * k * k + 8.0 * k**3)
    return _linalg("linalg.pinv", shapes, itemsize, complex_input, flops, batch * m * n)


@_builtin("linalg.matrix_power")
def _matrix_power(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # One matrix product, 2 n^3: the exponent is not an array argument, so the shapes do not
    # say it (repeated squaring takes between log2 |n| and 2 log2 |n| products, and a negative
    # power an inverse first).
    _need("linalg.matrix_power", shapes, 1)
    batch, n = _square("linalg.matrix_power", shapes)
    flops = batch * 2.0 * n**3
    return _linalg(
        "linalg.matrix_power", shapes, itemsize, complex_input, flops, batch * n * n, "matrix"
    )


@_builtin("linalg.trace")
def _trace(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # An add per diagonal element (offset=0 assumed); only the diagonal is read.
    _need("linalg.trace", shapes, 1)
    batch, m, n = _matrix("linalg.trace", shapes[0])
    k = batch * min(m, n)
    return Work(
        float(k) * (2 if complex_input else 1), itemsize * (k + batch), out_bytes=itemsize * batch
    )


@_builtin("linalg.outer")
def _outer(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # A multiply per element of the (N, M) result.
    _need("linalg.outer", shapes, 2)
    n, m = _size(shapes[0]), _size(shapes[1])
    return Work(
        float(n * m) * (4 if complex_input else 1),
        itemsize * (n + m + n * m),
        out_bytes=itemsize * n * m,
    )


@_builtin("cov")
def _cov(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # The centred (V, N) variables times their transpose: 2 V^2 N, plus a pass to centre.
    rows = [(1, _size(s)) if len(s) < 2 else (_size(s[:-1]), s[-1]) for s in shapes]
    if not rows:
        raise ValueError("cov: no array to take the covariance of")
    v, n = sum(r[0] for r in rows), rows[0][1]
    flops = (2.0 * v * v * n + 2.0 * v * n) * (4 if complex_input else 1)
    return Work(flops, itemsize * (v * n + v * v), out_bytes=itemsize * v * v)


@_builtin("linalg.cross")
def _cross(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Two multiplies and a subtraction per element of the result (the broadcast shape).
    _need("linalg.cross", shapes, 2)
    out = _size(_broadcast(shapes, "linalg.cross"))
    flops = 3.0 * out * (4 if complex_input else 1)
    return Work(flops, itemsize * (sum(_size(s) for s in shapes) + out), out_bytes=itemsize * out)


@_builtin("vecdot")
def _vecdot(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # A multiply and an add per element of the broadcast operands, whichever axis is summed;
    # one element out per vector (axis=-1 assumed: the keyword is not among the shapes).  Dot
    # products of vectors (Level-1 BLAS) reuse no operand: the vector units, as any reduction.
    _need("vecdot", shapes, 2)
    full = _broadcast(shapes, "vecdot")
    if not full:
        raise ValueError(f"vecdot needs vectors (1 or more dimensions); got shapes {shapes}")
    size = _size(full)
    out = size // full[-1] if full[-1] else _size(full[:-1])
    flops = 2.0 * size * (4 if complex_input else 1)
    return Work(flops, itemsize * (sum(_size(s) for s in shapes) + out), out_bytes=itemsize * out)


@_builtin("tensordot")
def _tensordot(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # 2 M N K for an (M, K) by (K, N) contraction.  ``axes`` is a keyword the shapes do not
    # show: the default 2 is assumed where x1's last two axes are x2's first two, else 1 where
    # one is, else 0 (the outer product).
    _need("tensordot", shapes, 2)
    a, b = shapes
    n_axes = next(
        (n for n in (2, 1) if len(a) >= n and len(b) >= n and a[len(a) - n :] == b[:n]), 0
    )
    k = _size(a[len(a) - n_axes :])
    m, n = _size(a[: len(a) - n_axes]), _size(b[n_axes:])
    flops = 2.0 * m * n * k * (4 if complex_input else 1)
    # No contracted axis is an outer product: a multiply per element, on the vector units.
    unit = _product_unit(m, n) if n_axes else "vector"
    return Work(
        flops, itemsize * (_size(a) + _size(b) + m * n), unit=unit, out_bytes=itemsize * m * n
    )


@_builtin("linalg.norm", "linalg.vector_norm", "linalg.matrix_norm")
def _norm(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # A multiply and an add per element (the 2-norm and the Frobenius norm, the defaults); the
    # spectral and nuclear norms need an SVD and cost far more than this says.
    _need("norm", shapes, 1)
    size = _size(shapes[0])
    return Work(2.0 * size * (4 if complex_input else 1), itemsize * (size + 1), out_bytes=itemsize)


def _elementwise(arity: int | tuple[int, ...], flops: float = 1.0) -> _Builtin:
    # ``flops`` operations per output element (one for arithmetic, the record's count for the
    # transcendental functions); inputs read once, the output written once.
    def work(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
        _need("an elementwise op", shapes, arity)
        out = _size(_broadcast(shapes, "an elementwise op"))
        return Work(
            flops * out, itemsize * (sum(_size(s) for s in shapes) + out), out_bytes=itemsize * out
        )

    return work


def _reduction(flops_per_element: float, keeps_shape: bool = False) -> _Builtin:
    # The axis is a keyword argument the shapes do not show: a reduction over every axis (one
    # output element) is assumed; it makes no difference to the flops and little to the bytes.
    def work(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
        _need("a reduction", shapes, 1)
        size = _size(shapes[0])
        out = size if keeps_shape else 1
        return Work(flops_per_element * size, itemsize * (size + out), out_bytes=itemsize * out)

    return work


@_builtin("sort")
def _sort_work(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # n log2 n comparisons per line along the last axis (the default axis=-1).
    _need("sort", shapes, 1)
    shape = shapes[0]
    size = _size(shape)
    n = shape[-1] if shape else 1
    return Work(size * _log2(n), 2.0 * itemsize * size, out_bytes=float(itemsize * size))


@_builtin("searchsorted")
def _searchsorted_work(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # A binary search of the sorted x1 (n elements) per element of x2: log2(n + 1) comparisons
    # each; both read once, one int64 index written per element of x2.
    _need("searchsorted", shapes, 2)
    n, m = _size(shapes[0]), _size(shapes[1])
    return Work(m * _log2(n + 1), itemsize * (n + m) + 8.0 * m, out_bytes=8.0 * m)


@_builtin("convolve")
def _convolve(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # Direct convolution (NumPy's): a multiply and an add for each pair, 2 N M; mode="full".
    _need("convolve", shapes, 2)
    n, m = _size(shapes[0]), _size(shapes[1])
    out = n + m - 1 if n and m else 0
    return Work(
        2.0 * n * m * (4 if complex_input else 1),
        itemsize * (n + m + out),
        out_bytes=itemsize * out,
    )


# Ops that compute nothing: 0 flops.  Views move no bytes (their arguments still cross a host
# link, io_bytes); copies read and write every element.  Creation ops take no array: their one
# "shape" is the shape of the array they create.
def _view(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    size = itemsize * sum(_size(s) for s in shapes)
    return Work(0.0, 0.0, io_bytes=2.0 * size, out_bytes=float(size))


def _copy(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    size = itemsize * sum(_size(s) for s in shapes)
    return Work(0.0, 2.0 * size, out_bytes=float(size))


def _create(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    _need("a creation op (the shape of the array it creates)", shapes, 1)
    size = float(itemsize * _size(shapes[0]))
    return Work(0.0, size, out_bytes=size)


@_builtin("triu_indices")
def _triu_indices(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # The "shape" is (n,) or (n, m); about half the elements, two int64 indices each.
    _need("triu_indices", shapes, 1)
    shape = shapes[0]
    n = shape[0] if shape else 0
    m = shape[1] if len(shape) > 1 else n
    return Work(0.0, 2.0 * 8 * n * m / 2, out_bytes=2.0 * 8 * n * m / 2)


def _scan(shapes: Shapes, itemsize: int, complex_input: bool) -> Work:
    # One operation per element, as many elements out (cumulative_prod, diff).
    _need("a scan", shapes, 1)
    size = _size(shapes[0])
    return Work(float(size), 2.0 * itemsize * size, out_bytes=float(itemsize * size))


def _required(record: OpRecord) -> int:
    """How many of ``record``'s array arguments a call must give (``clip``'s bounds may go)."""
    parameters = [p.strip() for p in record.signature[1:-1].split(",")]
    parameters = [p for p in parameters if p not in ("/", "*")]
    return sum(1 for i in record.array_args or () if "=" not in parameters[i])


def _record_work(record: OpRecord) -> _Builtin | None:
    """The work of a builtin op by its record's ``work`` kind; ``None`` for ``own`` (declared
    above with ``@_builtin``) and ``unknown``."""
    if record.work == "elementwise":
        n, required = record.arity, _required(record)
        return _elementwise(n if n == required else tuple(range(required, n + 1)), record.flops)
    return {
        "view": _view,
        "copy": _copy,
        "create": _create,
        "reduction": _reduction(record.flops),
        "scan": _scan,
        "sort": _sort_work,
    }.get(record.work)


for _record in RECORDS:
    _found = _record_work(_record)
    if _found is not None:
        BUILTIN[_record.name] = _found
    elif _record.work == "own" and _record.name not in BUILTIN:
        raise ValueError(
            f"op record {_record.name!r} says work='own' but op_work.py declares no work for it "
            "(an @_builtin function)"
        )
