"""``prism_core.mgrid`` and ``prism_core.ogrid``: NumPy's index tricks that make grids.

``mgrid[0:5, 0:3]`` is NumPy's dense grid, ``ogrid[0:5, 0:3]`` its open one, made by Prism's
ops (``arange``, ``add``, ``multiply``, ``meshgrid``, ``stack``, ``reshape``) so that they are
arrays of the backend in scope: torch tensors under ``use_backend("torch")`` (docs/array-api.md,
"NumPy's spellings").  The values and dtypes are NumPy's: each axis is computed as NumPy
computes it.  Layer: above dispatch, beside ``prism_core.array_api``; it calls ops and imports
no array library.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any, NamedTuple

__all__ = ["mgrid", "ogrid"]

#: What the error messages say is accepted.
_ACCEPTED = (
    "slices, one per axis: start:stop or start:stop:step (stop excluded, as arange), or "
    "start:stop:Nj (a complex step: N points from start to stop, stop included, as linspace)"
)


class _Axis(NamedTuple):
    """One slice of the key, read: ``n`` points ``start + i * step``."""

    start: int | float
    stop: int | float
    step: int | float
    n: int
    #: Whether the step was complex (a number of points), not a real step.
    points: bool


def _number(value: object, what: str, where: str) -> int | float:
    """``value``, a slice's start, stop or real step, as a Python int or float."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    try:  # a 0-d integer array
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        pass
    if hasattr(value, "__float__") and not isinstance(value, (str, numbers.Complex)):
        try:  # a 0-d floating-point array
            return float(value)
        except (TypeError, ValueError):
            pass
    raise TypeError(
        f"{where}: the {what} {value!r} is not a real number; {where.partition('[')[0]}"
        f"[...] takes {_ACCEPTED}"
    )


def _text(item: slice) -> str:
    """A slice as it is written: ``0:5``, ``0:1:5j``, ``0:``."""
    parts = [
        "" if v is None else str(v) if isinstance(v, numbers.Number) else repr(v)
        for v in (item.start, item.stop, item.step)
    ]
    return ":".join(parts if item.step is not None else parts[:2])


def _axis(item: object, name: str) -> _Axis:
    """One item of ``name[...]``'s key, checked."""
    if not isinstance(item, slice):
        raise TypeError(f"{name}[...]: {item!r} is not a slice; {name}[...] takes {_ACCEPTED}")
    where = f"{name}[{_text(item)}]"
    if item.stop is None:
        raise ValueError(f"{where} has no stop; {name}[...] takes {_ACCEPTED}")
    start = 0 if item.start is None else _number(item.start, "start", where)
    stop = _number(item.stop, "stop", where)
    step = item.step
    if isinstance(step, numbers.Complex) and not isinstance(step, numbers.Real):
        # NumPy's rule: the integer part of the step's magnitude is the number of points.
        n = int(abs(complex(step)))
        return _Axis(start, stop, (stop - start) / float(n - 1) if n != 1 else 1, n, True)
    real_step = 1 if step is None else _number(step, "step", where)
    if real_step == 0:
        raise ValueError(f"{where}: the step must not be zero; {name}[...] takes {_ACCEPTED}")
    n = max(0, math.ceil((stop - start) / real_step))
    return _Axis(start, stop, real_step, n, False)


def _integer(axes: list[_Axis]) -> bool:
    """NumPy's dtype rule: int64 when every start, stop and step is an integer (a complex step
    never is), else float64."""
    return all(
        not a.points and all(isinstance(v, int) for v in (a.start, a.stop, a.step)) for a in axes
    )


def _op(name: str) -> Any:
    from prism_core.kernel.dispatch.ops import get_op

    return get_op(name).function


def _values(axis: _Axis, dtype: Any) -> Any:
    """The points of one axis, as NumPy's ``mgrid`` computes them: ``i * step + start``."""
    x = _op("arange")(axis.n, dtype=dtype)
    if axis.step != 1:
        x = _op("multiply")(x, axis.step)
    if axis.start != 0:
        x = _op("add")(x, axis.start)
    return x


class _Grid:
    """What ``mgrid`` and ``ogrid`` share: reading the key and making each axis."""

    __slots__ = ()
    _name = ""

    def __getitem__(self, key: Any) -> Any:
        from prism_core.kernel.description.dtypes import float64, int64

        name = self._name
        if not isinstance(key, tuple):
            axis = _axis(key, name)
            dtype = int64 if _integer([axis]) else float64
            if not axis.points:
                # NumPy's 1-D grid with a real step is its ``arange``, which steps by
                # ``(start + step) - start``: its values to the last bit, on every backend
                # (torch's and JAX's own ``arange`` differ from it in the last bits).
                axis = axis._replace(step=(axis.start + axis.step) - axis.start)
            return _values(axis, dtype)
        if not key:
            raise TypeError(f"{name}[()] has no axis; {name}[...] takes {_ACCEPTED}")
        axes = [_axis(item, name) for item in key]
        dtype = int64 if _integer(axes) else float64
        return self._grid([_values(a, dtype) for a in axes])

    def _grid(self, vectors: list[Any]) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"prism_core.{self._name}"


class _DenseGrid(_Grid):
    """NumPy's ``mgrid``: ``mgrid[0:5, 0:3]`` is the dense grid, one array of shape ``(2, 5,
    3)`` whose ``[k]`` holds the k-th coordinate of each point, on the backend in scope.

    Each item of the key is a slice: ``start:stop:step`` (``stop`` excluded, as ``arange``;
    ``start`` 0 and ``step`` 1 by default) or ``start:stop:Nj``, a complex step meaning N
    points from ``start`` to ``stop`` included, as ``linspace``.  The dtype is NumPy's: int64
    when every start, stop and step is an integer, float64 otherwise (a complex step makes it
    float64).  ``mgrid[0:5]`` (one slice) is a vector.  The same as ``stack(meshgrid(arange(5),
    arange(3), indexing="ij"))``.
    """

    __slots__ = ()
    _name = "mgrid"

    def _grid(self, vectors: list[Any]) -> Any:
        return _op("stack")(_op("meshgrid")(*vectors, indexing="ij"))


class _OpenGrid(_Grid):
    """NumPy's ``ogrid``: ``ogrid[0:5, 0:3]`` is the open grid, a tuple of arrays of shapes ``(5,
    1)`` and ``(1, 3)`` that broadcast to the dense one, on the backend in scope.

    Its key is ``mgrid``'s (slices ``start:stop:step`` or ``start:stop:Nj``), with the same
    dtypes; ``ogrid[0:5]`` (one slice) is a vector, as NumPy's.
    """

    __slots__ = ()
    _name = "ogrid"

    def _grid(self, vectors: list[Any]) -> Any:
        reshape = _op("reshape")
        ndim = len(vectors)
        return tuple(
            reshape(v, (*(1,) * k, v.shape[0], *(1,) * (ndim - k - 1)))
            for k, v in enumerate(vectors)
        )


#: NumPy's dense grid (``mgrid[0:5, 0:3]``), on the backend in scope.
mgrid = _DenseGrid()
#: NumPy's open grid (``ogrid[0:5, 0:3]``), on the backend in scope.
ogrid = _OpenGrid()
