"""How one call is cut: the :class:`_Layout` a :class:`~.rules.SplitRule` gives its arguments.

Each kind of rule has a function here that reads the call's arguments (their shapes, the op's
own axis keyword) and says which arguments are cut along which of their dimensions, how long
the split axis is, and how the parts' results join; :class:`_Unsplittable` says why a call
cannot be cut along the axis asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prism_core._pipeline.split.rules import SplitRule


class _Unsplittable(Exception):
    """These arguments cannot be split along this axis (the message says why)."""


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in value.shape)


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s):
            j = ndim - len(s) + i
            if d != 1:
                if out[j] not in (1, d):
                    shown = " and ".join(str(tuple(x)) for x in shapes)
                    raise ValueError(f"shapes {shown} do not broadcast together")
                out[j] = d
    return tuple(out)


def _normalised(axis: int, ndim: int, what: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"the split axis must be an int, got {axis!r} ({type(axis).__name__})")
    if not -ndim <= axis < ndim:
        raise _Unsplittable(
            f"axis {axis} is out of range for {what} ({ndim} dimension{'s' * (ndim != 1)})"
        )
    return axis % ndim


Where = int | str  # a position among the positional arguments, or a keyword


@dataclass(frozen=True)
class _Layout:
    """How one call is cut: the length along the split axis, the arguments cut (and at which
    of their dimensions), how parts join, and a sentence saying so."""

    length: int
    axis: int
    cuts: tuple[tuple[Where, int], ...]
    #: "concat" (along ``out_axis`` of every output) or a combine of :data:`COMBINES`.
    gather: str
    out_axis: int
    what: str
    #: The shapes of the arguments the model predicts with, and for each which dimension is cut
    #: (``-1``: none).
    shapes: tuple[tuple[tuple[int, ...], int], ...]

    def part(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], lo: int, hi: int
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        out_args = list(args)
        out_kwargs = dict(kwargs)
        for where, dim in self.cuts:
            index = (slice(None),) * dim + (slice(lo, hi),)
            if isinstance(where, int):
                out_args[where] = out_args[where][index]
            else:
                out_kwargs[where] = out_kwargs[where][index]
        return tuple(out_args), out_kwargs

    def part_shapes(self, n: int) -> list[tuple[int, ...]]:
        return [s if dim < 0 else (*s[:dim], n, *s[dim + 1 :]) for s, dim in self.shapes]


def _elementwise(
    rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int
) -> _Layout:
    found: list[tuple[Where, Any]] = [
        (i, args[i]) for i in rule.arrays if i < len(args) and _is_array(args[i])
    ]
    found += [(k, kwargs[k]) for k in rule.keywords if _is_array(kwargs.get(k))]
    if not found:
        raise _Unsplittable("no argument is an array")
    shapes = [_shape(a) for _, a in found]
    result = _broadcast(shapes)
    if not result:
        raise _Unsplittable("the result is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(result), f"the result, shape {result}")
    length = result[ax]
    cuts: list[tuple[Where, int]] = []
    model: list[tuple[tuple[int, ...], int]] = []
    for (where, _a), shape in zip(found, shapes, strict=True):
        dim = ax - (len(result) - len(shape))
        cut = dim >= 0 and shape[dim] == length and length != 1
        if cut:
            cuts.append((where, dim))
        model.append((shape, dim if cut else -1))
    return _Layout(
        length,
        ax,
        tuple(cuts),
        "concat",
        ax,
        f"axis {ax} of the broadcast result (shape {result})",
        tuple(model),
    )


def _matmul(rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int) -> _Layout:
    if len(args) < 2 or not (_is_array(args[0]) and _is_array(args[1])):
        raise _Unsplittable("matmul splits two array arguments, x1 and x2")
    s1, s2 = _shape(args[0]), _shape(args[1])
    if not s1 or not s2:
        raise ValueError(f"matmul: 0-d operands (shapes {s1} and {s2}) have no matrix product")
    inner1 = s1[-1]
    inner2 = s2[-2] if len(s2) >= 2 else s2[0]
    if inner1 != inner2:
        raise ValueError(
            f"matmul: the inner dimensions of x1 (shape {s1}) and x2 (shape {s2}) differ: "
            f"{inner1} != {inner2}"
        )
    b1, b2 = s1[:-2], s2[:-2]
    batch = _broadcast([b1, b2])
    result = batch + ((s1[-2],) if len(s1) >= 2 else ()) + ((s2[-1],) if len(s2) >= 2 else ())
    if not result:
        raise _Unsplittable("the product of two vectors is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(result), f"the result, shape {result}")
    length = result[ax]
    cuts: list[tuple[Where, int]] = []
    dims = [-1, -1]
    if ax < len(batch):
        for i, b in enumerate((b1, b2)):
            dim = ax - (len(batch) - len(b))
            if dim >= 0 and b[dim] == length and length != 1:
                cuts.append((i, dim))
                dims[i] = dim
        what = f"batch axis {ax} of the result (shape {result})"
    elif len(s1) >= 2 and ax == len(batch):
        cuts.append((0, len(s1) - 2))
        dims[0] = len(s1) - 2
        what = f"the rows of x1 (axis {ax} of the result, shape {result})"
    else:
        cuts.append((1, len(s2) - 1))
        dims[1] = len(s2) - 1
        what = f"the columns of x2 (axis {ax} of the result, shape {result})"
    return _Layout(length, ax, tuple(cuts), "concat", ax, what, ((s1, dims[0]), (s2, dims[1])))


def _batched(rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int) -> _Layout:
    arrays = [(i, args[i]) for i in rule.arrays if i < len(args) and _is_array(args[i])]
    if not arrays or arrays[0][0] != 0:
        raise _Unsplittable(f"{rule.op} splits array arguments, the first one a stack")
    first = _shape(arrays[0][1])
    if len(first) < rule.core:
        raise _Unsplittable(f"x (shape {first}) has fewer than {rule.core} dimensions")
    batches: list[tuple[int, ...]] = []
    for i, a in arrays:
        s = _shape(a)
        # Only the first argument is surely a stack of problems; another one (``solve``'s x2)
        # is a stack of the same core rank, or a vector that passes whole.
        batches.append(s[: len(s) - rule.core] if (i == 0 or len(s) >= rule.core) else ())
    batch = _broadcast(batches)
    if not batch:
        raise _Unsplittable(
            f"x (shape {first}) is one problem, not a stack: {rule.op} splits along a batch axis"
        )
    ndim = len(batch) + rule.core
    try:
        ax = _normalised(axis, ndim, f"a stack of shape {batch + first[len(first) - rule.core :]}")
    except _Unsplittable:
        raise _Unsplittable(
            f"axis {axis} is not a batch axis of x (shape {first}): {rule.op} splits along one "
            f"of the first {len(batch)} axes"
        ) from None
    if ax >= len(batch):
        raise _Unsplittable(
            f"axis {axis} is one of the last {rule.core} axes of x (shape {first}), one "
            f"problem's: {rule.op} splits along a batch axis (0 to {len(batch) - 1})"
        )
    length = batch[ax]
    cuts: list[tuple[Where, int]] = []
    model: list[tuple[tuple[int, ...], int]] = []
    for (i, a), b in zip(arrays, batches, strict=True):
        dim = ax - (len(batch) - len(b))
        cut = dim >= 0 and b[dim] == length and length != 1
        if cut:
            cuts.append((i, dim))
        model.append((_shape(a), dim if cut else -1))
    what = f"batch axis {ax} (of {len(batch)}, batch shape {batch})"
    return _Layout(length, ax, tuple(cuts), "concat", ax, what, tuple(model))


def _along(rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int) -> _Layout:
    if not args or not _is_array(args[0]):
        raise _Unsplittable(f"{rule.op} splits its first argument, an array")
    shape = _shape(args[0])
    if not shape:
        raise _Unsplittable("x is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(shape), f"x, shape {shape}")
    own = kwargs.get(rule.along, rule.along_default)
    ndim = len(shape)
    if (
        isinstance(own, int)
        and not isinstance(own, bool)
        and -ndim <= own < ndim
        and own % ndim == ax
    ):
        raise _Unsplittable(
            f"{rule.op} works along axis {own} ({rule.along}={own}), the split axis: split "
            "along another axis (a batch of signals splits along the batch)"
        )
    what = f"axis {ax} of x (shape {shape}), {rule.op} working along {rule.along}={own}"
    return _Layout(shape[ax], ax, ((0, ax),), "concat", ax, what, ((shape, ax),))


def _reduction(
    rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int
) -> _Layout:
    if not args or not _is_array(args[0]):
        raise _Unsplittable(f"{rule.op} splits its first argument, an array")
    shape = _shape(args[0])
    if not shape:
        raise _Unsplittable("x is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(shape), f"x, shape {shape}")
    own = kwargs.get(rule.along, rule.along_default)
    if own is None:
        reduced = set(range(len(shape)))
    else:
        items = own if isinstance(own, tuple) else (own,)
        try:
            reduced = {int(a) % len(shape) for a in items}
        except (TypeError, ValueError):
            raise _Unsplittable(f"{rule.along}={own!r} is not an axis or a tuple of axes") from None
    keepdims = bool(kwargs.get("keepdims", False))
    if ax in reduced:
        if rule.combine is None:
            raise _Unsplittable(
                f"{rule.op} over the split axis {ax} cannot be combined from parts; split along "
                "an axis it keeps"
            )
        what = f"axis {ax} of x (shape {shape}), reduced: the parts' results {rule.combine}"
        return _Layout(shape[ax], ax, ((0, ax),), rule.combine, ax, what, ((shape, ax),))
    out = ax if keepdims else ax - sum(1 for r in reduced if r < ax)
    what = f"axis {ax} of x (shape {shape}), kept: axis {out} of the result"
    return _Layout(shape[ax], ax, ((0, ax),), "concat", out, what, ((shape, ax),))


_LAYOUTS: dict[str, Callable[[SplitRule, tuple[Any, ...], dict[str, Any], int], _Layout]] = {
    "elementwise": _elementwise,
    "matmul": _matmul,
    "batched": _batched,
    "along": _along,
    "reduction": _reduction,
}
