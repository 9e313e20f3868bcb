"""The ``torch`` backend's implementations of Prism's ops, with NumPy's semantics.

The ``torch.<op>`` variants (``prism_plugin_torch.variants``) name these functions in the lazy
form ``"prism_plugin_torch.ops:matmul"``: this module (and torch) is imported when dispatch
first chooses one, never at plugin discovery.  The ``torch.cuda.<op>`` variants run the same
functions on the GPU (``prism_plugin_torch.cuda_ops``).

* **Arguments** are tensors, Python scalars, or anything NumPy accepts (NumPy arrays share
  their memory on the CPU; lists get NumPy's dtypes).  Array functions compute where their
  tensors are; creation functions (``asarray``, ``zeros``, ``ones``, ``full``,
  ``triu_indices``, ``random.normal``) make tensors on the CPU here, on the GPU in
  ``cuda_ops``.
* **Results** are tensors (0-d tensors where NumPy gives scalars); the decompositions are
  ``prism_core.backend_kit``'s named tuples (``SVDResult(U, S, Vh)``, ...).
* **Semantics are NumPy's**, the reference every backend is tested against, where torch's
  defaults differ: result dtypes follow NumPy's promotion (``int32 + float32`` is float64, a
  Python float with an integer array gives float64, NEP 50's weak Python scalars; only
  bfloat16 and the float8 types, which NumPy lacks, promote as torch does); ``std`` takes
  ``correction`` (NumPy's ``ddof``, default 0, where torch's default is 1); ``sum``/``cumsum``
  accumulate small integers in int64; ``argmax`` without an axis is over the flattened array;
  ``sort`` is stable (so stable either way) and sorts complex numbers lexicographically, as
  NumPy does; ``linalg.svd`` gives full matrices by default; ``linalg.eig`` gives real results
  when every eigenvalue is real; ``linalg.solve`` takes ``x2`` as a vector only when it is 1-D
  (torch guesses); ``convolve`` flips the kernel (``conv1d`` correlates); ``einsum`` ignores
  ``optimize`` (torch picks the contraction order itself).
* **Caller mistakes raise NumPy's exceptions** (``ValueError``, ``TypeError``, ``IndexError``,
  ``numpy.exceptions.AxisError``, ``numpy.linalg.LinAlgError``), checked before torch runs:
  torch reports them as ``RuntimeError``, which dispatch would take for a failure of the
  backend and fall back from.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional

import prism_core.backend_kit as kit
from prism_core.backend_kit import EighResult, EigResult, QRResult, SVDResult
from prism_core.reference import eig_real_when_real

from .backend import TorchBackend, to_tensor, torch_dtype

__all__ = [
    "CPU",
    "abs_",
    "add",
    "argmax",
    "argmin",
    "asarray",
    "asarray_on",
    "clip",
    "concat",
    "conj",
    "convolve",
    "cumulative_sum",
    "detach",
    "divide",
    "dot",
    "einsum",
    "exp",
    "expand_dims",
    "fft_fft",
    "fft_ifft",
    "fft_rfft",
    "from_dlpack",
    "full",
    "full_on",
    "linalg_cholesky",
    "linalg_eig",
    "linalg_eigh",
    "linalg_inv",
    "linalg_matrix_norm",
    "linalg_norm",
    "linalg_qr",
    "linalg_solve",
    "linalg_svd",
    "linalg_vector_norm",
    "log",
    "matmul",
    "max_",
    "maximum",
    "mean",
    "min_",
    "minimum",
    "moveaxis",
    "multiply",
    "ones",
    "ones_on",
    "power",
    "random_normal",
    "random_normal_on",
    "real",
    "requires_grad",
    "reshape",
    "sort",
    "sqrt",
    "square",
    "stack",
    "std",
    "subtract",
    "sum_",
    "to_numpy",
    "torch_device",
    "transpose",
    "triu_indices",
    "triu_indices_on",
    "where",
    "zeros",
    "zeros_on",
]

CPU = torch.device("cpu")
AxisError = np.exceptions.AxisError
#: Python scalars (exactly: NumPy scalars subclass float and int, but are strongly typed).
_SCALARS = frozenset({bool, int, float, complex})
_TENSOR = torch.Tensor
#: The dtypes for which torch's own product and transforms give NumPy's result type: the fast
#: paths below hand such tensors to torch directly and take the checked way only when torch
#: raises (which then raises NumPy's error), saving ~8 µs per call.
_FLOATS = frozenset({torch.float32, torch.float64, torch.complex64, torch.complex128})
#: What NumPy's type resolution is given for a Python scalar (the value does not matter, its
#: type does: NEP 50 makes Python scalars weak).
_PROBE_VALUE: dict[type, Any] = {bool: True, int: 1, float: 1.0, complex: 1j}
_COPY_MESSAGE = "Unable to avoid copy while creating an array as requested."
_BACKEND = TorchBackend()  # its array methods hold no state

# -- data types ---------------------------------------------------------------------------------

#: torch dtype -> the NumPy dtype of the same name (bfloat16 and float8 have none).
_NUMPY_NAMES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_TO_NUMPY: dict[torch.dtype, np.dtype[Any]] = {
    getattr(torch, n): np.dtype(n)
    for n in _NUMPY_NAMES
    if isinstance(getattr(torch, n, None), torch.dtype)
}
_FROM_NUMPY: dict[np.dtype[Any], torch.dtype] = {v: k for k, v in _TO_NUMPY.items()}
#: Unsigned types torch stores but does not sum: accumulated in int64, then converted.
_WIDE_UNSIGNED = frozenset(
    t for t in (getattr(torch, n, None) for n in ("uint16", "uint32", "uint64")) if t is not None
)
#: torch's error for a singular matrix or no convergence (a RuntimeError).
_LINALG_ERROR: type[Exception] = torch.linalg.LinAlgError  # type: ignore[attr-defined]
_LINALG_KEPT = frozenset({torch.float32, torch.float64, torch.complex64, torch.complex128})
_REAL_OF = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def _torch_of(dt: np.dtype[Any]) -> torch.dtype:
    try:
        return _FROM_NUMPY[np.dtype(dt)]
    except KeyError:
        raise TypeError(f"torch has no data type {np.dtype(dt).name}") from None


def _name(dt: Any) -> str:
    return kit.dtype_name(dt)


def _kind(x: Any) -> Any:
    """What the type resolution sees of an operand: its NumPy dtype (a tensor's, an array's),
    a Python scalar's type (weak), ``None`` for a missing operand, or a torch dtype NumPy lacks
    (bfloat16, float8)."""
    if x is None:
        return None
    if type(x) in _SCALARS:
        return type(x)
    if isinstance(x, torch.Tensor):
        return _TO_NUMPY.get(x.dtype, x.dtype)
    dt = getattr(x, "dtype", None)
    if isinstance(dt, np.dtype):
        return dt
    return np.asarray(x).dtype


@functools.lru_cache(maxsize=512)
def _zero_size(dt: np.dtype[Any]) -> Any:
    return np.empty(0, dtype=dt)


@functools.lru_cache(maxsize=4096)
def _numpy_result(np_fn: Callable[..., Any], kinds: tuple[Any, ...]) -> torch.dtype:
    """The dtype NumPy gives ``np_fn`` on operands of these kinds (its errors are NumPy's)."""
    stand_ins = [
        None if k is None else _PROBE_VALUE[k] if isinstance(k, type) else _zero_size(k)
        for k in kinds
    ]
    return _torch_of(np.asarray(np_fn(*stand_ins)).dtype)


def _promote(np_fn: Callable[..., Any], *operands: Any) -> torch.dtype:
    """The result dtype of ``np_fn`` on these operands, by NumPy's rules (NEP 50: Python
    scalars are weak, and a Python int out of the range of an integer result is NumPy's
    ``OverflowError``); operands of a dtype NumPy lacks promote by torch's rules."""
    kinds = tuple(_kind(x) for x in operands)
    if any(isinstance(k, torch.dtype) for k in kinds):
        arrays = [
            k if isinstance(k, torch.dtype) else _torch_of(k)
            for k in kinds
            if k is not None and not isinstance(k, type)
        ]
        dt = arrays[0]
        for other in arrays[1:]:
            dt = torch.promote_types(dt, other)
        for x in operands:
            if type(x) in _SCALARS:  # weak, as in NumPy
                dt = torch.result_type(torch.empty(1, dtype=dt), x)
        return dt
    result = _numpy_result(np_fn, kinds)
    if not (result.is_floating_point or result.is_complex or result == torch.bool):
        info = torch.iinfo(result)
        for x in operands:
            if type(x) is int and not info.min <= x <= info.max:
                raise OverflowError(f"Python integer {x} out of bounds for {_name(result)}")
    return result


def _common(dtypes: Sequence[torch.dtype]) -> torch.dtype:
    """NumPy's ``result_type`` of arrays of these dtypes (torch's for dtypes NumPy lacks)."""
    if all(d in _TO_NUMPY for d in dtypes):
        return _torch_of(np.result_type(*(_TO_NUMPY[d] for d in dtypes)))
    out = dtypes[0]
    for d in dtypes[1:]:
        out = torch.promote_types(out, d)
    return out


# -- arguments ----------------------------------------------------------------------------------


def _device(*values: Any) -> torch.device:
    """Where a call computes: the device of its first tensor (in a sequence too), else the
    CPU."""
    for v in values:
        if isinstance(v, torch.Tensor):
            return v.device
        if isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, torch.Tensor):
                    return item.device
    return CPU


def _tensor(x: Any, dt: torch.dtype, device: torch.device) -> Any:
    """``x`` as a tensor of ``dt`` on ``device`` (Python scalars too)."""
    if type(x) in _SCALARS:
        return torch.tensor(x, dtype=dt, device=device)
    t = to_tensor(x, device)
    return t if t.dtype == dt else t.to(dt)


def _operand(x: Any, dt: torch.dtype, device: torch.device) -> Any:
    """``x`` for an elementwise torch op: a Python scalar stays one (torch keeps it weak, and
    the result has ``dt``), anything else becomes a tensor of ``dt``."""
    if type(x) in _SCALARS:
        return x
    return _tensor(x, dt, device)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, torch.Tensor) else kit.shape_of(x)


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _index(value: Any) -> int:
    """An integer argument (NumPy's TypeError for floats and others)."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"'{type(value).__name__}' object cannot be interpreted as an integer"
        ) from None


def _axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` (``None``, an int, or a tuple of ints) normalised against ``ndim``:
    ``AxisError`` out of range, ``ValueError`` for a repeated axis, as NumPy."""
    if axis is None:
        return None
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in items:
        i = _index(ax)
        if ndim == 0 or not -ndim <= i < ndim:
            raise AxisError(i, ndim)
        out.append(i % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(out)


def _axis(axis: Any, ndim: int) -> int:
    """A single axis (an int; a tuple is NumPy's TypeError)."""
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    found = _axes(axis, ndim)
    assert found is not None
    return found[0]


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (tuple, list)):  # torch.Size too
        return tuple(_index(s) for s in shape)
    return (_index(shape),)


def _new_shape(shape: Any) -> tuple[int, ...]:
    dims = _shape_arg(shape)
    if any(d < 0 for d in dims):
        raise ValueError("negative dimensions are not allowed")
    return dims


def _product(fn: Callable[..., Any], tensors: Sequence[Any], dt: torch.dtype) -> Any:
    """``fn(*tensors)`` for a matrix product in ``dt``: booleans through int64 (NumPy's
    boolean product is an OR of ANDs), and integers on a GPU through the CPU (cuBLAS has no
    integer matrix product)."""
    if dt == torch.bool:
        return _product(fn, [t.to(torch.int64) for t in tensors], torch.int64) != 0
    if dt.is_floating_point or dt.is_complex:
        return fn(*tensors)
    device = tensors[0].device if tensors else CPU
    if device.type != "cpu":
        return fn(*[t.cpu() for t in tensors]).to(device)
    return fn(*tensors)


# -- creation and conversion ----------------------------------------------------------------------


def _shares_memory(a: Any, b: Any) -> bool:
    return bool(a.numel()) and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def torch_device(device: Any, default: torch.device) -> torch.device:
    """The torch device a creation function's ``device=`` names (read by
    :func:`prism_core.backend_kit.requested_device`): ``default`` for ``None``, the CPU for
    ``"cpu"`` and Prism's CPUs, ``cuda:<index>`` for Prism's NVIDIA GPUs, and torch's reading
    of anything else (``"cuda:1"``, a ``torch.device``).  Anything torch cannot read, or a GPU
    of another vendor, is a ``ValueError`` naming it and what is accepted."""
    what, value = kit.requested_device(device)
    if what == "default":
        return default
    if what == "cpu":
        return CPU
    if what == "gpu":
        description = getattr(value, "description", value)
        if description.vendor != "nvidia":
            raise ValueError(
                f"device={description.device_type!r}: torch computes on NVIDIA GPUs (CUDA) "
                f"here, not on {description.vendor or 'an unknown vendor'}'s"
            )
        return torch.device("cuda", getattr(value, "index", 0) or 0)
    try:
        return value if isinstance(value, torch.device) else torch.device(value)
    except (TypeError, RuntimeError):
        raise ValueError(
            f"device={value!r} is not a device torch knows; it takes None, 'cpu', 'cuda', "
            "'cuda:N', a torch.device, or Prism's description of a CPU or an NVIDIA GPU"
        ) from None


def asarray_on(
    default: torch.device,
    obj: Any,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
) -> Any:
    """``asarray`` making a tensor on ``device`` (``default`` when not given): shares ``obj``'s
    memory where it can (a tensor there already, a NumPy array on the CPU) and copies where it
    must, as ``copy`` allows (``True``: always, ``False``: never, ``ValueError`` when it
    must)."""
    device = torch_device(device, default)
    wanted = torch_dtype(dtype)
    if isinstance(obj, torch.Tensor):
        source, borrowed = obj, True
    elif hasattr(obj, "__dlpack__"):
        source = to_tensor(obj)
        address = _memory_of(obj)
        # A byte-swapped array, which DLPack refuses, was copied.
        borrowed = address is None or not source.numel() or address == source.data_ptr()
    else:  # lists and scalars: a new tensor, with NumPy's dtype inference
        source, borrowed = to_tensor(obj), False
    out = source.to(device=device, dtype=source.dtype if wanted is None else wanted)
    converted = out is not source
    if copy is False and (converted or not borrowed):
        raise ValueError(_COPY_MESSAGE)
    if copy and borrowed and not converted:
        out = out.clone()
    return out


def _memory_of(obj: Any) -> int | None:
    """The address of a host array's data (NumPy's ``__array_interface__``), if it has one."""
    interface = getattr(obj, "__array_interface__", None)
    if isinstance(interface, dict):
        data = interface.get("data")
        if isinstance(data, tuple) and data:
            return int(data[0])
    return None


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
) -> Any:
    return asarray_on(CPU, obj, dtype=dtype, device=device, copy=copy)


def zeros_on(
    default: torch.device, shape: Any, *, dtype: Any = None, device: Any = None
) -> Any:
    return torch.zeros(
        _new_shape(shape),
        dtype=torch_dtype(dtype) or torch.float64,
        device=torch_device(device, default),
    )


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros_on(CPU, shape, dtype=dtype, device=device)


def ones_on(default: torch.device, shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return torch.ones(
        _new_shape(shape),
        dtype=torch_dtype(dtype) or torch.float64,
        device=torch_device(device, default),
    )


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return ones_on(CPU, shape, dtype=dtype, device=device)


def full_on(
    default: torch.device, shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None
) -> Any:
    """``full`` on ``device`` (``default`` when not given): without ``dtype``, the type is
    ``fill_value``'s as NumPy infers it (bool, int64, float64, complex128, or an array's own);
    an array ``fill_value`` broadcasts, as in NumPy."""
    device = torch_device(device, default)
    dims = _new_shape(shape)
    wanted = torch_dtype(dtype)
    if type(fill_value) in _SCALARS:
        if wanted is None:
            wanted = _torch_of(np.asarray(fill_value).dtype)
        return torch.full(dims, fill_value, dtype=wanted, device=device)
    value = to_tensor(fill_value, device)
    if wanted is not None:
        value = value.to(wanted)
    kit.broadcast_shapes(_shape(value), dims)
    return value.expand(dims).clone()


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return full_on(CPU, shape, fill_value, dtype=dtype, device=device)


def to_numpy(x: Any, /) -> Any:
    """A NumPy array: a CPU tensor's memory is shared, a GPU tensor is copied to the host."""
    return _BACKEND.to_numpy(x)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """A tensor sharing ``x``'s memory where the devices allow (NumPy arrays on the CPU);
    ``device`` moves it there (``copy=False`` refuses the copy that takes), ``copy=True``
    always copies."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: x must be an array that supports DLPack (has __dlpack__, as NumPy, "
            f"torch and CuPy arrays do), not {type(x).__name__}; use asarray for other data"
        )
    out = _BACKEND.from_dlpack(x)
    if device is not None:
        where = torch_device(device, out.device)
        if where != out.device:
            if copy is False:
                raise ValueError(_COPY_MESSAGE)
            return out.to(where)
    return out.clone() if copy else out


def requires_grad(x: Any, /, flag: bool = True) -> Any:
    return _BACKEND.requires_grad(x, flag)


def detach(x: Any, /) -> Any:
    return _BACKEND.detach(x)


def triu_indices_on(device: torch.device, n: Any, /, k: Any = 0, m: Any = None) -> Any:
    """NumPy's ``triu_indices``: ``(rows, cols)`` of the upper triangle of an ``n`` x ``m``
    array from diagonal ``k``, two int64 tensors on ``device``."""
    rows = max(_index(n), 0)  # NumPy gives no indices for negative sizes
    cols = rows if m is None else max(_index(m), 0)
    found = torch.triu_indices(rows, cols, offset=_index(k), device=device)
    return (found[0], found[1])


def triu_indices(n: Any, /, k: Any = 0, m: Any = None) -> Any:
    return triu_indices_on(CPU, n, k, m)


def random_normal_on(
    device: torch.device,
    shape: Any,
    mean: Any = 0.0,
    std: Any = 1.0,
    *,
    seed: Any = None,
    dtype: Any = None,
) -> Any:
    """Normal draws with NumPy's generator (``numpy.random.default_rng(seed)``, in float64),
    copied to ``device`` and rounded to ``dtype``: one seed gives the same numbers on every
    backend, NumPy's and this one's, on the CPU and on the GPU.  torch's own generators would
    give other numbers for the same seed (and different ones on the CPU and the GPU)."""
    wanted = torch.float64 if dtype is None else torch_dtype(dtype)
    if not wanted.is_floating_point:
        raise TypeError(
            f"random.normal draws real floating-point numbers; dtype {dtype!r} is not one "
            "(use float16, float32 or float64)"
        )
    mean = to_numpy(mean) if isinstance(mean, torch.Tensor) else mean
    std = to_numpy(std) if isinstance(std, torch.Tensor) else std
    draws = np.asarray(np.random.default_rng(seed).normal(mean, std, size=shape))
    return torch.from_numpy(draws).to(device=device, dtype=wanted)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    std: Any = 1.0,
    *,
    seed: Any = None,
    dtype: Any = None,
) -> Any:
    return random_normal_on(CPU, shape, mean, std, seed=seed, dtype=dtype)


# -- elementwise --------------------------------------------------------------------------------


def _binary(np_fn: Callable[..., Any], fn: Callable[[Any, Any], Any], x1: Any, x2: Any) -> Any:
    device = _device(x1, x2)
    dt = _promote(np_fn, x1, x2)
    a, b = _operand(x1, dt, device), _operand(x2, dt, device)
    if type(a) in _SCALARS and type(b) in _SCALARS:
        a = torch.tensor(a, dtype=dt, device=device)
    kit.broadcast_shapes(_shape(a), _shape(b))
    return fn(a, b)


def add(x1: Any, x2: Any, /) -> Any:
    return _binary(np.add, operator.add, x1, x2)


def subtract(x1: Any, x2: Any, /) -> Any:
    return _binary(np.subtract, operator.sub, x1, x2)


def multiply(x1: Any, x2: Any, /) -> Any:
    return _binary(np.multiply, operator.mul, x1, x2)


def divide(x1: Any, x2: Any, /) -> Any:
    return _binary(np.divide, operator.truediv, x1, x2)


def _pow(a: Any, b: Any) -> Any:
    dt = (a if isinstance(a, torch.Tensor) else b).dtype
    if not (dt.is_floating_point or dt.is_complex or dt == torch.bool):
        negative = b < 0 if type(b) in _SCALARS else bool(b.numel()) and bool((b < 0).any())
        if negative:
            raise ValueError("Integers to negative integer powers are not allowed.")
    return a**b


def power(x1: Any, x2: Any, /) -> Any:
    return _binary(np.power, _pow, x1, x2)


def _lexicographic(a: Any, b: Any, largest: bool) -> Any:
    """NumPy's maximum/minimum of complex numbers: by real part, then imaginary part; NaN
    propagates."""
    shape = kit.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a, b = a.expand(shape), b.expand(shape)
    if largest:
        pick = (a.real > b.real) | ((a.real == b.real) & (a.imag >= b.imag))
    else:
        pick = (a.real < b.real) | ((a.real == b.real) & (a.imag <= b.imag))
    nan_a = torch.isnan(a.real) | torch.isnan(a.imag)
    nan_b = torch.isnan(b.real) | torch.isnan(b.imag)
    pick = nan_a | (pick & ~nan_b)
    return torch.where(pick, a, b)


def _extremum(largest: bool) -> Callable[[Any, Any], Any]:
    def pick(a: Any, b: Any) -> Any:
        dt = (a if isinstance(a, torch.Tensor) else b).dtype
        device = (a if isinstance(a, torch.Tensor) else b).device
        a, b = _tensor(a, dt, device), _tensor(b, dt, device)
        if dt.is_complex:
            return _lexicographic(a, b, largest)
        return torch.maximum(a, b) if largest else torch.minimum(a, b)

    return pick


def maximum(x1: Any, x2: Any, /) -> Any:
    return _binary(np.maximum, _extremum(True), x1, x2)


def minimum(x1: Any, x2: Any, /) -> Any:
    return _binary(np.minimum, _extremum(False), x1, x2)


def _unary_input(np_fn: Callable[..., Any], x: Any) -> Any:
    """``x`` as a tensor of the dtype NumPy computes ``np_fn`` in (its result's)."""
    t = to_tensor(x)
    if t.dtype not in _TO_NUMPY:
        return t
    dt = _numpy_result(np_fn, (_TO_NUMPY[t.dtype],))
    return t if t.dtype == dt else t.to(dt)


def square(x: Any, /) -> Any:
    t = _unary_input(np.square, x)
    return t * t


def sqrt(x: Any, /) -> Any:
    return torch.sqrt(_unary_input(np.sqrt, x))


def exp(x: Any, /) -> Any:
    return torch.exp(_unary_input(np.exp, x))


def log(x: Any, /) -> Any:
    return torch.log(_unary_input(np.log, x))


def abs_(x: Any, /) -> Any:
    t = to_tensor(x)
    return t.clone() if t.dtype == torch.bool else torch.abs(t)


def real(x: Any, /) -> Any:
    """The real part (a view for complex input; real input is returned as it is, as NumPy's
    ``real`` does)."""
    t = to_tensor(x)
    return torch.real(t) if t.is_complex() else t


def conj(x: Any, /) -> Any:
    t = to_tensor(x)
    return torch.conj_physical(t) if t.is_complex() else t.clone()


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    device = _device(condition, x1, x2)
    c = to_tensor(condition, device)
    if c.dtype != torch.bool:
        c = c != 0
    dt = _promote(_np_where, x1, x2)
    a, b = _tensor(x1, dt, device), _tensor(x2, dt, device)
    kit.broadcast_shapes(_shape(c), _shape(a), _shape(b))
    return torch.where(c, a, b)


def _np_where(x1: Any, x2: Any) -> Any:
    return np.where(_zero_size(np.dtype(bool)), x1, x2)


def _np_clip(x: Any, lo: Any, hi: Any) -> Any:
    return np.clip(x, lo, hi)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """NumPy's ``clip``: ``minimum(maximum(x, min), max)``, so NaN propagates and
    ``min > max`` gives ``max``; the result type is NumPy's."""
    device = _device(x, min, max)
    t = to_tensor(x, device)
    dt = _promote(_np_clip, t, min, max)
    out = t if t.dtype == dt else t.to(dt)
    if min is None and max is None:
        return out.clone() if out is t else out
    lo = None if min is None else _tensor(min, dt, device)
    hi = None if max is None else _tensor(max, dt, device)
    kit.broadcast_shapes(_shape(out), *(_shape(b) for b in (lo, hi) if b is not None))
    if lo is not None:
        out = _extremum(True)(out, lo)
    if hi is not None:
        out = _extremum(False)(out, hi)
    return out


# -- reductions ---------------------------------------------------------------------------------


def _dims(axes: tuple[int, ...] | None, ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim)) if axes is None else axes


def _accumulator(np_fn: Callable[..., Any], dt: torch.dtype) -> torch.dtype:
    """The dtype NumPy accumulates ``np_fn`` (sum, cumulative_sum) in by default."""
    if dt not in _TO_NUMPY:
        return dt
    return _numpy_result(np_fn, (_TO_NUMPY[dt],))


def _np_cumulative_sum(x: Any) -> Any:
    return np.cumulative_sum(np.zeros(1, dtype=x.dtype))


def _wide_unsigned_safe(fn: Callable[..., Any], t: Any, dt: torch.dtype, **kwargs: Any) -> Any:
    """``fn(t, dtype=dt, ...)``, accumulating uint16/32/64 in int64 (torch stores them but
    does not sum them) and converting back."""
    if dt in _WIDE_UNSIGNED:
        return fn(t, dtype=torch.int64, **kwargs).to(dt)
    return fn(t, dtype=dt, **kwargs)


def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    t = to_tensor(x)
    axes = _axes(axis, t.ndim)
    dt = torch_dtype(dtype) if dtype is not None else _accumulator(np.sum, t.dtype)
    if axes == ():  # torch would read dim=() as "every axis"
        return t.to(dt, copy=True)
    return _wide_unsigned_safe(torch.sum, t, dt, dim=_dims(axes, t.ndim), keepdim=bool(keepdims))


def _np_mean(x: Any) -> Any:
    return np.mean(np.zeros(1, dtype=x.dtype))


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    t = to_tensor(x)
    axes = _axes(axis, t.ndim)
    dt = _accumulator(_np_mean, t.dtype)
    t = t if t.dtype == dt else t.to(dt)
    if axes == ():
        return t.clone()
    return torch.mean(t, dim=_dims(axes, t.ndim), keepdim=bool(keepdims))


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """NumPy's ``std`` with ``ddof=correction`` (torch's default correction is 1, NumPy's 0):
    the divisor is ``max(N - correction, 0)``, so too few elements give inf or NaN."""
    t = to_tensor(x)
    axes = _axes(axis, t.ndim)
    dt = _accumulator(_np_mean, t.dtype)
    t = t if t.dtype == dt else t.to(dt)
    dims = _dims(axes, t.ndim)
    n = math.prod(t.shape[d] for d in dims)
    if axes != () and n - correction > 0:
        return torch.std(t, dim=dims, correction=correction, keepdim=bool(keepdims))
    # What torch warns about (too few degrees of freedom) and dim=() (which torch reads as
    # "every axis"): NumPy's formula, as NumPy computes it.
    centred = t - t.mean(dim=dims, keepdim=True) if dims else t - t
    squares = (centred * centred.conj()).real if t.is_complex() else centred * centred
    total = squares.sum(dim=dims, keepdim=bool(keepdims)) if dims else squares
    return torch.sqrt(total / max(n - correction, 0))


def _empty_reduction(t: Any, axes: tuple[int, ...] | None, what: str) -> None:
    reduced = t.shape if axes is None else [t.shape[a] for a in axes]
    if t.numel() == 0 and (axes is None or any(s == 0 for s in reduced)):
        raise ValueError(f"zero-size array to reduction operation {what} which has no identity")


def _to_last(t: Any, dims: tuple[int, ...]) -> tuple[Any, list[int]]:
    """``t`` with the ``dims`` flattened into one last axis, and the shape with those dims
    kept as ones."""
    kept = [d for d in range(t.ndim) if d not in dims]
    moved = t.permute(*kept, *dims).reshape(*[t.shape[d] for d in kept], -1)
    return moved, [1 if d in dims else t.shape[d] for d in range(t.ndim)]


def _lexicographic_index(t: Any, largest: bool) -> Any:
    """The index along the last axis of the largest (smallest) complex number by real part,
    then imaginary part, or of the first NaN, as NumPy's ``argmax``; keeps the axis."""
    re, im = t.real, t.imag
    best = re.amax(-1, keepdim=True) if largest else re.amin(-1, keepdim=True)
    fill = torch.full_like(im, -math.inf if largest else math.inf)
    key = torch.where(re == best, im, fill)
    index = key.argmax(-1, keepdim=True) if largest else key.argmin(-1, keepdim=True)
    nan = torch.isnan(re) | torch.isnan(im)
    first_nan = nan.to(torch.uint8).argmax(-1, keepdim=True)
    return torch.where(nan.any(-1, keepdim=True), first_nan, index)


def _extreme(x: Any, axis: Any, keepdims: bool, largest: bool) -> Any:
    t = to_tensor(x)
    axes = _axes(axis, t.ndim)
    _empty_reduction(t, axes, "maximum" if largest else "minimum")
    if axes == ():
        return t.clone()
    dims = _dims(axes, t.ndim)
    if t.is_complex():
        moved, kept = _to_last(t, dims)
        out = moved.gather(-1, _lexicographic_index(moved, largest)).squeeze(-1)
        return out.reshape(kept) if keepdims else out
    fn = torch.amax if largest else torch.amin
    return fn(t, dim=dims, keepdim=bool(keepdims))


def min_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _extreme(x, axis, keepdims, largest=False)


def max_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _extreme(x, axis, keepdims, largest=True)


def _arg(x: Any, axis: Any, keepdims: bool, largest: bool) -> Any:
    t = to_tensor(x)
    name = "argmax" if largest else "argmin"
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    if axis is None:
        if t.numel() == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        flat = t.reshape(-1)
        if flat.is_complex():
            index = _lexicographic_index(flat.unsqueeze(0), largest).reshape(())
        else:
            index = flat.argmax() if largest else flat.argmin()
        return index.reshape((1,) * t.ndim) if keepdims else index
    ax = _axis(axis, t.ndim)
    if t.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if t.is_complex():
        moved = t.movedim(ax, -1)
        index = _lexicographic_index(moved, largest).movedim(-1, ax)
        return index if keepdims else index.squeeze(ax)
    return t.argmax(dim=ax, keepdim=bool(keepdims)) if largest else t.argmin(ax, bool(keepdims))


def argmax(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg(x, axis, keepdims, largest=True)


def argmin(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg(x, axis, keepdims, largest=False)


def sort(x: Any, /, *, axis: Any = -1, descending: bool = False, stable: bool = True) -> Any:
    """Sorted along ``axis`` (``None``: the flattened array, as NumPy); always a stable sort,
    which satisfies ``stable=False`` too.  Complex numbers sort by real part, then imaginary
    part, as in NumPy (torch sorts no complex numbers)."""
    t = to_tensor(x)
    if axis is None:
        t, ax = t.reshape(-1), 0
    else:
        ax = _axis(axis, t.ndim)
    down = bool(descending)
    if not t.is_complex():
        return torch.sort(t, dim=ax, descending=down, stable=True).values
    order = torch.argsort(t.imag, dim=ax, descending=down, stable=True)
    by_real = torch.argsort(
        torch.take_along_dim(t.real, order, ax), dim=ax, descending=down, stable=True
    )
    return torch.take_along_dim(t, torch.take_along_dim(order, by_real, ax), ax)


def cumulative_sum(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """The Array API's ``cumulative_sum`` (NumPy's ``cumulative_sum``): ``axis=None`` only for
    1-D input; small integers accumulate in int64, as NumPy's; ``include_initial`` puts a zero
    first."""
    t = to_tensor(x)
    if axis is None:
        if t.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is required."
            )
        t, ax = t.reshape(-1), 0
    else:
        ax = _axis(axis, t.ndim)
    dt = torch_dtype(dtype) if dtype is not None else _accumulator(_np_cumulative_sum, t.dtype)
    out = _wide_unsigned_safe(torch.cumsum, t, dt, dim=ax)
    if include_initial:
        shape = list(out.shape)
        shape[ax] = 1
        out = torch.cat([torch.zeros(shape, dtype=out.dtype, device=out.device), out], dim=ax)
    return out


# -- shape --------------------------------------------------------------------------------------


def reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Any:
    t = to_tensor(x)
    target = _shape_arg(shape)
    size = t.numel()
    unknown = [i for i, s in enumerate(target) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(s < -1 for s in target):
        raise ValueError("negative dimensions not allowed")
    known = math.prod(s for s in target if s != -1)
    fits = (known != 0 and size % known == 0) if unknown else known == size
    if not fits:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(target)}")
    if copy:
        out = t.reshape(target)
        return out.clone() if _shares_memory(out, t) else out
    if copy is False:
        try:
            return t.view(target)
        except RuntimeError:  # the layout needs a copy
            raise ValueError("Unable to avoid creating a copy while reshaping.") from None
    return t.reshape(target)


def transpose(x: Any, /, axes: Any = None) -> Any:
    t = to_tensor(x)
    if axes is None:
        return t.permute(*reversed(range(t.ndim)))
    order = tuple(axes)
    if len(order) != t.ndim:
        raise ValueError("axes don't match array")
    normal = []
    for ax in order:
        i = _index(ax)
        if not -t.ndim <= i < t.ndim:
            raise AxisError(i, t.ndim)
        normal.append(i % t.ndim)
    if len(set(normal)) != len(normal):
        raise ValueError("repeated axis in transpose")
    return t.permute(normal)  # a list: a 0-d tensor's is empty


def _axis_list(value: Any, ndim: int, what: str) -> list[int]:
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    out = []
    for ax in items:
        i = _index(ax)
        if not -ndim <= i < ndim:
            raise AxisError(i, ndim)
        out.append(i % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in `{what}` argument")
    return out


def moveaxis(x: Any, /, source: Any, destination: Any) -> Any:
    t = to_tensor(x)
    src = _axis_list(source, t.ndim, "source")
    dst = _axis_list(destination, t.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    return torch.movedim(t, src, dst)


def expand_dims(x: Any, /, axis: Any = 0) -> Any:
    t = to_tensor(x)
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    ndim = t.ndim + len(items)
    positions = _axis_list(items, ndim, "axis") if items else []
    for position in sorted(positions):
        t = t.unsqueeze(position)
    return t


def _sequence(arrays: Any, what: str) -> list[Any]:
    """The arrays of a sequence argument, as tensors of NumPy's common dtype on one device."""
    if isinstance(arrays, torch.Tensor):
        items: list[Any] = list(arrays.unbind(0))
    elif isinstance(arrays, np.ndarray):
        items = list(arrays)
    else:
        try:
            items = list(arrays)
        except TypeError:
            raise TypeError(
                f"{what}: arrays must be a sequence of arrays, not {type(arrays).__name__}"
            ) from None
    if not items:
        raise ValueError(f"need at least one array to {what}")
    device = _device(*items)
    tensors = [to_tensor(a, device) for a in items]
    dt = _common([t.dtype for t in tensors])
    return [t if t.dtype == dt else t.to(dt) for t in tensors]


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    tensors = _sequence(arrays, "stack")
    shape = tensors[0].shape
    if any(t.shape != shape for t in tensors):
        raise ValueError("all input arrays must have the same shape")
    return torch.stack(tensors, dim=_axis(axis, len(shape) + 1))


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    tensors = _sequence(arrays, "concatenate")
    if axis is None:
        return torch.cat([t.reshape(-1) for t in tensors])
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        if t.ndim != first.ndim:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has {first.ndim} dimension(s) and the array at index {i} has "
                f"{t.ndim} dimension(s)"
            )
    ax = _axis(axis, first.ndim)
    for i, t in enumerate(tensors):
        for d in range(first.ndim):
            if d != ax and t.shape[d] != first.shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first.shape[d]} and the array at index {i} has size {t.shape[d]}"
                )
    return torch.cat(tensors, dim=ax)


# -- linear algebra -----------------------------------------------------------------------------

_MATMUL_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def matmul(x1: Any, x2: Any, /) -> Any:
    """``x1 @ x2`` (cuBLAS on a GPU, which runs fp16/bf16 products on the tensor cores, and
    fp32 ones as TF32 only where ``torch.backends.cuda.matmul.allow_tf32`` is set)."""
    if type(x1) is _TENSOR and type(x2) is _TENSOR and x1.dtype is x2.dtype in _FLOATS:
        try:  # the common case: two tensors of one floating dtype, as torch computes them
            return torch.matmul(x1, x2)
        except RuntimeError:
            pass  # 0-d, shapes or devices that do not match: the checked way says why
    device = _device(x1, x2)
    a, b = to_tensor(x1, device), to_tensor(x2, device)
    for i, t in enumerate((a, b)):
        if t.ndim == 0:
            raise ValueError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc "
                f"core with signature {_MATMUL_SIGNATURE} requires 1)"
            )
    inner = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != inner:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature {_MATMUL_SIGNATURE} (size {inner} is different from {a.shape[-1]})"
        )
    if a.ndim > 2 or b.ndim > 2:
        kit.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    dt = _common([a.dtype, b.dtype])
    return _product(torch.matmul, [a.to(dt), b.to(dt)], dt)


def _tensordot_last(a: Any, b: Any) -> Any:
    return torch.tensordot(a, b, dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))


def dot(a: Any, b: Any, /) -> Any:
    """NumPy's ``dot``: a product with a 0-d operand, the inner product of vectors, the matrix
    product of matrices, else a sum product over the last axis of ``a`` and the second-to-last
    of ``b``."""
    device = _device(a, b)
    ta, tb = to_tensor(a, device), to_tensor(b, device)
    dt = _common([ta.dtype, tb.dtype])
    ta, tb = ta.to(dt), tb.to(dt)
    if ta.ndim == 0 or tb.ndim == 0:
        return ta * tb
    along = 0 if tb.ndim == 1 else tb.ndim - 2
    if ta.shape[-1] != tb.shape[along]:
        raise ValueError(
            f"shapes {_shape_text(ta.shape)} and {_shape_text(tb.shape)} not aligned: "
            f"{ta.shape[-1]} (dim {ta.ndim - 1}) != {tb.shape[along]} (dim {along})"
        )
    fn = torch.matmul if ta.ndim <= 2 and tb.ndim <= 2 else _tensordot_last
    return _product(fn, [ta, tb], dt)


def _check_einsum(subscripts: str, tensors: Sequence[Any]) -> None:
    """NumPy's ValueErrors for subscripts that do not fit the operands (torch raises
    RuntimeError for them)."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(tensors):
        more = "more" if len(tensors) > len(terms) else "fewer"
        raise ValueError(
            f"{more} operands provided to einstein sum function than specified in the "
            "subscripts string"
        )
    sizes: dict[str, int] = {}
    for i, (term, t) in enumerate(zip(terms, tensors, strict=True)):
        labels = term.replace("...", "")
        if "." in labels or term.count("...") > 1:
            raise ValueError(
                "einstein sum subscripts string contains a '.' that is not part of an "
                "ellipsis ('...')"
            )
        for ch in labels:
            if not ch.isalpha():
                raise ValueError(
                    f"invalid subscript '{ch}' in einstein sum subscripts string, subscripts "
                    "must be letters"
                )
        ellipsis = "..." in term
        if len(labels) > t.ndim:
            raise ValueError(
                f"einstein sum subscripts string contains too many subscripts for operand {i}"
            )
        if not ellipsis and len(labels) != t.ndim:
            raise ValueError(
                "operand has more dimensions than subscripts given in einstein sum, but no "
                "'...' ellipsis provided to broadcast the extra dimensions."
            )
        dims: list[str | None]
        if ellipsis:
            before, _, after = term.partition("...")
            dims = [*before, *([None] * (t.ndim - len(labels))), *after]
        else:
            dims = list(labels)
        for label, size in zip(dims, t.shape, strict=True):
            if label is None:
                continue
            seen = sizes.get(label)
            if seen is None or seen == 1:
                sizes[label] = int(size)
            elif size not in (1, seen):
                raise ValueError(
                    f"einstein sum: subscript '{label}' has size {seen} in one operand and "
                    f"{size} in operand {i}"
                )
    if arrow:
        out_labels = output.replace("...", "")
        for ch in out_labels:
            if ch not in sizes:
                raise ValueError(
                    f"einstein sum subscripts string included output subscript '{ch}' which "
                    "never appeared in an input"
                )
            if out_labels.count(ch) > 1:
                raise ValueError(
                    f"einstein sum subscripts string includes output subscript '{ch}' "
                    "multiple times"
                )


def einsum(subscripts: Any, /, *operands: Any, dtype: Any = None, optimize: Any = False) -> Any:
    """NumPy's ``einsum`` on torch; ``dtype`` must be a type every operand casts to safely
    (NumPy's rule); ``optimize`` is accepted and left to torch, which orders contractions
    itself (with opt_einsum where it is installed)."""
    if not isinstance(subscripts, str):
        raise TypeError(
            "einsum: subscripts must be a string such as 'ij,jk->ik' (NumPy's interleaved "
            "form is not supported on torch)"
        )
    device = _device(*operands)
    tensors = [to_tensor(o, device) for o in operands]
    _check_einsum(subscripts, tensors)
    if not tensors:
        raise ValueError("No input operands")
    if dtype is not None:
        dt = torch_dtype(dtype)
        for t in tensors:
            if t.dtype in _TO_NUMPY and dt in _TO_NUMPY:
                src, dst = _TO_NUMPY[t.dtype], _TO_NUMPY[dt]
                if not np.can_cast(src, dst, "safe"):
                    raise TypeError(
                        f"Cannot cast array data from dtype('{src}') to dtype('{dst}') "
                        "according to the rule 'safe'"
                    )
    else:
        dt = _common([t.dtype for t in tensors])
    tensors = [t if t.dtype == dt else t.to(dt) for t in tensors]
    out = _product(functools.partial(torch.einsum, subscripts), tensors, dt)
    # torch sums integers in int64 where the subscripts reduce; NumPy keeps the operands' type.
    return out if out.dtype == dt else out.to(dt)


def _linalg_dtype(dt: torch.dtype) -> torch.dtype:
    """NumPy's linalg types: float32/64 and complex64/128 kept, integers and booleans in
    float64, half precision refused (LAPACK has none)."""
    if dt in _LINALG_KEPT:
        return dt
    if dt.is_floating_point:
        raise TypeError(f"array type {_name(dt)} is unsupported in linalg")
    return torch.float64


def _matrices(x: Any, *, square: bool = True, device: torch.device | None = None) -> Any:
    t = to_tensor(x, device)
    if t.ndim < 2:
        raise kit.linalg_error(
            f"{t.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if square and t.shape[-1] != t.shape[-2]:
        raise kit.linalg_error("Last 2 dimensions of the array must be square")
    dt = _linalg_dtype(t.dtype)
    return t if t.dtype == dt else t.to(dt)


def _lapack(fn: Callable[..., Any], message: str, *args: Any, **kwargs: Any) -> Any:
    """``fn(...)``, with torch's LinAlgError (a singular matrix, no convergence) as NumPy's."""
    try:
        return fn(*args, **kwargs)
    except _LINALG_ERROR as exc:
        raise kit.linalg_error(message) from exc


def linalg_inv(x: Any, /) -> Any:
    return _lapack(torch.linalg.inv, "Singular matrix", _matrices(x))


def linalg_solve(x1: Any, x2: Any, /) -> Any:
    """The solution of ``x1 @ x = x2``; ``x2`` is a vector only when it is 1-D (NumPy 2),
    otherwise a matrix (or stack) whose batch dimensions broadcast against ``x1``'s."""
    device = _device(x1, x2)
    a = _matrices(x1, device=device)
    b = to_tensor(x2, device)
    if b.ndim == 0:
        raise ValueError(
            "solve: Input operand 1 does not have enough dimensions (has 0, gufunc core with "
            "signature (m,m),(m,n)->(m,n) requires 1)"
        )
    n = a.shape[-1]
    vector = b.ndim == 1
    rows = b.shape[0] if vector else b.shape[-2]
    if rows != n:
        raise ValueError(
            "solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (m,m),(m,n)->(m,n) (size {rows} is different from {n})"
        )
    dt = _common([a.dtype, _linalg_dtype(b.dtype)])
    a, b = a.to(dt), b.to(dt)
    if vector:
        b = b.unsqueeze(-1)  # an (n, 1) matrix, broadcast below
    # Equal batch shapes, so that torch cannot read a matrix as a stack of vectors (it reads
    # b as vectors where b.shape == a.shape[:-1]: a vector against a stack of 1 x 1 matrices).
    batch = kit.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    a, b = a.expand(*batch, n, n), b.expand(*batch, *b.shape[-2:])
    out = _lapack(torch.linalg.solve, "Singular matrix", a, b)
    return out.squeeze(-1) if vector else out


def linalg_svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    u, s, vh = _lapack(
        torch.linalg.svd,
        "SVD did not converge",
        _matrices(x, square=False),
        full_matrices=bool(full_matrices),
    )
    return SVDResult(u, s, vh)


def linalg_eig(x: Any, /) -> EigResult:
    """Eigenvalues and right eigenvectors, complex (torch's); real where the input is real,
    every eigenvalue is real and the installed NumPy gives real ones there
    (``reference.eig_real_when_real``: NumPy 2.4 and earlier)."""
    a = _matrices(x)
    w, v = _lapack(torch.linalg.eig, "Eigenvalues did not converge", a)
    if not a.is_complex() and eig_real_when_real() and bool((w.imag == 0).all()):
        w, v = w.real, v.real
    return EigResult(w, v)


def linalg_eigh(x: Any, /) -> EighResult:
    w, v = _lapack(torch.linalg.eigh, "Eigenvalues did not converge", _matrices(x), UPLO="L")
    return EighResult(w, v)


def linalg_cholesky(x: Any, /, *, upper: bool = False) -> Any:
    return _lapack(
        torch.linalg.cholesky, "Matrix is not positive definite", _matrices(x), upper=bool(upper)
    )


def linalg_qr(x: Any, /, *, mode: str = "reduced") -> QRResult:
    """``QRResult(Q, R)``; ``mode`` is the Array API's ``"reduced"`` or ``"complete"``."""
    if mode not in ("reduced", "complete"):  # NumPy's "r" and "raw" are not the Array API's
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', not {mode!r}")
    q, r = torch.linalg.qr(_matrices(x, square=False), mode=mode)
    return QRResult(q, r)


def _norm_input(x: Any) -> Any:
    t = to_tensor(x)
    return t if t.is_floating_point() or t.is_complex() else t.to(torch.float64)


def _vector_norm(t: Any, ord: Any, dims: tuple[int, ...] | None, keepdims: bool) -> Any:
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    order = 2.0 if ord is None else float(ord)
    if math.isinf(order):
        _empty_reduction(t, dims, "maximum" if order > 0 else "minimum")
    if order == 0 and t.is_complex():
        # The count of nonzero elements: torch's own warns that it casts complex to real (and
        # would count 0+1j as zero), so it is counted here, in the real type of the result.
        real = torch.float32 if t.dtype == torch.complex64 else torch.float64
        counted = (t != 0).sum(dim=dims, keepdim=bool(keepdims)) if dims else (t != 0).sum()
        if dims is None and keepdims:
            counted = counted.reshape((1,) * t.ndim)
        return counted.to(real)
    return torch.linalg.vector_norm(t, ord=order, dim=dims, keepdim=bool(keepdims))


_MATRIX_ORDERS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _matrix_norm(t: Any, ord: Any, dims: tuple[int, int], keepdims: bool) -> Any:
    if dims[0] == dims[1]:
        raise ValueError("Duplicate axes given.")
    order = "fro" if ord in (None, "f") else ord
    if isinstance(order, bool) or order not in _MATRIX_ORDERS:
        raise ValueError("Invalid norm order for matrices.")
    return torch.linalg.matrix_norm(t, ord=order, dim=dims, keepdim=bool(keepdims))


def linalg_norm(x: Any, /, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """NumPy's ``linalg.norm``: the 2-norm of the flattened array without ``ord`` and
    ``axis``, vector norms over one axis, matrix norms over two."""
    t = _norm_input(x)
    if axis is None:
        if ord is None:
            out = torch.linalg.vector_norm(t)
            return out.reshape((1,) * t.ndim) if keepdims else out
        if t.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axes: tuple[int, ...] = tuple(range(t.ndim))
    else:
        found = _axes(axis, t.ndim)
        assert found is not None
        axes = found
    if len(axes) == 1:
        return _vector_norm(t, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(t, ord, (axes[0], axes[1]), keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def linalg_vector_norm(
    x: Any,
    /,
    *,
    axis: Any = None,
    keepdims: bool = False,
    ord: Any = 2,
) -> Any:
    t = _norm_input(x)
    return _vector_norm(t, ord, _axes(axis, t.ndim), keepdims)


def linalg_matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    t = _norm_input(x)
    if t.ndim < 2:
        raise AxisError(-2, t.ndim)  # NumPy's: the matrix axes are (-2, -1)
    return _matrix_norm(t, ord, (t.ndim - 2, t.ndim - 1), keepdims)


# -- Fourier transforms -------------------------------------------------------------------------

_NORMS = ("backward", "ortho", "forward")


def _np_fft(x: Any) -> Any:
    return np.fft.fft(np.zeros(1, dtype=x.dtype))


def _fft(fn: Callable[..., Any], x: Any, n: Any, axis: Any, norm: Any, real_input: bool) -> Any:
    if (
        n is None
        and axis == -1
        and norm == "backward"
        and type(x) is _TENSOR
        and x.dtype in _FLOATS
        and not (real_input and x.is_complex())
    ):
        try:  # the common case: the last axis of a float tensor, as torch transforms it
            return fn(x)
        except (RuntimeError, IndexError):
            pass  # 0-d or empty: the checked way says why
    t = to_tensor(x)
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    ax = _axis(axis, t.ndim)
    points = t.shape[ax] if n is None else _index(n)
    if points < 1:
        raise ValueError(f"Invalid number of FFT data points ({points}) specified.")
    if real_input and t.is_complex():
        raise TypeError(
            f"rfft: x must be real, not {_name(t.dtype)} (use fft.fft for complex input)"
        )
    # NumPy's types: float32 and complex64 give complex64, the others complex128; what torch
    # does not transform (integers, half precision) is transformed in that precision.
    out = _numpy_result(_np_fft, (_TO_NUMPY[t.dtype],)) if t.dtype in _TO_NUMPY else torch.complex64
    wanted = out if t.is_complex() else _REAL_OF[out]
    t = t if t.dtype == wanted else t.to(wanted)
    if t.numel() == 0:  # an empty batch: MKL and cuFFT refuse it; the result is empty too
        shape = list(t.shape)
        shape[ax] = points // 2 + 1 if real_input else points
        return torch.zeros(shape, dtype=out, device=t.device)
    return fn(t, n=None if n is None else points, dim=ax, norm=norm)


def fft_fft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _fft(torch.fft.fft, x, n, axis, norm, real_input=False)


def fft_ifft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _fft(torch.fft.ifft, x, n, axis, norm, real_input=False)


def fft_rfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _fft(torch.fft.rfft, x, n, axis, norm, real_input=True)


# -- signal processing --------------------------------------------------------------------------


def _full_convolution(a: Any, v: Any, dt: torch.dtype) -> Any:
    """The full linear convolution of 1-D ``a`` and ``v`` (``len(a) >= len(v)``)."""
    m = v.shape[0]
    kernel = v.flip(0)  # conv1d correlates: a flipped kernel convolves
    if dt.is_floating_point or dt.is_complex:
        out = torch.nn.functional.conv1d(a.view(1, 1, -1), kernel.view(1, 1, -1), padding=m - 1)
        return out.view(-1)
    # Integers and booleans, which conv1d does not take: exact sums of products over windows.
    padded = torch.nn.functional.pad(a, (m - 1, m - 1))
    return _product(torch.matmul, [padded.unfold(0, m, 1), kernel], dt)


def convolve(a: Any, v: Any, /, mode: str = "full") -> Any:
    """NumPy's ``convolve`` of two 1-D arrays (``conv1d`` with the kernel flipped)."""
    device = _device(a, v)
    x, k = to_tensor(a, device), to_tensor(v, device)
    x, k = (x.reshape(1) if x.ndim == 0 else x), (k.reshape(1) if k.ndim == 0 else k)
    if x.ndim != 1 or k.ndim != 1:
        raise ValueError("object too deep for desired array")
    if x.numel() == 0:
        raise ValueError("a cannot be empty")
    if k.numel() == 0:
        raise ValueError("v cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if k.shape[0] > x.shape[0]:
        x, k = k, x
    dt = _common([x.dtype, k.dtype])
    full_result = _full_convolution(x.to(dt), k.to(dt), dt)
    n, m = x.shape[0], k.shape[0]
    if mode == "same":
        start = (m - 1) // 2
        return full_result[start : start + n]
    if mode == "valid":
        return full_result[m - 1 : n]
    return full_result


# -- the Array API's other elementwise functions ---------------------------------------------------
# Prism declares them from a table (issue 12); here each is torch's function, computed as NumPy
# computes it: a unary function in the dtype NumPy's gives (``sin`` of int64 in float64), a binary
# one on its operands promoted by NumPy's rules (NEP 50's weak Python scalars), a comparison or
# logical function on its operands promoted to their common dtype, with a bool result.  NumPy's
# type resolution runs first, so that a dtype NumPy does not take is NumPy's ``TypeError``.

#: op -> (NumPy's function, torch's function), by form.
_UNARY_ELEMENTWISE: dict[str, tuple[str, str]] = {
    "acos": ("arccos", "acos"),
    "acosh": ("arccosh", "acosh"),
    "asin": ("arcsin", "asin"),
    "asinh": ("arcsinh", "asinh"),
    "atan": ("arctan", "atan"),
    "atanh": ("arctanh", "atanh"),
    "cos": ("cos", "cos"),
    "cosh": ("cosh", "cosh"),
    "sin": ("sin", "sin"),
    "sinh": ("sinh", "sinh"),
    "tan": ("tan", "tan"),
    "tanh": ("tanh", "tanh"),
    "expm1": ("expm1", "expm1"),
    "log1p": ("log1p", "log1p"),
    "log2": ("log2", "log2"),
    "log10": ("log10", "log10"),
    "ceil": ("ceil", "ceil"),
    "floor": ("floor", "floor"),
    "trunc": ("trunc", "trunc"),
    "round": ("round", "round"),  # complex: each part (below)
    "negative": ("negative", "negative"),
    "positive": ("positive", "clone"),
    "reciprocal": ("reciprocal", "reciprocal"),
    "bitwise_invert": ("invert", "bitwise_not"),
}
_PREDICATES: dict[str, tuple[str, str]] = {
    "isfinite": ("isfinite", "isfinite"),
    "isinf": ("isinf", "isinf"),
    "isnan": ("isnan", "isnan"),
    "signbit": ("signbit", "signbit"),
    "logical_not": ("logical_not", "logical_not"),
}
_BINARY_ELEMENTWISE: dict[str, tuple[str, str]] = {
    "atan2": ("arctan2", "atan2"),
    "logaddexp": ("logaddexp", "logaddexp"),
    "hypot": ("hypot", "hypot"),
    "copysign": ("copysign", "copysign"),
    "nextafter": ("nextafter", "nextafter"),
    "floor_divide": ("floor_divide", "floor_divide"),
    "remainder": ("remainder", "remainder"),
    "bitwise_and": ("bitwise_and", "bitwise_and"),
    "bitwise_or": ("bitwise_or", "bitwise_or"),
    "bitwise_xor": ("bitwise_xor", "bitwise_xor"),
    "bitwise_left_shift": ("left_shift", "bitwise_left_shift"),
    "bitwise_right_shift": ("right_shift", "bitwise_right_shift"),
}
_COMPARISONS: dict[str, tuple[str, str]] = {
    "equal": ("equal", "eq"),
    "not_equal": ("not_equal", "ne"),
    "greater": ("greater", "gt"),
    "greater_equal": ("greater_equal", "ge"),
    "less": ("less", "lt"),
    "less_equal": ("less_equal", "le"),
    "logical_and": ("logical_and", "logical_and"),
    "logical_or": ("logical_or", "logical_or"),
    "logical_xor": ("logical_xor", "logical_xor"),
}


def _unary_elementwise(np_name: str, torch_name: str) -> Callable[..., Any]:
    np_fn, torch_fn = getattr(np, np_name), getattr(torch, torch_name)

    def fn(x: Any, /) -> Any:
        return torch_fn(_unary_input(np_fn, x))

    return fn


def _predicate(np_name: str, torch_name: str) -> Callable[..., Any]:
    np_fn, torch_fn = getattr(np, np_name), getattr(torch, torch_name)

    def fn(x: Any, /) -> Any:
        t = to_tensor(x)
        if t.dtype in _TO_NUMPY:
            _numpy_result(np_fn, (_TO_NUMPY[t.dtype],))  # NumPy's TypeError for other dtypes
        return torch_fn(t)

    return fn


def _pair(x1: Any, x2: Any, dt: torch.dtype) -> tuple[Any, Any]:
    """Both operands as tensors of ``dt`` where their first tensor is, broadcast-checked."""
    device = _device(x1, x2)
    a, b = _tensor(x1, dt, device), _tensor(x2, dt, device)
    kit.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return a, b


def _binary_elementwise(np_name: str, torch_name: str) -> Callable[..., Any]:
    np_fn, torch_fn = getattr(np, np_name), getattr(torch, torch_name)

    def fn(x1: Any, x2: Any, /) -> Any:
        return torch_fn(*_pair(x1, x2, _promote(np_fn, x1, x2)))

    return fn


def _comparison(np_name: str, torch_name: str) -> Callable[..., Any]:
    np_fn, torch_fn = getattr(np, np_name), getattr(torch, torch_name)

    def fn(x1: Any, x2: Any, /) -> Any:
        _promote(np_fn, x1, x2)  # NumPy's errors
        return torch_fn(*_pair(x1, x2, _promote(np.maximum, x1, x2)))

    return fn


def round_(x: Any, /) -> Any:
    """Rounded to the nearest integer, halves to even; a complex number part by part, as NumPy
    rounds it (torch's ``round`` takes no complex tensor)."""
    t = _unary_input(np.round, x)
    if t.is_complex():
        return torch.complex(torch.round(t.real), torch.round(t.imag))
    return torch.round(t)


def sign(x: Any, /) -> Any:
    """-1, 0 or 1 (``x / |x|`` for complex ``x``); NaN stays NaN, as in NumPy (torch's ``sgn``
    gives 0 for it)."""
    t = _unary_input(np.sign, x)
    if t.is_floating_point() or t.is_complex():
        return torch.where(torch.isnan(t), t, torch.sgn(t))
    return torch.sgn(t)


def imag(x: Any, /) -> Any:
    """The imaginary part (zeros of ``x``'s dtype for real input, as NumPy's ``imag``)."""
    t = to_tensor(x)
    return torch.imag(t) if t.is_complex() else torch.zeros_like(t)


#: op -> its implementation, for the variants' ``"prism_plugin_torch.ops:<op>"`` (the module's
#: ``__getattr__``; not module globals, where ``round`` would hide the builtin).
ELEMENTWISE: dict[str, Callable[..., Any]] = {
    **{op: _unary_elementwise(*names) for op, names in _UNARY_ELEMENTWISE.items()},
    **{op: _predicate(*names) for op, names in _PREDICATES.items()},
    **{op: _binary_elementwise(*names) for op, names in _BINARY_ELEMENTWISE.items()},
    **{op: _comparison(*names) for op, names in _COMPARISONS.items()},
    "imag": imag,
    "round": round_,
    "sign": sign,
}
for _op, _fn in ELEMENTWISE.items():
    _fn.__name__ = _fn.__qualname__ = _op


def __getattr__(name: str) -> Any:
    """The elementwise functions of :data:`ELEMENTWISE`, by their op's name."""
    try:
        return ELEMENTWISE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
