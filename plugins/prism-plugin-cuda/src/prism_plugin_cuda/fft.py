"""The ``cuda`` backend's functions of the Array API's ``fft`` extension where CuPy's differ from
Prism's NumPy references (issue 12; ``families.FFT`` names CuPy's own ``irfft`` and ``hfft``,
whose semantics are the standard's).

* The n-dimensional transforms check ``s`` and ``axes`` by the standard's rules with the
  references' own function (``prism_core.reference.transform_sizes``), then hand CuPy
  explicit sizes and axes: CuPy, like NumPy, would read ``s`` without ``axes`` as the last
  axes, knows no ``-1`` in ``s`` and transforms a repeated axis twice.
* ``rfftn`` and ``ihfft`` refuse complex input (``TypeError``, as NumPy): CuPy would drop the
  imaginary part.
* An array with no elements (an empty batch) gets its empty result here, of the reference's
  dtype: cuFFT makes no plan for an empty batch.
* ``fftshift`` and ``ifftshift`` roll as NumPy's do, with the axes checked (NumPy's and
  CuPy's fail on a 0-d array and name no axis out of range).
* ``fftfreq`` and ``rfftfreq`` take the standard's ``dtype`` (computed in float64 and rounded,
  as NumPy's) and ``device`` (``ops.gpu_device``).

CuPy keeps single precision in its transforms (float32 to complex64), as the standard does.
CuPy-free at import: each function imports CuPy when called.
"""

from __future__ import annotations

from typing import Any

import prism_core.reference as ref

from .backend import cupy_dtype

__all__ = [
    "fft_fftfreq",
    "fft_fftn",
    "fft_fftshift",
    "fft_ifftn",
    "fft_ifftshift",
    "fft_ihfft",
    "fft_irfftn",
    "fft_rfftfreq",
]


def _reference_dtype(name: str, dtype: Any) -> Any:
    import numpy as np

    return ref.implementation(f"fft.{name}")(np.zeros(2, dtype=dtype)).dtype


def _real_input(op: str, x: Any) -> None:
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: x must be real, not {x.dtype} (use fft.fftn for complex input)")


def _nd(name: str, kind: ref.Kind, x: Any, s: Any, axes: Any, norm: Any) -> Any:
    import cupy

    op = f"fft.{name}"
    if kind == "real":
        _real_input(op, x)
    sizes, found = ref.transform_sizes(op, x.shape, s, axes, kind)
    if not found or x.size == 0:  # nothing to transform, or an empty batch
        if norm not in (None, "backward", "ortho", "forward"):
            raise ValueError(
                f'Invalid norm value {norm}; should be "backward","ortho" or "forward".'
            )
        dtype = _reference_dtype(name, x.dtype)
        if not found:
            return x.astype(dtype, copy=True)
        shape = list(x.shape)
        for axis, size in zip(found, sizes, strict=True):
            shape[axis] = size
        if kind == "real":
            shape[found[-1]] = sizes[-1] // 2 + 1
        return cupy.zeros(tuple(shape), dtype=dtype)
    return getattr(cupy.fft, name)(x, s=sizes, axes=found, norm=norm)


def fft_fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("fftn", "complex", x, s, axes, norm)


def fft_ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("ifftn", "complex", x, s, axes, norm)


def fft_rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("rfftn", "real", x, s, axes, norm)


def fft_irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("irfftn", "half", x, s, axes, norm)


def fft_ihfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """CuPy's ``ihfft`` of real input; complex input is a ``TypeError``, as on NumPy."""
    import cupy

    if x.dtype.kind == "c":
        raise TypeError(f"fft.ihfft: x must be real, not {x.dtype}")
    return cupy.fft.ihfft(x, n=n, axis=axis, norm=norm)


def _shift(op: str, x: Any, axes: Any, sign: int) -> Any:
    import cupy

    found = ref.shift_axes(op, axes, x.ndim)
    if not found:
        return x.copy()
    return cupy.roll(x, [sign * (x.shape[axis] // 2) for axis in found], found)


def fft_fftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift("fft.fftshift", x, axes, 1)


def fft_ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift("fft.ifftshift", x, axes, -1)


def _frequencies(op: str, name: str, n: Any, d: Any, dtype: Any, device: Any) -> Any:
    import cupy

    from .ops import gpu_device

    n, d = ref.frequency_args(op, n, d)
    dt = cupy_dtype(dtype)
    if dt is not None and dt.kind != "f":
        raise TypeError(
            f"{op}: dtype must be a real floating-point type (float32 or float64), not {dt.name}"
        )
    with gpu_device(op, device):
        out = getattr(cupy.fft, name)(n, d)  # in float64, as NumPy computes them
        return out if dt is None or out.dtype == dt else out.astype(dt)


def fft_fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    return _frequencies("fft.fftfreq", "fftfreq", n, d, dtype, device)


def fft_rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    return _frequencies("fft.rfftfreq", "rfftfreq", n, d, dtype, device)
