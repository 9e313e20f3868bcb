"""The ``cuda`` backend's implementations of Prism ops, on the framework the backend found.

The variants (``prism_plugin_cuda.variants``) name these functions in the lazy form
``"prism_plugin_cuda.ops:matmul"``: this module is imported when dispatch first chooses one of
them, never at plugin discovery, and it imports no framework itself either: each function takes
CuPy or torch from the backend in force (:meth:`CudaBackend.framework_module`), which imported
it when its availability was probed.

* **Arguments** are the framework's own GPU arrays or Python scalars: the dispatcher moves any
  other array to the GPU through :meth:`CudaBackend.from_dlpack` first (see
  :meth:`CudaBackend.is_native`).  The functions check again and move what is still on the host,
  because a torch tensor on the CPU has the same type as one on the GPU, and dispatch plans are
  cached by argument type.
* **Results stay on the GPU** as framework arrays (CuPy arrays or CUDA tensors), never copied
  back to the host: chain further GPU work on them, and copy with
  ``prism_core.plugins().backend("cuda").to_numpy(result)`` when the host needs the data.
* **Semantics** follow the Array API / NumPy as the catalogue documents each op, within what
  the framework does (results are the framework's dtypes, e.g. torch's ``sum`` of ``int32`` is
  ``int64`` as NumPy's).  Caller mistakes raise ``ValueError`` / ``TypeError`` /
  ``numpy.linalg.LinAlgError`` (a ``ValueError``), as NumPy does, and never make dispatch fall
  back: torch reports them as ``RuntimeError``, which would look like a backend failure, so the
  torch paths check shapes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, NamedTuple

import prism_core

from .backend import CudaBackend, CudaUnavailableError

__all__ = [
    "SVDResult",
    "add",
    "fft_fft",
    "framework",
    "linalg_solve",
    "linalg_svd",
    "matmul",
    "multiply",
    "sum_",
]

_NORMS = (None, "backward", "ortho", "forward")
#: The dtypes ``fft.fft`` transforms as they are; others are transformed in float64.
_FFT_KEPT = frozenset({"float32", "float64", "complex64", "complex128"})


class SVDResult(NamedTuple):
    """``linalg.svd``'s result on the GPU, named like NumPy's: ``(U, S, Vh)``."""

    U: Any
    S: Any
    Vh: Any


def framework() -> tuple[str, ModuleType, CudaBackend]:
    """``(name, module, backend)`` of the ``cuda`` backend in force (the one dispatch uses)."""
    backend = prism_core.plugins().backends.get("cuda")
    if not isinstance(backend, CudaBackend):
        raise CudaUnavailableError("no 'cuda' backend is loaded (the plugin was not discovered)")
    name, module = backend.framework_module()
    return name, module, backend


def _gpu(backend: CudaBackend, value: Any) -> Any:
    """``value`` as the variants take it: on the GPU (moved there when it is not)."""
    return value if backend.is_native(value) else backend.from_dlpack(value)


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in getattr(value, "shape", ()))


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _broadcast(s1: Sequence[int], s2: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcasting of two shapes; ``ValueError`` (NumPy's words) when they do not."""
    out = []
    for i in range(1, max(len(s1), len(s2)) + 1):
        a = s1[-i] if i <= len(s1) else 1
        b = s2[-i] if i <= len(s2) else 1
        if a != b and a != 1 and b != 1:
            raise ValueError(
                "operands could not be broadcast together with shapes "
                f"{_shape_text(s1)} {_shape_text(s2)}"
            )
        out.append(b if a == 1 else a)
    return tuple(reversed(out))


def _dtype_name(dt: Any) -> str:
    """Prism's name of a framework dtype, or its text for one Prism does not know."""
    try:
        return prism_core.dtype(dt).name
    except (TypeError, ValueError):
        return str(dt)


def _linalg_error(message: str) -> Exception:
    import numpy as np

    return np.linalg.LinAlgError(message)


def _torch_same_dtype(torch: ModuleType, *tensors: Any) -> list[Any]:
    """torch's matmul and solve want one dtype; NumPy promotes: promote like torch does."""
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return [t if t.dtype == dtype else t.to(dtype) for t in tensors]


# -- matmul -----------------------------------------------------------------------------------
def matmul(x1: Any, x2: Any, /) -> Any:
    """``x1 @ x2`` with the framework's matmul (cuBLAS): on a GPU with tensor cores, cuBLAS
    runs the product on them for the data types they accelerate (fp16, bf16; fp64 on Ampere
    and newer), which is all ``cuda.tensor_core_matmul`` needs."""
    name, module, backend = framework()
    a, b = _gpu(backend, x1), _gpu(backend, x2)
    if name == "torch":
        s1, s2 = _shape(a), _shape(b)
        if not s1 or not s2:
            raise ValueError("matmul: Input operand does not have enough dimensions")
        inner2 = s2[0] if len(s2) == 1 else s2[-2]
        if s1[-1] != inner2:
            raise ValueError(
                f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                f"(size {inner2} is different from {s1[-1]})"
            )
        if len(s1) > 2 and len(s2) > 2:
            _broadcast(s1[:-2], s2[:-2])
        a, b = _torch_same_dtype(module, a, b)
    return module.matmul(a, b)


# -- elementwise ------------------------------------------------------------------------------
def _binary(op: str, x1: Any, x2: Any) -> Any:
    """A commutative elementwise op (``add``, ``multiply``)."""
    name, module, backend = framework()
    a, b = _gpu(backend, x1), _gpu(backend, x2)
    if name == "torch":
        _broadcast(_shape(a), _shape(b))
        if not isinstance(a, module.Tensor):  # torch wants a tensor first; both ops commute
            a, b = b, a
    return getattr(module, op)(a, b)


def add(x1: Any, x2: Any, /) -> Any:
    """``x1 + x2`` elementwise, on the GPU."""
    return _binary("add", x1, x2)


def multiply(x1: Any, x2: Any, /) -> Any:
    """``x1 * x2`` elementwise, on the GPU."""
    return _binary("multiply", x1, x2)


# -- reductions -------------------------------------------------------------------------------
def _framework_dtype(name: str, module: ModuleType, dtype: Any) -> Any:
    """The framework's dtype for a ``dtype=`` argument (Prism's, NumPy's or a name)."""
    if dtype is None:
        return None
    if name == "torch" and isinstance(dtype, module.dtype):
        return dtype
    found = prism_core.dtype(dtype)  # TypeError/ValueError for what is no dtype
    if name == "torch":
        return getattr(module, "bool" if found.name == "bool_" else found.name)
    if found.name == "bfloat16":
        raise TypeError("cupy has no bfloat16; use float32, or torch as the framework")
    import numpy as np

    return np.dtype("bool" if found.name == "bool_" else found.name)


def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """The sum over ``axis`` (all axes by default), on the GPU."""
    name, module, backend = framework()
    a = _gpu(backend, x)
    dt = _framework_dtype(name, module, dtype)
    if name != "torch":
        return module.sum(a, axis=axis, dtype=dt, keepdims=keepdims)
    # torch sums bools and integers in int64, as NumPy does; a bad axis is its IndexError.
    if axis is None:
        total = module.sum(a, dtype=dt)
        return total.reshape((1,) * a.ndim) if keepdims else total
    dims = tuple(axis) if isinstance(axis, (tuple, list)) else (int(axis),)
    return module.sum(a, dim=dims, keepdim=keepdims, dtype=dt)


# -- linear algebra ---------------------------------------------------------------------------
def linalg_solve(x1: Any, x2: Any, /) -> Any:
    """The solution of ``x1 @ x = x2`` (``x2`` is a vector only when it is 1-D), on the GPU."""
    name, module, backend = framework()
    a, b = _gpu(backend, x1), _gpu(backend, x2)
    if name != "torch":
        return module.linalg.solve(a, b)
    sa, sb = _shape(a), _shape(b)
    if len(sa) < 2:
        raise _linalg_error(
            f"{len(sa)}-dimensional array given. Array must be at least two-dimensional"
        )
    if sa[-1] != sa[-2]:
        raise _linalg_error("Last 2 dimensions of the array must be square")
    rows = sb[0] if len(sb) == 1 else (sb[-2] if sb else -1)
    if rows != sa[-1]:
        raise ValueError(
            f"solve: Input operand 1 has a mismatch in its core dimension 0 "
            f"(size {rows} is different from {sa[-1]})"
        )
    a, b = _torch_same_dtype(module, a, b)
    vector = len(sb) == 1
    if vector:
        b = b.unsqueeze(-1)  # NumPy 2: only a 1-D x2 is a vector; torch guesses otherwise
    try:
        out = module.linalg.solve(a, b)
    except getattr(module.linalg, "LinAlgError", ()) as exc:  # a singular matrix
        raise _linalg_error(str(exc).strip() or "Singular matrix") from exc
    return out.squeeze(-1) if vector else out


def linalg_svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition ``(U, S, Vh)`` of a matrix (or stack), on the GPU."""
    name, module, backend = framework()
    a = _gpu(backend, x)
    if len(_shape(a)) < 2:
        raise _linalg_error(
            f"{len(_shape(a))}-dimensional array given. Array must be at least two-dimensional"
        )
    if name != "torch":
        u, s, vh = module.linalg.svd(a, full_matrices=full_matrices)
        return SVDResult(u, s, vh)
    try:
        u, s, vh = module.linalg.svd(a, full_matrices=full_matrices)
    except getattr(module.linalg, "LinAlgError", ()) as exc:  # did not converge
        raise _linalg_error(str(exc).strip() or "SVD did not converge") from exc
    return SVDResult(u, s, vh)


# -- Fourier transforms -----------------------------------------------------------------------
def fft_fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    """The one-dimensional discrete Fourier transform along ``axis``, on the GPU: float32 and
    complex64 give complex64, other types complex128 (as the catalogue says)."""
    name, module, backend = framework()
    a = _gpu(backend, x)
    if n is not None and n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    if norm not in _NORMS:
        raise ValueError(
            f'Invalid norm value {norm!r}; should be "backward", "ortho" or "forward".'
        )
    if _dtype_name(a.dtype) not in _FFT_KEPT:  # ints, bools, halves: in double precision
        a = a.to(module.float64) if name == "torch" else a.astype(module.float64)
    if name == "torch":  # a bad axis is torch's IndexError
        return module.fft.fft(a, n=n, dim=axis, norm=norm)
    return module.fft.fft(a, n=n, axis=axis, norm=norm)
