"""The ``cuda`` variants of the Array API's manipulation and indexing functions where CuPy's own
function is not the standard's (issue 12); ``broadcast_to``, ``flip``, ``roll`` and ``tile``
are CuPy's, named in ``families.MANIPULATION``.

Each is the NumPy reference's function computed with CuPy
(``prism_core.reference``: ``take_in(cupy, ...)``), so the checks and errors
are the reference's.  Where CuPy differs: ``broadcast_arrays`` returns a list (a tuple here),
``repeat`` takes no array of counts (they are read to the host: a synchronisation), ``take``
and ``take_along_axis`` wrap indices out of range (checked here first: a synchronisation, and
NumPy's ``IndexError``), ``unstack`` and ``permute_dims`` are missing from older CuPy.  CuPy is
imported inside the functions.
"""

from __future__ import annotations

from typing import Any

import prism_core.reference as ref

__all__ = [
    "broadcast_arrays",
    "permute_dims",
    "repeat",
    "squeeze",
    "take",
    "take_along_axis",
    "unstack",
]


def _cupy() -> Any:
    import cupy

    return cupy


def broadcast_arrays(*arrays: Any) -> Any:
    return ref.broadcast_arrays_in(_cupy(), arrays)


def permute_dims(x: Any, /, axes: Any) -> Any:
    return ref.permute_dims_in(_cupy(), x, axes)


def squeeze(x: Any, /, axis: Any) -> Any:
    return ref.squeeze_in(_cupy(), x, axis)


def unstack(x: Any, /, *, axis: int = 0) -> Any:
    return ref.unstack_in(_cupy(), x, axis)


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    return ref.repeat_in(_cupy(), x, repeats, axis, host_counts=True)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    return ref.take_in(_cupy(), x, indices, axis, bounds=True)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    return ref.take_along_axis_in(_cupy(), x, indices, axis, bounds=True)
