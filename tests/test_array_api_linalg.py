"""The linear algebra functions of ``prism_core.array_api`` (``matmul``, ``matrix_transpose``,
``tensordot``, ``vecdot`` and the ``linalg`` extension) against ``array-api-strict``, the
reference implementation of the standard's semantics.

Hypothesis draws the shapes (stacks of matrices with 0 to 2 batch dimensions, empty ones
included where the standard allows them; vectors that broadcast), the dtypes the standard
defines each function for (integers too for the products, floating point for the
factorisations) and the keyword arguments (``axes``, ``axis``, ``offset``, ``dtype``, ``rtol``,
``full_matrices``, ``mode``, ``upper``, ``ord``, ``keepdims``).  Each function runs through
Prism's dispatch on NumPy arrays (the NumPy reference), under ``use_backend("torch")`` (the
torch plugin's variants) and, for the functions the SciPy plugin has, under
``use_backend("scipy")`` on the 2-D matrices it takes; the result must have
``array_api_strict``'s values (to a tolerance per dtype), dtype, shape and, for the named
tuples, field names.

Where a result is unique only up to signs or phases (``svd``'s ``U`` and ``Vh``, ``qr``'s ``Q``
and ``R``, ``eigh``'s eigenvectors), what is unique is compared: the singular values or
eigenvalues, the reconstruction of ``x``, orthonormality, the triangle.  The matrices of the
factorisations are made well-conditioned (a dominant diagonal, or a chosen spectrum for
``matrix_rank`` and ``pinv``), so that the backends' rounding cannot change the answer.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the property tests need hypothesis")
strict = pytest.importorskip(
    "array_api_strict", reason="the reference semantics: pip install array-api-strict"
)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import prism_core  # noqa: E402
from prism_core import array_api as xp  # noqa: E402
from prism_core.kernel.records.linalg_functions import ROWS  # noqa: E402

from .conftest import load_bundled_plugin  # noqa: E402

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
FLOATING = ("float32", "float64", "complex64", "complex128")
#: The integer dtypes drawn for the products (torch has too few functions for uint16..64).
INTEGER = ("int8", "int16", "int32", "int64", "uint8")
NUMERIC = (*INTEGER, *FLOATING)
#: The standard's linalg extension -> Prism's op (the main namespace's where it repeats one).
EXTENSION = {
    **{name: f"linalg.{name}" for name in strict.linalg.__all__},
    **{name: name for name in ("matmul", "matrix_transpose", "tensordot", "vecdot")},
}
#: The linear algebra functions of the main namespace.
MAIN = ("matmul", "matrix_transpose", "tensordot", "vecdot")

Case = tuple[tuple[Any, ...], dict[str, Any]]


# -- inputs ------------------------------------------------------------------------------------
def _values(dtype: np.dtype[Any]) -> st.SearchStrategy[Any]:
    """Small values: integers that cannot overflow in the products drawn, finite floats."""
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -3, 3)
    width = 32 if dtype in (np.float32, np.complex64) else 64
    part = st.floats(-4, 4, width=width)
    return st.builds(complex, part, part) if dtype.kind == "c" else part


def _array(draw: st.DrawFn, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Any:
    return draw(hnp.arrays(dtype, shape, elements=_values(dtype)))


def _batch(draw: st.DrawFn, max_dims: int = 2) -> tuple[int, ...]:
    return draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=3))


def _dominant(a: Any, n: int) -> Any:
    """``a`` with ``4 n + 8`` added to its diagonal: well-conditioned, and positive definite
    once made Hermitian."""
    return a + (4 * n + 8) * np.eye(n, dtype=a.dtype)


def _hermitian(a: Any) -> Any:
    return (a + np.swapaxes(a.conj(), -1, -2)) / 2


@st.composite
def _square(draw: st.DrawFn, dtypes: tuple[str, ...], *, empty: bool = True) -> Any:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    n = draw(st.integers(0 if empty else 1, 5))
    return _dominant(_array(draw, dt, (*_batch(draw), n, n)), n)


@st.composite
def _matrix(draw: st.DrawFn, dtypes: tuple[str, ...], *, min_side: int = 0) -> Any:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    m, n = draw(st.integers(min_side, 5)), draw(st.integers(min_side, 5))
    return _array(draw, dt, (*_batch(draw), m, n))


@st.composite
def _spectrum(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Any:
    """A matrix (or stack) ``U diag(s) V^H`` with singular values 0 or in [1, 3]: its rank and
    pseudo-inverse do not depend on rounding."""
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    batch = _batch(draw, 1)
    m, n = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    k = min(m, n)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    def orthonormal(rows: int) -> Any:
        q = np.linalg.qr(rng.normal(size=(*batch, rows, rows)))[0]
        return q.astype(dt)

    s = draw(hnp.arrays(np.float64, (*batch, k), elements=st.sampled_from([0.0, 1.0, 2.0, 3.0])))
    u, v = orthonormal(m)[..., :, :k], orthonormal(n)[..., :, :k]
    return ((u * s[..., None, :].astype(dt)) @ np.swapaxes(v.conj(), -1, -2)).astype(dt)


@st.composite
def _broadcasting_pair(
    draw: st.DrawFn, dtypes: tuple[str, ...], core: int | None
) -> tuple[Any, Any]:
    """Two arrays whose shapes broadcast, with one last axis of size ``core`` (drawn where
    ``None``) not broadcast, of dtypes of one kind (the standard promotes within a kind)."""
    first = np.dtype(draw(st.sampled_from(dtypes)))
    kinds = {first.kind} if first.kind in "fc" else {"i", "u"}
    if first.kind in "fc":
        kinds = {"f", "c"}
    second = np.dtype(draw(st.sampled_from([d for d in dtypes if np.dtype(d).kind in kinds])))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    size = draw(st.integers(0, 4)) if core is None else core
    a = _array(draw, first, (*shapes.input_shapes[0], size))
    b = _array(draw, second, (*shapes.input_shapes[1], size))
    return a, b


@st.composite
def _tensordot_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    contracted = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    left = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    right = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    a = _array(draw, dt, (*left, *contracted))
    b = _array(draw, dt, (*contracted, *right))
    n = len(contracted)
    if draw(st.booleans()) and n:  # a pair of sequences: the same contraction, spelled out
        axes: Any = (
            tuple(range(len(left), len(left) + n)),
            tuple(range(n))
            if draw(st.booleans())
            else tuple(range(-len(b.shape), n - len(b.shape))),
        )
        return (a, b), {"axes": axes}
    return (a, b), ({} if n == 2 and draw(st.booleans()) else {"axes": n})


@st.composite
def _vecdot_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    a, b = draw(_broadcasting_pair(dtypes, None))
    n = min(a.ndim, b.ndim)
    axis = draw(st.integers(-n, -1))
    if axis != -1:  # the vectors along another axis: move the last axis there
        a, b = np.moveaxis(a, -1, axis), np.moveaxis(b, -1, axis)
    return (a, b), ({"axis": axis} if axis != -1 or draw(st.booleans()) else {})


@st.composite
def _cross_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    a, b = draw(_broadcasting_pair(dtypes, 3))
    n = min(a.ndim, b.ndim)
    axis = draw(st.integers(-n, -1))
    if axis != -1:
        a, b = np.moveaxis(a, -1, axis), np.moveaxis(b, -1, axis)
    return (a, b), ({"axis": axis} if axis != -1 else {})


@st.composite
def _outer_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    return (
        _array(draw, dt, (draw(st.integers(0, 5)),)),
        _array(draw, dt, (draw(st.integers(0, 5)),)),
    ), {}


@st.composite
def _matmul_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    a_shape = (
        (k,)
        if draw(st.booleans()) and not shapes.input_shapes[0]
        else (*shapes.input_shapes[0], m, k)
    )
    b_shape = (
        (k,)
        if draw(st.booleans()) and not shapes.input_shapes[1]
        else (*shapes.input_shapes[1], k, n)
    )
    return (_array(draw, dt, a_shape), _array(draw, dt, b_shape)), {}


@st.composite
def _one(
    draw: st.DrawFn, arrays: st.SearchStrategy[Any], **keywords: st.SearchStrategy[Any]
) -> Case:
    """One array, and each keyword drawn or left out."""
    kwargs = {k: draw(v) for k, v in keywords.items() if draw(st.booleans())}
    return (draw(arrays),), kwargs


@st.composite
def _trace_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    (x,), kwargs = draw(_one(_matrix(dtypes), offset=st.integers(-3, 3)))
    if draw(st.booleans()):  # an accumulator that every drawn dtype casts to safely
        kwargs["dtype"] = np.complex128 if x.dtype.kind == "c" else np.float64
    return (x,), kwargs


@st.composite
def _power_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    x = draw(_square(dtypes))
    n = draw(st.integers(-2 if x.dtype.kind in "fc" else 0, 4))
    return (x / (4 * x.shape[-1] + 8) if x.dtype.kind in "fc" else x, n), {}


@st.composite
def _solve_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    a = draw(_square(dtypes, empty=False))
    n = a.shape[-1]
    if draw(st.booleans()):
        b = _array(draw, a.dtype, (n,))
    else:
        b = _array(draw, a.dtype, (*a.shape[:-2], n, draw(st.integers(1, 3))))
    return (a, b), {}


@st.composite
def _vector_norm_case(draw: st.DrawFn, dtypes: tuple[str, ...]) -> Case:
    dt = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = _array(draw, dt, shape)
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
        kwargs["axis"] = axes[0] - x.ndim if len(axes) == 1 else tuple(axes)
    if draw(st.booleans()):
        kwargs["keepdims"] = True
    if draw(st.booleans()):
        kwargs["ord"] = draw(st.sampled_from([1, 2, 3, 0, np.inf, -np.inf]))
    return (x,), kwargs


#: Function -> how its calls are drawn, in the dtypes the standard defines it for.
CASES: dict[str, Callable[[tuple[str, ...]], st.SearchStrategy[Case]]] = {
    "matmul": _matmul_case,
    "matrix_transpose": lambda d: _one(_matrix(d)),
    "tensordot": _tensordot_case,
    "vecdot": _vecdot_case,
    "cross": _cross_case,
    "outer": _outer_case,
    "diagonal": lambda d: _one(_matrix(d), offset=st.integers(-4, 4)),
    "trace": _trace_case,
    "matrix_power": _power_case,
    "det": lambda d: _one(_square(d).map(lambda x: x / (4 * x.shape[-1] + 8))),
    "slogdet": lambda d: _one(_square(d)),
    "eigvalsh": lambda d: _one(_square(d).map(_hermitian)),
    "svdvals": lambda d: _one(_matrix(d)),
    "matrix_rank": lambda d: _one(_spectrum(d), rtol=st.sampled_from([0.1, 0.4, 1e-3])),
    "pinv": lambda d: _one(_spectrum(d), rtol=st.sampled_from([0.1, 0.4, 1e-3])),
    "inv": lambda d: _one(_square(d)),
    "solve": _solve_case,
    "cholesky": lambda d: _one(_square(d).map(_hermitian), upper=st.booleans()),
    "eigh": lambda d: _one(_square(d, empty=False).map(_hermitian)),
    "qr": lambda d: _one(_matrix(d, min_side=1), mode=st.sampled_from(["reduced", "complete"])),
    "svd": lambda d: _one(_matrix(d, min_side=1), full_matrices=st.booleans()),
    "matrix_norm": lambda d: _one(
        _matrix(d, min_side=1),
        keepdims=st.booleans(),
        ord=st.sampled_from(["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]),
    ),
    "vector_norm": _vector_norm_case,
}
#: The dtypes each function is defined for (the products: numeric; the rest floating point).
DTYPES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(CASES, FLOATING),
    **dict.fromkeys(("matmul", "tensordot", "vecdot", "cross", "outer", "trace"), NUMERIC),
    **dict.fromkeys(("matrix_transpose", "diagonal"), NUMERIC),
}
#: Functions whose results are unique only up to signs or phases: compared by what is unique.
DECOMPOSITIONS = frozenset({"svd", "qr", "eigh"})
#: The functions the SciPy plugin has a variant of (for 2-D matrices of LAPACK dtypes).
ON_SCIPY = ("det", "eigvalsh", "svdvals", "pinv", "inv", "solve", "svd", "eigh")


def _prism(name: str) -> Callable[..., Any]:
    return getattr(xp, name) if name in MAIN else getattr(xp.linalg, name)


def _strict(name: str) -> Callable[..., Any]:
    return getattr(strict, name) if name in MAIN else getattr(strict.linalg, name)


def _to_strict(value: Any) -> Any:
    """An argument as ``array_api_strict`` takes it: its arrays, its dtypes."""
    if isinstance(value, np.ndarray):
        return strict.asarray(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return getattr(strict, np.dtype(value).name)
    return value


def _numpy(value: Any) -> Any:
    """A result as NumPy: arrays of any backend (tensors through ``to_numpy``), tuples
    element by element, keeping the named tuple's field names."""
    if isinstance(value, tuple):
        return (
            type(value)._make(_numpy(v) for v in value)
            if hasattr(value, "_fields")
            else tuple(_numpy(v) for v in value)
        )
    if type(value).__module__.startswith("array_api_strict"):
        return np.from_dlpack(value)
    return np.asarray(prism_core.to_numpy(value))


def _tolerance(dtype: np.dtype[Any]) -> float:
    return 2e-3 if dtype in (np.float32, np.complex64) else 1e-9


def _close(name: str, actual: Any, expected: Any, scale: float = 1.0) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (name, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (name, actual.shape, expected.shape)
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=name)
        return
    tol = _tolerance(expected.dtype)
    size = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0))
    np.testing.assert_allclose(
        actual, expected, rtol=tol, atol=tol * max(size, scale, 1.0), equal_nan=True, err_msg=name
    )


def _compare(name: str, args: tuple[Any, ...], actual: Any, expected: Any) -> None:
    """``actual`` (NumPy) against ``array_api_strict``'s ``expected`` (NumPy), by what the
    standard makes unique."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), (name, type(actual))
        assert actual._fields == expected._fields, (name, actual._fields, expected._fields)
        for a, e in zip(actual, expected, strict=True):
            assert a.dtype == e.dtype and a.shape == e.shape, (name, a.dtype, e.dtype, a.shape)
    x = args[0]
    if name == "svd":
        u, s, vh = actual
        _close(name, s, expected.S)
        k = s.shape[-1]
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        _close(name, rebuilt, x.astype(rebuilt.dtype), scale=float(np.max(np.abs(x), initial=1)))
        return
    if name == "qr":
        q, r = actual
        _close(name, q @ r, x.astype(q.dtype), scale=float(np.max(np.abs(x), initial=1)))
        eye = np.broadcast_to(np.eye(q.shape[-1], dtype=q.dtype), q.shape[:-2] + (q.shape[-1],) * 2)
        _close(name, np.swapaxes(q.conj(), -1, -2) @ q, eye)
        _close(name, np.triu(r), r)
        return
    if name == "eigh":
        w, v = actual
        _close(name, w, expected.eigenvalues, scale=float(np.max(np.abs(x), initial=1)))
        _close(
            name,
            x @ v,
            v * w[..., None, :].astype(v.dtype),
            scale=float(np.max(np.abs(x), initial=1)),
        )
        return
    if isinstance(expected, tuple):
        for a, e in zip(actual, expected, strict=True):
            _close(name, a, e)
        return
    _close(name, actual, expected)


def _quietly(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def _check(name: str, case: Case, backend: str | None) -> None:
    args, kwargs = case
    expected = _numpy(
        _quietly(
            _strict(name),
            *(_to_strict(a) for a in args),
            **{k: _to_strict(v) for k, v in kwargs.items()},
        )
    )
    if backend is None:
        raw = _quietly(_prism(name), *args, **kwargs)
    else:
        with prism_core.use_backend(backend):
            raw = _quietly(_prism(name), *args, **kwargs)
    if backend == "torch":
        import torch

        items = raw if isinstance(raw, tuple) else (raw,)
        assert all(isinstance(r, torch.Tensor) for r in items), (name, type(raw))
    _compare(name, args, _numpy(raw), expected)


# -- the namespace -------------------------------------------------------------------------------
def test_every_linear_algebra_function_of_the_standard_is_here() -> None:
    """Every function of ``array_api_strict.linalg`` (and the four of the main namespace) is on
    ``prism_core.array_api(.linalg)``, as the op's own function, on ``prism_core`` too."""
    assert set(strict.linalg.__all__) == set(EXTENSION) - {"matmul"} | {"matmul"}
    assert set(MAIN) <= set(strict.__all__)
    assert set(CASES) == set(EXTENSION)  # every function is drawn below
    for name, op_name in EXTENSION.items():
        function = prism_core.get_op(op_name).function
        assert getattr(xp.linalg, name) is function, name
        if name in MAIN:
            assert getattr(xp, name) is function and getattr(prism_core, name) is function
        else:
            assert getattr(prism_core.linalg, name) is function, name
    assert {row.name for row in ROWS if row.standard} <= set(EXTENSION.values())


def test_the_rows_document_the_standard_signatures() -> None:
    import inspect

    for row in (row for row in ROWS if row.standard):
        name = row.name.partition(".")[2] or row.name
        theirs = inspect.signature(_strict(name))
        ours = row.signature.replace("/, ", "").replace("*, ", "").strip("()")
        params = [p.split("=")[0] for p in ours.split(", ") if p not in ("/", "*")]
        assert params == list(theirs.parameters), (row.name, params, list(theirs.parameters))
        assert prism_core.get_op(row.name).__doc__.startswith(f"{row.name}{row.signature}: ")


# -- on NumPy, torch and SciPy -------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_on_numpy_as_the_standard(name: str) -> None:
    @SETTINGS
    @given(case=CASES[name](DTYPES[name]))
    def check(case: Case) -> None:
        _check(name, case, None)

    check()


@pytest.fixture
def plugin() -> Iterator[Callable[[str], None]]:
    """``plugin(name)`` loads that installed plugin through its entry point (the suite's
    environment loads none by itself), or skips; the plugins are reloaded after."""

    def load(name: str) -> None:
        load_bundled_plugin(name)

    yield load
    prism_core.extending.reload_plugins()


@pytest.mark.parametrize("name", sorted(CASES))
def test_on_torch_as_the_standard(name: str, plugin: Callable[[str], None]) -> None:
    pytest.importorskip("torch", reason="the torch backend's variants need torch")
    plugin("torch")

    @SETTINGS
    @given(case=CASES[name](DTYPES[name]))
    def check(case: Case) -> None:
        _check(name, case, "torch")

    check()


@st.composite
def _scipy_case(draw: st.DrawFn, name: str) -> Case:
    """A call the SciPy variant takes: the function's case made one 2-D matrix (the first of
    a stack) of a LAPACK dtype."""
    args, kwargs = draw(CASES[name](FLOATING))
    x = args[0]
    hypothesis.assume(x.size > 0)
    first = x[(0,) * (x.ndim - 2)]
    if name == "solve":
        b = args[1] if args[1].ndim == 1 else args[1][(0,) * (args[1].ndim - 2)]
        return (first, b), kwargs
    return (first, *args[1:]), kwargs


@pytest.mark.parametrize("name", ON_SCIPY)
def test_on_scipy_as_the_standard(name: str, plugin: Callable[[str], None]) -> None:
    pytest.importorskip("scipy", reason="the scipy backend's variants need SciPy")
    plugin("scipy")

    @SETTINGS
    @given(case=_scipy_case(name))
    def check(case: Case) -> None:
        with prism_core.use_backend("scipy"):
            chosen = prism_core.explain(EXTENSION[name], *case[0], **case[1]).chosen
        assert chosen == f"scipy.{EXTENSION[name]}"
        _check(name, case, "scipy")

    check()


# -- what the standard fixes and NumPy does not ----------------------------------------------------
def test_tensordot_axes_and_vecdot_conjugation() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(xp.tensordot(a, b), np.tensordot(a, b))
    np.testing.assert_array_equal(
        xp.tensordot(a, b, axes=((1,), (0,))), np.tensordot(a, b, ((1,), (0,)))
    )
    assert xp.tensordot(a, b, axes=0).shape == (2, 3, 4, 3, 4)
    z = np.array([1 + 2j, 3 - 1j])
    assert xp.vecdot(z, z) == 15  # |z|^2: x1 conjugated
    assert xp.vecdot(np.ones((2, 3), np.int8), np.ones(3, np.int8)).dtype == np.int8
    shear = xp.linalg.matrix_power(np.array([[1, 1], [0, 1]]), 3)  # integers stay integers
    assert shear.dtype == np.int64 and shear.tolist() == [[1, 3], [0, 1]]


def test_trace_and_diagonal_take_the_last_two_axes() -> None:
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(xp.linalg.diagonal(x), [[0, 5, 10], [12, 17, 22]])
    np.testing.assert_array_equal(xp.linalg.trace(x, offset=1), [1 + 6 + 11, 13 + 18 + 23])
    assert xp.linalg.trace(np.eye(3, dtype=np.uint8)).dtype == np.uint64
    assert xp.linalg.trace(np.eye(3, dtype=np.int8)).dtype == np.int64
    assert xp.linalg.trace(np.eye(3, dtype=np.float32)).dtype == np.float32


def test_matrix_rank_and_pinv_tolerances_are_relative() -> None:
    x = np.diag([1e3, 1.0, 1e-3])
    assert xp.linalg.matrix_rank(x) == 3
    assert xp.linalg.matrix_rank(x, rtol=1e-4) == 2  # relative to 1e3: 1e-3 is below 0.1
    np.testing.assert_array_equal(
        xp.linalg.matrix_rank(np.stack([x, x]), rtol=np.array([1e-7, 1e-2])), [3, 1]
    )
    np.testing.assert_allclose(xp.linalg.pinv(x, rtol=1e-4), np.diag([1e-3, 1.0, 0.0]))
    assert xp.linalg.matrix_rank(np.zeros((2, 0, 3))).tolist() == [0, 0]
    assert xp.linalg.matrix_rank(x).dtype == np.int64


def test_slogdet_is_a_named_tuple() -> None:
    result = xp.linalg.slogdet(np.diag([2.0, -3.0]))
    assert (
        result._fields
        == ("sign", "logabsdet")
        == type(strict.linalg.slogdet(strict.eye(2)))._fields
    )
    assert (result.sign, result.logabsdet) == (-1.0, pytest.approx(np.log(6.0)))
    singular = xp.linalg.slogdet(np.zeros((2, 2)))
    assert singular.sign == 0 and singular.logabsdet == -np.inf


# -- errors that name the argument ---------------------------------------------------------------
BAD_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any], type[Exception], str]] = [
    (
        "vecdot",
        (np.ones((2, 3)), np.ones((2, 3))),
        {"axis": 0},
        ValueError,
        r"vecdot: axis must be a negative int in \[-2, -1\]",
    ),
    (
        "vecdot",
        (np.ones(3), np.ones(4)),
        {},
        ValueError,
        "vecdot: x1 and x2 must have the same size along axis -1",
    ),
    (
        "vecdot",
        (np.ones(()), np.ones(3)),
        {},
        ValueError,
        "vecdot: x1 and x2 must have at least one dimension",
    ),
    ("vecdot", (np.ones(3), np.ones(3)), {"axis": 1.5}, TypeError, "vecdot: axis must be an int"),
    (
        "cross",
        (np.ones(2), np.ones(2)),
        {},
        ValueError,
        "linalg.cross: x1 and x2 must have 3 elements along axis -1",
    ),
    (
        "cross",
        (np.ones((3, 3)), np.ones((3, 3))),
        {"axis": 1},
        ValueError,
        "linalg.cross: axis must be a negative int",
    ),
    (
        "tensordot",
        (np.ones((2, 3)), np.ones((3, 2))),
        {"axes": -1},
        ValueError,
        "tensordot: axes must be a non-negative int",
    ),
    (
        "tensordot",
        (np.ones((2, 3)), np.ones((3, 2))),
        {"axes": ((1,), (0,), (1,))},
        ValueError,
        r"tensordot: axes must be a non-negative int or a pair",
    ),
    (
        "tensordot",
        (np.ones((2, 3)), np.ones((3, 2))),
        {"axes": ((1, 0), (0,))},
        ValueError,
        "the two sequences of axes must have one length",
    ),
    (
        "tensordot",
        (np.ones((2, 3)), np.ones((3, 2))),
        {"axes": "1"},
        TypeError,
        "tensordot: axes must be an int",
    ),
    (
        "outer",
        (np.ones((2, 2)), np.ones(2)),
        {},
        ValueError,
        r"linalg.outer: x1 must be a vector \(1-D\); got shape \(2, 2\)",
    ),
    ("outer", (np.ones(2), np.ones(())), {}, ValueError, r"linalg.outer: x2 must be a vector"),
    (
        "matrix_transpose",
        (np.ones(3),),
        {},
        ValueError,
        r"matrix_transpose: x must be a matrix or a stack of matrices",
    ),
    ("diagonal", (np.ones(3),), {}, ValueError, "linalg.diagonal: x must be a matrix"),
    (
        "diagonal",
        (np.ones((3, 3)),),
        {"offset": 1.0},
        TypeError,
        "linalg.diagonal: offset must be an int",
    ),
    ("trace", (np.ones(3),), {}, ValueError, "linalg.trace: x must be a matrix"),
    (
        "trace",
        (np.ones((3, 3)),),
        {"offset": True},
        TypeError,
        "linalg.trace: offset must be an int, not a bool",
    ),
    ("matrix_rank", (np.ones(3),), {}, ValueError, "linalg.matrix_rank: x must be a matrix"),
    (
        "matrix_rank",
        (np.ones((3, 3)),),
        {"rtol": "small"},
        TypeError,
        "linalg.matrix_rank: rtol must be a real number",
    ),
    (
        "pinv",
        (np.ones((3, 3)),),
        {"rtol": 1j},
        TypeError,
        "linalg.pinv: rtol must be a real number",
    ),
    ("pinv", (np.ones(3),), {}, ValueError, "linalg.pinv: x must be a matrix"),
]


@pytest.mark.parametrize(("name", "args", "kwargs", "error", "match"), BAD_CALLS)
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_bad_input_is_an_error_naming_the_argument(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    error: type[Exception],
    match: str,
    backend: str,
    plugin: Callable[[str], None],
) -> None:
    """The same error, in the same words, on NumPy and on torch: the checks are the
    standard's, not a backend's."""
    if backend == "torch":
        pytest.importorskip("torch", reason="the torch backend's variants need torch")
        plugin("torch")
    with prism_core.use_backend(backend), pytest.raises(error, match=match):
        _prism(name)(*args, **kwargs)
