"""Every op on torch against NumPy, the reference: values, dtypes, shapes and the result's type,
where torch's defaults differ from NumPy's, with keyword arguments, NEP 50 promotion of Python
scalars, complex numbers and empty arrays; NumPy's exceptions for the caller's mistakes; and
what ``use_backend("torch")`` gives (tensors, created ones too)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch_testing import builtin_ops

import prism_core
from prism_core.kernel.records.elementwise import ELEMENTWISE

RNG = np.random.default_rng(8)


def _r(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.normal(size=shape).astype(dtype)


def _c(*shape: int, dtype: Any = np.complex128) -> np.ndarray:
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def _i(*shape: int, dtype: Any = np.int32, low: int = -5, high: int = 6) -> np.ndarray:
    return RNG.integers(low, high, size=shape).astype(dtype)


A = _r(12)
B = _r(12)
A32 = _r(12, dtype=np.float32)
F16 = _r(12, dtype=np.float16)
C = _c(12)
C64 = _c(12, dtype=np.complex64)
I32 = _i(12)
I8 = _i(12, dtype=np.int8)
U8 = _i(12, dtype=np.uint8, low=0, high=200)
BOOL = RNG.integers(0, 2, size=12).astype(bool)
POS = RNG.uniform(0.5, 3.0, size=12)
IPOS = _i(12, low=1, high=9)
M = _r(4, 6)
N = _r(6, 3)
SQ = _r(4, 4) + 6 * np.eye(4)
SYM = SQ + SQ.T
_H = _c(4, 4)
HERM = _H + _H.conj().T + 8 * np.eye(4)
SPD = SQ @ SQ.T + np.eye(4)
T3 = _r(2, 3, 4)
NAN = np.array([1.0, np.nan, 3.0, -2.0, np.nan])
TIES = np.array([3.0, 1.0, 3.0, -1.0, 1.0])
CTIES = np.array([1 + 2j, 1 - 1j, 0 + 5j, 1 + 2j, 1 - 1j])
EMPTY = np.zeros((0, 3))

#: (op, args, kwargs): every op, with the cases where torch's defaults differ from NumPy's.
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("asarray", ([1.0, 2.0],), {}),
    ("asarray", ([[1, 2], [3, 4]],), {}),
    ("asarray", (3,), {}),
    ("asarray", (True,), {}),
    ("asarray", (A,), {"dtype": "float32"}),
    ("asarray", (A,), {"copy": True}),
    ("zeros", ((2, 3),), {}),
    ("zeros", (3,), {"dtype": "int32"}),
    ("zeros", ((0, 2),), {}),
    ("ones", ((2,),), {"dtype": prism_core.complex64}),
    ("full", ((2, 2), 2.5), {}),
    ("full", ((2,), 7), {}),
    ("full", ((2,), True), {}),
    ("full", ((2, 2), 1j), {}),
    ("full", ((2, 3), [1, 2, 3]), {}),
    ("full", ((2,), 2.5), {"dtype": "int32"}),
    ("to_numpy", (A,), {}),
    ("add", (A, B), {}),
    ("add", (I32, 2.5), {}),  # NEP 50: a Python float with an integer array is float64
    ("add", (A32, 2), {}),  # a Python int keeps float32
    ("add", (I32, A32), {}),  # NumPy: float64 (torch would say float32)
    ("add", (U8, 55), {}),
    ("add", (2, 3), {}),
    ("add", (BOOL, BOOL), {}),
    ("add", (M, A[:6]), {}),
    ("add", (EMPTY, 1.0), {}),
    ("subtract", (A, B), {}),
    ("subtract", (1.5, C64), {}),
    ("multiply", (C64, 2j), {}),
    ("multiply", (I8, I32), {}),
    ("divide", (I32, IPOS), {}),  # integers divide to float64 (torch: float32)
    ("divide", (I8, 2), {}),
    ("divide", (3, A32), {}),
    ("power", (POS, 0.5), {}),
    ("power", (IPOS, IPOS % 3), {}),
    ("power", (BOOL, BOOL), {}),
    ("power", (2, IPOS), {}),
    ("square", (I8,), {}),
    ("square", (BOOL,), {}),
    ("square", (C,), {}),
    ("sqrt", (IPOS,), {}),
    ("sqrt", (IPOS.astype(np.int8),), {}),
    ("sqrt", (A,), {}),  # negative reals: NaN
    ("exp", (C,), {}),
    ("exp", (I32,), {}),
    ("log", (POS,), {}),
    ("abs", (C64,), {}),
    ("abs", (BOOL,), {}),
    ("abs", (I32,), {}),
    ("real", (C,), {}),
    ("real", (A,), {}),
    ("conj", (C64,), {}),
    ("conj", (I32,), {}),
    ("maximum", (A, B), {}),
    ("maximum", (NAN, 2.0), {}),
    ("maximum", (I32, 1.5), {}),
    ("minimum", (C, C[::-1]), {}),
    ("minimum", (CTIES, 1 + 0j), {}),
    ("where", (A > 0, A, B), {}),
    ("where", (A > 0, I32, 2.5), {}),
    ("where", (I32, A, 0), {}),
    ("clip", (A,), {"min": -0.5, "max": 0.5}),
    ("clip", (I32,), {"min": 1.5}),
    ("clip", (A,), {"min": B}),
    ("clip", (A,), {}),
    ("clip", (NAN,), {"min": 0.0, "max": 2.0}),
    ("clip", (C,), {"min": 0j, "max": 1 + 1j}),
    ("sum", (I32,), {}),  # small integers sum in int64
    ("sum", (U8,), {}),  # uint8 sums in uint64
    ("sum", (BOOL,), {}),
    ("sum", (F16,), {}),
    ("sum", (M,), {"axis": ()}),  # torch reads dim=() as every axis
    ("sum", (M,), {"axis": (0, 1), "keepdims": True}),
    ("sum", (M,), {"axis": -1, "dtype": "float32"}),
    ("sum", (EMPTY,), {"axis": 0}),
    ("mean", (I32,), {}),
    ("mean", (M,), {"axis": 1, "keepdims": True}),
    ("mean", (F16,), {}),
    ("mean", (C64,), {}),
    ("std", (M,), {}),  # correction 0 (torch's default is 1)
    ("std", (M,), {"correction": 1}),
    ("std", (M,), {"axis": 0, "correction": 0.5}),
    ("std", (C64,), {}),
    ("std", (I32,), {}),
    ("std", (M,), {"axis": ()}),
    ("std", (A[:1],), {"correction": 1}),  # no degrees of freedom: NaN
    ("min", (M,), {"axis": 0}),
    ("min", (C64.reshape(3, 4),), {"axis": 1}),
    ("max", (NAN,), {}),
    ("max", (C,), {}),
    ("max", (BOOL,), {}),
    ("max", (T3,), {"axis": (0, 2), "keepdims": True}),
    ("argmax", (M,), {}),  # over the flattened array
    ("argmax", (M,), {"axis": 0, "keepdims": True}),
    ("argmin", (M,), {"keepdims": True}),
    ("argmax", (NAN,), {}),
    ("argmin", (NAN,), {}),
    ("argmax", (TIES,), {}),  # the first of equal maxima
    ("argmin", (TIES,), {}),
    ("argmax", (CTIES,), {}),
    ("argmin", (C.reshape(3, 4),), {"axis": 1}),
    ("argmax", (BOOL,), {}),
    ("sort", (M,), {}),
    ("sort", (M,), {"axis": 0, "descending": True}),
    ("sort", (NAN,), {}),
    ("sort", (NAN,), {"descending": True}),
    ("sort", (CTIES,), {}),  # lexicographic, as NumPy
    ("sort", (CTIES,), {"descending": True}),
    ("sort", (I32,), {"stable": False}),
    ("sort", (BOOL,), {}),
    ("cumulative_sum", (I32,), {}),
    ("cumulative_sum", (U8,), {}),
    ("cumulative_sum", (M,), {"axis": 1, "include_initial": True}),
    ("cumulative_sum", (A,), {"dtype": "float32"}),
    ("cumulative_sum", (np.float64(2.0),), {}),
    ("reshape", (A, (-1, 4)), {}),
    ("reshape", (M, (4, -1)), {"copy": True}),
    ("reshape", (A, 12), {"copy": False}),
    ("reshape", (EMPTY, (3, 0)), {}),
    ("transpose", (T3,), {}),
    ("transpose", (T3, (1, 0, 2)), {}),
    ("moveaxis", (T3, 0, -1), {}),
    ("moveaxis", (T3, (0, 1), (2, 0)), {}),
    ("expand_dims", (M, (0, 3)), {}),
    ("expand_dims", (M, -1), {}),
    ("stack", ([A32, A],), {}),
    ("stack", ([M, M],), {"axis": -1}),
    ("concat", ([M, _r(4, 2)],), {"axis": 1}),
    ("concat", ([M, _i(3, 6)],), {"axis": None}),
    ("concat", ((A, B),), {}),
    ("matmul", (M, N), {}),
    ("matmul", (_i(4, 6), _i(6, 3)), {}),
    ("matmul", (BOOL.reshape(3, 4), BOOL.reshape(4, 3)), {}),
    ("matmul", (A[:4], SQ), {}),
    ("matmul", (SQ, A[:4]), {}),
    ("matmul", (A[:6], A[:6]), {}),
    ("matmul", (_r(3, 4, 6), N), {}),
    ("matmul", (_r(2, 1, 4, 6), _r(3, 6, 2)), {}),
    ("matmul", (_i(4, 6), A32[:6]), {}),  # int32 with float32: float64
    ("matmul", (_c(4, 6, dtype=np.complex64), N), {}),
    ("matmul", (np.zeros((0, 6)), N), {}),
    ("dot", (A, B), {}),
    ("dot", (M, A[:6]), {}),
    ("dot", (_r(2, 3, 4), _r(5, 4, 6)), {}),
    ("dot", (2.0, M), {}),
    ("dot", (_i(3, 3), _i(3, 3)), {}),
    ("einsum", ("ij,jk->ik", M, N), {}),
    ("einsum", ("ii->i", SQ), {}),
    ("einsum", ("...ij,jk", _r(3, 4, 6), N), {}),
    ("einsum", ("i,i", A, B), {}),
    ("einsum", ("ij,jk->ik", M, N), {"dtype": "complex128"}),
    ("einsum", ("ij->", _i(3, 4)), {}),
    ("einsum", ("ij,jk,kl->il", SQ, SQ, SQ), {"optimize": "greedy"}),
    ("linalg.inv", (SQ,), {}),
    ("linalg.inv", (_i(3, 3) + 20 * np.eye(3, dtype=np.int32),), {}),
    ("linalg.inv", (HERM.astype(np.complex64),), {}),
    ("linalg.inv", (np.zeros((0, 0)),), {}),
    ("linalg.solve", (SQ, A[:4]), {}),  # a 1-D x2 is a vector
    ("linalg.solve", (SQ, _r(4, 2)), {}),
    ("linalg.solve", (_r(3, 4, 4) + 6 * np.eye(4), _r(4, 2)), {}),
    ("linalg.solve", (_r(3, 3, 3) + 6 * np.eye(3), _r(3, 3)), {}),  # a matrix, not 3 vectors
    ("linalg.solve", (SQ.astype(np.float32), _i(4)), {}),
    ("linalg.svd", (M,), {}),  # full matrices by default
    ("linalg.svd", (M,), {"full_matrices": False}),
    ("linalg.svd", (_c(3, 5),), {}),
    ("linalg.eig", (np.triu(SQ),), {}),  # real eigenvalues: real results, as NumPy
    ("linalg.eig", (np.array([[0.0, -1.0], [1.0, 0.0]]),), {}),  # complex ones
    ("linalg.eig", (HERM,), {}),
    ("linalg.eigh", (SYM,), {}),
    ("linalg.eigh", (HERM.astype(np.complex64),), {}),
    ("linalg.qr", (M.T,), {}),
    ("linalg.qr", (M.T,), {"mode": "complete"}),
    ("linalg.qr", (_i(5, 3),), {}),
    ("linalg.cholesky", (SPD,), {}),
    ("linalg.cholesky", (SPD,), {"upper": True}),
    ("linalg.cholesky", (HERM,), {}),
    ("linalg.norm", (M,), {}),
    ("linalg.norm", (M,), {"ord": "nuc"}),
    ("linalg.norm", (M,), {"ord": "fro"}),
    ("linalg.norm", (M,), {"ord": 2}),
    ("linalg.norm", (M,), {"ord": -1}),
    ("linalg.norm", (M,), {"ord": np.inf}),
    ("linalg.norm", (A,), {"ord": 0}),
    ("linalg.norm", (A,), {"ord": 3}),
    ("linalg.norm", (A,), {"ord": -np.inf}),
    ("linalg.norm", (T3,), {"axis": (0, 2)}),
    ("linalg.norm", (T3,), {"axis": 1, "keepdims": True}),
    ("linalg.norm", (T3,), {"keepdims": True}),
    ("linalg.norm", (_i(3, 4),), {}),
    ("linalg.norm", (C64,), {}),
    ("linalg.vector_norm", (T3,), {}),
    ("linalg.vector_norm", (T3,), {"axis": (0, 2), "keepdims": True, "ord": 1}),
    ("linalg.vector_norm", (M,), {"ord": np.inf}),
    ("linalg.vector_norm", (I32,), {}),
    ("linalg.matrix_norm", (T3,), {}),
    ("linalg.matrix_norm", (M,), {"ord": 2, "keepdims": True}),
    ("linalg.matrix_norm", (M,), {"ord": "nuc"}),
    ("linalg.matrix_norm", (M,), {"ord": -np.inf}),
    ("fft.fft", (A,), {}),
    ("fft.fft", (I32,), {}),  # integers: complex128
    ("fft.fft", (F16,), {}),
    ("fft.fft", (A32,), {"n": 7, "norm": "ortho"}),
    ("fft.fft", (M,), {"axis": 0}),
    ("fft.ifft", (C64,), {"norm": "forward"}),
    ("fft.ifft", (C,), {"n": 20}),
    ("fft.rfft", (A,), {"n": 16}),
    ("fft.rfft", (A32,), {}),
    ("convolve", (A, B[:3]), {}),
    ("convolve", (B[:3], A), {}),
    ("convolve", (A, B[:4]), {"mode": "same"}),
    ("convolve", (B[:4], A), {"mode": "same"}),
    ("convolve", (A, B[:5]), {"mode": "same"}),
    ("convolve", (A, B[:4]), {"mode": "valid"}),
    ("convolve", (I32, _i(3)), {}),
    ("convolve", (BOOL, BOOL[:3]), {}),
    ("convolve", (C, B[:3]), {}),
    ("convolve", (A32, B[:3].astype(np.float32)), {}),
    ("convolve", (2.0, A), {}),
    ("random.normal", ((3, 4),), {"seed": 7}),
    ("random.normal", ((5,), 2.0, 3.0), {"seed": 1, "dtype": "float32"}),
    ("triu_indices", (4,), {}),
    ("triu_indices", (3,), {"k": 1, "m": 5}),
    ("triu_indices", (0,), {}),
    ("from_dlpack", (A,), {}),
    ("requires_grad", (A,), {}),
    ("detach", (A,), {}),
]


def _elementwise_cases() -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """The standard's other elementwise functions: each on float64 and float32
    values in its domain, integers and complex numbers where the standard defines it for them,
    and a Python scalar as the second operand."""
    rng = np.random.default_rng(12)
    unit = rng.uniform(0.1, 0.9, 12)
    unit_c = unit + 0.25j * rng.uniform(0.1, 0.9, 12)
    out: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    for e in ELEMENTWISE:
        if e.kinds in ("integer", "integer_or_boolean"):
            firsts = [I32, I8] + ([BOOL] if e.kinds == "integer_or_boolean" else [])
            second, scalar = IPOS.astype(np.int32), 2
        elif e.kinds == "boolean":
            firsts, second, scalar = [BOOL, I32], BOOL[::-1].copy(), True
        else:
            x = unit + 1 if e.name == "acosh" else unit
            firsts = [x, x.astype(np.float32)]
            if e.kinds in ("real", "numeric"):
                firsts.append(IPOS)
            if e.kinds in ("numeric", "floating"):
                firsts.append(unit_c + 1 if e.name == "acosh" else unit_c)
            second, scalar = unit[::-1].copy(), 0.5
        for first in firsts:
            out.append((e.name, (first,) if e.arity == 1 else (first, second), {}))
        if e.arity == 2:
            out.append((e.name, (firsts[0], scalar), {}))
    return out


CASES += _elementwise_cases()

ZERO_DIVISORS = np.array([0, 2, 0, -3] * 3, dtype=np.int32)
#: Where NumPy's loops differ from torch's: integer division by zero (0), mixed small integers
#: (each to its own float), booleans where NumPy has no boolean loop (int8).
CASES += [
    ("floor_divide", (I32, ZERO_DIVISORS), {}),
    ("floor_divide", (U8, U8 * 0), {}),
    ("floor_divide", (I32, 0), {}),
    ("remainder", (I32, ZERO_DIVISORS), {}),
    ("remainder", (I8, 0), {}),
    *[
        (op, pair, {})
        for op in ("atan2", "hypot", "copysign", "nextafter", "logaddexp")
        for pair in ((I8, U8), (U8, I8), (I8.astype(np.int16), U8.astype(np.uint16)))
    ],
    *[
        (op, (BOOL, BOOL), {})
        for op in ("floor_divide", "remainder", "bitwise_left_shift", "bitwise_right_shift")
    ],
    ("conj", (BOOL,), {}),
]


def _case_id(case: tuple[str, tuple[Any, ...], dict[str, Any]]) -> str:
    op, args, kwargs = case
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(f"{a.dtype}{list(a.shape)}")
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
            parts.append("seq")
        else:
            parts.append(repr(a)[:12])
    parts += [f"{k}={v!r}"[:16] for k, v in kwargs.items()]
    return f"{op}({','.join(parts)})"


def _variant(name: str) -> Callable[..., Any]:
    """The function of the torch variant ``name`` (``torch.matmul``), called without dispatch."""
    op = name.removeprefix("torch.cuda.").removeprefix("torch.")
    return next(v for v in prism_core.get_op(op).variants if v.name == name).resolve()


def _reference(op: str) -> Callable[..., Any]:
    found = [v for v in prism_core.get_op(op).variants if v.reference]
    return found[0].resolve()


def _run_reference(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # NumPy warns where it gives NaN or inf
        return _reference(op)(*args, **kwargs)


def _to_numpy(value: Any) -> Any:
    if isinstance(value, tuple):
        items = [_to_numpy(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    assert isinstance(value, torch.Tensor), f"a {type(value).__name__}, not a tensor"
    return value.detach().cpu().resolve_conj().numpy()


def _tolerance(dt: np.dtype[Any]) -> float:
    if dt in (np.float16,):
        return 1e-2
    if dt in (np.float32, np.complex64):
        return 1e-4
    return 1e-10


def _same(op: str, expected: Any, actual: Any, args: tuple[Any, ...]) -> None:
    """``actual`` (NumPy, from tensors) is ``expected``: values, dtype and shape; the
    decompositions by what is unique (reconstruction, sorted values)."""
    if op == "to_numpy":
        assert isinstance(actual, np.ndarray)
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        assert getattr(type(actual), "_fields", None) == getattr(type(expected), "_fields", None)
        for e, a in zip(expected, actual, strict=True):
            assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, e.dtype, a.shape, e.shape)
        x = np.asarray(args[0])
        rtol = _tolerance(expected[0].dtype)
        if op == "linalg.svd":
            u, s, vh = actual
            np.testing.assert_allclose(s, expected[1], rtol=rtol, atol=rtol)
            k = s.shape[-1]
            rebuilt = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
            np.testing.assert_allclose(rebuilt, x, atol=1e-6)
            return
        if op in ("linalg.eig", "linalg.eigh"):
            w, v = actual
            np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(expected[0]), rtol=rtol)
            scale = max(1.0, float(np.abs(x).max()))
            np.testing.assert_allclose(x @ v, v * w[..., None, :], atol=10 * rtol * scale)
            return
        if op == "linalg.qr":
            q, r = actual
            np.testing.assert_allclose(q @ r, x, atol=1e-6)
            np.testing.assert_allclose(np.abs(r), np.abs(expected[1]), atol=1e-6)
            return
        for e, a in zip(expected, actual, strict=True):
            np.testing.assert_array_equal(a, e)
        return
    e = np.asarray(expected)
    assert actual.dtype == e.dtype, f"dtype {actual.dtype}, NumPy's is {e.dtype}"
    assert actual.shape == e.shape, f"shape {actual.shape}, NumPy's is {e.shape}"
    rtol = _tolerance(e.dtype)
    np.testing.assert_allclose(actual, e, rtol=rtol, atol=rtol, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_values_as_numpy_through_dispatch(
    case: tuple[str, tuple[Any, ...], dict[str, Any]],
) -> None:
    """``with use_backend("torch")``: NumPy arguments are moved to torch by dispatch, the
    result is torch's (tensors), equal to NumPy's."""
    op, args, kwargs = case
    expected = _run_reference(op, args, kwargs)
    with prism_core.use_backend("torch"):
        actual = prism_core.get_op(op).function(*args, **kwargs)
    _same(op, expected, actual if op == "to_numpy" else _to_numpy(actual), args)


def _tensors(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):  # a NumPy scalar as a 0-d tensor too
        return torch.from_numpy(np.array(value))
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return [_tensors(v) for v in value]
    if isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
        return tuple(_tensors(v) for v in value)
    return value


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_values_as_numpy_on_tensors(case: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
    """The variant's function itself (no dispatch), given tensors (and scalars) as a caller with
    tensors does."""
    op, args, kwargs = case
    expected = _run_reference(op, args, kwargs)
    fn = _variant(f"torch.{op}")
    actual = fn(*(_tensors(a) for a in args), **{k: _tensors(v) for k, v in kwargs.items()})
    _same(op, expected, actual if op == "to_numpy" else _to_numpy(actual), args)


def test_every_op_has_a_case() -> None:
    """Every op has a case here or in the conformance suite: the ops of the Array API families
    added later are checked against array-api-strict on torch (tests/test_array_api_<family>.py)
    and by the conformance suite, on inputs every one of them has."""
    from prism_core.testing import input_cases

    for op in builtin_ops() - {op for op, _, _ in CASES}:
        assert input_cases(op), op


# -- results on torch -----------------------------------------------------------------------------


def test_results_and_created_arrays_are_tensors() -> None:
    x = np.arange(6.0).reshape(2, 3)
    with prism_core.use_backend("torch"):
        created = [
            prism_core.zeros((2, 2)),
            prism_core.ones(3),
            prism_core.full((2,), 1.5),
            prism_core.asarray([1, 2]),
            prism_core.random.normal((2, 2), seed=0),
            *prism_core.triu_indices(3),
        ]
        svd = prism_core.linalg.svd(x)
        summed = prism_core.sum(x)
    for t in created:
        assert isinstance(t, torch.Tensor) and t.device.type == "cpu"
    assert created[0].dtype == torch.float64  # NumPy's default, not torch's float32
    assert type(svd).__name__ == "SVDResult" and svd._fields == ("U", "S", "Vh")
    assert all(isinstance(t, torch.Tensor) for t in svd)
    assert isinstance(summed, torch.Tensor) and summed.ndim == 0


def test_automatic_mode_keeps_each_library_s_arrays() -> None:
    x = np.arange(6.0).reshape(2, 3)
    assert type(prism_core.matmul(x, x.T)) is np.ndarray  # NumPy in, NumPy out
    t = torch.arange(6.0).reshape(2, 3)
    out = prism_core.matmul(t, t.T)
    assert isinstance(out, torch.Tensor)
    assert prism_core.explain("matmul", t, t.T).chosen == "torch.matmul"


def test_python_scalars_alone_give_numpy_s_results_in_automatic_mode() -> None:
    """No library's arrays in the call: as for creation ops, the reference backend's results
    (torch, whose variant is as good on paper, returned tensors for ``log(0.5)``)."""
    for out in (prism_core.log(0.5), prism_core.exp(2), prism_core.add(1.0, 2.0)):
        assert isinstance(out, np.generic), type(out)
    assert prism_core.explain("log", 0.5).chosen == "numpy.log"
    assert isinstance(prism_core.add(torch.ones(2), 1.0), torch.Tensor)  # a tensor decides
    with prism_core.use_backend("torch"):
        assert isinstance(prism_core.log(0.5), torch.Tensor)  # named: its own arrays


def test_random_normal_gives_numpy_s_numbers_for_a_seed() -> None:
    """One seed, the same numbers on every backend: torch draws with NumPy's generator."""
    expected = np.random.default_rng(42).normal(1.0, 2.0, size=(3, 5))
    with prism_core.use_backend("torch"):
        drawn = prism_core.random.normal((3, 5), 1.0, 2.0, seed=42)
        rounded = prism_core.random.normal((3, 5), 1.0, 2.0, seed=42, dtype=prism_core.bfloat16)
    assert drawn.dtype == torch.float64
    np.testing.assert_array_equal(drawn.numpy(), expected)
    assert rounded.dtype == torch.bfloat16
    np.testing.assert_allclose(rounded.float().numpy(), expected, rtol=1e-2)


def test_asarray_shares_or_copies_as_asked() -> None:
    asarray = _variant("torch.asarray")
    x = np.arange(4.0)
    shared = asarray(x)
    assert shared.data_ptr() == x.__array_interface__["data"][0]
    assert asarray(x, copy=False).data_ptr() == shared.data_ptr()
    assert asarray(x, copy=True).data_ptr() != shared.data_ptr()
    t = torch.arange(3.0)
    assert asarray(t) is t
    assert asarray(t, copy=True).data_ptr() != t.data_ptr()
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        asarray(x, dtype="float32", copy=False)
    swapped = np.arange(3.0).astype(">f8")
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        asarray(swapped, copy=False)
    assert asarray(swapped).tolist() == [0.0, 1.0, 2.0]


def test_from_dlpack_takes_only_dlpack_arrays() -> None:
    """NumPy's words (a TypeError): under use_backend, dispatch moves a list to torch first."""
    from_dlpack = _variant("torch.from_dlpack")
    with pytest.raises(TypeError, match="must be an array that supports DLPack"):
        from_dlpack([1.0, 2.0])
    x = np.arange(3.0)
    assert from_dlpack(x).data_ptr() == x.__array_interface__["data"][0]


def test_the_variants_copy_what_torch_cannot_share() -> None:
    """Given directly (no dispatch), a NumPy view with negative strides (which torch 2.13 aborts
    the process on through DLPack) and a read-only array (torch has no read-only tensors) are
    copied by ``torch.asarray`` and ``torch.from_dlpack``; NumPy arrays given by keyword are
    taken too (``prepend=``)."""
    reversed_view = np.arange(4.0)[::-1]
    readonly = np.arange(3.0)
    readonly.flags.writeable = False
    for name in ("torch.asarray", "torch.from_dlpack"):
        fn = _variant(name)
        assert fn(reversed_view).tolist() == [3.0, 2.0, 1.0, 0.0], name
        fn(readonly)[0] = 7.0
        assert readonly[0] == 0.0, name
    diff = _variant("torch.diff")(torch.arange(3.0), prepend=np.array([5.0]))
    assert diff.tolist() == [-5.0, 1.0, 1.0]


def test_reshape_views_and_copies() -> None:
    reshape = _variant("torch.reshape")
    t = torch.arange(12.0)
    assert reshape(t, (3, 4)).data_ptr() == t.data_ptr()
    assert reshape(t, (3, 4), copy=True).data_ptr() != t.data_ptr()
    with pytest.raises(ValueError, match="Unable to avoid creating a copy"):
        reshape(t.reshape(3, 4).T, 12, copy=False)


# -- the caller's mistakes: NumPy's exceptions, never a backend failure ---------------------------

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])

MISTAKES: list[tuple[str, tuple[Any, ...], dict[str, Any], type[BaseException]]] = [
    ("add", (A, A[:5]), {}, ValueError),
    ("subtract", (BOOL, BOOL), {}, TypeError),
    ("add", (U8, 300), {}, OverflowError),
    ("power", (I32, -1), {}, ValueError),
    ("power", (IPOS, -IPOS), {}, ValueError),
    ("sign", (BOOL,), {}, TypeError),
    ("atan2", (C64, A32), {}, TypeError),
    ("atan2", (A, C), {}, TypeError),
    ("logaddexp", (C, A), {}, TypeError),
    ("sum", (M,), {"axis": 2}, IndexError),
    ("sum", (M,), {"axis": (0, 0)}, ValueError),
    ("max", (EMPTY,), {}, ValueError),
    ("min", (EMPTY,), {"axis": 0}, ValueError),
    ("argmax", (np.zeros(0),), {}, ValueError),
    ("argmin", (EMPTY,), {"axis": 0}, ValueError),
    ("reshape", (A, (5, 3)), {}, ValueError),
    ("reshape", (A, (-1, -1)), {}, ValueError),
    ("transpose", (T3, (0, 1)), {}, ValueError),
    ("transpose", (T3, (0, 0, 1)), {}, ValueError),
    ("moveaxis", (T3, (0, 1), 2), {}, ValueError),
    ("expand_dims", (M, 5), {}, IndexError),
    ("stack", ([M, N],), {}, ValueError),
    ("stack", ([],), {}, ValueError),
    ("concat", ([np.float64(1.0), np.float64(2.0)],), {}, ValueError),
    ("concat", ([M, A],), {}, ValueError),
    ("concat", ([M, N],), {}, ValueError),
    ("matmul", (np.float64(2.0), M), {}, ValueError),
    ("matmul", (M, M), {}, ValueError),
    ("matmul", (_r(2, 4, 6), _r(3, 6, 2)), {}, ValueError),
    ("dot", (M, M), {}, ValueError),
    ("einsum", ("ij,jk->ik", M), {}, ValueError),
    ("einsum", ("ijk", M), {}, ValueError),
    ("einsum", ("ij,jk", M, M), {}, ValueError),
    ("einsum", ("ij->x", M), {}, ValueError),
    ("einsum", ("ij,jk->ik", M, N), {"dtype": "float32"}, TypeError),
    ("linalg.inv", (SINGULAR,), {}, np.linalg.LinAlgError),
    ("linalg.inv", (M,), {}, np.linalg.LinAlgError),
    ("linalg.inv", (A,), {}, np.linalg.LinAlgError),
    ("linalg.inv", (SQ.astype(np.float16),), {}, TypeError),
    ("linalg.solve", (SQ, A[:3]), {}, ValueError),
    ("linalg.solve", (SINGULAR, A[:2]), {}, np.linalg.LinAlgError),
    ("linalg.cholesky", (-SPD,), {}, np.linalg.LinAlgError),
    ("linalg.qr", (M,), {"mode": "raw"}, ValueError),
    ("linalg.norm", (T3,), {"ord": 2}, ValueError),
    ("linalg.norm", (A,), {"ord": "fro"}, ValueError),
    ("linalg.norm", (M,), {"ord": 3}, ValueError),
    ("linalg.matrix_norm", (A,), {}, IndexError),
    ("fft.fft", (A,), {"n": 0}, ValueError),
    ("fft.fft", (A,), {"norm": "bad"}, ValueError),
    ("fft.fft", (A,), {"axis": 1}, IndexError),
    ("fft.fft", (np.zeros(0),), {}, ValueError),
    ("fft.rfft", (C,), {}, TypeError),
    ("convolve", (np.zeros(0), A), {}, ValueError),
    ("convolve", (M, A), {}, ValueError),
    ("convolve", (A, B), {"mode": "middle"}, ValueError),
    ("cumulative_sum", (M,), {}, ValueError),
    ("zeros", ((2, -1),), {}, ValueError),
    ("zeros", ((2.5,),), {}, TypeError),
    ("random.normal", ((2,),), {"dtype": "int32"}, TypeError),
]


@pytest.mark.parametrize(
    "mistake", MISTAKES, ids=[_case_id(m[:3]) + "-" + m[3].__name__ for m in MISTAKES]
)
def test_mistakes_raise_numpy_s_exceptions(
    mistake: tuple[str, tuple[Any, ...], dict[str, Any], type[BaseException]],
) -> None:
    """The same exception type as NumPy's reference, through dispatch, with no fallback (a
    fallback would warn, and warnings are errors here)."""
    op, args, kwargs, error = mistake
    with pytest.raises(error):
        _run_reference(op, args, kwargs)
    with pytest.raises(error), prism_core.use_backend("torch"):
        prism_core.get_op(op).function(*args, **kwargs)
    assert not [r for r in prism_core.fallbacks() if r.variant.startswith("torch")]


@pytest.mark.parametrize("first", ["numpy", "torch"])
def test_a_call_s_plan_follows_the_arrays_in_its_sequences(first: str) -> None:
    """``stack`` and ``concat`` take their arrays in a list: the cached plan is keyed by the
    items' types, so a list of tensors after a list of NumPy arrays (or the reverse) runs on
    its own backend and keeps autograd; so do the ops of any number of arrays."""
    x = np.arange(3.0)
    t = torch.arange(3.0, requires_grad=True)
    lists = {"numpy": [x, x], "torch": [t, t]}
    order = [first, "torch" if first == "numpy" else "numpy"] * 2
    for kind in order:
        for op in (prism_core.concat, prism_core.stack):
            out = op(lists[kind])
            if kind == "torch":
                assert isinstance(out, torch.Tensor) and out.requires_grad, (op, kind)
            else:
                assert type(out) is np.ndarray, (op, kind)
        for op in (prism_core.broadcast_arrays, prism_core.meshgrid):
            items = op(*lists[kind])
            wanted = torch.Tensor if kind == "torch" else np.ndarray
            assert all(isinstance(i, wanted) for i in items), (op, kind)


def test_a_masked_array_runs_on_numpy_and_is_refused_where_torch_is_named() -> None:
    """torch would take the data and drop the mask (a sum of [1, 2, (1000), 4] was 1007):
    automatic mode keeps NumPy's masked arrays on NumPy, and use_backend("torch") says why it
    cannot run them."""
    x = np.ma.masked_array([1.0, 2.0, 1000.0, 4.0], mask=[0, 0, 1, 0])
    assert prism_core.sum(x) == 7.0 and prism_core.max(x) == 4.0
    assert isinstance(prism_core.add(x, x), np.ma.MaskedArray)
    assert prism_core.explain("sum", x).chosen == "numpy.sum"
    with prism_core.use_backend("torch"), pytest.raises(prism_core.DispatchError) as info:
        prism_core.sum(x)
    assert (
        "torch.sum: a numpy.ma.MaskedArray runs on NumPy, whose functions know its mask "
        "(torch would drop it)" in str(info.value)
    )
    with pytest.raises(TypeError, match="a split would drop its mask"):
        prism_core.pipelines.split("sum", x, targets=["numpy", "torch"])


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((1, 1, 1), (1,)), ((2, 1, 1), (1,)), ((2, 3, 3), (3,)), ((3, 3), (3,))],
)
def test_solve_with_a_vector_against_a_stack_of_matrices_gives_numpy_s_shape(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...]
) -> None:
    # torch.linalg.solve reads b as a stack of vectors where b.shape == a.shape[:-1]: a vector
    # b of length 1, made an (1, 1) matrix, against a stack of 1 x 1 matrices lost a dimension.
    rng = np.random.default_rng(0)
    a = rng.random(a_shape) + 3 * np.eye(a_shape[-1])
    b = rng.random(b_shape)
    got = _variant("torch.linalg.solve")(torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(a, b))
    assert tuple(got.shape) == np.linalg.solve(a, b).shape
