"""NumPy's semantics, which a namespace backend (``namespace.py``) gives a library: how each op
promotes, widens, creates and returns (its record's fields, ``OpRecord.promoted`` and after);
NumPy's default dtypes and its promotion; and the reference's verdict on an error a library
raised."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prism_core.backend_kit._common import first_line
from prism_core.kernel.contract import results
from prism_core.kernel.description.dtypes import dtype as prism_dtype
from prism_core.kernel.description.dtypes import dtype_name
from prism_core.kernel.dispatch.catalogue import parse_signature
from prism_core.kernel.oprecord import OpRecord
from prism_core.kernel.records import families
from prism_core.kernel.records.standard import STANDARD_OPS

__all__ = [
    "ELEMENTWISE",
    "NUMPY_DEFAULTS",
    "PRISM_OR_NUMPY",
    "RECORDS",
    "SCALARS",
    "STANDARD",
    "STANDARD_NAMES",
    "caller_error",
    "container_type",
    "default_kind",
    "dtype_kind",
    "promoted_dtype",
    "record_of",
    "value_parameters",
]

#: Python scalars (exactly: NumPy scalars subclass float and int, but are strongly typed).
SCALARS = frozenset({bool, int, float, complex})
#: The kinds an array keeps when a scalar of each type joins it (else NumPy promotes it).
_KEEPS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}
#: The modules whose dtypes (and names, and Python types) Prism reads itself.
PRISM_OR_NUMPY = frozenset({"builtins", "numpy", "prism_core"})
#: Every builtin op's record by name: what it promotes, widens, creates, takes and returns
#: (``OpRecord.promoted`` and the fields after it).
RECORDS: dict[str, OpRecord] = {r.name: r for r in families.RECORDS}
#: The standard's function for each Prism op whose name differs.
STANDARD_NAMES = {op: name for name, op in STANDARD_OPS.items() if name != op}
#: The elementwise functions of one or two operands (``clip`` and ``where`` take more), which
#: the reference computes on Python scalars alone (``log(0.5)``) where the standard's take
#: arrays.
ELEMENTWISE = frozenset(
    name for name, r in RECORDS.items() if r.work == "elementwise" and r.arity <= 2
)
#: Every op of the standard, by Prism's name.
STANDARD = frozenset(STANDARD_OPS.values())
#: NumPy's default dtypes, by the kinds a ``default_dtypes`` names.
NUMPY_DEFAULTS = {"float": "float64", "int": "int64", "index": "int64"}
#: The types a record's ``container`` names beyond the named tuples of ``results``.
_SEQUENCE_TYPES: dict[str, type] = {"tuple": tuple, "list": list}


def record_of(op: str) -> OpRecord:
    """``op``'s record; for an op Prism does not declare (one a backend adds), a record with
    none of NumPy's semantics to give."""
    found = RECORDS.get(op)
    if found is None:
        return OpRecord(op, "(*args, **kwargs)", "", None, "unknown", "other", "builtins:None")
    return found


def container_type(record: OpRecord) -> type | None:
    """The type of ``record``'s result of several arrays in the reference (``OpRecord.container``:
    a library may give the other sequence, or named tuples of other types and names); ``None``
    for an op with none."""
    name = record.container
    if name is None:
        return None
    return _SEQUENCE_TYPES.get(name) or getattr(results, name)


def value_parameters(record: OpRecord) -> tuple[int, tuple[str, ...]]:
    """Where the Python values that give a creation op its default dtype (``OpRecord.creation``
    ``"values"``) are: the position of the first positional parameter beyond ``shape`` (every
    positional argument from there on), and the keywords beyond ``shape``, ``dtype`` and
    ``device`` (``full``'s ``fill_value``; ``arange``'s bounds)."""
    first: int | None = None
    keywords: list[str] = []
    for i, p in enumerate(parse_signature(record.signature).parameters.values()):
        if p.name in ("shape", "dtype", "device"):
            continue
        if first is None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            first = i
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            keywords.append(p.name)
    return (0 if first is None else first), tuple(keywords)


def default_kind(
    record: OpRecord,
    values: tuple[int, tuple[str, ...]],
    args: tuple[object, ...],
    kwargs: Mapping[str, object],
) -> str | None:
    """The kind of NumPy's default dtype for a creation call without ``dtype=`` (``"float"``,
    ``"int"``), or ``None`` where the result's dtype comes from an array or a bool; ``values``
    are the record's :func:`value_parameters`."""
    if record.creation == "float":
        return "float"
    if record.creation != "values":
        return None
    first, keywords = values
    found = [v for v in (*args[first:], *map(kwargs.get, keywords)) if v is not None]
    if any(type(v) is float for v in found):
        return "float"
    return "int" if found and all(type(v) is int for v in found) else None


def _in_bounds(dt: Any, scalars: list[Any]) -> None:
    """NumPy's ``OverflowError`` (NEP 50) for a Python int out of the range of the integer
    dtype it joins, which a library would wrap silently (``uint8_array + 300``)."""
    import numpy as np

    info = np.iinfo(dtype_name(dt))
    for s in scalars:
        if type(s) is int and not info.min <= s <= info.max:
            raise OverflowError(f"Python integer {s} out of bounds for {info.dtype}")


def dtype_kind(dt: Any) -> str | None:
    """NumPy's kind letter of a library's dtype, cached (asked on every call of many ops) by
    the dtype's type and itself: one library's dtype is never compared with another's
    (array-api-strict's warns when compared with NumPy's)."""
    key = (type(dt), dt)
    try:
        return _KINDS[key]
    except KeyError:
        pass
    import numpy as np

    try:
        kind: str | None = str(np.dtype(dtype_name(dt)).kind)
    except TypeError:
        kind = None
    if len(_KINDS) < 256:
        _KINDS[key] = kind
    return kind


_KINDS: dict[tuple[type, Any], str | None] = {}


def promoted_dtype(args: tuple[Any, ...], positions: Iterable[int]) -> tuple[str, list[int]] | None:
    """The name of NumPy's result type of the arrays and Python scalars of ``args`` at
    ``positions``, where a library could promote them otherwise (mixed dtypes, or a Python
    scalar of a kind the array's dtype does not hold), with the positions within ``args``;
    ``None`` where nothing is to promote (``NamespaceBackend.promote``).  Library dtypes are
    compared only with each other (never with ``None`` or another library's: MLX refuses
    ``dtype == None``)."""
    if positions == (0, 1) and len(args) > 1:  # two operands of one dtype: asked first
        first = getattr(args[0], "dtype", None)
        other = getattr(args[1], "dtype", None)
        # Neither None (MLX raises for dtype == None), and of one library.
        same = first is not None and other is not None and type(first) is type(other)
        if same and first == other:
            return None
    places = [i for i in positions if i < len(args)]
    dtypes = {args[i].dtype for i in places if hasattr(args[i], "dtype")}
    scalars = [args[i] for i in places if type(args[i]) in SCALARS]
    if not dtypes or (len(dtypes) == 1 and not scalars):
        return None  # nothing to promote (the common case: asked first, as it is cheap)
    if len(dtypes) == 1:
        kind = dtype_kind(next(iter(dtypes)))
        if kind is None or all(kind in _KEEPS[type(s)] for s in scalars):
            if kind in ("i", "u"):
                _in_bounds(next(iter(dtypes)), scalars)
            return None
    import numpy as np

    try:
        given = [np.dtype(dtype_name(d)) for d in dtypes]
    except TypeError:
        return None  # a dtype NumPy lacks (bfloat16): the library's promotion
    return dtype_name(np.result_type(*given, *scalars)), places


def caller_error(
    backend: str,
    op: str,
    exc: Exception,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    on_host: Callable[[Any], Any],
) -> Exception:
    """What ``backend`` raises for ``exc``, raised by its library on a call of ``op``
    (``NamespaceBackend.reference_error``): the reference's exception where the reference
    raises a caller's error on the same arguments (``on_host`` gives each as the reference
    takes it); ``exc`` itself where the reference has no verdict; and a ``RuntimeError``, the
    backend's failure, where the reference computes the call."""
    from prism_core import reference
    from prism_core.kernel.dispatch.fallback import CALLER_ERRORS

    if isinstance(exc, MemoryError) or "OutOfMemory" in type(exc).__name__:
        return exc
    try:
        implementation = reference.implementation(op)
    except KeyError:
        return exc
    try:
        host_args = [on_host(a) for a in args]
        host_kwargs = {k: on_host(v) for k, v in kwargs.items()}
        if kwargs.get("dtype") is not None:
            host_kwargs["dtype"] = prism_dtype(kwargs["dtype"])  # a library's dtype too
    except Exception:
        return exc
    import numpy as np

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            implementation(*host_args, **host_kwargs)
    except CALLER_ERRORS as mistake:
        return mistake  # type: ignore[return-value]
    except Exception:
        return exc
    if isinstance(exc, ValueError) and kwargs.get("copy") is False:
        return exc  # the standard's refusal of a copy this library needs (NumPy's none)
    return RuntimeError(
        f"{backend} failed where the reference computes the call: "
        f"{type(exc).__name__}: {first_line(exc)}"
    )
