"""The Array API's type promotion on Prism dtypes: ``result_type``, ``can_cast`` and
``isdtype``, ``prism_core.array_api``'s functions of dtypes (they are not ops: they take dtypes,
and compute nothing on arrays).

The rules, without NumPy (a pure module: it imports :mod:`prism_core.kernel.description.dtypes` and
nothing else): the standard's promotion table exactly; where it has no entry, what NumPy 2
gives (NEP 50); Python scalars weak; bfloat16 and the float8 types only with themselves.  The
rules, pair by pair: docs/array-api.md, "Type promotion".
"""

from __future__ import annotations

from typing import Any

from prism_core.kernel.description.dtypes import (
    ALL,
    DType,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from prism_core.kernel.description.dtypes import dtype as _dtype

__all__ = ["KINDS", "can_cast", "isdtype", "result_type"]

_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8, uint16, uint32, uint64)
_REAL_FLOATING = tuple(d for d in ALL if d.kind == "f")
_COMPLEX_FLOATING = (complex64, complex128)
#: The standard's dtype kinds (``isdtype``) -> the Prism dtypes of each.  Real floating is every
#: Prism floating type (``float16``, ``bfloat16`` and the float8 types too: the standard has
#: only ``float32`` and ``float64``, and says nothing of the others).
KINDS: dict[str, tuple[DType, ...]] = {
    "bool": (bool_,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX_FLOATING,
    "numeric": _SIGNED + _UNSIGNED + _REAL_FLOATING + _COMPLEX_FLOATING,
}
#: The names of the types promotion knows (NumPy's); the others promote with themselves only.
#: (Names, not the dtypes: hashing a DType imports NumPy, which this module never does.)
_PROMOTED = frozenset(
    d.name for d in (bool_, *_SIGNED, *_UNSIGNED, float16, float32, float64, complex64, complex128)
)
_FLOATS = {2: float16, 4: float32, 8: float64}
_COMPLEX = {4: complex64, 8: complex128}  # by the itemsize of their parts
_SIGNED_BY_SIZE = {d.itemsize: d for d in _SIGNED}


def _float_for_integer(d: DType) -> int:
    """The itemsize of the smallest float that NumPy promotes integer ``d`` with: one whose
    significand holds ``d``'s range well (8-bit: float16, 16-bit: float32, wider: float64)."""
    return {1: 2, 2: 4}.get(d.itemsize, 8)


def _promote(a: DType, b: DType) -> DType:
    """The result type of two Prism dtypes (the module docstring's rules)."""
    if a is b:
        return a
    if a.name not in _PROMOTED or b.name not in _PROMOTED:
        odd = a if a.name not in _PROMOTED else b
        raise TypeError(
            f"result_type: {odd.name} promotes with no other type ({a.name} with {b.name}); "
            "cast one of them first (astype)"
        )
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    kinds = {a.kind, b.kind}
    if kinds <= {"i", "u"}:
        if a.kind == b.kind:
            return a if a.itemsize >= b.itemsize else b
        signed, unsigned = (a, b) if a.kind == "i" else (b, a)
        size = max(signed.itemsize, 2 * unsigned.itemsize)
        # int64 with uint64 holds in no integer type: NumPy's float64 (not in the table).
        return _SIGNED_BY_SIZE.get(size, float64)
    # At least one floating type: the precision (itemsize of a real part) each needs.
    precision = max(_precision(a), _precision(b))
    if "c" in kinds:
        return _COMPLEX[max(precision, 4)]
    return _FLOATS[precision]


def _precision(d: DType) -> int:
    if d.kind == "c":
        return d.itemsize // 2
    if d.kind == "f":
        return d.itemsize
    return _float_for_integer(d)


#: Python scalar type -> its kind's rank, and the dtype it gives above the dtypes of a call.
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}
_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _with_scalar(d: DType, scalar: type) -> DType:
    """``d`` promoted with a (weak) Python scalar of type ``scalar``."""
    rank = _SCALAR_RANK[scalar]
    if rank <= _KIND_RANK[d.kind]:
        return d
    if d.name not in _PROMOTED:
        raise TypeError(f"result_type: {d.name} promotes with no complex scalar; cast it first")
    if rank == 1:  # an int with bool
        return int64
    if rank == 2:  # a float with bool or an integer
        return float64
    # A complex with a real type: the complex type of its precision (of float64 for integers).
    return _COMPLEX[max(d.itemsize if d.kind == "f" else 8, 4)]


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype of the result of an operation on ``arrays_and_dtypes``: arrays (anything with a
    ``dtype``), dtypes (Prism's, NumPy's, torch's, names) and Python scalars (``bool``, ``int``,
    ``float``, ``complex``; weak), by the standard's promotion table; pairs the table leaves
    undefined as NumPy 2 promotes them (``prism_core._promotion``'s docstring).

    At least one array or dtype is required (``ValueError`` otherwise); something that is
    neither a scalar nor a dtype nor an array is a ``TypeError`` naming its position.
    """
    found: DType | None = None
    scalars: list[type] = []
    for i, item in enumerate(arrays_and_dtypes):
        kind = type(item)
        if kind in _SCALAR_RANK:
            scalars.append(kind)
            continue
        try:
            d = _dtype(item)
        except (TypeError, ValueError):
            raise TypeError(
                f"result_type: argument {i} ({item!r}) is no array, dtype or Python scalar"
            ) from None
        found = d if found is None else _promote(found, d)
    if found is None:
        raise ValueError(
            "result_type: give at least one array or dtype (Python scalars alone have no "
            f"dtype of their own); got {len(arrays_and_dtypes)} arguments"
        )
    for scalar in scalars:
        found = _with_scalar(found, scalar)
    return found


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or an array) can be cast to dtype ``to`` by the promotion
    rules: ``result_type(from_, to)`` is ``to`` (``False`` where they do not promote).  Within
    the standard's table this is the standard's answer; across kinds it is NumPy's "safe"
    casting (``int16`` to ``float32`` yes, ``int32`` to ``float32`` no, ``bool`` to any type
    yes, complex to real never)."""
    source = _dtype(from_)
    target = _dtype(to)
    try:
        return _promote(source, target) is target
    except TypeError:
        return False


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` (a dtype, or an array's) is of ``kind``: one of the standard's kind
    names (:data:`KINDS`: ``"bool"``, ``"signed integer"``, ``"unsigned integer"``,
    ``"integral"``, ``"real floating"``, ``"complex floating"``, ``"numeric"``), a dtype, or a
    tuple of these (any of them).  An unknown name is a ``ValueError`` listing the kinds; a
    tuple inside the tuple, or something else, a ``TypeError``."""
    d = _dtype(dtype)
    if isinstance(kind, tuple):
        if any(isinstance(k, tuple) for k in kind):
            raise TypeError(f"isdtype: kind {kind!r} holds a tuple; give one flat tuple of kinds")
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        members = KINDS.get(kind)
        if members is not None:
            return d in members
        try:
            return d is _dtype(kind)  # a dtype's name ("float32")
        except ValueError:
            raise ValueError(
                f"isdtype: kind {kind!r} is no kind of the Array API nor a dtype; the kinds are "
                f"{', '.join(repr(k) for k in KINDS)}"
            ) from None
    try:
        return d is _dtype(kind)
    except (TypeError, ValueError):
        raise TypeError(
            f"isdtype: kind must be a kind's name, a dtype or a tuple of these, not {kind!r}"
        ) from None
