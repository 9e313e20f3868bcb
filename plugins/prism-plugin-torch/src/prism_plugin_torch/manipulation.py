"""The torch variants of the Array API's manipulation and indexing functions (issue 12), with the
NumPy reference's semantics (``prism_core._builtin.numpy_manipulation``), and :data:`gpu`, the
same functions on the GPU.

The checks of shapes, axes and counts are the reference's own (pure Python, so the errors are
the same words on every backend); what torch does differently is adapted here: ``torch.flip``
needs its axes (``None``: every axis), ``torch.roll`` takes no shift without an axis over a
tuple of shifts (NumPy adds them up), ``torch.repeat_interleave`` takes int64 counts and no
``axis=None`` (the flattened array), ``torch.index_select`` and ``torch.take_along_dim`` take
int64 indices and no negative ones (counted from the end here) and raise ``RuntimeError`` out of
range (an ``IndexError`` here, checked first: on the GPU a synchronisation).  Views stay views
where torch has them (``broadcast_to``, ``permute_dims``, ``squeeze``, ``unstack``);
``flip`` copies (NumPy's is a view).
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import prism_core.backend_kit as kit
import prism_core.reference as ref

from . import ops
from .backend import to_tensor
from .cuda_ops import on_gpu

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "flip",
    "gpu",
    "permute_dims",
    "repeat",
    "roll",
    "squeeze",
    "take",
    "take_along_axis",
    "tile",
    "unstack",
]


def _kind(t: Any) -> tuple[str, str]:
    """NumPy's kind letter and the name of a tensor's dtype (``f`` for the floating types NumPy
    lacks, bfloat16 and float8)."""
    dt = ops._TO_NUMPY.get(t.dtype)
    if dt is None:
        return "f", kit.dtype_name(t.dtype)
    return dt.kind, dt.name


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _indices(op: str, indices: Any, device: torch.device, size: int, axis: int) -> Any:
    """``indices`` as int64 on ``device``, negative ones counted from the end of an axis of
    ``size`` elements; an IndexError (checked first) for one out of range."""
    idx = to_tensor(indices, device)
    kind, name = _kind(idx)
    ref.check_indices(op, kind, name)
    idx = idx.to(torch.int64)
    if idx.numel():
        ref.check_bounds(op, int(idx.min()), int(idx.max()), size, axis)
        idx = torch.where(idx < 0, idx + size, idx)
    return idx


# -- broadcasting ------------------------------------------------------------------------------


def broadcast_arrays(*arrays: Any) -> Any:
    device = ops._device(*arrays)
    tensors = [to_tensor(a, device) for a in arrays]
    shape = kit.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def broadcast_to(x: Any, /, shape: Any) -> Any:
    t = to_tensor(x)
    target = ops._shape_arg(shape)
    if any(d < 0 for d in target):
        raise ValueError("all elements of broadcast shape must be non-negative")  # NumPy's
    have = tuple(t.shape)
    if len(have) > len(target) or any(
        s not in (1, d) for s, d in zip(reversed(have), reversed(target), strict=False)
    ):
        raise ValueError(
            "operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {_shape_text(have)} and requested shape "
            f"{_shape_text(target)}"
        )
    return t.expand(target)


# -- axes and order ------------------------------------------------------------------------------


def flip(x: Any, /, *, axis: Any = None) -> Any:
    t = to_tensor(x)
    dims = ops._axes(axis, t.ndim)
    return torch.flip(t, tuple(range(t.ndim)) if dims is None else dims)


def permute_dims(x: Any, /, axes: Any) -> Any:
    ref.check_permutation(axes)
    t = to_tensor(x)
    if not t.ndim and not tuple(axes):  # ops.transpose would call permute() with no dims
        return t.view(())
    return ops.transpose(t, axes)


def squeeze(x: Any, /, axis: Any) -> Any:
    t = to_tensor(x)
    return t.squeeze(ref.squeeze_axes(tuple(t.shape), axis))


def unstack(x: Any, /, *, axis: Any = 0) -> Any:
    t = to_tensor(x)
    return tuple(t.unbind(ref.unstack_axis(t.ndim, axis)))


def _ints(value: Any) -> list[int]:
    """An int or a tuple of ints, as a list (NumPy's TypeError for anything else)."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [ops._index(v) for v in items]


def roll(x: Any, /, shift: Any, *, axis: Any = None) -> Any:
    t = to_tensor(x)
    shifts = _ints(shift)
    if axis is None:  # the flattened array, every shift along it (as NumPy)
        flat = t.reshape(-1)
        if not flat.numel():
            return t.clone()
        return torch.roll(flat, sum(shifts), 0).reshape(t.shape)
    axes = _ints(axis)
    if len(axes) == 1:
        axes = axes * len(shifts)
    elif len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(shifts) != len(axes):
        raise ValueError(
            "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
            f"between arg 0 with shape ({len(shifts)},) and arg 1 with shape ({len(axes)},)."
        )
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes, strict=True):
        if not -t.ndim <= a < t.ndim:
            raise ops.AxisError(a, t.ndim)
        total[a % t.ndim] = total.get(a % t.ndim, 0) + s
    moves = {a: s % t.shape[a] for a, s in total.items() if t.shape[a]}
    moves = {a: s for a, s in moves.items() if s}
    if not moves:
        return t.clone()
    return torch.roll(t, tuple(moves.values()), tuple(moves))


# -- repetition ----------------------------------------------------------------------------------


def repeat(x: Any, repeats: Any, /, *, axis: Any = None) -> Any:
    t = to_tensor(x)
    if axis is None:
        t, dim = t.reshape(-1), 0
    else:
        dim = ops._axis(axis, t.ndim)
    if isinstance(repeats, (list, tuple)):  # counts as data, as NumPy takes them
        repeats = np.asarray(repeats)
    if not hasattr(repeats, "dtype"):
        return torch.repeat_interleave(t, ref.repeat_count(repeats), dim=dim)
    r = to_tensor(repeats, t.device)
    kind, name = _kind(r)
    ref.check_repeats(kind, name, r.ndim)
    r = r.to(torch.int64).reshape(-1)
    length = t.shape[dim]
    ref.check_repeat_counts(bool(r.numel()) and bool((r < 0).any()), r.numel(), length)
    if r.numel() != length:  # one count for all
        r = r.expand(length)
    return torch.repeat_interleave(t, r, dim=dim)


def tile(x: Any, repetitions: Any, /) -> Any:
    t = to_tensor(x)
    reps = ops._shape_arg(repetitions)
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")  # NumPy's words
    if not reps:
        return t.clone()
    return torch.tile(t, reps)


# -- indexing ------------------------------------------------------------------------------------


def take(x: Any, indices: Any, /, *, axis: Any = None) -> Any:
    t = to_tensor(x)
    ax = ref.take_axis(t.ndim, axis)
    if ax is None:
        t, ax = t.reshape(-1), 0
    idx = _indices("take", indices, t.device, t.shape[ax], ax)
    out = torch.index_select(t, ax, idx.reshape(-1))
    return out.reshape((*t.shape[:ax], *idx.shape, *t.shape[ax + 1 :]))


def take_along_axis(x: Any, indices: Any, /, *, axis: Any = -1) -> Any:
    t = to_tensor(x)
    idx = to_tensor(indices, t.device)
    kind, name = _kind(idx)
    ref.check_indices("take_along_axis", kind, name)
    ax = ref.take_along_axis_axis(axis, t.ndim, idx.ndim)
    idx = _indices("take_along_axis", idx, t.device, t.shape[ax], ax)
    # The other axes broadcast (NumPy's error where they do not; torch's is a RuntimeError).
    kit.broadcast_shapes(
        tuple(1 if d == ax else n for d, n in enumerate(t.shape)),
        tuple(1 if d == ax else n for d, n in enumerate(idx.shape)),
    )
    return torch.take_along_dim(t, idx, dim=ax)


#: The same functions on the GPU: array arguments moved there first (``cuda_ops.on_gpu``).
gpu = types.SimpleNamespace(
    **{
        name: on_gpu(fn)
        for name, fn in {
            "broadcast_arrays": broadcast_arrays,
            "broadcast_to": broadcast_to,
            "flip": flip,
            "permute_dims": permute_dims,
            "repeat": repeat,
            "roll": roll,
            "squeeze": squeeze,
            "take": take,
            "take_along_axis": take_along_axis,
            "tile": tile,
            "unstack": unstack,
        }.items()
    }
)
