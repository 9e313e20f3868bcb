"""The standard's signatures over a NumPy-like library's: written once, for every plugin.

Many libraries that are almost an Array API namespace (MLX, older CuPy, Dask) have NumPy's
spellings where the standard changed them.  A :class:`~prism_core.backend_kit.NamespaceBackend`
lists the adaptations its namespace needs in ``adapts``; the kit then runs the op with the
standard's signature over the library's function.  Each adaptation, by name:

* ``"correction"``: ``std`` and ``var`` with the standard's ``correction=``, over NumPy's
  ``ddof=`` (an integer, as MLX's takes; a fractional correction scales the variance);
* ``"sort"``: ``sort`` and ``argsort`` with ``descending=`` and ``stable=``, over an ascending
  ``sort(x, axis)`` (a descending ``argsort`` keeps equal elements in their order, as the
  standard's stable sort does);
* ``"clip"``: ``clip(x, min=, max=)`` over NumPy's ``clip(a, a_min, a_max)``;
* ``"cumulative"``: ``cumulative_sum`` and ``cumulative_prod`` (``include_initial=``,
  ``dtype=``) over NumPy's ``cumsum`` and ``cumprod``;
* ``"svd"``: ``linalg.svd(x, full_matrices=)`` over an ``svd`` that gives the full matrices
  only;
* ``"fftfreq"``: ``fft.fftfreq`` and ``fft.rfftfreq`` with the standard's ``dtype=`` (and
  ``device=``: the library's default), computed as NumPy does over ``arange``, for a library
  whose own has NumPy's ``fftfreq(n, d)`` and computes in float32;
* ``"linalg"``: ``linalg.trace``, ``linalg.diagonal`` (over the last two axes),
  ``linalg.outer`` and ``linalg.svdvals`` over NumPy's ``trace``, ``diagonal``, ``outer`` and
  ``linalg.svd``.

:data:`NUMPY_LIKE` is all of them.  Cheap to import: no array library.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["ADAPTED", "NUMPY_LIKE", "adapted", "needs"]


def _std_var(name: str) -> Callable[[ModuleType], Callable[..., Any]]:
    def make(xp: ModuleType) -> Callable[..., Any]:
        function = getattr(xp, name)

        def op(
            x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False
        ) -> Any:
            if float(correction).is_integer():  # an int: MLX's ddof= takes no float
                return function(x, axis=axis, ddof=int(correction), keepdims=keepdims)
            # A fractional correction: the variance with none, scaled (n - 0) / (n - correction).
            axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
            n = 1
            for a in axes:
                n *= x.shape[a]
            scale = n / (n - correction) if n != correction else float("inf")
            out = xp.var(x, axis=axis, keepdims=keepdims) * scale
            return xp.sqrt(out) if name == "std" else out

        return op

    return make


def _reversed(x: Any, axis: int) -> Any:
    """``x`` reversed along ``axis`` by slicing (NumPy-like libraries without ``flip`` slice)."""
    at = axis % x.ndim
    return x[(slice(None),) * at + (slice(None, None, -1),)]


def _sort(xp: ModuleType) -> Callable[..., Any]:
    def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
        out = xp.sort(x, axis=axis)
        return _reversed(out, axis) if descending else out

    return sort


def _argsort(xp: ModuleType) -> Callable[..., Any]:
    def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
        if not descending:
            return xp.argsort(x, axis=axis)
        # Sorted ascending from the end, then read backwards: equal elements keep their order.
        last = x.shape[axis] - 1
        return last - _reversed(xp.argsort(_reversed(x, axis), axis=axis), axis)

    return argsort


def _clip(xp: ModuleType) -> Callable[..., Any]:
    def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
        if min is None and max is None:
            return x
        return xp.clip(x, min, max)

    return clip


def _cumulative(name: str, initial: int) -> Callable[[ModuleType], Callable[..., Any]]:
    def make(xp: ModuleType) -> Callable[..., Any]:
        function = getattr(xp, name)

        def op(
            x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
        ) -> Any:
            if axis is None:
                if x.ndim > 1:
                    raise ValueError("axis: required for an array of more than one dimension")
                axis = 0
            if dtype is not None:
                x = xp.astype(x, dtype)
            out = function(x, axis=axis)
            if not include_initial:
                return out
            shape = list(out.shape)
            shape[axis] = 1
            first = xp.full(tuple(shape), initial, dtype=out.dtype)
            concat = getattr(xp, "concat", None) or xp.concatenate
            return concat([first, out], axis=axis)

        return op

    return make


def _svd(xp: ModuleType) -> Callable[..., Any]:
    def svd(x: Any, /, *, full_matrices: bool = True) -> Any:
        u, s, vt = xp.linalg.svd(x)
        if full_matrices:
            return u, s, vt
        k = min(x.shape[-2], x.shape[-1])
        return u[..., :, :k], s, vt[..., :k, :]

    return svd


def _svdvals(xp: ModuleType) -> Callable[..., Any]:
    def svdvals(x: Any, /) -> Any:
        try:
            return xp.linalg.svd(x, compute_uv=False)
        except TypeError:  # no compute_uv=: the values of the whole decomposition
            return xp.linalg.svd(x)[1]

    return svdvals


def _trace(xp: ModuleType) -> Callable[..., Any]:
    def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
        out = xp.trace(x, offset=offset, axis1=-2, axis2=-1)
        return out if dtype is None else xp.astype(out, dtype)

    return trace


def _diagonal(xp: ModuleType) -> Callable[..., Any]:
    def diagonal(x: Any, /, *, offset: int = 0) -> Any:
        return xp.diagonal(x, offset=offset, axis1=-2, axis2=-1)

    return diagonal


def _outer(xp: ModuleType) -> Callable[..., Any]:
    def outer(x1: Any, x2: Any, /) -> Any:
        return xp.outer(x1, x2)

    return outer


def _freq(name: str) -> Callable[[ModuleType], Callable[..., Any]]:
    def make(xp: ModuleType) -> Callable[..., Any]:
        def op(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
            # NumPy's way: the integers k, in the dtype asked, times 1 / (n * d) (MLX's own
            # fftfreq computes in float32 whatever dtype the result is cast to).
            if name == "rfftfreq":
                k = xp.arange(n // 2 + 1)
            else:
                concat = getattr(xp, "concat", None) or xp.concatenate
                k = concat([xp.arange((n - 1) // 2 + 1), xp.arange(-(n // 2), 0)])
            return (k if dtype is None else xp.astype(k, dtype)) * (1.0 / (n * d))

        return op

    return make


#: Each adaptation: op -> (the library's functions it calls, the adapter's maker over ``xp``).
ADAPTED: dict[str, dict[str, tuple[tuple[str, ...], Callable[[ModuleType], Callable[..., Any]]]]]
ADAPTED = {
    "correction": {
        "std": (("std",), _std_var("std")),
        "var": (("var",), _std_var("var")),
    },
    "sort": {"sort": (("sort",), _sort), "argsort": (("argsort",), _argsort)},
    "clip": {"clip": (("clip",), _clip)},
    "cumulative": {
        "cumulative_sum": (("cumsum",), _cumulative("cumsum", 0)),
        "cumulative_prod": (("cumprod",), _cumulative("cumprod", 1)),
    },
    "svd": {"linalg.svd": (("linalg.svd",), _svd)},
    "fftfreq": {
        "fft.fftfreq": (("arange", "astype"), _freq("fftfreq")),
        "fft.rfftfreq": (("arange", "astype"), _freq("rfftfreq")),
    },
    "linalg": {
        "linalg.trace": (("trace",), _trace),
        "linalg.diagonal": (("diagonal",), _diagonal),
        "linalg.outer": (("outer",), _outer),
        "linalg.svdvals": (("linalg.svd",), _svdvals),
    },
}

#: Every adaptation: a NumPy-like library's spellings throughout.
NUMPY_LIKE = frozenset(ADAPTED)


def _of(adapts: frozenset[str], op: str) -> Any:
    unknown = sorted(adapts - NUMPY_LIKE)
    if unknown:
        from prism_core.kernel.errors import did_you_mean

        raise ValueError(
            f"adapts: no adaptation named {unknown[0]!r}{did_you_mean(unknown[0], NUMPY_LIKE)}; "
            f"the adaptations are {', '.join(sorted(NUMPY_LIKE))}"
        )
    for name in adapts:
        found = ADAPTED[name].get(op)
        if found is not None:
            return found
    return None


def needs(adapts: frozenset[str], op: str) -> tuple[str, ...] | None:
    """The library's functions (dotted from the namespace) that ``op``'s adapter calls, where
    one of ``adapts`` adapts ``op``; else ``None``.  ``ValueError`` for an unknown name."""
    found = _of(adapts, op)
    return None if found is None else found[0]


def adapted(adapts: frozenset[str], op: str, xp: ModuleType) -> Callable[..., Any] | None:
    """``op`` with the standard's signature over ``xp``'s NumPy-like function, where one of
    ``adapts`` adapts it; else ``None``."""
    found = _of(adapts, op)
    return None if found is None else found[1](xp)
