"""The NumPy references of the Array API's manipulation and indexing functions where NumPy's own
function is not the standard's; the others (``broadcast_to``, ``flip``, ``roll``, ``tile``) are
NumPy's, named in their rows (``kernel/records/manipulation.py``).

Each function ``f`` computes with ``f_in(xp, ...)``, NumPy here and CuPy in the CuPy plugin, and
the checks on shapes and axes are pure Python (``*_axes``, ``check_*``), which the torch plugin
calls too: every backend checks the same things in the same words.  NumPy is imported inside
the functions.  How each differs from NumPy: docs/array-api.md, "Where the references differ
from NumPy".
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

__all__ = [
    "broadcast_arrays",
    "broadcast_arrays_in",
    "check_bounds",
    "check_indices",
    "check_permutation",
    "check_repeat_counts",
    "check_repeats",
    "permute_dims",
    "permute_dims_in",
    "repeat",
    "repeat_count",
    "repeat_in",
    "squeeze",
    "squeeze_axes",
    "squeeze_in",
    "take",
    "take_along_axis",
    "take_along_axis_axis",
    "take_along_axis_in",
    "take_axis",
    "take_in",
    "unstack",
    "unstack_axis",
    "unstack_in",
]


# -- checks of shapes and axes (pure Python: every backend's) --------------------------------


def _axis_error(axis: int, ndim: int) -> Exception:
    """NumPy's AxisError (a ValueError and an IndexError): "axis 2 is out of bounds for array
    of dimension 2"."""
    import numpy as np

    exceptions = getattr(np, "exceptions", np)  # NumPy < 1.25 has it at the top level
    error: Exception = exceptions.AxisError(axis, ndim)
    return error


def _index(op: str, name: str, value: Any) -> int:
    """An integer argument, or a TypeError naming it."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{op}: {name} must be an int or a tuple of ints, not {type(value).__name__}"
        ) from None


def _normal_axis(op: str, name: str, value: Any, ndim: int) -> int:
    axis = _index(op, name, value)
    if not -ndim <= axis < ndim:
        raise _axis_error(axis, ndim)
    return axis % ndim


def squeeze_axes(shape: Sequence[int], axis: Any) -> tuple[int, ...]:
    """The axes ``squeeze(x, axis)`` removes from an array of ``shape``, from 0, in order:
    ``axis`` is required (an int or a tuple of ints), each must have size 1."""
    if axis is None:
        raise ValueError(
            "squeeze: axis is required (an int or a tuple of ints, the axes of size 1 to "
            "remove); axis=None, NumPy's 'every axis of size 1', is not the Array API's"
        )
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    ndim = len(shape)
    axes = tuple(_normal_axis("squeeze", "axis", a, ndim) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"squeeze: axis {axis!r} names an axis twice")
    for a in axes:
        if shape[a] != 1:
            raise ValueError(
                f"squeeze: axis {a} of x has size {shape[a]}, not 1 (x has shape "
                f"{tuple(shape)}): only axes of size 1 can be removed"
            )
    return axes


def unstack_axis(ndim: int, axis: Any) -> int:
    """The axis (from 0) ``unstack`` splits an array of ``ndim`` dimensions along."""
    if ndim == 0:
        raise ValueError("unstack: x must have at least one dimension; it is 0-d")
    return _normal_axis("unstack", "axis", axis, ndim)


def take_axis(ndim: int, axis: Any) -> int | None:
    """The axis (from 0) ``take`` selects along, ``None`` for a 1-D (or 0-d) ``x`` without
    one: the standard requires ``axis`` when ``x`` has more than one dimension."""
    if axis is None:
        if ndim > 1:
            raise ValueError(
                f"take: axis is required when x has more than one dimension (x has {ndim}); "
                "NumPy's take would flatten x, the Array API's does not"
            )
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"take: axis must be an int, not {type(axis).__name__}")
    return _normal_axis("take", "axis", axis, ndim)


def check_indices(op: str, kind: str, dtype_name: str) -> None:
    """Indices must be of an integer dtype (``kind`` is its NumPy kind letter)."""
    if kind not in "iu":
        raise TypeError(f"{op}: indices must be an array of an integer dtype, not {dtype_name}")


def check_repeats(kind: str, dtype_name: str, ndim: int) -> None:
    """An array ``repeats`` is a 0-d or 1-D array of integers."""
    if kind not in "iu":
        raise TypeError(
            f"repeat: repeats must be an int or an array of an integer dtype, not {dtype_name}"
        )
    if ndim > 1:
        raise ValueError(
            f"repeat: repeats must be an int or a 1-D array (one count per element along the "
            f"axis); it has {ndim} dimensions"
        )


def check_bounds(op: str, lowest: int, highest: int, size: int, axis: int) -> None:
    """Indices from ``lowest`` to ``highest`` along an axis of ``size`` elements: NumPy's
    IndexError for one out of range (negative ones count from the end)."""
    bad = highest if highest >= size else lowest if lowest < -size else None
    if bad is not None:
        raise IndexError(f"{op}: index {bad} is out of bounds for axis {axis} with size {size}")


def check_permutation(axes: Any) -> None:
    """``permute_dims`` requires its ``axes`` (NumPy's ``transpose`` reverses without)."""
    if axes is None:
        raise TypeError(
            "permute_dims: axes must be a tuple of ints, a permutation of range(x.ndim); "
            "to reverse the axes use transpose(x)"
        )


def check_repeat_counts(negative: bool, counts: int, length: int) -> None:
    """An array ``repeats`` of ``counts`` counts (``negative``: some are) for an axis of
    ``length`` elements."""
    if negative:
        raise ValueError("repeat: repeats must be >= 0; it has a negative count")
    if counts not in (1, length):
        raise ValueError(
            f"repeat: repeats has {counts} counts; it needs one per element along the axis "
            f"({length}) or one for all"
        )


def take_along_axis_axis(axis: Any, ndim: int, indices_ndim: int) -> int:
    """The axis (from 0) ``take_along_axis`` selects along: an int (NumPy's ``None``, which
    flattens ``x``, is not the standard's), with ``indices`` of ``x``'s rank."""
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(
            f"take_along_axis: axis must be an int, not {type(axis).__name__} (NumPy's "
            "axis=None, which flattens x, is not the Array API's)"
        )
    if indices_ndim != ndim:
        raise ValueError(
            f"take_along_axis: indices must have as many dimensions as x ({ndim}); it has "
            f"{indices_ndim}"
        )
    return _normal_axis("take_along_axis", "axis", axis, ndim)


def repeat_count(repeats: Any) -> int:
    """A Python ``repeats``: an int (not a float, which NumPy would truncate)."""
    if isinstance(repeats, bool) or not isinstance(repeats, int):
        try:
            count = operator.index(repeats)
        except TypeError:
            raise TypeError(
                "repeat: repeats must be an int or an array of an integer dtype, not "
                f"{type(repeats).__name__}"
            ) from None
    else:
        count = repeats
    if count < 0:
        raise ValueError(f"repeat: repeats must be >= 0, not {count}")
    return count


# -- the functions: ``name(...)`` on NumPy, ``name_in(xp, ...)`` on the module ``xp`` ---------


def _numpy() -> Any:
    import numpy

    return numpy


def broadcast_arrays(*arrays: Any) -> Any:
    """A tuple on NumPy 1.x too (whose ``broadcast_arrays`` returns a list)."""
    return broadcast_arrays_in(_numpy(), arrays)


def broadcast_arrays_in(xp: Any, arrays: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(xp.broadcast_arrays(*arrays))


def permute_dims(x: Any, /, axes: Any) -> Any:
    return permute_dims_in(_numpy(), x, axes)


def permute_dims_in(xp: Any, x: Any, axes: Any) -> Any:
    check_permutation(axes)
    return xp.transpose(x, axes)


def squeeze(x: Any, /, axis: Any) -> Any:
    return squeeze_in(_numpy(), x, axis)


def squeeze_in(xp: Any, x: Any, axis: Any) -> Any:
    x = xp.asarray(x)
    return xp.squeeze(x, axis=squeeze_axes(x.shape, axis))


def unstack(x: Any, /, *, axis: int = 0) -> Any:
    return unstack_in(_numpy(), x, axis)


def unstack_in(xp: Any, x: Any, axis: Any) -> tuple[Any, ...]:
    x = xp.asarray(x)
    ax = unstack_axis(x.ndim, axis)
    moved = xp.moveaxis(x, ax, 0)  # a view: its items are views of x
    return tuple(moved[i] for i in range(moved.shape[0]))


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    return repeat_in(_numpy(), x, repeats, axis)


def repeat_in(xp: Any, x: Any, repeats: Any, axis: Any, host_counts: bool = False) -> Any:
    """``host_counts``: give ``xp.repeat`` an array of counts as a list of ints, one per
    element (CuPy's takes no array; reading it is a synchronisation)."""
    if isinstance(repeats, (list, tuple)):  # counts as data, as NumPy takes them
        repeats = xp.asarray(repeats)
    if not hasattr(repeats, "dtype"):
        return xp.repeat(x, repeat_count(repeats), axis=axis)
    dt = repeats.dtype
    check_repeats(dt.kind, dt.name, repeats.ndim)
    if dt.kind == "u" and dt.itemsize == 8:  # NumPy refuses uint64 (no safe cast to intp)
        repeats = repeats.astype("int64")
    x = xp.asarray(x)
    length = x.size if axis is None else x.shape[_normal_axis("repeat", "axis", axis, x.ndim)]
    negative = bool(repeats.size) and bool((repeats < 0).any())
    check_repeat_counts(negative, repeats.shape[0] if repeats.ndim else 1, length)
    if host_counts:
        counts = repeats.tolist()  # an int for a 0-d repeats
        if isinstance(counts, list) and len(counts) == 1:
            counts = counts * length  # one count for all, spelled out
        repeats = counts
    return xp.repeat(x, repeats, axis=axis)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    return take_in(_numpy(), x, indices, axis)


def take_in(xp: Any, x: Any, indices: Any, axis: Any, bounds: bool = False) -> Any:
    """``bounds``: check the indices first (NumPy's ``take`` does; CuPy's wraps them)."""
    x = xp.asarray(x)
    ax = take_axis(x.ndim, axis)
    indices = xp.asarray(indices)
    check_indices("take", indices.dtype.kind, indices.dtype.name)
    if bounds and indices.size:
        size = x.size if ax is None else x.shape[ax]
        check_bounds("take", int(indices.min()), int(indices.max()), size, ax or 0)
    return xp.take(x, indices, axis=ax)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    return take_along_axis_in(_numpy(), x, indices, axis)


def take_along_axis_in(xp: Any, x: Any, indices: Any, axis: Any, bounds: bool = False) -> Any:
    """``bounds``: check the indices first (NumPy's ``take_along_axis`` does)."""
    x, indices = xp.asarray(x), xp.asarray(indices)
    check_indices("take_along_axis", indices.dtype.kind, indices.dtype.name)
    ax = take_along_axis_axis(axis, x.ndim, indices.ndim)
    if bounds and indices.size:
        lowest, highest = int(indices.min()), int(indices.max())
        check_bounds("take_along_axis", lowest, highest, x.shape[ax], ax)
    return xp.take_along_axis(x, indices, axis=ax)
