"""A call's arguments as dispatch sees them: which are arrays, their dtypes and sizes, the
key a plan is cached under, and :class:`ArraySpec`, an array described by shape and dtype."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    import numpy as np

    from prism_core.kernel.description.dtypes import DType
    from prism_core.kernel.dispatch.registry import Op, PlanKey

__all__ = [
    "Args",
    "ArraySpec",
    "Kwargs",
    "Verdict",
    "array_args",
    "array_dtypes",
    "array_positions",
    "elements",
    "is_sequence",
    "plan_key",
    "signature_text",
    "tuning_dtype",
]

#: What a variant's ``can_run`` answered: ``True``, or why not (a reason, or a false value).
Verdict = bool | str | None
#: A call's positional and keyword arguments, as dispatch passes them on.
Args = tuple[object, ...]
Kwargs = dict[str, object]


def _shape(shape: object) -> tuple[int, ...]:
    """``shape`` as a tuple of ints; a TypeError or ValueError naming what is wrong with it."""
    wanted = "ArraySpec(): shape must be a sequence of non-negative integers such as (4096, 4096)"
    if isinstance(shape, (str, bytes, bytearray)) or not isinstance(shape, Sequence):
        raise TypeError(f"{wanted}; got {shape!r} ({type(shape).__name__})")
    dims = []
    for i, d in enumerate(shape):
        try:
            if isinstance(d, bool):
                raise TypeError
            dim = operator.index(d)
        except TypeError:
            raise TypeError(f"{wanted}; dimension {i} is {d!r} ({type(d).__name__})") from None
        if dim < 0:
            raise ValueError(f"{wanted}; dimension {i} is {dim}")
        dims.append(dim)
    return tuple(dims)


class ArraySpec:
    """An array described by its shape and dtype, for :func:`explain` without data.  ``dtype``
    is the ``numpy.dtype`` a NumPy array of that type has, so that a variant's ``can_run``
    gives a spec the verdict it gives the array; Prism's :class:`DType` where NumPy has none."""

    __module__ = "prism_core"
    __slots__ = ("dtype", "shape")

    def __init__(self, shape: Sequence[int], dtype: object = "float64") -> None:
        from prism_core.kernel.description.dtypes import dtype as to_dtype

        self.shape = _shape(shape)
        prism = to_dtype(dtype)
        found = prism.numpy
        self.dtype: np.dtype[np.generic] | DType = prism if found is None else found

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        from prism_core.kernel.description.dtypes import dtype as to_dtype

        return f"ArraySpec({self.shape}, {to_dtype(self.dtype).name})"


def array_positions(op: Op, args: Sequence[object]) -> tuple[int, ...]:
    """Which positional arguments of this call are arrays (``Op.array_args``, else by duck)."""
    if op.array_args is None:
        return tuple(
            i for i, a in enumerate(args) if hasattr(a, "dtype") or hasattr(a, "__dlpack__")
        )
    return tuple(i for i in op.array_args if i < len(args))


def is_sequence(value: object, op: Op, i: int) -> TypeGuard[list[object] | tuple[object, ...]]:
    """Whether ``value``, argument ``i`` of a call of ``op``, is a sequence of arrays."""
    return i in op.sequences and isinstance(value, (list, tuple))


def array_args(op: Op, args: Sequence[object]) -> list[object]:
    """The call's arrays: its array arguments, and the items of its sequences of arrays."""
    out: list[object] = []
    for i in array_positions(op, args):
        value = args[i]
        if is_sequence(value, op, i):
            out.extend(value)
        else:
            out.append(value)
    return out


def array_dtypes(op: Op, args: Sequence[object]) -> list[str]:
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    out = []
    for a in array_args(op, args):
        dt = getattr(a, "dtype", None)
        if dt is None:
            continue
        try:
            out.append(to_dtype(dt).vocab)
        except (TypeError, ValueError):
            out.append(str(dt))
    return out


def elements(value: object) -> int:
    """How many elements an array argument has (NumPy's ``size``, torch's ``numel()``)."""
    size = getattr(value, "size", None)
    if type(size) is int:
        return size
    numel = getattr(value, "numel", None)
    if callable(numel):
        return int(numel())
    if isinstance(size, int):
        return size
    shape = getattr(value, "shape", None)
    return 1 if shape is None else math.prod(int(d) for d in shape)  # None: a scalar


def tuning_dtype(dtypes: Sequence[str]) -> str | None:
    """What tuned times are keyed by: the arrays' one dtype, or their dtypes in argument order
    joined by commas (an alignment's ``uint8,int64,int32``); ``None`` without arrays."""
    if not dtypes:
        return None
    return dtypes[0] if len(set(dtypes)) == 1 else ",".join(dtypes)


def plan_key(op: Op, scope_token: object, args: Sequence[object]) -> PlanKey:
    """The cache key of a call; the hot path (``ops._make_function``) builds the same inline,
    and comes here for what it does not (a torch tensor's ``size`` is a method)."""
    keying = op._keying[0]
    positions = op.array_args
    if positions is None or op.sequences:
        arrays = array_args(op, args)
    else:
        n = len(args)
        arrays = [args[i] for i in positions if i < n]
    if not keying:
        return (scope_token, *[type(a) for a in arrays])
    parts: list[object] = [scope_token]
    for a in arrays:
        parts.append(type(a))
        parts.append(getattr(a, "dtype", None))
    if keying == 2:
        parts.append(sum([elements(a) for a in arrays]).bit_length())
    return tuple(parts)


def signature_text(op: Op, args: Sequence[object]) -> tuple[str, ...]:
    out = []
    for a in args:
        if isinstance(a, ArraySpec):
            out.append(f"{a.dtype.name}[{'x'.join(map(str, a.shape))}]")
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            out.append(f"{type(a).__name__} {a.dtype}[{'x'.join(map(str, a.shape))}]")
        else:
            out.append(type(a).__name__)
    return tuple(out)
