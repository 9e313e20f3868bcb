"""The ``torch`` backend's variants of the Array API's ``fft`` functions that prism-core declares
as a table (issue 12; ``families.FFT``): ``torch.fft``'s transforms, shifts and frequencies with
the semantics of Prism's NumPy references (``prism_core._builtin.numpy_fft``; their rules
through ``prism_core.reference``).

* **Arguments** are checked as the references check them (``transform_sizes`` and
  ``frequency_args`` are theirs), before torch runs: the same calls are refused with the same
  exceptions and words (torch would raise ``RuntimeError``, which dispatch takes for a failure
  of the backend).  ``s`` needs ``axes``; ``-1`` in ``s`` is the input's size (the output's
  ``2 * (m - 1)`` on ``irfftn``'s last axis); complex input to ``rfftn``/``ihfft`` is a
  ``TypeError``; an axis out of range NumPy's ``AxisError``.
* **Result types are NumPy's**: the reference's dtype for the input's (single precision stays
  single, integers go to double); what torch does not transform (integers, half precision) is
  transformed in the precision of the result and cast to it.  ``ihfft``'s result has torch's
  lazy conjugation resolved (NumPy cannot read such a tensor).
* **Empty batches**: torch's FFT libraries refuse an array with no elements even where the
  transform itself has points; the result (empty, of the right shape and type) is made here.
* **Frequencies** are computed in float64 and rounded to ``dtype``, as NumPy's are, on the
  CPU here and on the GPU in :data:`gpu` unless ``device`` says otherwise.

:data:`gpu` has the same functions on the GPU: array arguments moved there first
(``cuda_ops.on_gpu``), frequencies made on ``cuda_ops.CUDA`` by default.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

import prism_core.backend_kit as kit
import prism_core.reference as ref

from . import ops
from .backend import to_tensor, torch_dtype
from .cuda_ops import CUDA, on_gpu

__all__ = [
    "fftfreq",
    "fftfreq_on",
    "fftn",
    "fftshift",
    "gpu",
    "hfft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfftfreq",
    "rfftfreq_on",
    "rfftn",
]

_NORMS = (None, "backward", "ortho", "forward")
_DOUBLE = frozenset({torch.float64, torch.complex128})


def _norm(norm: Any) -> str:
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    return norm or "backward"


@functools.lru_cache(maxsize=256)
def _reference_dtype(name: str, dt: np.dtype[Any]) -> torch.dtype:
    """The dtype Prism's NumPy reference of ``fft.<name>`` gives for input of ``dt``."""
    return ops._torch_of(ref.implementation(f"fft.{name}")(np.zeros(2, dtype=dt)).dtype)


def _result_dtype(name: str, t: Any, real_out: bool) -> torch.dtype:
    if t.dtype in ops._TO_NUMPY:
        return _reference_dtype(name, ops._TO_NUMPY[t.dtype])
    return torch.float32 if real_out else torch.complex64  # bfloat16, float8: single


def _computed(t: Any, out: torch.dtype, complex_in: bool) -> Any:
    """``t`` in the type torch transforms it in for a result of ``out``: complex or real (as
    ``complex_in`` says, or as ``t`` is), double where the result is, else single."""
    double = out in _DOUBLE
    if complex_in or t.is_complex():
        wanted = torch.complex128 if double else torch.complex64
    else:
        wanted = torch.float64 if double else torch.float32
    return t if t.dtype == wanted else t.to(wanted)


def _finished(out: Any, dt: torch.dtype) -> Any:
    out = out.resolve_conj()
    return out if out.dtype == dt else out.to(dt)


# -- one-dimensional transforms of half spectra ------------------------------------------------
def _one(
    name: str, fn: Callable[..., Any], x: Any, n: Any, axis: Any, norm: Any, half: bool
) -> Any:
    """``fn`` along ``axis``: ``half`` (irfft, hfft: a half spectrum in, ``n`` real values
    out, ``2 * (m - 1)`` by default) or not (ihfft: ``n`` real values in, ``n // 2 + 1``
    complex out)."""
    t = to_tensor(x)
    mode = _norm(norm)
    ax = ops._axis(axis, t.ndim)
    if not half and t.is_complex():
        raise TypeError(f"fft.{name}: x must be real, not {kit.dtype_name(t.dtype)}")
    m = t.shape[ax]
    points = (2 * (m - 1) if half else m) if n is None else ops._index(n)
    if points < 1:
        raise ValueError(f"Invalid number of FFT data points ({points}) specified.")
    dt = _result_dtype(name, t, real_out=half)
    t = _computed(t, dt, complex_in=half)
    if t.numel() == 0:
        shape = list(t.shape)
        shape[ax] = points if half else points // 2 + 1
        return torch.zeros(shape, dtype=dt, device=t.device)
    return _finished(fn(t, n=points, dim=ax, norm=mode), dt)


def irfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _one("irfft", torch.fft.irfft, x, n, axis, norm, half=True)


def hfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _one("hfft", torch.fft.hfft, x, n, axis, norm, half=True)


def ihfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _one("ihfft", torch.fft.ihfft, x, n, axis, norm, half=False)


# -- n-dimensional transforms ------------------------------------------------------------------
def _nd(
    name: str, fn: Callable[..., Any], kind: ref.Kind, x: Any, s: Any, axes: Any, norm: Any
) -> Any:
    t = to_tensor(x)
    op = f"fft.{name}"
    if kind == "real" and t.is_complex():
        raise TypeError(
            f"{op}: x must be real, not {kit.dtype_name(t.dtype)} (use fft.fftn for complex input)"
        )
    sizes, dims = ref.transform_sizes(op, tuple(t.shape), s, axes, kind)
    mode = _norm(norm)
    dt = _result_dtype(name, t, real_out=kind == "half")
    t = _computed(t, dt, complex_in=kind == "half")
    if not dims:  # nothing to transform (fftn, ifftn): a copy in the result's type
        return t.to(dt, copy=True)
    if t.numel() == 0:
        shape = list(t.shape)
        for dim, size in zip(dims, sizes, strict=True):
            shape[dim] = size
        if kind == "real":
            shape[dims[-1]] = sizes[-1] // 2 + 1
        return torch.zeros(shape, dtype=dt, device=t.device)
    return _finished(fn(t, s=sizes, dim=dims, norm=mode), dt)


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("fftn", torch.fft.fftn, "complex", x, s, axes, norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("ifftn", torch.fft.ifftn, "complex", x, s, axes, norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("rfftn", torch.fft.rfftn, "real", x, s, axes, norm)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("irfftn", torch.fft.irfftn, "half", x, s, axes, norm)


# -- shifts ------------------------------------------------------------------------------------
def _shift(op: str, x: Any, axes: Any, inverse: bool) -> Any:
    """``x`` rolled by half of each of ``axes`` (back, for ``inverse``), as NumPy's
    ``fftshift``/``ifftshift``: a repeated axis is rolled twice."""
    t = to_tensor(x)
    dims = ref.shift_axes(op, axes, t.ndim)
    if not dims:
        return t.clone()
    shifts = [(-1 if inverse else 1) * (t.shape[dim] // 2) for dim in dims]
    return torch.roll(t, shifts=shifts, dims=dims)


def fftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift("fft.fftshift", x, axes, inverse=False)


def ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift("fft.ifftshift", x, axes, inverse=True)


# -- sample frequencies ------------------------------------------------------------------------
def _frequencies(
    op: str,
    fn: Callable[..., Any],
    default: torch.device,
    n: Any,
    d: Any,
    dtype: Any,
    device: Any,
) -> Any:
    n, d = ref.frequency_args(op, n, d)
    where = ops.torch_device(device, default)
    dt = torch_dtype(dtype)
    if dt is not None and not dt.is_floating_point:
        raise TypeError(
            f"{op}: dtype must be a real floating-point type (float32 or float64), not "
            f"{kit.dtype_name(dt)}"
        )
    out = fn(n, d=d, dtype=torch.float64, device=where)  # NumPy's: in double, then rounded
    return out if dt is None or dt == torch.float64 else out.to(dt)


def fftfreq_on(
    default: torch.device,
    n: int,
    /,
    *,
    d: float = 1.0,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    return _frequencies("fft.fftfreq", torch.fft.fftfreq, default, n, d, dtype, device)


def rfftfreq_on(
    default: torch.device,
    n: int,
    /,
    *,
    d: float = 1.0,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    return _frequencies("fft.rfftfreq", torch.fft.rfftfreq, default, n, d, dtype, device)


fftfreq = functools.partial(fftfreq_on, ops.CPU)
rfftfreq = functools.partial(rfftfreq_on, ops.CPU)

#: The same functions on the GPU.
gpu = SimpleNamespace(
    fftn=on_gpu(fftn),
    ifftn=on_gpu(ifftn),
    rfftn=on_gpu(rfftn),
    irfftn=on_gpu(irfftn),
    irfft=on_gpu(irfft),
    hfft=on_gpu(hfft),
    ihfft=on_gpu(ihfft),
    fftshift=on_gpu(fftshift),
    ifftshift=on_gpu(ifftshift),
    fftfreq=functools.partial(fftfreq_on, CUDA),
    rfftfreq=functools.partial(rfftfreq_on, CUDA),
)
