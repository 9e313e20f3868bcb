"""The searching, set and sorting functions of ``prism_core.array_api`` against
``array-api-strict`` at the 2024.12 standard, the reference for the standard's semantics:
``argsort``, ``nonzero``, ``searchsorted``, ``count_nonzero``, the ``unique_*``
family, and the older ``argmax``, ``argmin``, ``sort`` and ``where``.

Hypothesis draws shapes (0-d and empty where the standard allows them), the dtypes the standard
defines each function for, values with many ties (so that stable sorts and repeats show; NaN,
infinities and signed zeros for real floating point) and the keyword arguments.  Each function
runs through Prism's dispatch on NumPy arrays (the NumPy reference) and under
``use_backend("torch")`` (the torch plugin's variants); its result must have
``array_api_strict``'s values, dtype and shape, and the named tuples its field names.  The CuPy
plugin's implementations run with NumPy standing in for CuPy at the end.
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

from .array_api_dtypes import NOT_ON_TORCH, SIGNED, UNSIGNED  # noqa: E402

REAL = (*SIGNED, *UNSIGNED, "float32", "float64")
ALL = ("bool", *REAL, "complex64", "complex128")
#: The family's functions (the standard's searching, set and sorting functions of 2024.12 that
#: Prism did not have before).
FAMILY = (
    "argsort", "nonzero", "searchsorted", "count_nonzero",
    "unique_all", "unique_counts", "unique_inverse", "unique_values",
)  # fmt: skip
#: The older ops of these sections of the standard, checked here too.
OLDER = ("argmax", "argmin", "sort", "where")
#: array_api_strict's modules of these sections of the standard.
STRICT_MODULES = {
    "array_api_strict._searching_functions",
    "array_api_strict._set_functions",
    "array_api_strict._sorting_functions",
}
SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@pytest.fixture(autouse=True)
def standard_2024() -> Iterator[None]:
    """``array_api_strict`` as the 2024.12 standard (its default is newer)."""
    with strict.ArrayAPIStrictFlags(api_version="2024.12"):
        yield


# -- the namespace -------------------------------------------------------------------------------


def test_every_function_of_the_family_is_here() -> None:
    """Every searching, set and sorting function of array_api_strict at 2024.12 is a Prism op,
    the same function on ``prism_core.array_api`` and on ``prism_core``."""
    in_strict = {
        n
        for n in strict.__all__
        if callable(getattr(strict, n)) and getattr(strict, n).__module__ in STRICT_MODULES
    }
    # isin is the 2025.12 standard's (array_api_strict has it, for that version only).
    assert in_strict - {"isin"} == set(FAMILY) | set(OLDER)
    with pytest.raises(RuntimeError, match=r"requires API version 2025\.12"):
        strict.isin(strict.asarray([1]), strict.asarray([1]))
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


def _elements(dtype: np.dtype[Any], special: bool = True) -> st.SearchStrategy[Any]:
    """Few distinct values, so that ties and repeats are common: small integers (the type's
    extremes too), halves, and for real floating point (``special``) NaN, infinities and both
    zeros."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -3), min(info.max, 3)) | st.sampled_from(
            [int(info.min), int(info.max)]
        )
    halves = st.integers(-4, 4).map(lambda k: k / 2)
    if dtype.kind == "c":
        return st.builds(complex, halves, halves)
    specials = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0])
    return halves | specials if special else halves


def _shapes(min_dims: int = 0) -> st.SearchStrategy[tuple[int, ...]]:
    return hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=5)


@st.composite
def _array(
    draw: st.DrawFn, names: tuple[str, ...], backend: str, min_dims: int = 0, special: bool = True
) -> np.ndarray[Any, Any]:
    dt = draw(_dtypes(names, backend))
    return draw(hnp.arrays(dt, draw(_shapes(min_dims)), elements=_elements(dt, special)))


def _axis(draw: st.DrawFn, ndim: int, tuples: bool = True) -> Any:
    """``None``, one axis (negative too) or, where ``tuples``, a tuple of distinct axes."""
    choices: list[st.SearchStrategy[Any]] = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        if tuples:
            choices.append(st.lists(st.integers(0, ndim - 1), unique=True).map(tuple))
    return draw(st.one_of(choices))


# -- running and comparing -------------------------------------------------------------------


def _strict(value: Any) -> Any:
    return strict.asarray(value) if isinstance(value, np.ndarray) else value


def _reference(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``array_api_strict``'s result, NumPy arrays in (a tuple as it is: named or not)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(strict, name)(
            *(_strict(a) for a in args), **{k: _strict(v) for k, v in kwargs.items()}
        )


def _prism(name: str, backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if backend == "numpy":
            return getattr(xp, name)(*args, **kwargs)
        with prism_core.use_backend("torch"):
            result = getattr(xp, name)(*args, **kwargs)
        arrays = result if isinstance(result, tuple) else (result,)
        assert all(type(a).__module__.startswith("torch") for a in arrays), (name, result)
        return result


def _numpy(value: Any) -> np.ndarray[Any, Any]:
    return np.asarray(prism_core.to_numpy(value)) if hasattr(value, "device") else np.asarray(value)


def _same(name: str, actual: Any, expected: Any, exact: bool = True) -> None:
    """Values (NaN equal to NaN), dtype and shape of ``actual`` (Prism's) and ``expected``
    (array_api_strict's); tuples item by item, named ones by the same field names."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), (name, type(actual))
        assert getattr(type(actual), "_fields", None) == getattr(type(expected), "_fields", None)
        assert len(actual) == len(expected), name
        for a, e in zip(actual, expected, strict=True):
            _same(name, a, e, exact)
        return
    got, want = _numpy(actual), np.from_dlpack(expected)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if exact or want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        rtol = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=name)


def _check(name: str, backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    _same(name, _prism(name, backend, args, kwargs), _reference(name, args, kwargs))


BACKENDS = ("numpy", "torch")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: NumPy (the reference variants), then torch's variants."""
    if request.param == "torch":
        request.getfixturevalue("torch_plugin")  # loaded for this test, unloaded after it
    return str(request.param)


# -- sorting ---------------------------------------------------------------------------------


def test_argsort(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(REAL, backend, min_dims=1))
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        descending = data.draw(st.booleans())
        stable = data.draw(st.booleans())
        kwargs = {"axis": axis, "descending": descending, "stable": stable}
        if stable:  # one right answer: ties in their order, descending too
            _check("argsort", backend, (x,), kwargs)
            return
        # stable=False: any order of ties; the elements it picks are the sorted ones.
        got = _numpy(_prism("argsort", backend, (x,), kwargs))
        want = np.from_dlpack(_reference("argsort", (x,), kwargs))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(
            np.take_along_axis(x, got, axis), np.take_along_axis(x, want, axis)
        )

    check()


def test_argsort_descending_keeps_ties_in_order_where_negation_would_not(backend: str) -> None:
    """``argsort(-x)`` is wrong for unsigned integers (and bool, and the smallest int); ties
    keep their order in a stable descending sort."""
    x = np.array([0, 255, 1, 255, 0], dtype=np.uint8)
    got = _numpy(_prism("argsort", backend, (x,), {"descending": True}))
    np.testing.assert_array_equal(got, [1, 3, 2, 0, 4])
    smallest = np.array([-128, 5, -128], dtype=np.int8)
    got = _numpy(_prism("argsort", backend, (smallest,), {"descending": True}))
    np.testing.assert_array_equal(got, [1, 0, 2])


def test_sort(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(REAL, backend, min_dims=1))
        kwargs = {
            "axis": data.draw(st.integers(-x.ndim, x.ndim - 1)),
            "descending": data.draw(st.booleans()),
            "stable": data.draw(st.booleans()),
        }
        _check("sort", backend, (x,), kwargs)

    check()


# -- searching -------------------------------------------------------------------------------


def test_argmax_and_argmin(backend: str) -> None:
    @SETTINGS
    @given(data=st.data(), name=st.sampled_from(["argmax", "argmin"]))
    def check(data: st.DataObject, name: str) -> None:
        x = data.draw(_array(REAL, backend, min_dims=1))
        hypothesis.assume(x.size)  # of nothing: an error on both sides
        axis = _axis(data.draw, x.ndim, tuples=False)
        if axis is not None:
            hypothesis.assume(x.shape[axis])
        kwargs = {"axis": axis, "keepdims": data.draw(st.booleans())}
        _check(name, backend, (x,), kwargs)

    check()


def test_nonzero(backend: str) -> None:
    @SETTINGS
    @given(x=_array(ALL, backend, min_dims=1))
    def check(x: np.ndarray[Any, Any]) -> None:
        _check("nonzero", backend, (x,), {})

    check()


def test_where(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        shapes = data.draw(
            hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=4)
        )
        dt = data.draw(_dtypes(ALL, backend))
        condition = data.draw(hnp.arrays(np.dtype(bool), shapes.input_shapes[0]))
        x1 = data.draw(hnp.arrays(dt, shapes.input_shapes[1], elements=_elements(dt)))
        x2 = data.draw(hnp.arrays(dt, shapes.input_shapes[2], elements=_elements(dt)))
        _check("where", backend, (condition, x1, x2), {})

    check()


def test_searchsorted(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        # NaN's place in a sorted array is left to the library by the standard: none drawn.
        dt = data.draw(_dtypes(REAL, backend))
        x1 = data.draw(hnp.arrays(dt, data.draw(st.integers(0, 8)), elements=_elements(dt, False)))
        x2 = data.draw(hnp.arrays(dt, data.draw(_shapes()), elements=_elements(dt, False)))
        kwargs: dict[str, Any] = {"side": data.draw(st.sampled_from(["left", "right"]))}
        if data.draw(st.booleans()):  # an unsorted x1, and the indices that sort it
            kwargs["sorter"] = np.argsort(x1, kind="stable")
        else:
            x1 = np.sort(x1)
        _check("searchsorted", backend, (x1, x2), kwargs)

    check()


def test_count_nonzero(backend: str) -> None:
    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(_array(ALL, backend))
        kwargs = {"axis": _axis(data.draw, x.ndim), "keepdims": data.draw(st.booleans())}
        _check("count_nonzero", backend, (x,), kwargs)

    check()


# -- sets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
def test_unique(name: str, backend: str) -> None:
    """Sorted values, each NaN its own value; indices of first occurrences; inverse indices of
    x's shape; the named tuples' field names are the standard's."""

    @SETTINGS
    @given(x=_array(ALL, backend))
    def check(x: np.ndarray[Any, Any]) -> None:
        got, want = _prism(name, backend, (x,), {}), _reference(name, (x,), {})
        if "inverse_indices" not in getattr(want, "_fields", ()):
            _same(name, got, want)
            return
        assert getattr(type(got), "_fields", None) == want._fields, type(got)
        for field, mine, theirs in zip(want._fields, got, want, strict=True):
            if field != "inverse_indices":
                _same(f"{name}.{field}", mine, theirs)
                continue
            # Which NaN value each NaN of x maps to is arbitrary (NumPy's unique, under
            # array_api_strict, sorts them unstably): exact elsewhere, and x rebuilt.
            inverse, expected = _numpy(mine), np.from_dlpack(theirs)
            assert inverse.dtype == expected.dtype and inverse.shape == expected.shape
            nan = np.isnan(x) if x.dtype.kind in "fc" else np.zeros(x.shape, bool)
            np.testing.assert_array_equal(inverse[~nan], expected[~nan])
            np.testing.assert_array_equal(_numpy(got.values)[inverse], x)

    check()


def test_unique_keeps_each_nan_and_merges_signed_zeros(backend: str) -> None:
    x = np.array([[2.0, np.nan, -0.0], [np.nan, 0.0, 2.0]])
    result = _prism("unique_all", backend, (x,), {})
    assert type(result).__name__ == "UniqueAllResult"
    assert result._fields == ("values", "indices", "inverse_indices", "counts")
    np.testing.assert_array_equal(_numpy(result.values), [0.0, 2.0, np.nan, np.nan])
    np.testing.assert_array_equal(_numpy(result.indices), [2, 0, 1, 3])
    np.testing.assert_array_equal(_numpy(result.inverse_indices), [[1, 2, 0], [3, 0, 1]])
    np.testing.assert_array_equal(_numpy(result.counts), [2, 2, 1, 1])
    counts = _prism("unique_counts", backend, (x,), {})
    assert counts._fields == ("values", "counts")
    np.testing.assert_array_equal(_numpy(counts.counts), [2, 2, 1, 1])
    values = _prism("unique_values", backend, (x,), {})
    np.testing.assert_array_equal(_numpy(values), [0.0, 2.0, np.nan, np.nan])
    inverse = _prism("unique_inverse", backend, (np.float64(3.0),), {})  # 0-d: flattened
    assert inverse._fields == ("values", "inverse_indices")
    assert _numpy(inverse.values).shape == (1,) and _numpy(inverse.inverse_indices).shape == ()


# -- caller mistakes -------------------------------------------------------------------------


def test_nonzero_of_a_0d_array_is_an_error(backend: str) -> None:
    with pytest.raises(ValueError, match="nonzero: x must have at least one dimension"):
        _prism("nonzero", backend, (np.float64(1.0),), {})


def test_searchsorted_needs_a_vector_x1(backend: str) -> None:
    with pytest.raises(ValueError, match=r"searchsorted: x1 must be one-dimensional.*\(2, 2\)"):
        _prism("searchsorted", backend, (np.ones((2, 2)), np.ones(3)), {})
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        _prism("searchsorted", backend, (np.arange(3.0), 1.5), {"side": "middle"})


# -- the CuPy plugin's implementations, NumPy standing in for CuPy ---------------------------


@pytest.fixture
def cupy_family(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The ``cuda`` backend's functions of these ops with NumPy as ``cupy`` (CuPy mirrors
    NumPy's API): the plugin's own code runs, CuPy's does not (``test_cuda_gpu.py`` runs it on
    a GPU)."""
    cuda = pytest.importorskip("prism_plugin_cuda.backend", reason="prism-plugin-cuda")
    cupy = types.ModuleType("cupy")
    vars(cupy).update(vars(np))
    # CuPy's unique_values is unique(x, equal_nan=False): sorted, where NumPy 2.3's are not.
    cupy.unique_values = lambda x: np.unique(x, equal_nan=False)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    backend = cuda.CudaBackend()
    backend._xp = cupy
    return types.SimpleNamespace(**{op: backend.function(op) for op in FAMILY})


def test_the_cupy_plugin_functions(cupy_family: Any) -> None:
    x = np.array([[3, 1, 3], [0, 1, 2]], dtype=np.uint8)
    for name in ("argsort", "nonzero", "count_nonzero", *FAMILY[4:]):
        fn = getattr(cupy_family, name)
        _same(name, fn(x), _reference(name, (x,), {}))
    _same(
        "argsort",
        cupy_family.argsort(x, axis=0, descending=True),
        _reference("argsort", (x,), {"axis": 0, "descending": True}),
    )
    _same(
        "count_nonzero",
        cupy_family.count_nonzero(x, axis=1, keepdims=True),
        _reference("count_nonzero", (x,), {"axis": 1, "keepdims": True}),
    )
    v = np.array([0, 2, 5], dtype=np.uint8)
    _same(
        "searchsorted",
        cupy_family.searchsorted(np.sort(x[0]), v, side="right"),
        _reference("searchsorted", (np.sort(x[0]), v), {"side": "right"}),
    )
    with pytest.raises(ValueError, match="nonzero: x must have at least one dimension"):
        cupy_family.nonzero(np.float64(1.0))
    with pytest.raises(ValueError, match="searchsorted: x1 must be one-dimensional"):
        cupy_family.searchsorted(x, v)
