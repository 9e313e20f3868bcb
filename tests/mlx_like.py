"""A library that behaves like Apple's MLX (``mlx.core``) where the backend kit must care: a
wrapper over NumPy, installed as ``mlx_like`` by tests/test_backend_kit_mlx_like.py.

Like MLX it

* makes float32 of float64 data (and complex64 of complex128) unless ``dtype=`` is given;
* refuses to compare a dtype with ``None`` (``dtype == None`` raises);
* names its boolean dtype ``bool_`` (there is no ``bool``);
* creates float32 and int32 by default, and gives int32 indices (``argmax``, ``argsort``);
* lacks much of the standard (``hypot``, ``cumulative_sum``, ``linalg.trace``, ...) and has
  NumPy's spellings instead (``std(ddof=)``, of an integer only, ``sort(x, axis)``,
  ``clip(a, a_min, a_max)``, ``cumsum``, ``trace``, ``outer``, an ``svd`` of full matrices
  only);
* evaluates lazily: ``linalg.inv`` and ``linalg.solve`` compute at :func:`eval` (or when the
  array is read), and raise there, in its own words, for a singular matrix;
* has a ``from_dlpack`` that must not be called by a backend that copies (it counts calls).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

__version__ = "0.1"


class Dtype:
    """A dtype of the library: compared with its own dtypes only; ``== None`` raises."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.numpy = np.dtype("bool" if name == "bool" else name)

    def __eq__(self, other: object) -> bool:
        if other is None:
            raise ValueError("mlx_like: cannot compare a Dtype with None")
        return isinstance(other, Dtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"mlx_like.{self.name}"


_DTYPES = {
    n: Dtype(n)
    for n in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64",
    )
}  # fmt: skip
bool_ = _DTYPES["bool"]
int8, int16, int32, int64 = (_DTYPES[n] for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_DTYPES[n] for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_DTYPES[n] for n in ("float16", "float32", "float64"))
complex64 = _DTYPES["complex64"]
_DOWNCAST = {"float64": "float32", "complex128": "complex64"}

#: Calls of from_dlpack (a backend with ``transfer = "copy"`` must make none).
from_dlpack_calls: list[Any] = []


class array:
    """An array: its NumPy value, or a computation deferred until :func:`eval`."""

    def __init__(
        self,
        value: Any = None,
        *,
        thunk: Callable[[], Any] | None = None,
        shape: tuple[int, ...] = (),
        dtype: Dtype | None = None,
    ) -> None:
        self._value = value
        self._thunk = thunk
        self._shape = tuple(value.shape) if value is not None else shape
        self._dtype = _of(value.dtype) if value is not None else dtype

    def _eval(self) -> Any:
        if self._value is None:
            thunk, self._thunk = self._thunk, None
            assert thunk is not None
            self._value = thunk()
        return self._value

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> Dtype:
        assert self._dtype is not None
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._shape))

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        value = self._eval()
        return value if dtype is None else value.astype(dtype)

    def __getitem__(self, key: Any) -> array:
        return _wrap(self._eval()[key])

    def __len__(self) -> int:
        return self._shape[0]

    def __bool__(self) -> bool:
        return bool(self._eval())

    def __float__(self) -> float:
        return float(self._eval())

    def __int__(self) -> int:
        return int(self._eval())

    def __sub__(self, other: Any) -> array:
        return subtract(self, other)

    def __rsub__(self, other: Any) -> array:
        return subtract(other, self)

    def __add__(self, other: Any) -> array:
        return add(self, other)

    def __mul__(self, other: Any) -> array:
        return multiply(self, other)

    def __repr__(self) -> str:
        return f"mlx_like.array({self._eval()!r})"


def _of(dt: Any) -> Dtype:
    name = np.dtype(dt).name
    return _DTYPES[name]


def _unwrap(value: Any) -> Any:
    if isinstance(value, array):
        return value._eval()
    if isinstance(value, Dtype):
        return value.numpy
    if type(value) in (list, tuple):
        return type(value)(_unwrap(v) for v in value)
    return value


def _wrap(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return array(np.asarray(value))
    if type(value) in (list, tuple):
        return type(value)(_wrap(v) for v in value)
    return value


def _numpy(name: str, index: bool = False) -> Callable[..., Any]:
    function = getattr(np, name)

    def fn(*args: Any, **kwargs: Any) -> Any:
        out = function(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return _wrap(out.astype(np.int32) if index else out)

    fn.__name__ = fn.__qualname__ = name
    return fn


def asarray(obj: Any, dtype: Any = None, copy: Any = None, device: Any = None) -> array:
    value = np.array(_unwrap(obj), dtype=_unwrap(dtype))
    if dtype is None and value.dtype.name in _DOWNCAST:
        value = value.astype(_DOWNCAST[value.dtype.name])  # as MLX does
    return array(value)


def astype(x: array, dtype: Dtype, /, *, copy: bool = True) -> array:
    return array(x._eval().astype(dtype.numpy))


def from_dlpack(x: Any, /, **kwargs: Any) -> array:
    from_dlpack_calls.append(x)
    raise RuntimeError("mlx_like.from_dlpack: this library's from_dlpack was called")


def _creation(name: str, kind_of: Callable[..., str]) -> Callable[..., Any]:
    function = getattr(np, name)

    def fn(*args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> array:
        wanted = _unwrap(dtype) if dtype is not None else kind_of(*args, **kwargs)
        return array(np.asarray(function(*_unwrap(args), dtype=wanted, **kwargs)))

    fn.__name__ = fn.__qualname__ = name
    return fn


def _float(*args: Any, **kwargs: Any) -> str:
    return "float32"


def _by_value(*args: Any, **kwargs: Any) -> str | None:
    fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
    return {int: "int32", float: "float32"}.get(type(fill))


def _arange_kind(*args: Any, **kwargs: Any) -> str:
    values = [*args, *kwargs.values()]
    return "float32" if any(type(v) is float for v in values) else "int32"


zeros = _creation("zeros", _float)
ones = _creation("ones", _float)
empty = _creation("empty", _float)
eye = _creation("eye", _float)
linspace = _creation("linspace", _float)
full = _creation("full", _by_value)
arange = _creation("arange", _arange_kind)

add, subtract, multiply, divide = map(_numpy, ("add", "subtract", "multiply", "divide"))
sin, cos, exp, sqrt, abs, negative = map(_numpy, ("sin", "cos", "exp", "sqrt", "abs", "negative"))
equal, less, greater, where = map(_numpy, ("equal", "less", "greater", "where"))
matmul, sum, mean, reshape = map(_numpy, ("matmul", "sum", "mean", "reshape"))
max, min = map(_numpy, ("max", "min"))
argmax, argmin = _numpy("argmax", index=True), _numpy("argmin", index=True)
concatenate, trace, diagonal, outer = map(_numpy, ("concatenate", "trace", "diagonal", "outer"))
cumsum, cumprod = map(_numpy, ("cumsum", "cumprod"))


def _ddof(ddof: Any) -> int:
    if type(ddof) is not int:  # MLX's ddof is an int: a float is no match for its signature
        raise TypeError("std(): incompatible function arguments")
    return ddof


def std(a: array, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> array:
    ddof = _ddof(ddof)
    return array(np.asarray(np.std(a._eval(), axis=axis, keepdims=keepdims, ddof=ddof)))


def var(a: array, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> array:
    ddof = _ddof(ddof)
    return array(np.asarray(np.var(a._eval(), axis=axis, keepdims=keepdims, ddof=ddof)))


def sort(a: array, axis: int = -1) -> array:
    return array(np.sort(a._eval(), axis=axis))


def argsort(a: array, axis: int = -1) -> array:
    return array(np.argsort(a._eval(), axis=axis, kind="stable").astype(np.int32))


def unique_counts(x: array, /) -> tuple[array, array]:
    values, counts = np.unique(x._eval(), return_counts=True)
    return array(values), array(counts.astype(np.int32))


def clip(a: array, a_min: Any, a_max: Any) -> array:
    return array(np.clip(a._eval(), _unwrap(a_min), _unwrap(a_max)))


def _deferred(compute: Callable[[], Any], shape: tuple[int, ...], dtype: Dtype) -> array:
    def thunk() -> Any:
        try:
            return compute()
        except np.linalg.LinAlgError as exc:
            raise RuntimeError(f"[linalg] {exc} (raised at eval)") from None

    return array(thunk=thunk, shape=shape, dtype=dtype)


def _inv(a: array) -> array:
    return _deferred(lambda: np.linalg.inv(a._eval()), a.shape, a.dtype)


def _solve(a: array, b: array) -> array:
    return _deferred(lambda: np.linalg.solve(a._eval(), b._eval()), b.shape, b.dtype)


def _svd(a: array, compute_uv: bool = True) -> Any:
    if not compute_uv:
        return array(np.linalg.svd(a._eval(), compute_uv=False))
    return tuple(array(v) for v in np.linalg.svd(a._eval(), full_matrices=True))


linalg = SimpleNamespace(inv=_inv, solve=_solve, svd=_svd)

#: Evaluations made (the kit's ``lazy`` evaluates each variant's result).
evaluated: list[Any] = []


def eval(*arrays: Any) -> None:
    """Compute the arrays given (nested in lists and tuples too), raising their errors."""
    evaluated.append(arrays)
    for a in arrays:
        if isinstance(a, array):
            a._eval()
        elif isinstance(a, (list, tuple)):
            eval(*a)
