"""The statistical and utility functions of ``prism_core.array_api`` against
``array-api-strict`` at the 2024.12 standard, the reference for the standard's semantics:
``prod``, ``var``, ``cumulative_prod``, ``all``, ``any`` and ``diff``, and the older
``sum``, ``mean``, ``std``, ``min``, ``max`` and ``cumulative_sum``.

Hypothesis draws shapes (0-d and empty where the standard allows them), the dtypes the standard
defines each function for, values (NaN and infinities for real floating point where the
function is not a sum of products), axes (``None``, one, a tuple) and the other keyword
arguments.  Each function runs through Prism's dispatch on NumPy arrays (the NumPy reference)
and under ``use_backend("torch")`` (the torch plugin's variants); its result must have
``array_api_strict``'s dtype (the standard's accumulation types of small integers included),
shape and values (exactly on NumPy and for integers; to a tolerance for torch's floating-point
reductions, which add in another order).  The CuPy plugin's implementations run with NumPy
standing in for CuPy at the end.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Iterator
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

from .array_api_dtypes import COMPLEX, NOT_ON_TORCH, REAL_FLOATING, SIGNED, UNSIGNED  # noqa: E402

REAL = (*SIGNED, *UNSIGNED, *REAL_FLOATING)
NUMERIC = (*REAL, *COMPLEX)
ALL = ("bool", *NUMERIC)
#: The family's functions (the standard's statistical and utility functions of 2024.12 that
#: Prism did not have before).
FAMILY = ("prod", "var", "cumulative_prod", "all", "any", "diff")
#: The older ops of these sections of the standard, checked here too.
OLDER = ("sum", "mean", "std", "min", "max", "cumulative_sum")
STRICT_MODULES = {"array_api_strict._statistical_functions", "array_api_strict._utility_functions"}
SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@pytest.fixture(autouse=True)
def standard_2024() -> Iterator[None]:
    """``array_api_strict`` as the 2024.12 standard (its default is newer)."""
    with strict.ArrayAPIStrictFlags(api_version="2024.12"):
        yield


@pytest.fixture(params=("numpy", "torch"))
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: NumPy (the reference variants), then torch's variants."""
    if request.param == "torch":
        request.getfixturevalue("torch_plugin")  # loaded for this test, unloaded after it
    return str(request.param)


# -- the namespace -------------------------------------------------------------------------------


def test_every_function_of_the_family_is_here() -> None:
    """Every statistical and utility function of array_api_strict at 2024.12 is a Prism op, the
    same function on ``prism_core.array_api`` and on ``prism_core``."""
    in_strict = {
        n
        for n in strict.__all__
        if callable(getattr(strict, n)) and getattr(strict, n).__module__ in STRICT_MODULES
    }
    assert in_strict == set(FAMILY) | set(OLDER)
    for name in (*FAMILY, *OLDER):
        op = prism_core.get_op(name)
        assert getattr(xp, name) is op.function, name
        assert getattr(prism_core, name) is op.function, name
    for name in FAMILY:
        assert prism_core.get_op(name).function.__doc__, name


# -- drawing cases -------------------------------------------------------------------------------


def _dtypes(names: tuple[str, ...], backend: str) -> st.SearchStrategy[np.dtype[Any]]:
    return st.sampled_from(
        [np.dtype(d) for d in names if backend == "numpy" or d not in NOT_ON_TORCH]
    )


def _elements(dtype: np.dtype[Any], special: bool) -> st.SearchStrategy[Any]:
    """Small values (products of many stay in range; integers wrap alike everywhere when they
    do not), zeros among them; NaN and infinities for real floating point where ``special``."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -3), min(info.max, 3))
    values = st.sampled_from([0.0, 0.5, -0.5, 1.0, -1.0, 1.5, 2.0, -2.0]) | st.floats(
        -2, 2, width=32 if dtype in (np.float32, np.complex64) else 64
    )
    if dtype.kind == "c":
        return st.builds(complex, values, values)
    return values | st.sampled_from([np.nan, np.inf, -np.inf]) if special else values


@st.composite
def _array(
    draw: st.DrawFn, names: tuple[str, ...], backend: str, min_dims: int = 0, special: bool = True
) -> np.ndarray[Any, Any]:
    dt = draw(_dtypes(names, backend))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=5))
    return draw(hnp.arrays(dt, shape, elements=_elements(dt, special)))


def _axis(draw: st.DrawFn, ndim: int) -> Any:
    """``None``, one axis (negative too) or a tuple of distinct axes."""
    choices: list[st.SearchStrategy[Any]] = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        choices.append(st.lists(st.integers(0, ndim - 1), unique=True).map(tuple))
    return draw(st.one_of(choices))


# -- running and comparing -------------------------------------------------------------------


def _strict(value: Any) -> Any:
    return strict.asarray(value) if isinstance(value, np.ndarray) else value


def _quietly(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def _reference(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return _quietly(
        getattr(strict, name),
        *(_strict(a) for a in args),
        **{k: _strict(v) for k, v in kwargs.items()},
    )


def _prism(name: str, backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if backend == "numpy":
        return _quietly(getattr(xp, name), *args, **kwargs)
    with prism_core.use_backend("torch"):
        result = _quietly(getattr(xp, name), *args, **kwargs)
    assert type(result).__module__.startswith("torch"), (name, type(result))
    return result


def _same(name: str, actual: Any, expected: Any, exact: bool) -> None:
    """Dtype, shape and values (NaN equal to NaN) of ``actual`` (Prism's) and ``expected``
    (array_api_strict's)."""
    got = np.asarray(prism_core.to_numpy(actual))
    want = np.from_dlpack(expected)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if exact or want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        rtol = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=name)


def _check(name: str, backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    # NumPy computes both sides: the same bits.  torch adds and multiplies in its own order.
    exact = backend == "numpy"
    _same(name, _prism(name, backend, args, kwargs), _reference(name, args, kwargs), exact)


# -- reductions ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["prod", "sum"])
def test_prod_and_sum(name: str, backend: str) -> None:
    """Small integers accumulate in the default integer of their signedness (int8 -> int64,
    uint8 -> uint64), floating-point types in their own; ``dtype=`` overrides."""

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(NUMERIC, backend))
        kwargs: dict[str, Any] = {
            "axis": _axis(data.draw, x.ndim),
            "keepdims": data.draw(st.booleans()),
        }
        theirs = dict(kwargs)
        if x.dtype.kind in "iu" and data.draw(st.booleans()):  # an explicit accumulator
            dtype = data.draw(st.sampled_from(["int64", "float64"]))
            kwargs["dtype"], theirs["dtype"] = dtype, getattr(strict, dtype)
        expected = _reference(name, (x,), theirs)
        _same(name, _prism(name, backend, (x,), kwargs), expected, exact=backend == "numpy")

    check()


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std(name: str, backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(REAL_FLOATING, backend))
        kwargs = {
            "axis": _axis(data.draw, x.ndim),
            "correction": data.draw(st.sampled_from([0, 1, 0.5, 0.0])),
            "keepdims": data.draw(st.booleans()),
        }
        with warnings.catch_warnings():
            if name == "std" and backend == "torch":
                # The older torch std warns (a UserWarning, "degrees of freedom is <= 0") for an
                # empty x reduced along a non-empty axis, where NumPy does not: a known
                # difference of that op, its result right (an empty array).
                warnings.filterwarnings("ignore", "std\\(\\): degrees of freedom", UserWarning)
            _check(name, backend, (x,), kwargs)

    check()


def test_mean(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array((*REAL_FLOATING, *COMPLEX), backend))
        kwargs = {"axis": _axis(data.draw, x.ndim), "keepdims": data.draw(st.booleans())}
        _check("mean", backend, (x,), kwargs)

    check()


@pytest.mark.parametrize("name", ["min", "max"])
def test_min_and_max(name: str, backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(REAL, backend))
        axis = _axis(data.draw, x.ndim)
        axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        hypothesis.assume(all(x.shape[a] for a in axes))  # of nothing: an error on both sides
        _check(name, backend, (x,), {"axis": axis, "keepdims": data.draw(st.booleans())})

    check()


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_and_any(name: str, backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(ALL, backend))
        kwargs = {"axis": _axis(data.draw, x.ndim), "keepdims": data.draw(st.booleans())}
        _check(name, backend, (x,), kwargs)

    check()


# -- running products and sums, differences ---------------------------------------------------


@pytest.mark.parametrize("name", ["cumulative_prod", "cumulative_sum"])
def test_cumulative(name: str, backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(NUMERIC, backend, min_dims=1))
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1)) if x.ndim > 1 else None
        kwargs = {"axis": axis, "include_initial": data.draw(st.booleans())}
        # array_api_strict makes the initial element by concatenating ones, then calls cumprod:
        # another NumPy loop than numpy.cumulative_prod's, whose complex products can differ in
        # the last bit (complex64 [-1.125-1j, -0.5+1.2752529j] along a strided axis, found by
        # hypothesis).  Real products and every sum are the same bits.
        exact = backend == "numpy" and not (
            name == "cumulative_prod" and kwargs["include_initial"] and x.dtype.kind == "c"
        )
        _same(name, _prism(name, backend, (x,), kwargs), _reference(name, (x,), kwargs), exact)

    check()


def test_diff(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(NUMERIC, backend, min_dims=1))
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        kwargs: dict[str, Any] = {"axis": axis, "n": data.draw(st.integers(0, 3))}
        for end in ("prepend", "append"):
            if data.draw(st.booleans()):  # x's shape but along the axis; x's dtype
                shape = list(x.shape)
                shape[axis] = data.draw(st.integers(0, 2))
                kwargs[end] = data.draw(
                    hnp.arrays(x.dtype, tuple(shape), elements=_elements(x.dtype, True))
                )
        _check("diff", backend, (x,), kwargs)

    check()


def test_diff_of_booleans_is_not_equal(backend: str) -> None:
    x = np.array([True, True, False, True])
    got = np.asarray(prism_core.to_numpy(_prism("diff", backend, (x,), {})))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, [False, True, True])


# -- caller mistakes -------------------------------------------------------------------------


def test_diff_names_a_bad_n(backend: str) -> None:
    with pytest.raises(ValueError, match=r"diff: n must be 0 or more .*not -1"):
        _prism("diff", backend, (np.arange(4.0),), {"n": -1})
    with pytest.raises(TypeError, match=r"diff: n must be an integer .*not 1\.5"):
        _prism("diff", backend, (np.arange(4.0),), {"n": 1.5})


def test_cumulative_prod_needs_an_axis_beyond_one_dimension(backend: str) -> None:
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        _prism("cumulative_prod", backend, (np.ones((2, 3)),), {})


# -- the CuPy plugin's implementations, NumPy standing in for CuPy ---------------------------


@pytest.fixture
def cupy_family(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The ``cuda`` backend's functions of these ops with NumPy as ``cupy`` (CuPy mirrors
    NumPy's API): the plugin's own code runs, CuPy's does not (``test_cuda_gpu.py`` runs it on
    a GPU)."""
    cuda = pytest.importorskip("prism_plugin_cuda.backend", reason="prism-plugin-cuda")
    monkeypatch.setitem(sys.modules, "cupy", np)
    backend = cuda.CudaBackend()
    backend._xp = np
    ops = ("prod", "var", "cumulative_prod", "diff")
    return types.SimpleNamespace(**{op: backend.function(op) for op in ops})


def test_the_cupy_plugin_functions(cupy_family: Any) -> None:
    x = np.array([[3, 1, 3], [0, 1, 2]], dtype=np.int8)
    f = x.astype(np.float32)
    calls: list[tuple[str, np.ndarray[Any, Any], dict[str, Any]]] = [
        ("prod", x, {"axis": 0, "keepdims": True}),
        ("var", f, {"axis": 1, "correction": 1}),
        ("cumulative_prod", x, {"axis": 1, "include_initial": True}),
        ("cumulative_prod", x[0], {}),
        ("diff", x, {"axis": 0, "prepend": x[:1]}),
        ("diff", x, {"n": 2, "append": x[:, :1]}),
    ]
    for name, arg, kwargs in calls:
        _same(
            name, getattr(cupy_family, name)(arg, **kwargs), _reference(name, (arg,), kwargs), True
        )
    assert cupy_family.prod(x, dtype=prism_core.float32).dtype == np.float32  # Prism's dtypes
    with pytest.raises(ValueError, match="diff: n must be 0 or more"):
        cupy_family.diff(x, n=-1)
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        cupy_family.cumulative_prod(x)


# -- NumPy's cov and histogram, amax and amin (docs/array-api.md, "NumPy's spellings") ----------


def _numpy_op(name: str, backend: str, *args: Any, **kwargs: Any) -> Any:
    """``prism_core.<name>`` (NumPy's, beyond the standard's namespace) on ``backend``, its
    arrays back as NumPy's."""
    fn = getattr(prism_core, name)
    if backend == "torch":
        import torch

        args = tuple(torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in args)
        kwargs = {
            k: torch.as_tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()
        }
        with prism_core.use_backend("torch"):
            result = _quietly(fn, *args, **kwargs)
    else:
        result = _quietly(fn, *args, **kwargs)
    items = result if isinstance(result, tuple) else (result,)
    assert all(type(r).__module__.startswith(backend) for r in items), [type(r) for r in items]
    converted = tuple(np.asarray(prism_core.to_numpy(r)) for r in items)
    return converted if isinstance(result, tuple) else converted[0]


_RNG = np.random.default_rng(34)
_M = _RNG.normal(size=(4, 9))
_COV_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((_M,), {}),
    ((_M.astype(np.float32),), {}),  # NumPy computes in float64
    ((np.arange(24, dtype=np.int32).reshape(3, 8) % 5,), {}),
    ((_M[0],), {}),  # one variable: 0-d
    ((_M + 1j * _M[::-1],), {}),
    ((_M, _M[:2]), {}),
    ((_M.T,), {"rowvar": False}),
    ((_M.T,), {"y": _M[:1].T, "rowvar": False}),
    ((_M,), {"bias": True}),
    ((_M,), {"ddof": 3}),
    ((_M[:, ::2],), {}),  # strided
]


@pytest.mark.parametrize(("args", "kwargs"), _COV_CALLS)
def test_cov_is_numpys(backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    got, want = _numpy_op("cov", backend, *args, **kwargs), np.cov(*args, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_cov_with_too_few_degrees_of_freedom_warns_as_numpy(backend: str) -> None:
    x = np.array([[1.0], [2.0]])
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        want = np.cov(x)
        if backend == "torch":
            import torch

            with prism_core.use_backend("torch"):
                got = np.asarray(prism_core.cov(torch.as_tensor(x)))
        else:
            got = prism_core.cov(x)
    degrees = [w for w in caught if "Degrees of freedom" in str(w.message)]
    assert len(degrees) == 2 and all(w.category is RuntimeWarning for w in degrees)
    np.testing.assert_array_equal(got, want)  # NaN, as NumPy's


_HISTOGRAM_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((_M,), {}),
    ((_M.astype(np.float32),), {}),  # float32 edges
    ((np.arange(50, dtype=np.int32) % 7,), {}),  # float64 edges
    ((np.array([2.5]),), {}),  # one value: the edges around it
    ((np.array([], dtype=np.float64),), {}),
    ((_M,), {"bins": 4}),
    ((_M,), {"bins": np.array([-3.0, -1.0, 0.0, 0.5, 3.0])}),
    ((_M,), {"range": (-1.0, 1.0)}),
    ((_M,), {"weights": _M**2}),
    ((_M,), {"bins": 6, "density": True}),
]


@pytest.mark.parametrize(("args", "kwargs"), _HISTOGRAM_CALLS)
def test_histogram_is_numpys(backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    counts, edges = _numpy_op("histogram", backend, *args, **kwargs)
    want_counts, want_edges = np.histogram(*args, **kwargs)
    for got, want in ((counts, want_counts), (edges, want_edges)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_amax_and_amin_are_max_and_min(backend: str) -> None:
    assert prism_core.amax is prism_core.max and prism_core.amin is prism_core.min
    x = np.arange(12.0).reshape(3, 4) % 5
    np.testing.assert_array_equal(_numpy_op("amax", backend, x, axis=0), np.amax(x, axis=0))
    np.testing.assert_array_equal(_numpy_op("amin", backend, x, axis=1), np.amin(x, axis=1))
