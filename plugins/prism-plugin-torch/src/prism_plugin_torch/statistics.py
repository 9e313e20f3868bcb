"""The Array API's statistical and utility functions on torch (issue 12), with the semantics of
Prism's NumPy references (``prism_core/_builtin/numpy_statistics.py``): ``prod``, ``var``,
``cumulative_prod``, ``all``, ``any`` and ``diff``.

* Result dtypes are NumPy's: ``prod`` and ``cumulative_prod`` multiply small integers in int64
  (unsigned ones in uint64), ``var`` of integers is float64 and of complex numbers real,
  ``all``/``any`` give bool whatever the input (torch's give uint8 for uint8).
* ``axis`` may be a tuple everywhere the standard allows one (torch's ``prod`` takes one
  dimension: the axes are flattened into one first); ``axis=()`` reduces nothing.
* ``var`` takes ``correction`` (NumPy's ``ddof``, default 0; torch's default is 1); too few
  elements give inf or NaN, as NumPy.
* ``diff`` joins ``prepend``/``append`` in NumPy's common dtype (a Python scalar broadcast
  along the axis, as NumPy) and differences booleans with ``!=``; ``n=0`` returns ``x``.
* Caller mistakes raise NumPy's exceptions before torch runs.

:data:`gpu` holds the same functions on the GPU (their array arguments moved there first).
"""

from __future__ import annotations

import math
import operator
import types
from typing import Any

import numpy as np
import torch

from . import ops
from .backend import to_tensor, torch_dtype
from .cuda_ops import on_gpu

__all__ = ["all_", "any_", "cumulative_prod", "diff", "gpu", "prod", "var"]


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    t = to_tensor(x)
    axes = ops._axes(axis, t.ndim)
    dt = torch_dtype(dtype) if dtype is not None else ops._accumulator(np.prod, t.dtype)
    if axes == () or t.ndim == 0:  # torch would read dim=() as "every axis"
        return t.to(dt, copy=True)  # the product of one element (each) is the element
    dims = ops._dims(axes, t.ndim)
    if len(dims) == 1:
        return ops._wide_unsigned_safe(torch.prod, t, dt, dim=dims[0], keepdim=bool(keepdims))
    # torch multiplies along one dimension only: the axes moved last and made one (its size
    # said, not -1, which torch cannot read for an empty tensor).
    kept = [d for d in range(t.ndim) if d not in dims]
    moved = t.permute(*kept, *dims).reshape(
        *(t.shape[d] for d in kept), math.prod(t.shape[d] for d in dims)
    )
    out = ops._wide_unsigned_safe(torch.prod, moved, dt, dim=-1)
    return out.reshape([1 if d in dims else t.shape[d] for d in range(t.ndim)]) if keepdims else out


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """NumPy's ``var`` with ``ddof=correction``: the divisor is ``max(N - correction, 0)``, so
    too few elements give inf or NaN."""
    t = to_tensor(x)
    axes = ops._axes(axis, t.ndim)
    dt = ops._accumulator(ops._np_mean, t.dtype)
    t = t if t.dtype == dt else t.to(dt)
    dims = ops._dims(axes, t.ndim)
    n = math.prod(t.shape[d] for d in dims)
    if axes != () and n - correction > 0 and t.numel():
        return torch.var(t, dim=dims, correction=correction, keepdim=bool(keepdims))
    # What torch warns about (too few degrees of freedom, which it also finds in an empty x
    # reduced along a non-empty axis) and dim=() (which torch reads as "every axis"): NumPy's
    # formula, as NumPy computes it.
    centred = t - t.mean(dim=dims, keepdim=True) if dims else t - t
    squares = (centred * centred.conj()).real if t.is_complex() else centred * centred
    total = squares.sum(dim=dims, keepdim=bool(keepdims)) if dims else squares
    return total / max(n - correction, 0)


def _logical(x: Any, axis: Any, keepdims: bool, every: bool) -> Any:
    t = to_tensor(x)
    axes = ops._axes(axis, t.ndim)
    truth = t if t.dtype == torch.bool else t != 0  # NaN is true, as in NumPy
    dims = ops._dims(axes, t.ndim)
    if not dims:  # axis=(), or a 0-d x: nothing to reduce (torch reads dim=() as "every")
        return truth.clone()
    fn = torch.all if every else torch.any
    return fn(truth, dim=dims, keepdim=bool(keepdims))


def all_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _logical(x, axis, keepdims, every=True)


def any_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _logical(x, axis, keepdims, every=False)


def cumulative_prod(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """NumPy's ``cumulative_prod``: ``axis=None`` only for 1-D input (0-d is a vector of one);
    small integers multiply in int64; ``include_initial`` puts a one first."""
    t = to_tensor(x)
    if axis is None:
        if t.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is required."
            )
        t, ax = t.reshape(-1), 0
    else:
        ax = ops._axis(axis, t.ndim)
    dt = torch_dtype(dtype) if dtype is not None else ops._accumulator(np.cumprod, t.dtype)
    out = ops._wide_unsigned_safe(torch.cumprod, t, dt, dim=ax)
    if include_initial:
        shape = list(out.shape)
        shape[ax] = 1
        out = torch.cat([torch.ones(shape, dtype=out.dtype, device=out.device), out], dim=ax)
    return out


def _end(value: Any, t: Any, ax: int) -> Any:
    """``prepend``/``append`` as a tensor where ``t`` is: a 0-d one broadcast to ``t``'s shape
    with one element along ``ax``, as NumPy's ``diff``."""
    end = to_tensor(value if hasattr(value, "dtype") else np.asarray(value), t.device)
    if end.ndim == 0:
        shape = list(t.shape)
        shape[ax] = 1
        end = end.expand(shape)
    return end


def diff(x: Any, /, *, axis: Any = -1, n: Any = 1, prepend: Any = None, append: Any = None) -> Any:
    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(
            f"diff: n must be an integer (how many times to difference), not {n!r}"
        ) from None
    if count < 0:
        raise ValueError(f"diff: n must be 0 or more (how many times to difference), not {count}")
    t = to_tensor(x)
    if count == 0:  # NumPy returns x itself, before looking at anything else
        return t
    if t.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")  # NumPy's
    ax = ops._axis(axis, t.ndim)
    parts = [_end(prepend, t, ax)] if prepend is not None else []
    parts.append(t)
    if append is not None:
        parts.append(_end(append, t, ax))
    if len(parts) > 1:
        dt = ops._common([p.dtype for p in parts])  # NumPy's concatenate promotes so
        t = torch.cat([p.to(dt) for p in parts], dim=ax)
    for _ in range(count):
        length = t.shape[ax]
        if length == 0:
            break
        later, earlier = t.narrow(ax, 1, length - 1), t.narrow(ax, 0, length - 1)
        t = later != earlier if t.dtype == torch.bool else later - earlier
    return t


#: The same functions on the GPU.
gpu = types.SimpleNamespace(
    prod=on_gpu(prod),
    var=on_gpu(var),
    all_=on_gpu(all_),
    any_=on_gpu(any_),
    cumulative_prod=on_gpu(cumulative_prod),
    diff=on_gpu(diff),
)
