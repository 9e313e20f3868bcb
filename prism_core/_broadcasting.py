"""``broadcast_shapes``, the Array API's function of shapes: a plain function, not an
op (it takes no array, so there is nothing to dispatch), exposed as
``prism_core.array_api.broadcast_shapes``.

A pure module: it imports nothing of Prism and no array library.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["broadcast_shapes"]


def _shape(value: Any, position: int) -> tuple[int, ...]:
    """One shape argument as a tuple of ints: a tuple or list of ints (an array's ``shape``,
    ``torch.Size`` included), or one int for a 1-D shape, as NumPy takes it."""
    items = (value,) if isinstance(value, int) else value
    try:
        dims = tuple(operator.index(d) for d in items)
    except TypeError:
        raise TypeError(
            f"broadcast_shapes: shape {position} must be a tuple of ints, not {value!r}"
        ) from None
    if any(d < 0 for d in dims):
        raise ValueError(
            f"broadcast_shapes: shape {position} {dims} has a negative size; sizes are >= 0"
        )
    return dims


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to, by the standard's rules: shapes are
    aligned at their last axes, and along each axis the sizes must be equal or 1 (a missing
    axis counts as 1); the result has the longest shape's number of axes and, along each, the
    size that is not 1 (or 1).  No shape gives ``()``.

    Shapes that do not broadcast are a ``ValueError`` naming them and the axis where they
    differ; a shape that is not a tuple of ints is a ``TypeError``, a negative size a
    ``ValueError``.

    >>> broadcast_shapes((5, 1, 4), (3, 1), (4,))
    (5, 3, 4)
    """
    dims = [_shape(s, i) for i, s in enumerate(shapes)]
    ndim = max((len(s) for s in dims), default=0)
    out: list[int] = []
    for axis in range(-ndim, 0):
        size = 1
        owner: tuple[int, ...] = ()  # the shape that gave ``size``
        for s in dims:
            if len(s) < -axis or s[axis] == 1 or s[axis] == size:
                continue
            if size != 1:
                raise ValueError(
                    f"broadcast_shapes: shapes {owner} and {s} do not broadcast: along axis "
                    f"{axis} their sizes are {size} and {s[axis]} (sizes must be equal, or 1)"
                )
            size, owner = s[axis], s
        out.append(size)
    return tuple(out)
