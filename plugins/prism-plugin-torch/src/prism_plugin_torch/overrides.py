"""The ``torch`` backend's overrides of ``array_api_compat.torch``: the ops beyond the standard,
and fixes where torch (or the compat layer) still computes otherwise than NumPy, the reference.

Each function is an op's implementation on both targets, named as ``backend.OVERRIDES`` names
it.  ``NamespaceBackend.function`` has already moved its arrays to the target's device, promoted
mixed operands and widened integers as NumPy does, and made ``dtype=`` torch's; it turns what
torch raises into the reference's error, so that a check here is needed only where torch
computes a caller's mistake (the reference's words replace its message).  Each override says
which torch behaviour it corrects; the module's ``__getattr__`` makes those of the tables.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import array_api_compat.torch as xp
import numpy as np
import torch
import torch.nn.functional

import prism_core
import prism_core.backend_kit as kit
import prism_core.reference as ref

from .backend import (
    FLOAT64_DEFAULT,
    IN_DOUBLE,
    TRANSFORMS,
    TorchBackend,
    attribute,
    to_tensor,
    torch_device,
    torch_dtype,
)

_BACKEND = TorchBackend()  # its array methods hold no state
_UNSIGNED = frozenset({torch.uint8, torch.uint16, torch.uint32, torch.uint64})
_FLOATS = frozenset({torch.float32, torch.float64, torch.complex64, torch.complex128})


def _np(dt: Any) -> np.dtype[Any]:
    return np.dtype(kit.dtype_name(dt).replace("bool_", "bool"))


def _compat(op: str) -> Any:
    found: Any = xp
    for part in op.split("."):
        found = getattr(found, part)
    return found


def _floating(x: Any) -> Any:
    """Integer and boolean tensors in float64, as NumPy's ``linalg`` and ``fft`` compute them
    (torch refuses them)."""
    if type(x) is not torch.Tensor or x.dtype.is_floating_point or x.dtype.is_complex:
        return x
    return x.to(torch.float64)


def _common(*values: Any) -> list[Any]:
    """The operands in NumPy's common dtype (torch promotes none in these ops); a Python scalar
    in its tensor's (the backend promoted the call already)."""
    first = next(v for v in values if isinstance(v, torch.Tensor))
    tensors = [
        torch.as_tensor(v, dtype=None if hasattr(v, "dtype") else first.dtype, device=first.device)
        for v in values
    ]
    try:
        dt = torch_dtype(np.result_type(*(_np(t.dtype) for t in tensors)))
    except (TypeError, ValueError):
        dt = tensors[0].dtype
        for t in tensors[1:]:
            dt = torch.promote_types(dt, t.dtype)
    return [t if t.dtype == dt else t.to(dt) for t in tensors]


def _product(fn: Callable[..., Any], *tensors: Any) -> Any:
    """A matrix product: booleans through int64 (torch has no boolean product; NumPy's is an OR
    of ANDs), integers on a GPU through the CPU (cuBLAS has no integer product)."""
    dt = tensors[0].dtype
    if dt == torch.bool:
        return _product(fn, *(t.to(torch.int64) for t in tensors)) != 0
    if dt.is_floating_point or dt.is_complex or tensors[0].device.type == "cpu":
        return fn(*tensors)
    return fn(*(t.cpu() for t in tensors)).to(tensors[0].device)


# -- creation and data types -----------------------------------------------------------------------
def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    """``torch.asarray`` refuses byte-swapped NumPy arrays and negative strides, and shares
    read-only memory writable: ``to_tensor`` copies those; ``copy`` as the standard says."""
    source = to_tensor(obj)
    address = getattr(obj, "__array_interface__", {}).get("data", (None,))[0]
    shared = address is None or not source.numel() or address == source.data_ptr()
    borrowed = obj is source or (hasattr(obj, "__dlpack__") and shared)
    out = source.to(device=device or source.device, dtype=dtype or source.dtype)
    if copy is False and (out is not source or not borrowed):
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    return out.clone() if copy and borrowed and out is source else out


def from_dlpack(x: Any, /, *, device: Any = None, copy: Any = None) -> Any:
    """``torch.from_dlpack`` aborts the process (a C++ error) on a NumPy view with negative
    strides, and shares read-only memory writable: ``to_tensor`` copies those."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: x must support DLPack, not {type(x).__name__}")
    out = to_tensor(x)
    if device is not None and out.device != device:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return out.to(device)
    return out.clone() if copy else out


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """The dtype NumPy infers from ``fill_value`` (torch: float32 for a float, complex64 for a
    complex); an array ``fill_value`` broadcasts, as in NumPy (torch takes numbers only)."""
    if hasattr(fill_value, "shape") or isinstance(fill_value, (list, tuple)):
        value = to_tensor(fill_value, device)
        value = value if dtype is None else value.to(dtype)
        return value.expand(shape if isinstance(shape, (tuple, list)) else (shape,)).clone()
    dt = torch_dtype(np.asarray(fill_value).dtype) if dtype is None else dtype
    return xp.full(shape, fill_value, dtype=dt, device=device)


def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> Any:
    """int64 or float64 (torch: float32), fractional bounds spaced in float64 then rounded to
    ``dtype`` (torch refuses a float step of an integer dtype, and an empty range)."""
    start, stop, step, integral = ref.arange_bounds(start, stop, step)
    wanted = dtype or (torch.int64 if integral else torch.float64)
    if (stop - start) * step <= 0:
        return torch.empty(0, dtype=wanted, device=device)
    work = wanted if integral and not wanted.is_complex else torch.float64
    return torch.arange(start, stop, step, dtype=work, device=device).to(wanted)


def linspace(start: Any, stop: Any, /, num: Any, *, dtype: Any = None, **kwargs: Any) -> Any:
    """In double precision (torch: its default float32), rounded to ``dtype``; integers
    floored, as NumPy 2 does (torch truncates towards zero)."""
    complex_ = isinstance(start, complex) or isinstance(stop, complex)
    wanted = dtype or (torch.complex128 if complex_ else torch.float64)
    work = torch.complex128 if complex_ or wanted.is_complex else torch.float64
    values = xp.linspace(start, stop, ref.linspace_count(num), dtype=work, **kwargs)
    floating = wanted.is_floating_point or wanted.is_complex
    return values.to(wanted) if floating else torch.floor(values).to(wanted)


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """torch casts complex numbers to real ones, dropping the imaginary parts with a warning;
    the standard forbids that cast (NumPy's reference raises ``TypeError``)."""
    dtype = torch_dtype(dtype)
    if x.is_complex() and not dtype.is_complex:
        raise TypeError(f"astype: casting complex numbers to {kit.dtype_name(dtype)}")
    return x.to(device=torch_device(device, x.device), dtype=dtype, copy=bool(copy))


def _float64_default(op: str) -> Callable[..., Any]:
    inner = _compat(op)

    def fn(*args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        # NumPy's default dtype (torch's is float32); NumPy's checks of fftfreq's n and d
        # (torch takes n=0 and d=0).
        if op.startswith("fft."):
            ref.frequency_args(op, args[0], kwargs.get("d", 1.0))
        return inner(*args, dtype=torch.float64 if dtype is None else dtype, **kwargs)

    return fn


def triu_indices(n: Any, /, k: Any = 0, m: Any = None, *, device: Any = None) -> Any:
    """NumPy's (beyond the standard); negative sizes give no indices (torch raises)."""
    rows = builtins.max(int(n), 0)
    cols = rows if m is None else builtins.max(int(m), 0)
    return tuple(torch.triu_indices(rows, cols, int(k), device=device))


def cov(m: Any, /, y: Any = None, rowvar: Any = True, bias: Any = False, ddof: Any = None) -> Any:
    """NumPy's (beyond the standard), in NumPy's ``result_type(m, y, float64)`` (torch's
    ``cov`` keeps float32 and takes no ``y`` nor ``rowvar``)."""
    given = [v if type(v) is torch.Tensor else torch.as_tensor(v) for v in (m, y) if v is not None]
    dt = torch.complex128 if builtins.any(v.is_complex() for v in given) else torch.float64

    def variables(v: Any) -> Any:
        v = torch.atleast_2d(v.to(dt))
        return v.T if not rowvar and v.shape[0] != 1 else v

    x = variables(given[0])
    if x.shape[0] == 0:
        return torch.empty((0, 0), dtype=torch.float64, device=x.device)
    if y is not None:
        x = torch.cat((x, variables(given[1])), dim=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = x.shape[1] - ddof
    if fact <= 0:
        import warnings

        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    x = x - x.mean(dim=1, keepdim=True)
    return ((x @ x.T.conj()) * (1 / fact if fact else math.inf)).squeeze()


def histogram(
    a: Any, /, bins: Any = 10, range: Any = None, weights: Any = None, density: Any = None
) -> Any:
    """NumPy's (beyond the standard), computed by NumPy on the host and given back as tensors
    on ``a``'s device: torch's ``histogram`` takes floating-point tensors on the CPU only and
    places its bin edges otherwise than NumPy (its counts differ at the edges)."""
    host = [
        v.detach().cpu().numpy() if type(v) is torch.Tensor else v for v in (a, bins, weights)
    ]
    counts, edges = np.histogram(host[0], host[1], range, weights=host[2], density=density)
    device = a.device if type(a) is torch.Tensor else None
    return torch.as_tensor(counts, device=device), torch.as_tensor(edges, device=device)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    std: Any = 1.0,
    *,
    seed: Any = None,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    """Draws of NumPy's generator (``numpy.random.default_rng(seed)``, in float64) copied to the
    device and rounded to ``dtype`` (beyond the standard): one seed, the same numbers on every
    backend and device (torch's generators draw others)."""
    wanted = torch.float64 if dtype is None else torch_dtype(dtype)
    if not wanted.is_floating_point:
        raise TypeError(f"random.normal draws floating-point numbers, not {dtype!r}")
    mean, std = (_BACKEND.to_numpy(p) if _BACKEND.owns(p) else p for p in (mean, std))
    draws = ref.implementation("random.normal")(shape, mean, std, seed=seed)  # float64
    return torch.from_numpy(draws).to(device=device, dtype=wanted)


# -- elementwise -----------------------------------------------------------------------------------
def imag(x: Any, /) -> Any:
    return torch.imag(x) if x.is_complex() else torch.zeros_like(x)  # torch: real x is an error


def abs_(x: Any, /) -> Any:
    return x.clone() if x.dtype == torch.bool else torch.abs(x)  # torch has no boolean abs


def square(x: Any, /) -> Any:
    return torch.square(x.to(torch.int8) if x.dtype == torch.bool else x)  # NumPy: int8


def power(x1: Any, x2: Any, /) -> Any:
    """NumPy raises for negative integer powers of integers (torch computes them), and powers
    booleans in int8 (torch has no boolean power)."""
    dt = (x1 if isinstance(x1, torch.Tensor) else x2).dtype
    if dt == torch.bool:
        x1, x2 = (x.to(torch.int8) if isinstance(x, torch.Tensor) else x for x in (x1, x2))
    elif not (dt.is_floating_point or dt.is_complex) and bool((torch.as_tensor(x2) < 0).any()):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return xp.pow(x1, x2)


def _int8(x: Any) -> Any:
    """A boolean tensor in int8, NumPy's loop for booleans in the ops without a boolean one
    (torch has none, or computes in int32).  Only booleans with booleans get here: the backend
    promotes mixed operands first."""
    return x.to(torch.int8) if getattr(x, "dtype", None) == torch.bool else x


def _dividing(op: str) -> Callable[..., Any]:
    inner = _compat(op)

    def fn(x1: Any, x2: Any, /) -> Any:
        """torch raises for an integer division by zero, where NumPy gives 0; booleans in
        int8."""
        x1, x2 = _int8(x1), _int8(x2)
        dt = (x1 if isinstance(x1, torch.Tensor) else x2).dtype
        if dt.is_floating_point or dt.is_complex:
            return inner(x1, x2)  # the common case: no zero to look for
        x1, x2 = _common(x1, x2)
        zero = x2 == 0
        if not bool(zero.any()):
            return inner(x1, x2)
        out = inner(x1, torch.where(zero, torch.ones_like(x2), x2))
        return torch.where(zero, torch.zeros_like(out), out)

    return fn


floor_divide, remainder = _dividing("floor_divide"), _dividing("remainder")


def _in_int8(op: str) -> Callable[..., Any]:
    inner = _compat(op)

    def fn(*args: Any) -> Any:
        return inner(*(_int8(a) for a in args))

    return fn


bitwise_left_shift, bitwise_right_shift, conj = (
    _in_int8(op) for op in ("bitwise_left_shift", "bitwise_right_shift", "conj")
)


def sign(x: Any, /) -> Any:
    if x.dtype == torch.bool:  # torch computes it; NumPy has no boolean sign
        raise TypeError("sign: NumPy has no sign of booleans")
    return xp.sign(x)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    if _is_complex(x1, x2):  # torch computes it; NumPy has no complex logaddexp
        raise TypeError("logaddexp: NumPy has no logaddexp of complex numbers")
    return xp.logaddexp(x1, x2)


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    # torch takes boolean conditions only; NumPy reads any as condition != 0.
    return xp.where(condition if condition.dtype == torch.bool else condition != 0, x1, x2)


def _pick(x1: Any, x2: Any, largest: bool) -> Any:
    """NumPy's maximum/minimum of complex numbers (torch has none): by real part, then imaginary
    part; NaN propagates."""
    a, b = torch.broadcast_tensors(torch.as_tensor(x1), torch.as_tensor(x2, device=x1.device))
    re = a.real > b.real if largest else a.real < b.real
    im = a.imag >= b.imag if largest else a.imag <= b.imag
    nan_a, nan_b = (torch.isnan(t.real) | torch.isnan(t.imag) for t in (a, b))
    return torch.where(nan_a | (~nan_b & (re | ((a.real == b.real) & im))), a, b)


def _is_complex(*values: Any) -> bool:
    return any(isinstance(v, complex) or getattr(v, "is_complex", bool)() for v in values)


def maximum(x1: Any, x2: Any, /) -> Any:
    return _pick(x1, x2, True) if _is_complex(x1, x2) else xp.maximum(x1, x2)


def minimum(x1: Any, x2: Any, /) -> Any:
    return _pick(x1, x2, False) if _is_complex(x1, x2) else xp.minimum(x1, x2)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """NumPy's ``minimum(maximum(x, min), max)`` in NumPy's result type (torch clamps in
    ``x``'s, and clamps no complex numbers)."""
    given = [_np(v.dtype) if hasattr(v, "dtype") else v for v in (x, min, max) if v is not None]
    dt = torch_dtype(np.result_type(*given))
    out = x.to(dt)
    if min is not None:
        out = maximum(out, torch.as_tensor(min, dtype=dt, device=x.device))
    if max is not None:
        out = minimum(out, torch.as_tensor(max, dtype=dt, device=x.device))
    return out.clone() if out is x else out


# -- reductions, sorting and sets ------------------------------------------------------------------
def _accumulating(op: str) -> Callable[..., Any]:
    """Unsigned integers accumulate in uint64 as NumPy's (torch sums uint8 in int64 and no
    uint16/32/64 at all: computed in int64, cast back); a 0-d array is a vector of one element
    for the cumulative ones, as NumPy's (the compat layer gives a 0-d result)."""
    inner, cumulative = _compat(op), op.startswith("cumulative")

    def fn(x: Any, /, *, dtype: Any = None, **kwargs: Any) -> Any:
        if cumulative and x.ndim == 0:
            x = x.reshape(1)
        wanted = dtype if dtype is not None else torch.uint64 if x.dtype in _UNSIGNED else None
        if wanted in _UNSIGNED:
            return inner(x.to(torch.int64), dtype=torch.int64, **kwargs).to(wanted)
        return inner(x, dtype=dtype, **kwargs)

    return fn


sum_, prod = _accumulating("sum"), _accumulating("prod")
cumulative_sum, cumulative_prod = _accumulating("cumulative_sum"), _accumulating("cumulative_prod")
linalg_trace = _accumulating("linalg.trace")


def var(x: Any, /, *, axis: Any = None, correction: Any = 0.0, keepdims: bool = False) -> Any:
    """NumPy's formula: torch warns (and gives other values) for too few degrees of freedom,
    takes no float ``correction`` in ``std``, and reads ``axis=()`` as every axis."""
    dims = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    n = math.prod(x.shape[d] for d in dims)
    centred = x - x.mean(dim=dims, keepdim=True) if dims else x - x
    squares = (centred * centred.conj()).real if x.is_complex() else centred * centred
    total = squares.sum(dim=dims, keepdim=bool(keepdims)) if dims else squares
    return total / builtins.max(n - correction, 0)


def std(x: Any, /, *, axis: Any = None, correction: Any = 0.0, keepdims: bool = False) -> Any:
    return torch.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def _order(x: Any, dim: int, descending: bool = False) -> Any:
    """A stable argsort: complex numbers by real, then imaginary part, as NumPy's (torch sorts
    none), booleans as 0 and 1."""
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if not x.is_complex():
        return torch.argsort(x, dim=dim, descending=descending, stable=True)
    order = torch.argsort(x.imag, dim=dim, descending=descending, stable=True)
    by_real = torch.take_along_dim(x.real, order, dim)
    by_real = torch.argsort(by_real, dim=dim, descending=descending, stable=True)
    return torch.take_along_dim(order, by_real, dim)


def argsort(x: Any, /, *, axis: Any = -1, descending: bool = False, stable: bool = True) -> Any:
    # Always stable (which satisfies stable=False too); None: the flattened array, as NumPy's.
    x, axis = (x.reshape(-1), 0) if axis is None or x.ndim == 0 else (x, axis)
    return _order(x, axis, bool(descending))


def sort(x: Any, /, *, axis: Any = -1, descending: bool = False, stable: bool = True) -> Any:
    x, axis = (x.reshape(-1), 0) if axis is None else (x, axis)
    if not x.is_complex():
        return torch.sort(x, dim=axis, descending=bool(descending), stable=True).values
    return torch.take_along_dim(x, _order(x, axis, bool(descending)), axis)


def _arg_extreme(x: Any, largest: bool) -> Any:
    """The index along the last axis (kept) of the largest (smallest) complex number, by real
    part then imaginary part, or of the first NaN, as NumPy's (torch compares no complex
    numbers)."""
    re, im = x.real, x.imag
    best = re.amax(-1, keepdim=True) if largest else re.amin(-1, keepdim=True)
    key = torch.where(re == best, im, torch.full_like(im, -math.inf if largest else math.inf))
    index = key.argmax(-1, keepdim=True) if largest else key.argmin(-1, keepdim=True)
    nan = torch.isnan(re) | torch.isnan(im)
    return torch.where(nan.any(-1, keepdim=True), nan.to(torch.uint8).argmax(-1, True), index)


def _arg(largest: bool) -> Callable[..., Any]:
    def fn(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
        # Complex numbers in NumPy's order, booleans as integers: torch argmaxes neither.
        if not x.is_complex():
            x = x.to(torch.uint8) if x.dtype == torch.bool else x
            return (xp.argmax if largest else xp.argmin)(x, axis=axis, keepdims=keepdims)
        if axis is None:
            index = _arg_extreme(x.reshape(1, -1), largest)
            return index.reshape((1,) * x.ndim if keepdims else ())
        index = _arg_extreme(x.movedim(axis, -1), largest)
        return index.movedim(-1, axis) if keepdims else index.squeeze(-1)

    return fn


def _extreme(largest: bool) -> Callable[..., Any]:
    def fn(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
        # Complex numbers in NumPy's order: torch has no max of them.
        if not x.is_complex():
            return (xp.max if largest else xp.min)(x, axis=axis, keepdims=keepdims)
        dims = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        dims = tuple(d % x.ndim for d in dims)
        kept = [d for d in range(x.ndim) if d not in dims]
        moved = x.permute(*kept, *dims).reshape(*[x.shape[d] for d in kept], -1)
        out = moved.gather(-1, _arg_extreme(moved, largest)).squeeze(-1)
        return (
            out.reshape([1 if d in dims else n for d, n in enumerate(x.shape)]) if keepdims else out
        )

    return fn


argmax, argmin, max_, min_ = _arg(True), _arg(False), _extreme(True), _extreme(False)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """In NumPy's common dtype (torch compares in neither's), contiguous (torch copies strided
    ones with a warning), booleans as integers (torch searches none)."""
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")  # torch: any
    a, v = _common(x1, x2 if hasattr(x2, "dtype") else torch.as_tensor(x2, device=x1.device))
    if a.dtype == torch.bool:
        a, v = a.to(torch.uint8), v.to(torch.uint8)
    order = None if sorter is None else sorter.to(torch.int64).contiguous()
    return torch.searchsorted(a.contiguous(), v.contiguous(), right=side == "right", sorter=order)


def _unique(x: Any) -> tuple[Any, Any, Any, Any]:
    """``(values, first indices, inverse, counts)`` of one stable sort of the flattened ``x``: a
    new value wherever an element is ``!=`` the one before, as the NumPy reference (each NaN its
    own; torch's ``unique`` makes the NaNs one, sorts no complex numbers, and the compat layer
    has no ``unique_all``)."""
    flat = x.reshape(-1)
    order = _order(flat, 0)
    ordered = flat[order]
    new = torch.ones(ordered.shape, dtype=torch.bool, device=x.device)
    new[1:] = ordered[1:] != ordered[:-1]
    inverse = torch.empty(order.shape, dtype=torch.int64, device=x.device)
    inverse[order] = torch.cumsum(new, 0) - 1
    starts = torch.nonzero(new).reshape(-1)
    counts = torch.diff(starts, append=torch.tensor([flat.numel()], device=x.device))
    return ordered[new], order[new], inverse.reshape(x.shape), counts


def unique_all(x: Any, /) -> kit.UniqueAllResult:
    return kit.UniqueAllResult(*_unique(x))


def unique_counts(x: Any, /) -> kit.UniqueCountsResult:
    values, _, _, counts = _unique(x)
    return kit.UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /) -> kit.UniqueInverseResult:
    values, _, inverse, _ = _unique(x)
    return kit.UniqueInverseResult(values, inverse)


def unique_values(x: Any, /) -> Any:
    return _unique(x)[0]


def roll(x: Any, /, shift: Any, *, axis: Any = None) -> Any:
    """NumPy's ``roll``: shifts and axes broadcast together, each axis rolled by the sum of its
    shifts (torch wants one shift per axis, and no axis twice)."""
    if axis is None:
        return torch.roll(x.reshape(-1), int(np.sum(shift)), 0).reshape(x.shape)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    total: dict[int, int] = {}
    for s, a in zip(shifts.reshape(-1).tolist(), axes.reshape(-1).tolist(), strict=True):
        if not -x.ndim <= a < x.ndim:
            raise np.exceptions.AxisError(a, x.ndim)
        total[a % x.ndim] = total.get(a % x.ndim, 0) + s
    return torch.roll(x, tuple(total.values()), tuple(total)) if total else x.clone()


# -- linear algebra and signal processing ----------------------------------------------------------
def matmul(x1: Any, x2: Any, /) -> Any:
    """cuBLAS on a GPU (fp16/bf16 products on the tensor cores, fp32 ones as TF32 only where
    ``torch.backends.cuda.matmul.allow_tf32`` is set); booleans, and integers on a GPU, through
    :func:`_product` (torch multiplies neither)."""
    if x1.dtype in _FLOATS:  # the common case, first (the backend gave both one dtype)
        return torch.matmul(x1, x2)
    return _product(torch.matmul, x1, x2)


def dot(a: Any, b: Any, /) -> Any:
    """NumPy's ``dot`` (beyond the standard): a product with a 0-d operand, the matrix product of
    vectors and matrices, else a sum product over the last axis of ``a`` and the second-to-last
    of ``b``."""
    a, b = _common(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return _product(torch.matmul, a, b)
    last = [builtins.max(b.ndim - 2, 0)]
    return _product(lambda p, q: torch.tensordot(p, q, ([-1], last)), a, b)


def einsum(subscripts: Any, /, *operands: Any, dtype: Any = None, optimize: Any = False) -> Any:
    """NumPy's ``einsum`` (beyond the standard): the operands in their common dtype (torch
    promotes none), or in ``dtype`` where each casts to it safely (NumPy's rule); integer
    results keep it (torch sums them in int64); ``optimize`` is torch's business."""
    tensors = _common(*operands)
    if dtype is not None:
        dtype = torch_dtype(dtype)
        if not all(np.can_cast(_np(t.dtype), _np(dtype), "safe") for t in tensors):
            raise TypeError(f"einsum: the operands do not cast safely to {dtype}")
        tensors = [t.to(dtype) for t in tensors]
    out = _product(lambda *ts: torch.einsum(subscripts, *ts), *tensors)
    return out if out.dtype == tensors[0].dtype else out.to(tensors[0].dtype)


def convolve(a: Any, v: Any, /, mode: str = "full") -> Any:
    """NumPy's ``convolve`` of two 1-D arrays (beyond the standard): ``conv1d`` correlates, so
    the kernel is flipped; integers and booleans, which ``conv1d`` takes not, as sums of
    products over windows."""
    x, k = (t.reshape(1) if t.ndim == 0 else t for t in _common(a, v))
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if x.ndim != 1 or k.ndim != 1 or not x.numel() or not k.numel():
        raise ValueError("convolve: a and v must be non-empty 1-D arrays")
    x, k = (k, x) if k.shape[0] > x.shape[0] else (x, k)
    n, m = x.shape[0], k.shape[0]
    if x.is_floating_point() or x.is_complex():
        kernel = k.flip(0).view(1, 1, -1)
        out = torch.nn.functional.conv1d(x.view(1, 1, -1), kernel, padding=m - 1).view(-1)
    else:
        windows = torch.nn.functional.pad(x, (m - 1, m - 1)).unfold(0, m, 1)
        out = _product(torch.matmul, windows, k.flip(0))
    if mode == "same":
        return out[(m - 1) // 2 : (m - 1) // 2 + n]
    return out[m - 1 : n] if mode == "valid" else out


def transpose(x: Any, /, axes: Any = None) -> Any:
    """NumPy's ``transpose`` (beyond the standard): every axis reversed by default."""
    return x.permute(list(reversed(range(x.ndim))) if axes is None else list(axes))


def linalg_eig(x: Any, /) -> kit.EigResult:
    """Eigenvalues and right eigenvectors (beyond the standard), complex (torch's); real where
    the input is real, every eigenvalue is real and the installed NumPy gives real ones there
    (``reference.eig_real_when_real``)."""
    w, v = torch.linalg.eig(x := _floating(x))
    if not x.is_complex() and ref.eig_real_when_real() and bool((w.imag == 0).all()):
        w, v = w.real, v.real
    return kit.EigResult(w, v)


def linalg_norm(x: Any, /, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """NumPy's ``linalg.norm`` (beyond the standard): the 2-norm of the flattened array without
    ``ord`` and ``axis``, vector norms over one axis, matrix norms over two."""
    x = _floating(x)
    if axis is None and ord is None:
        out = torch.linalg.vector_norm(x)
        return out.reshape((1,) * x.ndim) if keepdims else out
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    if len(axes) == 1:
        return linalg_vector_norm(
            x, axis=tuple(axes), keepdims=keepdims, ord=2 if ord is None else ord
        )
    order = "fro" if ord in (None, "f") else ord
    return torch.linalg.matrix_norm(x, ord=order, dim=tuple(axes), keepdim=bool(keepdims))


def linalg_vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """``ord=0`` of complex numbers counts the nonzero ones (torch casts them to real first,
    counting ``1j`` as zero); integers in float64 (torch refuses them)."""
    x = _floating(x)
    if ord == 0 and x.is_complex():
        return xp.sum(x != 0, axis=axis, keepdims=keepdims).to(x.real.dtype)
    return xp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


def _transform(op: str) -> Callable[..., Any]:
    inner = _compat(op)
    kind = {"fft.fftn": "complex", "fft.ifftn": "complex", "fft.rfftn": "real"}.get(op)
    kind = "half" if op == "fft.irfftn" else kind

    def fn(x: Any, /, **kwargs: Any) -> Any:
        # Integers in float64 and half precision in single (torch transforms neither); an
        # empty batch as the reference's zeros (MKL and cuFFT refuse it); the standard's s and
        # axes of the n-dimensional ones (torch takes s without axes, axes as an int).
        if kind is not None:
            ref.transform_sizes(op, tuple(x.shape), kwargs.get("s"), kwargs.get("axes"), kind)
        x = x.to(torch.float32) if x.dtype == torch.float16 else _floating(x)
        if x.numel() == 0:
            empty = ref.implementation(op)(np.zeros(x.shape, _np(x.dtype)), **kwargs)
            return torch.from_numpy(empty).to(x.device)
        return inner(x, **kwargs).resolve_conj()  # ihfft's lazy conjugate, which NumPy reads not

    return fn


# -- autograd (beyond the standard) ----------------------------------------------------------------
def requires_grad(x: Any, /, flag: bool = True) -> Any:
    return _BACKEND.requires_grad(x, flag)


def detach(x: Any, /) -> Any:
    return _BACKEND.detach(x)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    # The standard's negative axis (torch counts a positive one from the start).
    ref.negative_axis("vecdot", axis, (tuple(x1.shape), tuple(x2.shape)), None)
    return xp.vecdot(x1, x2, axis=axis)


def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    ref.negative_axis("linalg.cross", axis, (tuple(x1.shape), tuple(x2.shape)), 3)  # as vecdot
    return xp.linalg.cross(x1, x2, axis=axis)


def _shift(op: str, inverse: bool) -> Callable[..., Any]:
    def fn(x: Any, /, *, axes: Any = None) -> Any:
        """NumPy's shifts: a repeated axis rolled twice, a 0-d array as it is (torch's
        ``fftshift`` wants a shift)."""
        dims = ref.shift_axes(op, axes, x.ndim)
        shifts = [(-1 if inverse else 1) * (x.shape[d] // 2) for d in dims]
        return torch.roll(x, shifts, dims) if dims else x.clone()

    return fn


fft_fftshift, fft_ifftshift = _shift("fft.fftshift", False), _shift("fft.ifftshift", True)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    # torch reads axis=() as every axis (NumPy: none), and keeps no dimension of an empty x.
    nonzero = x != 0
    if axis == ():
        return nonzero.to(torch.int64)
    return xp.sum(nonzero, axis=axis, keepdims=keepdims, dtype=torch.int64)


def _int64_indices(op: str) -> Callable[..., Any]:
    inner = _compat(op)

    def fn(x: Any, indices: Any, /, **kwargs: Any) -> Any:
        # torch indexes and repeats with int64 only (uint8 or int8 are its errors), reads
        # booleans as integers, and take_along_dim reads past the end: NumPy raises for both
        # (the reference's words replace these).
        if isinstance(indices, torch.Tensor):
            if indices.dtype == torch.bool:
                raise TypeError(f"{op}: boolean indices")
            indices = indices.to(torch.int64) if indices.dtype in _SHORT_INTS else indices
            if op == "take_along_axis" and indices.numel():
                size = x.shape[kwargs.get("axis", -1)]
                if not -size <= int(indices.min()) <= int(indices.max()) < size:
                    raise IndexError(f"{op}: an index is out of bounds for size {size}")
        return inner(x, indices, **kwargs)

    return fn


take, take_along_axis, repeat = (_int64_indices(op) for op in ("take", "take_along_axis", "repeat"))
_SHORT_INTS = frozenset({torch.int8, torch.int16, torch.int32, *_UNSIGNED})


def _solve_unchecked(x1: Any, x2: Any, /) -> Any:
    """``linalg.solve`` without reading its status (``torch.linalg.solve_ex``), with the
    standard's vector right-hand side as array_api_compat.torch's ``solve`` reads it."""
    x1, x2 = _common(x1, x2)
    if x2.ndim != 1 and x1.ndim - 1 == x2.ndim and x1.shape[:-1] == x2.shape:
        x2 = x2[None]
    return torch.linalg.solve_ex(x1, x2)[0]


#: Under ``choosing(check_errors="deferred")``: the functions whose ``_ex`` form does not read
#: the status (on a GPU, a synchronisation): a singular matrix gives inf or NaN, no error.
_UNCHECKED: dict[str, Callable[..., Any]] = {
    "linalg.solve": _solve_unchecked,
    "linalg.inv": lambda x, /: torch.linalg.inv_ex(x)[0],
    "linalg.cholesky": lambda x, /, *, upper=False: torch.linalg.cholesky_ex(x, upper=upper)[0],
}


def _in_double(op: str) -> Callable[..., Any]:
    inner = _compat(op)
    unchecked = _UNCHECKED.get(op)

    def fn(*args: Any, **kwargs: Any) -> Any:
        if unchecked is not None and prism_core.current_scope().check_errors == "deferred":
            return unchecked(*(_floating(a) for a in args), **kwargs)
        return inner(*(_floating(a) for a in args), **kwargs)

    return fn


_TABLES = {attribute(op): op for op in (*IN_DOUBLE, *TRANSFORMS, *FLOAT64_DEFAULT)}


def __getattr__(name: str) -> Any:
    """The overrides of ``backend``'s ``IN_DOUBLE``, ``TRANSFORMS`` and ``FLOAT64_DEFAULT``,
    made on first use."""
    op = _TABLES.get(name)
    if op is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    make = _transform if op in TRANSFORMS else _in_double if op in IN_DOUBLE else _float64_default
    globals()[name] = fn = make(op)
    return fn
