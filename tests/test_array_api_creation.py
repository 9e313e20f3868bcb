"""The creation and data-type functions of ``prism_core.array_api`` against ``array-api-strict``,
the reference implementation of the standard's semantics.

The creation functions (``arange``, ``linspace``, ``eye``, ``empty``, the ``*_like`` functions,
``meshgrid``, ``tril``, ``triu``) and ``astype`` run through Prism's dispatch on NumPy arrays
(the NumPy reference) and under ``use_backend("torch")`` (the torch plugin's variants), with
hypothesis drawing the numbers, shapes (0-d and empty included), dtypes and keyword arguments;
each result must have ``array_api_strict``'s values, shape and dtype (``empty``'s values are not
set: its shape and dtype only).  The functions of dtypes (``result_type``, ``can_cast``,
``isdtype``, ``finfo``, ``iinfo``) are checked on every dtype and every pair of dtypes: the
standard's table against ``array_api_strict``, the pairs it leaves undefined against NumPy 2
(Prism's documented rule).  Each error Prism adds names the argument at fault.
"""

from __future__ import annotations

import itertools
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
from prism_core import _dtype_info as dtype_info  # noqa: E402
from prism_core import _promotion as promotion  # noqa: E402
from prism_core import array_api as xp  # noqa: E402
from prism_core.kernel.records.creation import ROWS  # noqa: E402

from .array_api_dtypes import COMPLEX, NOT_ON_TORCH, REAL_FLOATING, SIGNED, UNSIGNED  # noqa: E402
from .conftest import load_bundled_plugin  # noqa: E402

#: The standard's dtypes, by name.
STANDARD = ("bool", *SIGNED, *UNSIGNED, *REAL_FLOATING, *COMPLEX)
BACKENDS = ("numpy", "torch")
#: The functions of this family that are ops, and those that take dtypes.
#: The family's ops Prism had before the standard's family was complete.
EARLIER = ("asarray", "zeros", "ones", "full", "to_numpy", "triu_indices", "from_dlpack")
OPS = tuple(row.name for row in ROWS if row.name not in EARLIER)
PLAIN = ("result_type", "can_cast", "isdtype", "finfo", "iinfo")
SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """``numpy``: dispatch in automatic mode on NumPy arrays; ``torch``: under
    ``use_backend("torch")``, the installed torch plugin loaded through its entry point (the
    suite's environment loads no plugin by itself)."""
    if request.param == "numpy":
        yield "numpy"
        return
    pytest.importorskip("torch", reason="the torch backend's variants need torch")
    load_bundled_plugin("torch")
    yield "torch"
    prism_core.extending.reload_plugins()


def call(backend: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """``prism_core.array_api.<name>(*args, **kwargs)`` through dispatch, on ``backend``: the
    result as NumPy arrays (a list stays a list), after checking it is the backend's own."""
    fn = getattr(xp, name)
    if backend == "numpy":
        result = fn(*args, **kwargs)
        items = result if isinstance(result, list) else [result]
        assert all(isinstance(r, np.ndarray) for r in items), (name, type(items[0]))
        return result
    import torch

    with prism_core.use_backend("torch"):
        result = fn(*args, **kwargs)
    items = result if isinstance(result, list) else [result]
    assert all(isinstance(r, torch.Tensor) for r in items), (name, [type(r) for r in items])
    converted = [np.asarray(prism_core.to_numpy(r)) for r in items]
    return converted if isinstance(result, list) else converted[0]


def reference(name: str, *args: Any, **kwargs: Any) -> Any:
    """``array_api_strict.<name>``'s result as NumPy arrays: arrays and dtypes among the
    arguments are given as its own."""

    def own(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return strict.asarray(value)
        if isinstance(value, (np.dtype, prism_core.DType)):
            return getattr(strict, "bool" if np.dtype(value) == np.bool_ else np.dtype(value).name)
        return value

    result = getattr(strict, name)(*map(own, args), **{k: own(v) for k, v in kwargs.items()})
    if isinstance(result, (list, tuple)):
        return [np.from_dlpack(r) for r in result]
    return np.from_dlpack(result)


def same(actual: Any, expected: Any, *, values: bool = True, exact: bool = True) -> None:
    """Same shape and dtype (and values, NaN-aware; within float tolerances unless ``exact``)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if not values:
        return
    if exact or expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected)
        return
    rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)


def dtypes_on(backend: str, names: tuple[str, ...] = STANDARD) -> list[str]:
    return [n for n in names if backend == "numpy" or n not in NOT_ON_TORCH]


def _elements(dtype: np.dtype[Any]) -> st.SearchStrategy[Any]:
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -100), min(info.max, 100))
    part = st.floats(-1e3, 1e3, width=32 if dtype in (np.float32, np.complex64) else 64)
    return st.builds(complex, part, part) if dtype.kind == "c" else part


@st.composite
def arrays(
    draw: st.DrawFn, backend: str, names: tuple[str, ...] = STANDARD, min_dims: int = 0
) -> np.ndarray[Any, Any]:
    dt = np.dtype(draw(st.sampled_from(dtypes_on(backend, names))))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=min_dims + 2, min_side=0, max_side=4))
    return draw(hnp.arrays(dt, shape, elements=_elements(dt)))


# -- creation from numbers -----------------------------------------------------------------------


@st.composite
def _arange_args(draw: st.DrawFn) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Integers (int64 by default) or floats (float64), a non-zero step of either sign, and
    sometimes a dtype of the arguments' kind."""
    if draw(st.booleans()):
        number: st.SearchStrategy[Any] = st.integers(-50, 50)
        step = st.integers(-7, 7).filter(bool)
        kinds: tuple[str, ...] = ("int8", "int16", "int32", "int64", "float32", "float64")
    else:
        number = st.floats(-50, 50).map(lambda v: round(v, 2))
        step = st.sampled_from([0.25, -0.5, 1.5, 3.0, -2.0])
        kinds = REAL_FLOATING
    start, stop = draw(number), draw(st.none() | number)
    args = (start,) if stop is None else (start, stop, draw(step))
    kwargs = {"dtype": np.dtype(draw(st.sampled_from(kinds)))} if draw(st.booleans()) else {}
    if stop is None and isinstance(start, int) and start < 0:
        args = (-start,)
    return args, kwargs


def test_arange_as_the_standard(backend: str) -> None:
    @SETTINGS
    @given(case=_arange_args())
    def check(case: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        args, kwargs = case
        expected = reference("arange", *args, **kwargs)
        hypothesis.assume(expected.size < 1000)  # int8 ranges wrap past 127 on NumPy
        same(call(backend, "arange", *args, **kwargs), expected, exact=backend == "numpy")

    check()


def test_arange_default_dtypes_are_the_standards() -> None:
    assert xp.arange(3).dtype == np.int64  # the default integer on every platform
    assert xp.arange(3.0).dtype == np.float64
    assert xp.arange(0, 1, 0.25).dtype == np.float64
    # A fractional step in an integer dtype: values counted in float64, truncated.
    np.testing.assert_array_equal(xp.arange(0, 2, 0.5, dtype=xp.int64), [0, 0, 1, 1])


@st.composite
def _linspace_args(draw: st.DrawFn) -> tuple[tuple[Any, ...], dict[str, Any]]:
    real = st.floats(-100, 100).map(lambda v: round(v, 3))
    number = real | st.builds(complex, real, real) if draw(st.booleans()) else real
    start, stop = draw(number), draw(number)
    kwargs: dict[str, Any] = {"endpoint": draw(st.booleans())}
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if draw(st.booleans()):
        kwargs["dtype"] = np.dtype(draw(st.sampled_from(COMPLEX if is_complex else REAL_FLOATING)))
    return (start, stop, draw(st.integers(0, 20))), kwargs


def test_linspace_as_the_standard(backend: str) -> None:
    @SETTINGS
    @given(case=_linspace_args())
    def check(case: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        args, kwargs = case
        same(call(backend, "linspace", *args, **kwargs), reference("linspace", *args, **kwargs),
             exact=False)  # fmt: skip

    check()


def test_linspace_into_integers_floors(backend: str) -> None:
    """The standard leaves integer ``linspace`` to the library: Prism floors (NumPy 2's)."""
    out = call(backend, "linspace", -3, 2, 6, dtype="int64")
    np.testing.assert_array_equal(out, [-3, -2, -1, 0, 1, 2])
    np.testing.assert_array_equal(call(backend, "linspace", -1, 0, 3, dtype="int32"), [-1, -1, 0])


def test_eye_as_the_standard(backend: str) -> None:
    @SETTINGS
    @given(
        n_rows=st.integers(0, 6),
        n_cols=st.none() | st.integers(0, 6),
        k=st.integers(-7, 7),
        dtype=st.none() | st.sampled_from(dtypes_on(backend)),
    )
    def check(n_rows: int, n_cols: int | None, k: int, dtype: str | None) -> None:
        kwargs: dict[str, Any] = {"k": k}
        if dtype is not None:
            kwargs["dtype"] = np.dtype(dtype)
        expected = reference("eye", n_rows, n_cols, **kwargs)
        same(call(backend, "eye", n_rows, n_cols, **kwargs), expected)

    check()


def test_empty_has_the_shape_and_dtype(backend: str) -> None:
    @SETTINGS
    @given(
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
        dtype=st.none() | st.sampled_from(dtypes_on(backend)),
        as_int=st.booleans(),
    )
    def check(shape: tuple[int, ...], dtype: str | None, as_int: bool) -> None:
        given_shape: Any = shape[0] if as_int and len(shape) == 1 else shape
        kwargs = {} if dtype is None else {"dtype": np.dtype(dtype)}
        expected = reference("empty", given_shape, **kwargs)
        same(call(backend, "empty", given_shape, **kwargs), expected, values=False)

    check()


# -- creation like an array ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like_functions_as_the_standard(backend: str, name: str) -> None:
    @SETTINGS
    @given(data=st.data(), x=arrays(backend), retype=st.booleans())
    def check(data: st.DataObject, x: np.ndarray[Any, Any], retype: bool) -> None:
        kwargs: dict[str, Any] = {}
        if retype:
            kwargs["dtype"] = np.dtype(data.draw(st.sampled_from(dtypes_on(backend))))
        dt = kwargs.get("dtype", x.dtype)
        args: tuple[Any, ...] = (x,)
        if name == "full_like":  # a Python scalar of the result's kind
            value = data.draw(_elements(np.dtype(dt)))
            args = (x, {"b": bool, "i": int, "u": int, "f": float, "c": complex}[dt.kind](value))
        expected = reference(name, *args, **kwargs)
        same(call(backend, name, *args, **kwargs), expected, values=name != "empty_like")

    check()


def test_full_like_truncates_a_float_into_integers(backend: str) -> None:
    """The standard leaves it to the library; Prism does what NumPy does."""
    x = np.zeros((2, 2), dtype=np.int32)
    out = call(backend, "full_like", x, -2.75)
    same(out, np.full_like(x, -2.75))


# -- from arrays ---------------------------------------------------------------------------------


@st.composite
def _vectors(draw: st.DrawFn, backend: str) -> list[np.ndarray[Any, Any]]:
    dt = np.dtype(draw(st.sampled_from(dtypes_on(backend))))
    count = draw(st.integers(0, 3))
    sizes = [draw(st.integers(0, 4)) for _ in range(count)]
    return [draw(hnp.arrays(dt, (n,), elements=_elements(dt))) for n in sizes]


def test_meshgrid_as_the_standard(backend: str) -> None:
    @SETTINGS
    @given(vectors=_vectors(backend), indexing=st.sampled_from(["xy", "ij"]))
    def check(vectors: list[np.ndarray[Any, Any]], indexing: str) -> None:
        expected = reference("meshgrid", *vectors, indexing=indexing)
        actual = call(backend, "meshgrid", *vectors, indexing=indexing)
        assert isinstance(actual, list)  # the standard's list (NumPy 2 gives a tuple)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            same(a, e)

    check()


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangles_as_the_standard(backend: str, name: str) -> None:
    @SETTINGS
    @given(x=arrays(backend, min_dims=2), k=st.integers(-5, 5))
    def check(x: np.ndarray[Any, Any], k: int) -> None:
        same(call(backend, name, x, k=k), reference(name, x, k=k))

    check()


# -- astype --------------------------------------------------------------------------------------


def test_astype_as_the_standard(backend: str) -> None:
    @SETTINGS
    @given(data=st.data(), x=arrays(backend), copy=st.booleans())
    def check(data: st.DataObject, x: np.ndarray[Any, Any], copy: bool) -> None:
        to = np.dtype(data.draw(st.sampled_from(dtypes_on(backend))))
        hypothesis.assume(not (x.dtype.kind == "c" and to.kind != "c"))  # refused: see below
        hypothesis.assume(not (x.dtype.kind in "fc" and to.kind in "iub"))  # NaN, overflow
        prism_dtype = prism_core.dtype(to)  # a Prism dtype, as well as NumPy's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = reference("astype", x, to, copy=copy)
            actual = call(backend, "astype", x, prism_dtype, copy=copy)
        same(actual, expected)

    check()


def test_astype_copy_false_returns_x_itself(backend: str) -> None:
    if backend == "numpy":
        x = np.arange(4.0)
        assert xp.astype(x, xp.float64, copy=False) is x
        assert xp.astype(x, np.float64, copy=False) is x  # a backend's dtype as well
        assert xp.astype(x, xp.float64) is not x  # copy=True: a new array
        assert xp.astype(x, "float32", copy=False).dtype == np.float32
        return
    import torch

    t = torch.arange(4.0, dtype=torch.float64)
    with prism_core.use_backend("torch"):
        assert xp.astype(t, xp.float64, copy=False) is t
        assert xp.astype(t, torch.float64, copy=False) is t
        assert xp.astype(t, torch.float64) is not t
        assert xp.astype(t, "int32", copy=False).dtype == torch.int32


# -- the functions of dtypes ---------------------------------------------------------------------


def _strict_dtype(name: str) -> Any:
    return getattr(strict, name)


def _strict_name(dtype: Any) -> str:
    return str(dtype).rpartition(".")[2]  # "array_api_strict.int16"


def _prism_result(*items: Any) -> str:
    return str(xp.result_type(*items).name).replace("bool_", "bool")


@pytest.mark.parametrize(("a", "b"), list(itertools.product(STANDARD, STANDARD)))
def test_result_type_of_every_pair(a: str, b: str) -> None:
    """The standard's table where it has the pair (``array_api_strict``), NumPy 2's where it
    does not (mixed kinds, int64 with uint64): Prism's documented rule."""
    try:
        want = _strict_name(strict.result_type(_strict_dtype(a), _strict_dtype(b)))
    except TypeError:
        want = np.result_type(np.dtype(a), np.dtype(b)).name
    assert _prism_result(a, b) == want
    # Arrays and dtypes of any library are read alike.
    assert xp.result_type(np.zeros(1, dtype=a), np.dtype(b)).name.replace("_", "") == want


@pytest.mark.parametrize("a", STANDARD)
@pytest.mark.parametrize("scalar", [True, 1, 1.0, 1j])
def test_result_type_with_python_scalars(a: str, scalar: Any) -> None:
    """Python scalars are weak: the standard's where it defines the pair, NumPy 2's (NEP 50)
    where not; no value-based casting."""
    try:
        want = _strict_name(strict.result_type(_strict_dtype(a), scalar))
    except TypeError:
        want = np.result_type(np.dtype(a), scalar).name
    assert _prism_result(a, scalar) == want
    assert _prism_result(a, scalar, scalar) == want


def test_result_type_of_several_and_the_types_numpy_has_beyond_the_standard() -> None:
    assert xp.result_type(xp.int8, xp.uint8, xp.int16, xp.float32) == xp.float32
    assert xp.result_type(np.int8, 1000) == xp.int8  # no value-based casting
    for a, b in itertools.combinations_with_replacement(
        ("bool", "int8", "uint16", "int32", "uint64", "float16", "float64", "complex64"), 2
    ):
        assert xp.result_type(a, b) == np.result_type(a, b), (a, b)
    assert xp.result_type(prism_core.bfloat16, prism_core.bfloat16) == prism_core.bfloat16


@pytest.mark.parametrize(("a", "b"), list(itertools.product(STANDARD, STANDARD)))
def test_can_cast_every_pair(a: str, b: str) -> None:
    try:
        strict.result_type(_strict_dtype(a), _strict_dtype(b))
    except TypeError:  # outside the table: NumPy's "safe" casting
        assert xp.can_cast(a, b) == np.can_cast(a, b), (a, b)
        return
    assert xp.can_cast(a, b) == strict.can_cast(_strict_dtype(a), _strict_dtype(b)), (a, b)
    assert xp.can_cast(np.zeros(1, dtype=a), np.dtype(b)) == xp.can_cast(a, b)


KINDS = (
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
)


@pytest.mark.parametrize("name", STANDARD)
def test_isdtype_of_every_dtype(name: str) -> None:
    d = _strict_dtype(name)
    kinds: list[Any] = [*KINDS, ("bool", "real floating"), ("complex floating", "integral")]
    for kind in kinds:
        assert xp.isdtype(getattr(xp, name), kind) == strict.isdtype(d, kind), (name, kind)
    for other in STANDARD:
        expected = strict.isdtype(d, _strict_dtype(other))
        assert xp.isdtype(name, getattr(xp, other)) == expected, (name, other)
        assert xp.isdtype(np.dtype(name), (np.dtype(other), "bool")) == (expected or name == "bool")


@pytest.mark.parametrize("name", [*REAL_FLOATING, *COMPLEX])
def test_finfo_of_every_floating_dtype(name: str) -> None:
    want, got = strict.finfo(_strict_dtype(name)), xp.finfo(getattr(xp, name))
    for field in ("bits", "eps", "max", "min", "smallest_normal"):
        assert getattr(got, field) == getattr(want, field), field
    assert got.dtype == np.dtype(_strict_name(want.dtype)) and isinstance(
        got.dtype, prism_core.DType
    )
    assert xp.finfo(np.zeros(2, dtype=name)) == got  # an array's dtype
    assert isinstance(got.eps, float) and isinstance(got.bits, int)


def test_finfo_of_the_types_beyond_the_standard() -> None:
    half = np.finfo(np.float16)
    got = xp.finfo(prism_core.float16)
    assert (got.bits, got.eps, got.max, got.smallest_normal) == (
        16,
        float(half.eps),
        float(half.max),
        float(half.smallest_normal),
    )
    assert xp.finfo(prism_core.bfloat16).eps == 2.0**-7


@pytest.mark.parametrize("name", [*SIGNED, *UNSIGNED])
def test_iinfo_of_every_integer_dtype(name: str) -> None:
    want, got = strict.iinfo(_strict_dtype(name)), xp.iinfo(name)
    assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)
    assert got.dtype == np.dtype(name) and isinstance(got.dtype, prism_core.DType)


# -- device= -------------------------------------------------------------------------------------

#: One call of each creation function, without ``device``.
CREATE: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "arange": ((3,), {}),
    "linspace": ((0.0, 1.0, 3), {}),
    "eye": ((2,), {}),
    "empty": ((2,), {}),
    "empty_like": ((np.ones(2),), {}),
    "zeros_like": ((np.ones(2),), {}),
    "ones_like": ((np.ones(2),), {}),
    "full_like": ((np.ones(2), 3.0), {}),
    "astype": ((np.ones(2), "float32"), {}),
}


@pytest.mark.parametrize("name", sorted(CREATE))
def test_host_devices_create_in_host_memory(backend: str, name: str) -> None:
    args, kwargs = CREATE[name]
    host = xp.__array_namespace_info__().default_device()
    for device in ("cpu", host, host.description):
        out = call(backend, name, *args, **kwargs, device=device)
        assert out.shape == (2, 2) if name == "eye" else out.shape[0] in (2, 3)
    if backend == "torch":
        import torch

        with prism_core.use_backend("torch"):
            out = getattr(xp, name)(*args, **kwargs, device=torch.device("cpu"))
        assert out.device == torch.device("cpu")


@pytest.mark.parametrize("name", sorted(CREATE))
def test_numpy_names_a_device_it_cannot_create_on(name: str) -> None:
    args, kwargs = CREATE[name]
    with pytest.raises(ValueError, match=rf"{name}: device='tpu:3' .*'cpu'"):
        getattr(xp, name)(*args, **kwargs, device="tpu:3")


# -- errors that name the argument ---------------------------------------------------------------

#: name -> (args, kwargs, exception, what the message must say), on every backend.
ERRORS: dict[str, tuple[tuple[Any, ...], dict[str, Any], type[Exception], str]] = {
    "arange-step": ((0, 5, 0), {}, ValueError, "arange: step must not be 0"),
    "linspace-num": ((0.0, 1.0, -1), {}, ValueError, "linspace: num must be 0 or more"),
    "tril-x": ((np.arange(3.0),), {}, ValueError, "tril: x must have 2 dimensions or more"),
    "triu-x": ((np.float64(2.0),), {}, ValueError, "triu: x must have 2 dimensions or more"),
    "meshgrid-indexing": (
        (np.arange(2.0),),
        {"indexing": "yx"},
        ValueError,
        "meshgrid: indexing must be 'xy' or 'ij', not 'yx'",
    ),
    "meshgrid-dtypes": (
        (np.arange(2.0), np.arange(2)),
        {},
        ValueError,
        "meshgrid: arrays must all have one dtype .* float64, int64",
    ),
    "meshgrid-dims": (
        (np.zeros((2, 2)),),
        {},
        ValueError,
        r"meshgrid: arrays\[0\] must be 1-D",
    ),
    "astype-complex": (
        (np.ones(2, dtype=np.complex128), "float64"),
        {},
        TypeError,
        "astype: x is complex128; the Array API forbids casting complex numbers to float64",
    ),
    "full_like-fill_value": (
        (np.ones(2), np.ones(2)),
        {},
        TypeError,
        "full_like: fill_value must be a Python bool, int, float or complex, not ndarray",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_the_argument(backend: str, case: str) -> None:
    args, kwargs, error, message = ERRORS[case]
    name = case.partition("-")[0]
    with pytest.raises(error, match=message):
        call(backend, name, *args, **kwargs)


@pytest.mark.parametrize(
    ("fn", "args", "error", "message"),
    [
        (xp.result_type, (), ValueError, "give at least one array or dtype"),
        (xp.result_type, (1, 2.0), ValueError, "give at least one array or dtype"),
        (xp.result_type, ("float32", object()), TypeError, "argument 1 .* is no array, dtype"),
        (xp.result_type, (prism_core.bfloat16, "float16"), TypeError, "bfloat16 promotes with"),
        (xp.isdtype, ("int8", "integer"), ValueError, "kind 'integer' is no kind .*'integral'"),
        (xp.isdtype, ("int8", ("bool", ("integral",))), TypeError, "holds a tuple"),
        (xp.isdtype, ("int8", 3), TypeError, "kind must be a kind's name, a dtype or a tuple"),
        (xp.finfo, ("int32",), ValueError, "finfo: int32 is not a floating-point type"),
        (xp.finfo, ("nonsense",), TypeError, "finfo: type must be a dtype or an array"),
        (xp.iinfo, (xp.float32,), ValueError, "iinfo: float32 is not an integer type"),
        (xp.iinfo, (xp.bool,), ValueError, "iinfo: bool_ is not an integer type"),
    ],
)
def test_dtype_function_errors(
    fn: Callable[..., Any], args: tuple[Any, ...], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fn(*args)


# -- the namespace -------------------------------------------------------------------------------


def test_every_creation_and_dtype_function_of_the_standard_is_here() -> None:
    """The family's list is the standard's: every creation and data-type function
    ``array_api_strict`` has but those of earlier increments (``asarray``, ``zeros``, ...) and
    of other families (``broadcast_*``), each Prism's op (or plain function) on both
    namespaces."""
    earlier = set(EARLIER) - {"to_numpy", "triu_indices"}  # Prism's own, not the standard's
    standard = {
        "arange", "linspace", "eye", "empty", "empty_like", "zeros_like", "ones_like",
        "full_like", "meshgrid", "tril", "triu", "astype", *PLAIN,
    }  # fmt: skip
    assert set(OPS) | set(PLAIN) == standard
    assert standard | earlier <= set(strict.__all__)
    for name in OPS:
        op = prism_core.get_op(name)
        assert getattr(xp, name) is op.function, name
        assert getattr(prism_core, name) is op.function, name
    for name in PLAIN:
        module = dtype_info if name in ("finfo", "iinfo") else promotion
        assert getattr(xp, name) is getattr(module, name), name
        assert getattr(prism_core, name) is getattr(module, name), name  # on prism_core too


# -- NumPy's spellings (docs/array-api.md, "NumPy's spellings") -----------------------------------


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("dtype", [np.int32, "float32", prism_core.int64])
def test_dtype_may_be_given_by_position_as_numpy_allows(
    backend: str, name: str, dtype: Any
) -> None:
    got = call(backend, name, (3, 4), dtype)
    numpy_dtype = np.dtype("int64" if isinstance(dtype, prism_core.DType) else dtype)
    same(got, getattr(np, name)((3, 4), numpy_dtype), values=name != "empty")


def test_full_takes_its_dtype_by_position_after_the_fill_value(backend: str) -> None:
    same(call(backend, "full", (2, 3), 7, np.float32), np.full((2, 3), 7, np.float32))
    same(call(backend, "full", (2,), 1.5, "float64"), np.full((2,), 1.5))


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("k", [1, -1, 0, 5])
def test_k_may_be_given_by_position_as_numpy_allows(backend: str, name: str, k: int) -> None:
    x = np.arange(1.0, 13.0).reshape(3, 4)
    same(call(backend, name, x, k), getattr(np, name)(x, k))


def test_an_argument_given_both_ways_is_a_type_error(backend: str) -> None:
    with pytest.raises(TypeError):
        call(backend, "zeros", (2,), np.int32, dtype=np.int64)
    with pytest.raises(TypeError):
        call(backend, "triu", np.ones((2, 2)), 1, k=1)


def test_the_standards_keyword_spelling_still_works_and_device_stays_keyword_only() -> None:
    same(xp.zeros((2,), dtype=xp.int32), np.zeros((2,), np.int32))
    same(xp.triu(np.ones((3, 3)), k=1), np.triu(np.ones((3, 3)), 1))
    with pytest.raises(TypeError):
        prism_core.zeros((2,), None, None)  # device by position: neither NumPy's nor the standard's
