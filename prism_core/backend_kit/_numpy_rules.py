"""NumPy's semantics, which a namespace backend (``namespace.py``) gives a library: which ops
promote their operands, compute integers in a wider type, take a sequence, create arrays or
take ``dtype=``; NumPy's default dtypes and its promotion; and the reference's verdict on an
error a library raised."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from prism_core.backend_kit._common import first_line
from prism_core.kernel.contract.results import EighResult, QRResult, SlogdetResult, SVDResult
from prism_core.kernel.description.dtypes import dtype as prism_dtype
from prism_core.kernel.description.dtypes import dtype_name
from prism_core.kernel.records import elementwise
from prism_core.kernel.records.standard import STANDARD_OPS

__all__ = [
    "CONTAINERS",
    "CREATION",
    "DTYPE_KEYWORD",
    "ELEMENTWISE",
    "INDEX_RESULTS",
    "NUMPY_DEFAULTS",
    "NUMPY_POSITIONAL",
    "PRISM_OR_NUMPY",
    "PROMOTED",
    "SCALARS",
    "SEQUENCES",
    "STANDARD",
    "STANDARD_NAMES",
    "WIDENED",
    "caller_error",
    "default_kind",
    "dtype_kind",
    "promoted_dtype",
]

#: Python scalars (exactly: NumPy scalars subclass float and int, but are strongly typed).
SCALARS = frozenset({bool, int, float, complex})
#: The kinds an array keeps when a scalar of each type joins it (else NumPy promotes it).
_KEEPS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}
#: The modules whose dtypes (and names, and Python types) Prism reads itself.
PRISM_OR_NUMPY = frozenset({"builtins", "numpy", "prism_core"})
#: The standard's function for each Prism op whose name differs.
STANDARD_NAMES = {op: name for name, op in STANDARD_OPS.items() if name != op}
#: The ops whose operands at these positions are promoted together as NumPy promotes them.
PROMOTED: dict[str, tuple[int, ...]] = {
    **{r.name: (0, 1) for r in elementwise.RECORDS if r.arity == 2},
    **dict.fromkeys(
        ("matmul", "vecdot", "tensordot", "linalg.cross", "linalg.outer", "linalg.solve", "dot"),
        (0, 1),
    ),
    "where": (1, 2),
}  # fmt: skip
#: The ops whose integer arguments NumPy computes in a wider type (``NamespaceBackend._widen``).
WIDENED: dict[str, str] = {
    **dict.fromkeys(("sum", "prod", "cumulative_sum", "cumulative_prod"), "accumulate"),
    **dict.fromkeys(("divide", "mean", "std", "var"), "float64"),
    **dict.fromkeys(
        [
            r.name
            for r in elementwise.RECORDS
            if r.kinds in ("floating", "real_floating")
            and not r.boolean_result
            and r.name not in ("imag", "reciprocal", "divide")
        ],
        "float",
    ),
}
#: The ops whose first argument is a sequence of arrays, promoted together.
SEQUENCES = frozenset({"concat", "stack"})
#: The elementwise ops, which the reference computes on Python scalars alone (``log(0.5)``)
#: where the standard's functions take arrays.
ELEMENTWISE = frozenset(r.name for r in elementwise.RECORDS if r.name != "clip")
#: NumPy's positional spellings of what the standard takes by keyword only (``zeros((n, n),
#: int32)``, ``triu(x, 1)``): op -> (position, keyword); the namespace gets the keyword.
NUMPY_POSITIONAL: dict[str, tuple[int, str]] = {
    **dict.fromkeys(("zeros", "ones", "empty"), (1, "dtype")),
    "full": (2, "dtype"),
    **dict.fromkeys(("tril", "triu"), (1, "k")),
}
#: The creation ops, whose ``device=`` names where the result goes.
CREATION = frozenset(
    {"asarray", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "from_dlpack"}
    | {"zeros_like", "ones_like", "full_like", "empty_like", "fft.fftfreq", "fft.rfftfreq"}
)

#: Every op of the standard, by Prism's name.
STANDARD = frozenset(STANDARD_OPS.values())
#: The ops whose result is a sequence of arrays, and its type in the reference (a library may
#: give the other: the standard said lists, and says tuples since 2024.12).
CONTAINERS: dict[str, type] = {
    "broadcast_arrays": tuple,
    "meshgrid": list,
    # The decompositions: the reference's named tuples (a library's have other types, names).
    "linalg.svd": SVDResult,
    "linalg.eigh": EighResult,
    "linalg.qr": QRResult,
    "linalg.slogdet": SlogdetResult,
}
#: The ops beyond creation that take a ``dtype=`` keyword.
DTYPE_KEYWORD = frozenset(
    {"astype", "sum", "prod", "cumulative_sum", "cumulative_prod", "mean", "linalg.trace"}
)
#: NumPy's default dtypes, by the kinds a ``default_dtypes`` names.
NUMPY_DEFAULTS = {"float": "float64", "int": "int64", "index": "int64"}
#: The ops whose results are indices or counts, in NumPy's index type.
INDEX_RESULTS = frozenset(
    {"argmax", "argmin", "argsort", "nonzero", "searchsorted", "count_nonzero"}
    | {"unique_all", "unique_counts", "unique_inverse"}
)
#: The creation ops whose result is floating where no dtype is given.
_FLOAT_CREATION = frozenset(
    {"zeros", "ones", "empty", "eye", "linspace", "fft.fftfreq", "fft.rfftfreq"}
)


def default_kind(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The kind of NumPy's default dtype for a creation call without ``dtype=`` (``"float"``,
    ``"int"``), or ``None`` where the result's dtype comes from an array or a bool."""
    if op in _FLOAT_CREATION:
        return "float"
    if op == "full":
        fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        return {int: "int", float: "float"}.get(type(fill))
    if op == "arange":
        given = [*args, *(kwargs.get(k) for k in ("stop", "step"))]
        values = [v for v in given if v is not None]
        if any(type(v) is float for v in values):
            return "float"
        return "int" if values and all(type(v) is int for v in values) else None
    return None


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
