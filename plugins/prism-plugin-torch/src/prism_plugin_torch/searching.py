"""The Array API's searching, set and sorting functions on torch (issue 12), with the semantics
of Prism's NumPy references (``prism_core/_builtin/numpy_searching.py``): ``argsort``,
``nonzero``, ``searchsorted``, ``count_nonzero`` and the ``unique_*`` family.

* Sorts are stable (torch's ``stable=True``), so ``stable=False`` is satisfied too; equal
  elements keep their order in descending sorts as well.  Complex numbers sort by real part,
  then imaginary part (torch sorts none), bool as 0 and 1.
* ``unique_*`` are one stable sort of the flattened array and a new value wherever an element
  is ``!=`` the one before it, as the NumPy reference: sorted values, each NaN a value of its
  own, ``-0.0`` and ``0.0`` one; the results are ``prism_core.backend_kit``'s named tuples.
* Caller mistakes raise NumPy's exceptions before torch runs (a 0-d ``nonzero``, an ``x1``
  of ``searchsorted`` that is not a vector, an ``axis`` out of range).

:data:`gpu` holds the same functions on the GPU (their array arguments moved there first).
"""

from __future__ import annotations

import types
from typing import Any

import torch

from prism_core.backend_kit import UniqueAllResult, UniqueCountsResult, UniqueInverseResult

from . import ops
from .backend import to_tensor
from .cuda_ops import on_gpu

__all__ = [
    "argsort",
    "count_nonzero",
    "gpu",
    "nonzero",
    "searchsorted",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


def _argsort(t: Any, dim: int, descending: bool) -> Any:
    """A stable argsort of ``t`` along ``dim``: complex numbers by real, then imaginary part
    (two stable sorts, the second key first), bool as integers."""
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    if not t.is_complex():
        return torch.argsort(t, dim=dim, descending=descending, stable=True)
    order = torch.argsort(t.imag, dim=dim, descending=descending, stable=True)
    by_real = torch.argsort(
        torch.take_along_dim(t.real, order, dim), dim=dim, descending=descending, stable=True
    )
    return torch.take_along_dim(order, by_real, dim)


def argsort(x: Any, /, *, axis: Any = -1, descending: bool = False, stable: bool = True) -> Any:
    t = to_tensor(x)
    if axis is None:  # NumPy's argsort(axis=None): of the flattened array
        t, ax = t.reshape(-1), 0
    elif t.ndim == 0:  # NumPy sorts a 0-d array as a vector of one element
        t, ax = t.reshape(1), ops._axis(axis, 1)
    else:
        ax = ops._axis(axis, t.ndim)
    return _argsort(t, ax, bool(descending))


def nonzero(x: Any, /) -> tuple[Any, ...]:
    t = to_tensor(x)
    if t.ndim == 0:
        raise ValueError(
            "nonzero: x must have at least one dimension, not be 0-d (the Array API defines no "
            "nonzero of a 0-d array); reshape it to (1,) first"
        )
    return tuple(torch.nonzero(t, as_tuple=True))


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """Both arrays compared in their common dtype (NumPy's promotion), as NumPy's."""
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")  # NumPy's
    a = to_tensor(x1)
    if a.ndim != 1:
        raise ValueError(
            f"searchsorted: x1 must be one-dimensional (the sorted vector searched), not of "
            f"shape {tuple(a.shape)}; x2, the values to place, may have any shape"
        )
    dt = ops._promote(ops._np_where, a, x2)
    if dt == torch.bool:  # torch searches no booleans: as 0 and 1
        dt = torch.uint8
    # Contiguous: torch copies (and warns about) strided ones anyway.
    v = ops._tensor(x2, dt, a.device).contiguous()
    order = None if sorter is None else to_tensor(sorter, a.device).to(torch.int64).contiguous()
    return torch.searchsorted(a.to(dt).contiguous(), v, right=side == "right", sorter=order)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    t = to_tensor(x)
    axes = ops._axes(axis, t.ndim)
    nonzero = t != 0  # NaN too
    if axes == ():  # torch would read dim=() as "every axis"
        return nonzero.to(torch.int64)
    dims = ops._dims(axes, t.ndim)
    return nonzero.sum(dim=dims, keepdim=bool(keepdims), dtype=torch.int64)


def _sorted_flat(x: Any) -> tuple[Any, Any, Any, Any]:
    """``(x, order, ordered, new)`` of the flattened ``x``: the stable sorting permutation, the
    sorted elements and where each new value starts among them (NaN != NaN: each its own)."""
    t = to_tensor(x)
    flat = t.reshape(-1)
    order = _argsort(flat, 0, False)
    ordered = flat[order]
    new = torch.ones(ordered.shape, dtype=torch.bool, device=t.device)
    new[1:] = ordered[1:] != ordered[:-1]
    return t, order, ordered, new


def _counts(new: Any) -> Any:
    starts = torch.nonzero(new).reshape(-1)
    end = torch.tensor([new.numel()], dtype=starts.dtype, device=new.device)
    return torch.diff(torch.cat([starts, end]))


def _inverse(t: Any, order: Any, new: Any) -> Any:
    inverse = torch.empty(order.shape, dtype=torch.int64, device=order.device)
    inverse[order] = torch.cumsum(new, 0) - 1
    return inverse.reshape(t.shape)


def unique_all(x: Any, /) -> UniqueAllResult:
    t, order, ordered, new = _sorted_flat(x)
    return UniqueAllResult(ordered[new], order[new], _inverse(t, order, new), _counts(new))


def unique_counts(x: Any, /) -> UniqueCountsResult:
    _, _, ordered, new = _sorted_flat(x)
    return UniqueCountsResult(ordered[new], _counts(new))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    t, order, ordered, new = _sorted_flat(x)
    return UniqueInverseResult(ordered[new], _inverse(t, order, new))


def unique_values(x: Any, /) -> Any:
    _, _, ordered, new = _sorted_flat(x)
    return ordered[new]


#: The same functions on the GPU.
gpu = types.SimpleNamespace(
    argsort=on_gpu(argsort),
    nonzero=on_gpu(nonzero),
    searchsorted=on_gpu(searchsorted),
    count_nonzero=on_gpu(count_nonzero),
    unique_all=on_gpu(unique_all),
    unique_counts=on_gpu(unique_counts),
    unique_inverse=on_gpu(unique_inverse),
    unique_values=on_gpu(unique_values),
)
