"""The ``torch`` backend's linear algebra functions of the Array API (issue 12): the rows of
prism-core's ``_knowledge/linalg_functions.py``, with the semantics of their NumPy references
(``prism_core._builtin.numpy_linalg``), as ``ops.py`` has them for the older ops.

* **Result types are NumPy's**: the operands of the products (``tensordot``, ``vecdot``,
  ``linalg.cross``, ``linalg.outer``) promote by NumPy's rules and integers stay integers
  (``vecdot`` of int8 wraps in int8, as NumPy's); the factorisations compute integers in
  float64 (``ops._matrices``); ``linalg.trace`` accumulates as ``sum`` does (int64 for smaller
  integers); ``linalg.matrix_rank`` gives int64; ``linalg.slogdet`` gives
  ``prism_core.backend_kit.SlogdetResult``.
* **The standard's checks** (a negative ``axis`` for ``vecdot`` and ``linalg.cross``, the forms
  of ``tensordot``'s ``axes``) are prism-core's own (``numpy_linalg.negative_axis``,
  ``tensordot_axes``), so that the words are the same on every backend; shapes NumPy rejects
  raise NumPy's exceptions, checked before torch runs (torch's would be ``RuntimeError``).
* ``gpu``: the same functions on the GPU, their array arguments moved there first
  (``cuda_ops.on_gpu``); the ``torch.cuda.<op>`` variants run them.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import prism_core.backend_kit as kit
from prism_core.backend_kit import SlogdetResult
from prism_core.reference import negative_axis, tensordot_axes

from .backend import to_tensor, torch_dtype
from .cuda_ops import on_gpu
from .ops import (
    _FLOATS,
    _REAL_OF,
    _accumulator,
    _common,
    _device,
    _lapack,
    _matrices,
    _product,
    _wide_unsigned_safe,
)

__all__ = [
    "cross",
    "det",
    "diagonal",
    "eigvalsh",
    "gpu",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "slogdet",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
]

AxisError = np.exceptions.AxisError


def _stack_of_matrices(op: str, t: Any) -> None:
    if t.ndim < 2:
        raise ValueError(
            f"{op}: x must be a matrix or a stack of matrices (2 or more dimensions); got an "
            f"array of shape {tuple(t.shape)}"
        )


def _offset(op: str, offset: Any) -> int:
    if isinstance(offset, bool):
        raise TypeError(f"{op}: offset must be an int, not a bool")
    try:
        return operator.index(offset)
    except TypeError:
        raise TypeError(f"{op}: offset must be an int, got {offset!r}") from None


def _pair(x1: Any, x2: Any) -> tuple[Any, Any, torch.dtype]:
    """Both operands as tensors on one device, of NumPy's common dtype."""
    device = _device(x1, x2)
    a, b = to_tensor(x1, device), to_tensor(x2, device)
    dt = _common([a.dtype, b.dtype])
    return (a if a.dtype == dt else a.to(dt)), (b if b.dtype == dt else b.to(dt)), dt


# -- the main namespace ------------------------------------------------------------------------
def matrix_transpose(x: Any, /) -> Any:
    t = to_tensor(x)
    _stack_of_matrices("matrix_transpose", t)
    return t.mT


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    a, b, dt = _pair(x1, x2)
    found = tensordot_axes(axes)
    if isinstance(found, int):
        if found > min(a.ndim, b.ndim):
            raise ValueError(
                f"tensordot: axes={found} contracts more axes than x1 ({a.ndim}) or x2 "
                f"({b.ndim}) has"
            )
        first, second = list(range(a.ndim - found, a.ndim)), list(range(found))
    else:
        first, second = found
        for axis, t in [*((i, a) for i in first), *((j, b) for j in second)]:
            if not -t.ndim <= axis < t.ndim:
                raise AxisError(axis, t.ndim)
        first, second = [i % a.ndim for i in first], [j % b.ndim for j in second]
    if any(a.shape[i] != b.shape[j] for i, j in zip(first, second, strict=True)):
        raise ValueError("shape-mismatch for sum")  # NumPy's words
    dims = (first, second)
    return _product(lambda p, q: torch.tensordot(p, q, dims=dims), [a, b], dt)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    a, b, dt = _pair(x1, x2)
    axis = negative_axis("vecdot", axis, (tuple(a.shape), tuple(b.shape)), None)
    kit.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if dt in _FLOATS:
        return torch.linalg.vecdot(a, b, dim=axis)
    if dt == torch.bool:  # NumPy's boolean dot product: an OR of ANDs
        return (a & b).any(dim=axis)
    # Integers wrap as NumPy's do, in their own type (the sum is modular either way).
    return _wide_unsigned_safe(torch.sum, a * b, dt, dim=axis)


# -- the linalg extension ----------------------------------------------------------------------
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    a, b, dt = _pair(x1, x2)
    axis = negative_axis("linalg.cross", axis, (tuple(a.shape), tuple(b.shape)), 3)
    if dt == torch.bool:
        raise TypeError("linalg.cross: x1 and x2 must be numeric, not bool (NumPy's subtract)")
    kit.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    shape = torch.broadcast_shapes(a.shape, b.shape)
    return torch.linalg.cross(a.expand(shape), b.expand(shape), dim=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    a, b, _ = _pair(x1, x2)
    for name, t in (("x1", a), ("x2", b)):
        if t.ndim != 1:
            raise ValueError(
                f"linalg.outer: {name} must be a vector (1-D); got shape {tuple(t.shape)}"
            )
    return a[:, None] * b[None, :]  # bool too (an AND), as NumPy's outer


def matrix_power(x: Any, n: Any, /) -> Any:
    try:
        power = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None  # NumPy's words
    t = to_tensor(x)
    if t.ndim < 2:
        raise kit.linalg_error(
            f"{t.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if t.shape[-1] != t.shape[-2]:
        raise kit.linalg_error("Last 2 dimensions of the array must be square")
    if power < 0:  # powers of the inverse: floating point
        return _lapack(torch.linalg.matrix_power, "Singular matrix", _matrices(t), power)
    # Integers stay integers, as NumPy's repeated products keep them.
    return _product(lambda p: torch.linalg.matrix_power(p, power), [t], t.dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    t = to_tensor(x)
    _stack_of_matrices("linalg.diagonal", t)
    return torch.diagonal(t, offset=_offset("linalg.diagonal", offset), dim1=-2, dim2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    t = to_tensor(x)
    _stack_of_matrices("linalg.trace", t)
    d = torch.diagonal(t, offset=_offset("linalg.trace", offset), dim1=-2, dim2=-1)
    dt = torch_dtype(dtype) if dtype is not None else _accumulator(np.sum, t.dtype)
    if dt.is_complex and not d.is_complex():
        d = d.to(dt)  # torch's sum casts to a complex dtype only from complex input
    return _wide_unsigned_safe(torch.sum, d, dt, dim=-1)


def det(x: Any, /) -> Any:
    return _lapack(torch.linalg.det, "Singular matrix", _matrices(x))


def slogdet(x: Any, /) -> SlogdetResult:
    sign, logabsdet = _lapack(torch.linalg.slogdet, "Singular matrix", _matrices(x))
    return SlogdetResult(sign, logabsdet)


def eigvalsh(x: Any, /) -> Any:
    return _lapack(torch.linalg.eigvalsh, "Eigenvalues did not converge", _matrices(x), UPLO="L")


def svdvals(x: Any, /) -> Any:
    return _lapack(torch.linalg.svdvals, "SVD did not converge", _matrices(x, square=False))


def _rtol(op: str, t: Any, rtol: Any) -> Any:
    """The relative tolerance as a tensor of ``t``'s real type on its device: ``rtol`` (a real
    number, or an array or tensor of them), or the standard's ``max(M, N) * eps``."""
    real = _REAL_OF.get(t.dtype, t.dtype)
    if rtol is None:
        value: Any = max(t.shape[-2:]) * torch.finfo(real).eps
        return torch.tensor(value, dtype=real, device=t.device)
    if isinstance(rtol, torch.Tensor):
        real_valued = not (rtol.is_complex() or rtol.dtype == torch.bool)
    else:
        real_valued = np.asarray(rtol).dtype.kind in "iuf"
    if isinstance(rtol, bool) or not real_valued:
        raise TypeError(
            f"{op}: rtol must be a real number or an array of real numbers (or None, for "
            f"max(M, N) * eps), got {rtol!r}"
        )
    found = rtol if isinstance(rtol, torch.Tensor) else torch.as_tensor(np.asarray(rtol))
    return found.to(dtype=real, device=t.device)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    t = to_tensor(x)
    _stack_of_matrices("linalg.matrix_rank", t)
    t = _matrices(t, square=False)
    tolerance = _rtol("linalg.matrix_rank", t, rtol)
    s = _lapack(torch.linalg.svdvals, "SVD did not converge", t)
    if s.shape[-1] == 0:  # an empty matrix has rank 0
        return torch.zeros(s.shape[:-1], dtype=torch.int64, device=s.device)
    cutoff = s.amax(dim=-1, keepdim=True) * tolerance[..., None]
    return (s > cutoff).sum(dim=-1, dtype=torch.int64)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    t = to_tensor(x)
    _stack_of_matrices("linalg.pinv", t)
    t = _matrices(t, square=False)
    tolerance = _rtol("linalg.pinv", t, rtol)
    if t.numel() == 0:  # the pseudo-inverse of an empty matrix: empty, transposed
        return t.mT.clone()
    return _lapack(torch.linalg.pinv, "SVD did not converge", t, rtol=tolerance)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "matrix_transpose": matrix_transpose,
    "tensordot": tensordot,
    "vecdot": vecdot,
    "cross": cross,
    "outer": outer,
    "matrix_power": matrix_power,
    "diagonal": diagonal,
    "trace": trace,
    "det": det,
    "slogdet": slogdet,
    "eigvalsh": eigvalsh,
    "svdvals": svdvals,
    "matrix_rank": matrix_rank,
    "pinv": pinv,
}

#: The same functions on the GPU: array arguments moved there first (``rtol`` arrays too).
gpu = types.SimpleNamespace(**{name: on_gpu(fn) for name, fn in _FUNCTIONS.items()})
