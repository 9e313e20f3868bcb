"""The NumPy references of the Array API's ``fft`` functions
(``kernel/records/fft_functions.py``) that are not NumPy's own function unchanged.

The n-dimensional transforms check ``s`` and ``axes`` by the standard's rules; ``irfft``,
``hfft`` and ``ihfft`` are NumPy 2's own (found by ``__getattr__``, PEP 562), wrapped on NumPy 1
to keep single precision; ``fftfreq`` and ``rfftfreq`` take ``dtype`` and ``device``; the shifts
check their axes.  :func:`transform_sizes`, :func:`frequency_args` and :func:`shift_axes` are
pure Python: the torch and CuPy plugins check with them too.  NumPy is imported inside the
functions.  Why each differs: docs/array-api.md, "Where the references differ from NumPy".
"""

from __future__ import annotations

import functools
import numbers
import operator
from collections.abc import Callable, Sequence
from typing import Any, Literal

from prism_core._builtin.numpy_ops import numpy_dtype
from prism_core.kernel.contract.device_argument import host_only

__all__ = [
    "fftfreq",
    "fftn",
    "fftshift",
    "frequency_args",
    "hfft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfftfreq",
    "rfftn",
    "shift_axes",
    "transform_sizes",
]

Norm = Literal["backward", "ortho", "forward"]
#: The kinds of n-dimensional transform: ``complex`` (fftn, ifftn: any axes, none included),
#: ``real`` (rfftn: real input, the last axis halved), ``half`` (irfftn: the last axis a half
#: spectrum, its output size ``2 * (m - 1)`` by default).
Kind = Literal["complex", "real", "half"]
#: The single-precision types a transform keeps (NumPy 1 computes them in double).
_SINGLE = ("float32", "complex64")
_NORMS = (None, "backward", "ortho", "forward")


# -- the standard's rules for s and axes, shared with the other backends ----------------------
def _axis_error(op: str, axis: int, ndim: int) -> Exception:
    import numpy as np

    error: type[Exception] = getattr(np, "exceptions", np).AxisError
    return error(axis, ndim, f"{op}: axes")


def _ints(op: str, name: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(
            f"{op}: {name} must be a sequence of ints (a tuple or a list), not {value!r}"
        )
    out = []
    for item in value:
        if isinstance(item, bool):
            raise TypeError(f"{op}: {name} must hold ints, not {item!r}")
        try:
            out.append(operator.index(item))
        except TypeError:
            raise TypeError(f"{op}: {name} must hold ints, not {item!r}") from None
    return tuple(out)


def transform_sizes(
    op: str, shape: Sequence[int], s: Any, axes: Any, kind: Kind = "complex"
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(sizes, axes)`` of an n-dimensional transform of an array of ``shape``, by the
    standard's rules: ``axes`` counted from 0 (every axis when ``None``) and each output size
    along them (``-1`` and ``None`` resolved).  For ``kind="half"`` (``irfftn``) the last size
    is the output's, ``2 * (m - 1)`` by default and for ``-1``.

    ``ValueError`` (naming ``s`` or ``axes``) for ``s`` without ``axes``, lengths that differ,
    a repeated axis, a size below 1, no axis for ``rfftn``/``irfftn``; NumPy's ``AxisError``
    for an axis out of range; ``TypeError`` for what is no sequence of ints."""
    ndim = len(shape)
    if axes is None:
        if s is not None:
            hint = tuple(range(-len(s), 0)) if isinstance(s, Sequence) else "(...)"
            raise ValueError(
                f"{op}: s={s!r} needs axes: the Array API requires the axes that s gives sizes "
                f"for (NumPy's old default was the last len(s) axes: axes={hint})"
            )
        found = tuple(range(ndim))
    else:
        found = _ints(op, "axes", axes)
        for axis in found:
            if not -ndim <= axis < ndim:
                raise _axis_error(op, axis, ndim)
        found = tuple(axis % ndim for axis in found)
        if len(set(found)) != len(found):
            raise ValueError(f"{op}: axes={tuple(axes)!r} names an axis twice; give each axis once")
    if not found and kind != "complex":
        raise ValueError(
            f"{op}: needs at least one axis to transform (x has shape {tuple(shape)}, "
            f"axes={axes!r})"
        )
    sizes = [shape[axis] for axis in found]
    if kind == "half":
        sizes[-1] = 2 * (sizes[-1] - 1)
    if s is not None:
        given = _ints(op, "s", s)
        if len(given) != len(found):
            raise ValueError(
                f"{op}: s and axes must have the same length; got s={tuple(given)!r} and "
                f"axes={tuple(axes)!r}"
            )
        for i, size in enumerate(given):
            if size == -1:
                continue
            if size < 1:
                raise ValueError(
                    f"{op}: s[{i}]={size} is no size: give an int >= 1, or -1 for the "
                    "input's size along that axis"
                )
            sizes[i] = size
    for axis, size in zip(found, sizes, strict=True):
        if size < 1:
            raise ValueError(
                f"{op}: the transform along axis {axis} would have {size} points; it needs at "
                f"least 1 (x has shape {tuple(shape)})"
            )
    return tuple(sizes), found


def shift_axes(op: str, axes: Any, ndim: int) -> tuple[int, ...]:
    """The axes ``fftshift``/``ifftshift`` roll, counted from 0: every axis for ``None``,
    an int or a sequence of ints (a repeated axis stays repeated: NumPy rolls it twice).
    NumPy's ``AxisError`` naming ``op`` for an axis out of range, ``TypeError`` for what is no
    int."""
    if axes is None:
        return tuple(range(ndim))
    items = _ints(op, "axes", axes if isinstance(axes, Sequence) else (axes,))
    for axis in items:
        if not -ndim <= axis < ndim:
            raise _axis_error(op, axis, ndim)
    return tuple(axis % ndim for axis in items)


def frequency_args(op: str, n: Any, d: Any) -> tuple[int, float]:
    """``(n, d)`` of ``fftfreq``/``rfftfreq``, checked: ``n`` an int >= 1 (``ValueError``, as
    NumPy's for a float), ``d`` a non-zero real number (``TypeError``, ``ValueError``)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ValueError(f"{op}: n must be an int >= 1 (the window length), not {n!r}")
    if isinstance(d, bool) or not isinstance(d, numbers.Real):
        raise TypeError(f"{op}: d must be a real number (the sample spacing), not {d!r}")
    if float(d) == 0.0:
        raise ValueError(f"{op}: d must not be 0 (the sample spacing); got {d!r}")
    return int(n), float(d)


# -- precision ---------------------------------------------------------------------------------
@functools.cache
def _numpy2() -> bool:
    import numpy as np

    return int(np.__version__.split(".")[0]) >= 2


def _kept(x: Any, result: Any, real: bool) -> Any:
    """``result`` in the precision of ``x`` (only NumPy 1 needs it: it computes single
    precision in double)."""
    if _numpy2() or x.dtype.name not in _SINGLE:
        return result
    return result.astype("float32" if real else "complex64", copy=False)  # pragma: no cover


# -- n-dimensional transforms ------------------------------------------------------------------
def _nd(name: str, kind: Kind, x: Any, s: Any, axes: Any, norm: Any, real_out: bool) -> Any:
    import numpy as np

    a = np.asarray(x)
    op = f"fft.{name}"
    if kind == "real" and a.dtype.kind == "c":  # NumPy 1 would drop the imaginary part
        raise TypeError(f"{op}: x must be real, not {a.dtype} (use fft.fftn for complex input)")
    sizes, found = transform_sizes(op, a.shape, s, axes, kind)
    if not found:  # nothing to transform: x in the result's type (NumPy returns x itself)
        if norm not in _NORMS:
            raise ValueError(
                f'Invalid norm value {norm}; should be "backward","ortho" or "forward".'
            )
        wanted = _kept(a, np.fft.fft(np.zeros(1, dtype=a.dtype)), real=False).dtype
        return a.astype(wanted, copy=True)
    return _kept(a, getattr(np.fft, name)(a, s=sizes, axes=found, norm=norm), real_out)


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: Norm = "backward") -> Any:
    return _nd("fftn", "complex", x, s, axes, norm, real_out=False)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: Norm = "backward") -> Any:
    return _nd("ifftn", "complex", x, s, axes, norm, real_out=False)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: Norm = "backward") -> Any:
    return _nd("rfftn", "real", x, s, axes, norm, real_out=False)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: Norm = "backward") -> Any:
    return _nd("irfftn", "half", x, s, axes, norm, real_out=True)


# -- one-dimensional transforms: NumPy 2's own, or cast back on NumPy 1 -------------------------
def _numpy1_transform(name: str, real_out: bool) -> Callable[..., Any]:  # pragma: no cover
    """NumPy 1's ``numpy.fft.<name>`` with the result in the precision of ``x``, and complex
    input to ``rfft`` and ``ihfft`` refused (NumPy 1 would drop the imaginary part)."""

    def transform(x: Any, /, *, n: Any = None, axis: int = -1, norm: Norm = "backward") -> Any:
        import numpy as np

        a = np.asarray(x)
        if name in ("rfft", "ihfft") and a.dtype.kind == "c":
            raise TypeError(f"fft.{name}: x must be real, not {a.dtype}")
        return _kept(a, getattr(np.fft, name)(a, n=n, axis=axis, norm=norm), real_out)

    transform.__name__ = transform.__qualname__ = name
    return transform


#: The one-dimensional transforms this module gives NumPy's own of: name -> real output.
#: (``fft``, ``ifft`` and ``rfft`` too, for ``numpy_ops``: its wrappers keep NumPy 1's double.)
_ONE_DIMENSIONAL = {
    "irfft": True, "hfft": True, "ihfft": False, "fft": False, "ifft": False, "rfft": False,
}  # fmt: skip


def __getattr__(name: str) -> Any:
    """``irfft``, ``hfft`` and ``ihfft`` (and ``fft``, ``ifft``, ``rfft``): NumPy 2's own
    functions (they keep the input's precision), or on NumPy 1 wrappers that cast back."""
    if name not in _ONE_DIMENSIONAL:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import numpy as np

    found = getattr(np.fft, name) if _numpy2() else _numpy1_transform(name, _ONE_DIMENSIONAL[name])
    globals()[name] = found
    return found


# -- shifts ----------------------------------------------------------------------------------
def _shift(op: str, x: Any, axes: Any, sign: int) -> Any:
    import numpy as np

    a = np.asarray(x)
    found = shift_axes(op, axes, a.ndim)
    if not found:  # a 0-d array, axes=(): nothing to roll
        return a.copy()
    return np.roll(a, [sign * (a.shape[axis] // 2) for axis in found], found)


def fftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift("fft.fftshift", x, axes, 1)


def ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift("fft.ifftshift", x, axes, -1)


# -- sample frequencies ------------------------------------------------------------------------
def _frequencies(
    op: str, values: Callable[[int, float], Any], n: Any, d: Any, dtype: Any, device: Any
) -> Any:
    n, d = frequency_args(op, n, d)
    if device is not None:
        host_only(op, device)
    dt = numpy_dtype(dtype)
    if dt is not None and dt.kind != "f":
        raise TypeError(
            f"{op}: dtype must be a real floating-point type (float32 or float64), not {dt.name}"
        )
    out = values(n, d)
    return out if dt is None or dt == out.dtype else out.astype(dt)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    import numpy as np

    return _frequencies("fft.fftfreq", np.fft.fftfreq, n, d, dtype, device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    import numpy as np

    return _frequencies("fft.rfftfreq", np.fft.rfftfreq, n, d, dtype, device)


# Declared for type checkers; the module's ``__getattr__`` gives them on first use.
irfft: Callable[..., Any]
hfft: Callable[..., Any]
ihfft: Callable[..., Any]
