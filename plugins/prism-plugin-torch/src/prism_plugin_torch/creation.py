"""The Array API's creation and data-type functions on torch (issue 12; the ops of
``prism_core._knowledge.creation``), with the NumPy reference's semantics.

The functions here make tensors on the CPU (or where ``device=`` says, or on ``x``'s device for
the functions of an array); :data:`gpu` has the same functions making them on the GPU (creation
functions on ``cuda_ops.CUDA`` unless ``device=`` says otherwise; the others with their array
arguments moved there first).

Where torch's defaults differ from the standard's (and the NumPy reference's), the standard's
are kept: ``arange`` is int64 or float64 (torch's default float is float32), ``linspace``
leaves the end point out on request and floors into integer dtypes, ``eye`` takes ``k``,
``meshgrid`` returns a list and takes ``indexing``, ``astype`` refuses complex-to-real casts
and returns ``x`` itself for ``copy=False`` when nothing changes.  A caller's mistake raises
NumPy's exception type with the reference's words (a ``ValueError`` for ``step=0``), checked
before torch runs: torch's own would be a ``RuntimeError``, which dispatch takes for a failure
of the backend.
"""

from __future__ import annotations

import functools
import operator
from types import SimpleNamespace
from typing import Any

import torch

import prism_core.reference as ref

from .backend import to_tensor, torch_dtype
from .cuda_ops import CUDA, on_gpu
from .ops import CPU, _new_shape, torch_device

__all__ = [
    "arange",
    "astype",
    "empty",
    "empty_like",
    "eye",
    "full_like",
    "gpu",
    "linspace",
    "meshgrid",
    "ones_like",
    "tril",
    "triu",
    "zeros_like",
]

_SCALARS = (bool, int, float, complex)



def _name(dt: torch.dtype) -> str:
    return str(dt).rpartition(".")[2]


# -- from numbers ------------------------------------------------------------------------------
def _arange(
    default: torch.device,
    start: Any,
    /,
    stop: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    where = torch_device(device, default)
    start, stop, step, integral = ref.arange_bounds(start, stop, step)
    wanted = torch_dtype(dtype)
    if wanted is None:
        wanted = torch.int64 if integral else torch.float64
    if (stop - start) * step <= 0:  # no value: NumPy's empty array (torch would raise)
        return torch.empty(0, dtype=wanted, device=where)
    if integral and not wanted.is_complex:
        return torch.arange(start, stop, step, dtype=wanted, device=where)
    # Fractional bounds or step: counted and spaced in float64, as NumPy does, then rounded to
    # the dtype asked for (truncated into an integer one).
    values = torch.arange(start, stop, step, dtype=torch.float64, device=where)
    return values if wanted == torch.float64 else values.to(wanted)


def _linspace(
    default: torch.device,
    start: Any,
    stop: Any,
    /,
    num: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: bool = True,
) -> Any:
    where = torch_device(device, default)
    count = ref.linspace_count(num)
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    wanted = torch_dtype(dtype)
    if wanted is None:
        wanted = torch.complex128 if is_complex else torch.float64
    # Computed in double precision (NumPy's), rounded to the dtype asked for.
    work = torch.complex128 if (is_complex or wanted.is_complex) else torch.float64
    if endpoint or count == 0:
        values = torch.linspace(start, stop, count, dtype=work, device=where)
    else:  # the values of num + 1 points but the last: the step is (stop - start) / num
        values = torch.linspace(start, stop, count + 1, dtype=work, device=where)[:-1]
    if wanted.is_floating_point or wanted.is_complex:
        return values if values.dtype == wanted else values.to(wanted)
    return torch.floor(values).to(wanted)  # integers: towards minus infinity, as NumPy 2


def _eye(
    default: torch.device,
    n_rows: Any,
    n_cols: Any = None,
    /,
    *,
    k: Any = 0,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    where = torch_device(device, default)
    rows = n_rows
    cols = n_rows if n_cols is None else n_cols
    shape = _new_shape((rows, cols))
    out = torch.zeros(shape, dtype=torch_dtype(dtype) or torch.float64, device=where)
    out.diagonal(operator.index(k)).fill_(1)  # an offset past the corner: an empty diagonal
    return out


def _empty(default: torch.device, shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return torch.empty(
        _new_shape(shape),
        dtype=torch_dtype(dtype) or torch.float64,
        device=torch_device(device, default),
    )


def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> Any:
    return _arange(CPU, start, stop, step, dtype=dtype, device=device)


def linspace(
    start: Any,
    stop: Any,
    /,
    num: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: bool = True,
) -> Any:
    return _linspace(CPU, start, stop, num, dtype=dtype, device=device, endpoint=endpoint)


def eye(
    n_rows: Any, n_cols: Any = None, /, *, k: Any = 0, dtype: Any = None, device: Any = None
) -> Any:
    return _eye(CPU, n_rows, n_cols, k=k, dtype=dtype, device=device)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return _empty(CPU, shape, dtype=dtype, device=device)


# -- like another array: on its device unless device= says otherwise -------------------------
def _like(x: Any, dtype: Any, device: Any) -> tuple[Any, torch.dtype, torch.device]:
    t = to_tensor(x)
    return t, torch_dtype(dtype) or t.dtype, torch_device(device, t.device)


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    t, dt, where = _like(x, dtype, device)
    return torch.empty(t.shape, dtype=dt, device=where)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    t, dt, where = _like(x, dtype, device)
    return torch.zeros(t.shape, dtype=dt, device=where)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    t, dt, where = _like(x, dtype, device)
    return torch.ones(t.shape, dtype=dt, device=where)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    if not (isinstance(fill_value, _SCALARS) or getattr(fill_value, "shape", None) == ()):
        raise TypeError(
            f"full_like: fill_value must be a Python bool, int, float or complex, not "
            f"{type(fill_value).__name__}"
        )
    t, dt, where = _like(x, dtype, device)
    value = fill_value.item() if hasattr(fill_value, "item") else fill_value
    if not (dt.is_complex or isinstance(value, bool)):
        if isinstance(value, complex):
            value = value.real  # NumPy keeps the real part (with a warning)
        if not dt.is_floating_point and dt != torch.bool and isinstance(value, float):
            value = int(value)  # NumPy truncates a float fill into an integer array
    return torch.full(t.shape, value, dtype=dt, device=where)


# -- from arrays -------------------------------------------------------------------------------
def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    tensors = [to_tensor(a) for a in arrays]
    names = {_name(t.dtype) for t in tensors}
    if len(names) > 1:
        raise ValueError(
            f"meshgrid: arrays must all have one dtype (the standard promotes none), got "
            f"{', '.join(sorted(names))}; convert them with astype first"
        )
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise ValueError(
                f"meshgrid: arrays[{i}] must be 1-D (a vector of coordinates), not of shape "
                f"{tuple(t.shape)}"
            )
    if not tensors:
        return []
    return list(torch.meshgrid(*[t.reshape(-1) for t in tensors], indexing=indexing))


def _matrices(op: str, x: Any) -> Any:
    t = to_tensor(x)
    if t.ndim < 2:
        raise ValueError(
            f"{op}: x must have 2 dimensions or more (a matrix, or a stack of them), not {t.ndim}"
        )
    return t


def tril(x: Any, /, *, k: Any = 0) -> Any:
    return torch.tril(_matrices("tril", x), diagonal=operator.index(k))


def triu(x: Any, /, *, k: Any = 0) -> Any:
    return torch.triu(_matrices("triu", x), diagonal=operator.index(k))


# -- data types --------------------------------------------------------------------------------
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    wanted = torch_dtype(dtype)
    if wanted is None:
        raise TypeError("astype: dtype is required (a Prism dtype, a torch dtype or a name)")
    t = to_tensor(x)
    if t.dtype.is_complex and not wanted.is_complex:
        raise TypeError(
            f"astype: x is {_name(t.dtype)}; the Array API forbids casting complex numbers to "
            f"{_name(wanted)} (it would drop the imaginary parts): take real(x) or abs(x) first"
        )
    where = torch_device(device, t.device)
    if not copy and t.dtype == wanted and t.device == where:
        return t
    return t.to(device=where, dtype=wanted, copy=True)


#: The same functions on the GPU: creation functions make their tensors on ``cuda_ops.CUDA``
#: unless ``device=`` says otherwise; the others move their array arguments there first.
gpu = SimpleNamespace(
    arange=functools.partial(_arange, CUDA),
    linspace=functools.partial(_linspace, CUDA),
    eye=functools.partial(_eye, CUDA),
    empty=functools.partial(_empty, CUDA),
    empty_like=on_gpu(empty_like),
    zeros_like=on_gpu(zeros_like),
    ones_like=on_gpu(ones_like),
    full_like=on_gpu(full_like),
    meshgrid=on_gpu(meshgrid),
    tril=on_gpu(tril),
    triu=on_gpu(triu),
    astype=on_gpu(astype),
)
