"""A test-only plugin whose backend is wrong on purpose, for the conformance suite to catch.

Its ``wrong`` backend handles arrays correctly (NumPy arrays), and its variants have exactly
these defects, one each:

1. ``wrong.fft.fft`` drops the imaginary part of the transform;
2. ``wrong.fft.ifft`` returns complex128 for complex64 (and float32) input, and
   ``wrong.matmul`` float64 for float32;
3. ``wrong.linalg.svd`` returns a plain tuple, not the named tuple ``(U, S, Vh)``;
4. ``wrong.linalg.inv`` returns a list;
5. ``wrong.fft.rfft`` takes no ``n``, ``axis`` or ``norm``.

``wrong.add`` and ``wrong.sum`` are right, so that the suite is seen to pass what is right. The
variants have a negative priority: with the plugin loaded, NumPy's reference variants still run
users' calls. The plugin is discovered through a real ``prism.plugins`` entry point
(``wrong = tests.wrong_backend_plugin``) that the tests put on the path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import prism_core


class WrongBackend(prism_core.extending.Backend):
    name = "wrong"
    priority = -10
    description = "a backend with deliberate mistakes (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism_core.extending.Availability:
        return prism_core.extending.Availability(True, version=np.__version__)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack__")

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        return np.empty(tuple(shape), dtype=dtype)


def fft_real_part(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """Defect 1: the imaginary part is dropped (the dtype stays right)."""
    out = np.fft.fft(x, n=n, axis=axis, norm=norm)
    return out.real.astype(out.dtype)


def ifft_widened(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """Defect 2: complex128 whatever the input (right values)."""
    return np.fft.ifft(x, n=n, axis=axis, norm=norm).astype(np.complex128)


def matmul_widened(x1: Any, x2: Any, /) -> Any:
    """Defect 2: float64 for float32 (right values)."""
    out = np.matmul(x1, x2)
    return out.astype(np.float64) if out.dtype == np.float32 else out


def svd_plain_tuple(x: Any, /, *, full_matrices: bool = True) -> Any:
    """Defect 3: a plain tuple, not the named tuple (U, S, Vh)."""
    return tuple(np.linalg.svd(x, full_matrices=full_matrices))


def inv_as_list(x: Any, /) -> Any:
    """Defect 4: a list, not an array."""
    return np.linalg.inv(x).tolist()


def rfft_without_keywords(x: Any) -> Any:
    """Defect 5: no n, axis or norm."""
    return np.fft.rfft(x)


def add(x1: Any, x2: Any, /) -> Any:
    return np.add(x1, x2)


def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    dt = None if dtype is None else prism_core.dtype(dtype).numpy
    return np.sum(x, axis=axis, dtype=dt, keepdims=keepdims)


VARIANTS = {
    "fft.fft": fft_real_part,
    "fft.ifft": ifft_widened,
    "matmul": matmul_widened,
    "linalg.svd": svd_plain_tuple,
    "linalg.inv": inv_as_list,
    "fft.rfft": rfft_without_keywords,
    "add": add,
    "sum": sum_,
}


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [WrongBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant(op, fn, backend="wrong", priority=-10, name=f"wrong.{op}")
        for op, fn in VARIANTS.items()
    ]
