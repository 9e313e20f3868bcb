"""The ops of the numerics protocol against NumPy itself: joining (``stack``,
``concat``), selection (``where``, ``clip``, ``maximum``, ``minimum``), searching and sorting
(``argmax``, ``argmin``, ``sort``, ``cumulative_sum``), the norms and factorisations of
``linalg`` (``norm``, ``vector_norm``, ``matrix_norm``, ``qr``, ``cholesky``), ``triu_indices``,
and the gradient and interchange ops (``requires_grad``, ``detach``, ``from_dlpack``).

Each op is called as users call it (``call``: through the dispatcher) and through its NumPy
variant directly (``direct``), and compared with the NumPy function it stands for; a caller's
mistake raises NumPy's exception (or, where Prism words it, one that names the argument).  The
fallbacks for NumPy versions older than the Array API functions (NumPy < 2.1) are run here by
hiding the newer functions, and compared with them.  The last section runs the conformance
suite's new cases and comparisons on backends made to be right or wrong.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import prism_core
from prism_core._builtin import numpy_ops
from prism_core.backend_kit import QRResult
from prism_core.kernel.dispatch import catalogue
from prism_core.kernel.dispatch.ops import get_op, remove_variants
from prism_core.kernel.oprecord import OpRecord
from prism_core.kernel.records import families
from prism_core.testing import check_backend, conformance_checks, input_cases, keyword_cases

VARIANTS = {v.op: v for v in numpy_ops.variants()}

NEW_OPS = (
    "stack",
    "concat",
    "where",
    "clip",
    "maximum",
    "minimum",
    "argmax",
    "argmin",
    "sort",
    "cumulative_sum",
    "linalg.norm",
    "linalg.vector_norm",
    "linalg.matrix_norm",
    "linalg.qr",
    "linalg.cholesky",
    "triu_indices",
    "requires_grad",
    "detach",
    "from_dlpack",
)


def direct(name: str, *args: Any, **kwargs: Any) -> Any:
    """The NumPy variant of ``name`` (or of the op it is an alias of), bypassing dispatch."""
    return VARIANTS[catalogue.ALIASES.get(name, name)].resolve()(*args, **kwargs)


def dispatched(name: str, *args: Any, **kwargs: Any) -> Any:
    return get_op(name)(*args, **kwargs)


BOTH = pytest.mark.parametrize("via", [direct, dispatched], ids=["direct", "dispatched"])
REAL = [np.float32, np.float64, np.int32, np.int64]
INEXACT = [np.float32, np.float64, np.complex64, np.complex128]


def data(*shape: int, dtype: Any = np.float64, seed: int = 0) -> Any:
    """The same numbers every time; small integers (with ties) for integer dtypes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * (3 if np.dtype(dtype).kind in "iu" else 1)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def same(result: Any, expected: Any) -> None:
    """Equal values (NaN where NaN), shape and dtype; tuples item by item."""
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected, strict=True):
            same(r, e)
        return
    assert np.shape(result) == np.shape(expected)
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(result, expected)


def close(result: Any, expected: Any) -> None:
    """As :func:`same`, to the dtype's rounding (for results computed by other routines):
    relative to the largest expected magnitude."""
    assert np.shape(result) == np.shape(expected)
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    single = np.asarray(expected).dtype in (np.float32, np.complex64)
    rtol = 1e-5 if single else 1e-10
    scale = float(np.max(np.abs(expected))) if np.size(expected) else 0.0
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * max(scale, 1.0))


# -- the catalogue ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", NEW_OPS)
def test_new_ops_are_declared_public_and_have_numpy_variants(name: str) -> None:
    op = get_op(name)
    assert op.name == name and name in catalogue.CATALOGUE
    module, _, attribute = name.rpartition(".")
    namespace = getattr(prism_core, module) if module else prism_core
    assert getattr(namespace, attribute) is op.function
    assert attribute in dir(namespace)
    reference = [v for v in op.variants if v.backend == "numpy" and v.reference]
    assert [v.name for v in reference] == [f"numpy.{name}"]
    doc = op.__doc__ or ""
    assert doc.startswith(f"{name}(") and ("Array API" in doc or "NumPy" in doc)


def test_aliases_of_the_new_ops() -> None:
    assert prism_core.cumsum is prism_core.cumulative_sum
    assert prism_core.concatenate is prism_core.concat
    assert get_op("cumsum").name == "cumulative_sum"
    assert get_op("concatenate").name == "concat"
    assert catalogue.ALIASES["cumsum"] == "cumulative_sum"
    assert catalogue.ALIASES["concatenate"] == "concat"


def test_sequences_of_arrays_are_declared() -> None:
    specs = {s.name: s for s in catalogue.SPECS}
    assert specs["stack"].sequences == specs["concat"].sequences == (0,)
    assert specs["stack"].array_args == specs["concat"].array_args == (0,)
    assert {s.name for s in catalogue.SPECS if s.sequences} == {"stack", "concat"}
    assert specs["triu_indices"].array_args == ()  # a creation op
    assert specs["matmul"].sequences == ()  # the default


def test_a_sequence_must_be_an_array_argument() -> None:
    bad = OpRecord("bad_join", "(arrays, /)", "no", (0,), "copy", "array", "numpy:x", (1,))
    with pytest.raises(ValueError, match=r"'bad_join': sequences \(1,\) must be among its"):
        families._check((*families.RECORDS, bad))


# -- stack and concat ------------------------------------------------------------------------
@BOTH
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("container", [list, tuple])
def test_stack(via: Callable[..., Any], axis: int, container: type) -> None:
    arrays = container(data(3, 4, seed=k) for k in range(3))
    same(via("stack", arrays, axis=axis), np.stack(arrays, axis=axis))
    same(via("stack", arrays), np.stack(arrays))


@BOTH
def test_stack_promotes_and_handles_edges(via: Callable[..., Any]) -> None:
    mixed = [np.arange(3, dtype=np.int32), np.ones(3, np.float32)]
    same(via("stack", mixed), np.stack(mixed))  # float64, as NumPy promotes
    same(via("stack", [np.zeros((0, 2))] * 2), np.zeros((2, 0, 2)))
    same(via("stack", [np.float64(1.5), np.float64(2.5)]), np.array([1.5, 2.5]))
    strided = data(4, 8)[:, ::2]
    same(via("stack", [strided, np.asfortranarray(strided)], axis=1), np.stack([strided] * 2, 1))


@BOTH
def test_stack_errors(via: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="need at least one array"):
        via("stack", [])
    with pytest.raises(ValueError, match="same shape"):
        via("stack", [np.zeros(2), np.zeros(3)])
    with pytest.raises(np.exceptions.AxisError, match="axis 3"):
        via("stack", [np.zeros(2), np.zeros(2)], axis=3)
    with pytest.raises(TypeError):
        via("stack", [np.zeros(2)], 0)  # the axis is keyword-only, as in the Array API


@BOTH
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concat(via: Callable[..., Any], axis: int | None) -> None:
    arrays = [data(2, 3, seed=1), data(2, 3, seed=2), data(2, 3, seed=3)]
    same(via("concat", arrays, axis=axis), np.concatenate(arrays, axis=axis))
    same(via("concatenate", tuple(arrays), axis=axis), np.concatenate(arrays, axis=axis))
    uneven = [data(1, 3), data(4, 3, dtype=np.float32)]
    same(via("concat", uneven), np.concatenate(uneven))


@BOTH
def test_concat_errors(via: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="need at least one array to concatenate"):
        via("concat", [])
    with pytest.raises(ValueError, match="zero-dimensional arrays cannot be concatenated"):
        via("concat", [np.float64(1), np.float64(2)])
    with pytest.raises(ValueError, match="same number of dimensions"):
        via("concat", [np.zeros(2), np.zeros((2, 2))])
    with pytest.raises(ValueError, match="along dimension 1"):
        via("concat", [np.zeros((2, 2)), np.zeros((2, 3))])


# -- where, clip, maximum, minimum -----------------------------------------------------------
@BOTH
@pytest.mark.parametrize("dtype", [np.bool_, *REAL, np.complex128])
def test_where(via: Callable[..., Any], dtype: Any) -> None:
    x1, x2 = data(5, 6, dtype=dtype, seed=1), data(6, dtype=dtype, seed=2)
    condition = data(5, 1, seed=3) > 0  # broadcasts against both
    same(via("where", condition, x1, x2), np.where(condition, x1, x2))
    same(via("where", condition, x1, 0), np.where(condition, x1, 0))  # weak Python scalar
    same(via("where", np.array([1, 0, 2]), 1.5, -1.5), np.array([1.5, -1.5, 1.5]))


@BOTH
def test_where_takes_exactly_three_arguments(via: Callable[..., Any]) -> None:
    with pytest.raises(TypeError, match="x1"):  # not NumPy's one-argument nonzero
        via("where", np.array([True, False]))
    with pytest.raises(ValueError, match="could not be broadcast"):
        via("where", np.ones(2, bool), np.ones(3), np.ones(4))


@BOTH
@pytest.mark.parametrize("dtype", REAL)
def test_clip(via: Callable[..., Any], dtype: Any) -> None:
    x = data(40, dtype=dtype)
    low, high = (-1, 1) if np.dtype(dtype).kind == "i" else (-0.5, 0.5)
    same(via("clip", x, low, high), np.clip(x, low, high))
    same(via("clip", x, min=low), np.clip(x, low, None))
    same(via("clip", x, max=high), np.clip(x, None, high))
    same(via("clip", x, None, high), np.clip(x, None, high))
    lower, upper = data(40, dtype=dtype, seed=1), data(40, dtype=dtype, seed=2)
    lower, upper = np.minimum(lower, upper), np.maximum(lower, upper)
    same(via("clip", x, lower, upper), np.clip(x, lower, upper))
    # min > max gives max, as in NumPy and the Array API.
    same(via("clip", x, high, low), np.full_like(x, low))
    # No bounds: a copy of x.
    unbounded = via("clip", x)
    same(unbounded, x)
    assert not np.shares_memory(unbounded, x)


@BOTH
def test_clip_keeps_nan_and_broadcasts(via: Callable[..., Any]) -> None:
    x = np.array([[np.nan, -2.0, 0.5, 3.0]])
    same(via("clip", x, -1.0, 1.0), np.array([[np.nan, -1.0, 0.5, 1.0]]))
    with pytest.raises(ValueError, match="could not be broadcast"):
        via("clip", x, np.zeros(3), 1.0)


def test_clip_without_bounds_on_numpy_older_than_2_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """NumPy < 2.1 asks for one bound; the variant then copies x, as NumPy 2.1 does."""
    real_clip = np.clip

    def clip_of_numpy_2_0(x: Any, low: Any, high: Any) -> Any:
        if low is None and high is None:
            raise ValueError("One of max or min must be given")
        return real_clip(x, low, high)

    monkeypatch.setattr(np, "clip", clip_of_numpy_2_0)
    x = data(5)
    unbounded = direct("clip", x)
    same(unbounded, x)
    assert not np.shares_memory(unbounded, x)
    same(direct("clip", x, 0.0), real_clip(x, 0.0, None))


@BOTH
@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("dtype", REAL)
def test_maximum_minimum(via: Callable[..., Any], name: str, dtype: Any) -> None:
    reference = getattr(np, name)
    x1, x2 = data(3, 7, dtype=dtype, seed=1), data(7, dtype=dtype, seed=2)
    same(via(name, x1, x2), reference(x1, x2))
    same(via(name, x1, 0), reference(x1, 0))
    same(via(name, 1.5, x2), reference(1.5, x2))
    with_nan = np.array([np.nan, 1.0, 2.0])
    same(via(name, with_nan, np.array([0.0, np.nan, 3.0])), reference(with_nan, [0, np.nan, 3]))


# -- argmax, argmin, sort, cumulative_sum ----------------------------------------------------
@BOTH
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", REAL)
def test_argmax_argmin(via: Callable[..., Any], name: str, dtype: Any) -> None:
    reference = getattr(np, name)
    x = data(6, 5, dtype=dtype)  # integers have ties: the first index wins
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            result = via(name, x, axis=axis, keepdims=keepdims)
            same(result, reference(x, axis=axis, keepdims=keepdims))
            assert np.asarray(result).dtype == np.int64
    assert via(name, np.array([2, 7, 7, 1, 1])) == (1 if name == "argmax" else 3)
    assert via(name, np.array([1.0, np.nan, 3.0, np.nan])) == 1  # the first NaN


@BOTH
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_errors(via: Callable[..., Any], name: str) -> None:
    with pytest.raises(ValueError, match="empty sequence"):
        via(name, np.zeros(0))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        via(name, np.zeros(3), axis=2)
    with pytest.raises(TypeError):
        via(name, np.zeros(3), 0)  # axis is keyword-only


@BOTH
@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_sort(via: Callable[..., Any], dtype: Any, axis: int) -> None:
    x = data(7, 9, dtype=dtype)
    ascending = np.sort(x, axis=axis)
    same(via("sort", x, axis=axis), ascending)
    same(via("sort", x, axis=axis, stable=False), ascending)
    same(via("sort", x, axis=axis, descending=True), np.flip(ascending, axis=axis))
    same(via("sort", x, axis=axis, descending=True, stable=False), np.flip(ascending, axis=axis))


@BOTH
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_keeps_equal_elements_in_order(
    via: Callable[..., Any], descending: bool
) -> None:
    """0.0 and -0.0 are equal but distinguishable: their order in the result shows stability."""
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 0.0, -0.0])
    order = np.argsort(-x if descending else x, kind="stable")
    result = via("sort", x, descending=descending, stable=True)
    np.testing.assert_array_equal(result, x[order])
    np.testing.assert_array_equal(np.signbit(result), np.signbit(x[order]))


@BOTH
def test_sort_places_nan_last_ascending_first_descending(via: Callable[..., Any]) -> None:
    x = np.array([3.0, np.nan, 1.0, 2.0])
    same(via("sort", x), np.array([1.0, 2.0, 3.0, np.nan]))
    same(via("sort", x, descending=True), np.array([np.nan, 3.0, 2.0, 1.0]))
    with pytest.raises(np.exceptions.AxisError, match="axis 2"):
        via("sort", x, axis=2)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.int8, np.int64, np.float32]),
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
        elements={"min_value": -4, "max_value": 4},
    ),
    st.booleans(),
)
def test_sort_agrees_with_a_stable_argsort(x: Any, descending: bool) -> None:
    key = -x.astype(np.float64) if descending else x
    order = np.argsort(key, axis=-1, kind="stable")
    same(prism_core.sort(x, descending=descending), np.take_along_axis(x, order, axis=-1))


@BOTH
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, *INEXACT])
def test_cumulative_sum(via: Callable[..., Any], dtype: Any) -> None:
    x = data(4, 5, dtype=dtype) if dtype is not np.bool_ else data(4, 5) > 0
    for axis in (0, 1, -1):
        for include_initial in (False, True):
            same(
                via("cumulative_sum", x, axis=axis, include_initial=include_initial),
                np.cumulative_sum(x, axis=axis, include_initial=include_initial),
            )
    vector = x[0]
    same(via("cumulative_sum", vector), np.cumulative_sum(vector))
    same(
        via("cumsum", vector, include_initial=True), np.cumulative_sum(vector, include_initial=True)
    )


@BOTH
def test_cumulative_sum_dtype_and_edges(via: Callable[..., Any]) -> None:
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    same(via("cumulative_sum", ints, axis=1), np.cumulative_sum(ints, axis=1))  # int64
    for dtype in (prism_core.float32, "complex128", np.float64):
        same(
            via("cumulative_sum", ints, axis=0, dtype=dtype),
            np.cumulative_sum(ints, axis=0, dtype=numpy_ops.numpy_dtype(dtype)),
        )
    same(via("cumulative_sum", np.zeros((2, 0)), axis=1, include_initial=True), np.zeros((2, 1)))
    same(via("cumulative_sum", np.zeros(0)), np.zeros(0))
    same(via("cumulative_sum", np.float64(2.5)), np.array([2.5]))  # 0-d: a vector of one


@BOTH
def test_cumulative_sum_errors(via: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        via("cumulative_sum", np.ones((2, 3)))
    with pytest.raises(np.exceptions.AxisError):
        via("cumulative_sum", np.ones((2, 3)), axis=2)
    with pytest.raises(TypeError, match="bfloat16"):
        via("cumulative_sum", np.ones(3), dtype=prism_core.bfloat16)


def test_cumulative_sum_on_numpy_older_than_2_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without numpy.cumulative_sum, cumsum computes the same results, with the same errors."""
    reference = np.cumulative_sum
    monkeypatch.delattr(np, "cumulative_sum")
    x = data(3, 4, 5)
    ints = data(3, 4, dtype=np.int32)
    calls: list[tuple[Any, dict[str, Any]]] = [
        (x[0, 0], {}),
        (x[0, 0], {"include_initial": True}),
        (np.float64(2.5), {"include_initial": True}),
        (np.zeros(0), {"include_initial": True}),
        (np.zeros((2, 0)), {"axis": 1, "include_initial": True}),
        (ints, {"axis": 0}),
        (ints, {"axis": -1, "dtype": "float32", "include_initial": True}),
    ]
    for axis in (0, 1, 2, -1, -3):
        calls.append((x, {"axis": axis}))
        calls.append((x, {"axis": axis, "include_initial": True}))
    for arg, kwargs in calls:
        dt = numpy_ops.numpy_dtype(kwargs.get("dtype"))
        same(direct("cumulative_sum", arg, **kwargs), reference(arg, **{**kwargs, "dtype": dt}))
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        direct("cumulative_sum", x)
    with pytest.raises(np.exceptions.AxisError):
        direct("cumulative_sum", x, axis=3)


# -- norms -----------------------------------------------------------------------------------
INF = float("inf")


@BOTH
@pytest.mark.parametrize("dtype", INEXACT)
def test_linalg_norm(via: Callable[..., Any], dtype: Any) -> None:
    x = data(5, 4, dtype=dtype)
    vector = x[:, 0]
    calls: list[tuple[Any, dict[str, Any]]] = [(x, {}), (vector, {}), (data(2, 3, 4), {})]
    calls += [(x, {"ord": o}) for o in ("fro", "nuc", 1, -1, 2, -2, INF, -INF)]
    calls += [(vector, {"ord": o}) for o in (0, 1, 3, 0.5, INF, -INF)]
    calls += [(x, {"axis": 0}), (x, {"axis": 1, "ord": 1, "keepdims": True})]
    calls += [(data(2, 3, 4), {"axis": (0, 2), "keepdims": True})]
    for arg, kwargs in calls:
        close(via("linalg.norm", arg, **kwargs), np.linalg.norm(arg, **kwargs))
    close(via("linalg.norm", x, "nuc", None, True), np.linalg.norm(x, "nuc", None, True))


@BOTH
def test_linalg_norm_errors(via: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        via("linalg.norm", np.ones(3), "fro")
    with pytest.raises(ValueError, match="Invalid norm order"):
        via("linalg.norm", np.ones((2, 2)), 3)
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        via("linalg.norm", np.ones((2, 2, 2)), 2)


def vector_norm_calls() -> list[tuple[Any, dict[str, Any]]]:
    x = data(3, 4, 5, dtype=np.complex64)
    calls: list[tuple[Any, dict[str, Any]]] = []
    for axis, keepdims, o in itertools.product(
        (None, 0, -1, (0, 2), (2, 0), (0, 1, 2)), (False, True), (2, 1, 0, 3, 0.5, INF, -INF)
    ):
        calls.append((x, {"axis": axis, "keepdims": keepdims, "ord": o}))
    calls += [(data(6), {}), (np.zeros((0, 3)), {"axis": 1}), (np.float64(-3.0), {})]
    calls += [(np.arange(6, dtype=np.int32).reshape(2, 3), {"axis": 0, "ord": 1})]
    calls += [(data(3, 4, dtype=np.float32), {"axis": (0, 1), "keepdims": True})]
    return calls


@BOTH
def test_linalg_vector_norm(via: Callable[..., Any]) -> None:
    for arg, kwargs in vector_norm_calls():
        close(via("linalg.vector_norm", arg, **kwargs), np.linalg.vector_norm(arg, **kwargs))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        via("linalg.vector_norm", np.ones(3), ord="fro")
    with pytest.raises(np.exceptions.AxisError):
        via("linalg.vector_norm", np.ones((2, 3)), axis=(0, 2))


def test_linalg_vector_norm_on_numpy_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without numpy.linalg.vector_norm (NumPy 1.x), linalg.norm computes the same."""
    reference = np.linalg.vector_norm
    monkeypatch.delattr(np.linalg, "vector_norm")
    for arg, kwargs in vector_norm_calls():
        close(direct("linalg.vector_norm", arg, **kwargs), reference(arg, **kwargs))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        direct("linalg.vector_norm", np.ones((2, 3)), axis=(0, 2))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        direct("linalg.vector_norm", np.ones(3), ord="fro")


MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, INF, -INF)


@BOTH
@pytest.mark.parametrize("dtype", INEXACT)
def test_linalg_matrix_norm(via: Callable[..., Any], dtype: Any) -> None:
    for x in (data(5, 4, dtype=dtype), data(3, 4, 4, dtype=dtype)):
        for o, keepdims in itertools.product(MATRIX_ORDS, (False, True)):
            close(
                via("linalg.matrix_norm", x, ord=o, keepdims=keepdims),
                np.linalg.matrix_norm(x, ord=o, keepdims=keepdims),
            )
    with pytest.raises(np.exceptions.AxisError, match="axis -2 is out of bounds"):
        via("linalg.matrix_norm", np.ones(3))
    with pytest.raises(ValueError, match="Invalid norm order"):
        via("linalg.matrix_norm", np.ones((2, 2)), ord=3)


def test_linalg_matrix_norm_on_numpy_1(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = np.linalg.matrix_norm
    monkeypatch.delattr(np.linalg, "matrix_norm")
    x = data(3, 4, 5)
    for o, keepdims in itertools.product(MATRIX_ORDS, (False, True)):
        close(
            direct("linalg.matrix_norm", x, ord=o, keepdims=keepdims),
            reference(x, ord=o, keepdims=keepdims),
        )


# -- qr and cholesky -------------------------------------------------------------------------
@BOTH
@pytest.mark.parametrize("dtype", INEXACT)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 3), (0, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_linalg_qr(via: Callable[..., Any], dtype: Any, shape: tuple[int, ...], mode: str) -> None:
    x = data(*shape, dtype=dtype)
    result = via("linalg.qr", x, mode=mode)
    expected = np.linalg.qr(x, mode=mode)
    assert type(result).__name__ == "QRResult" and result._fields == ("Q", "R")
    close(result.Q, expected.Q)
    close(result.R, expected.R)
    close(result.Q @ result.R, x.astype(expected.Q.dtype))
    np.testing.assert_array_equal(np.triu(result.R), result.R)


@BOTH
def test_linalg_qr_default_and_errors(via: Callable[..., Any]) -> None:
    x = data(6, 4)
    q, r = via("linalg.qr", x)
    assert q.shape == (6, 4) and r.shape == (4, 4)
    close(
        via("linalg.qr", np.arange(6).reshape(3, 2)).R, np.linalg.qr(np.arange(6.0).reshape(3, 2)).R
    )
    for mode in ("r", "raw", "full"):
        with pytest.raises(
            ValueError, match=rf"mode must be 'reduced' or 'complete', not '{mode}'"
        ):
            via("linalg.qr", x, mode=mode)
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        via("linalg.qr", np.ones(3))


def positive_definite(n: int, dtype: Any, batch: tuple[int, ...] = ()) -> Any:
    a = data(*batch, n, n, dtype=dtype)
    return a @ np.swapaxes(a.conj(), -1, -2) + n * np.eye(n, dtype=dtype)


@BOTH
@pytest.mark.parametrize("dtype", INEXACT)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_linalg_cholesky(via: Callable[..., Any], dtype: Any, batch: tuple[int, ...]) -> None:
    x = positive_definite(5, dtype, batch)
    lower = via("linalg.cholesky", x)
    close(lower, np.linalg.cholesky(x))
    upper = via("linalg.cholesky", x, upper=True)
    close(upper, np.linalg.cholesky(x, upper=True))
    close(upper, np.conj(np.swapaxes(lower, -1, -2)))
    close(np.swapaxes(upper.conj(), -1, -2) @ upper, x)


def test_linalg_cholesky_upper_on_numpy_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """NumPy 1.x has no upper=: U is L's conjugate transpose."""
    x = positive_definite(4, np.complex128, (2,))
    expected = np.linalg.cholesky(x, upper=True)
    monkeypatch.setattr(np, "__version__", "1.26.4")
    close(direct("linalg.cholesky", x, upper=True), expected)


@BOTH
def test_linalg_cholesky_errors(via: Callable[..., Any]) -> None:
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        via("linalg.cholesky", -np.eye(3))
    assert issubclass(np.linalg.LinAlgError, ValueError)  # a caller's error, for dispatch
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        via("linalg.cholesky", np.ones(3))


# -- triu_indices ----------------------------------------------------------------------------
@BOTH
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((4,), {}),
        ((4, 1), {}),
        ((4, -1), {}),
        ((3,), {"m": 5}),
        ((5,), {"k": 2, "m": 3}),
        ((0,), {}),
        ((1,), {}),
        ((3, 9), {}),
    ],
)
def test_triu_indices(
    via: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    result = via("triu_indices", *args, **kwargs)
    same(result, np.triu_indices(*args, **kwargs))
    assert all(isinstance(a, np.ndarray) and a.dtype == np.int64 for a in result)


def test_triu_indices_is_a_creation_op_that_runs_on_numpy() -> None:
    decision = prism_core.explain("triu_indices", 4)
    assert decision.chosen_backend == "numpy"
    with prism_core.use_numpy_backend():
        rows, cols = prism_core.triu_indices(3)
    matrix = np.arange(9).reshape(3, 3)
    np.testing.assert_array_equal(matrix[rows, cols], matrix[np.triu_indices(3)])


# -- gradients and DLPack --------------------------------------------------------------------
@BOTH
def test_requires_grad_and_detach_are_the_identity_on_numpy(via: Callable[..., Any]) -> None:
    x = data(3, 2)
    assert via("requires_grad", x) is x
    assert via("requires_grad", x, False) is x
    assert via("requires_grad", x, flag=True) is x
    assert via("detach", x) is x
    assert via("detach", [1.0, 2.0]) == [1.0, 2.0]  # whatever it is given, as it is


class DLPackOnly:
    """An array of no library Prism knows: only the DLPack protocol (NumPy's, forwarded)."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


@BOTH
def test_from_dlpack_shares_memory(via: Callable[..., Any]) -> None:
    x = data(4, 3)
    y = via("from_dlpack", x)
    assert isinstance(y, np.ndarray) and np.shares_memory(x, y)
    z = direct("from_dlpack", DLPackOnly(x))
    assert isinstance(z, np.ndarray) and np.shares_memory(x, z)
    x[0, 0] = 42.0
    assert z[0, 0] == 42.0


def test_from_dlpack_of_a_torch_tensor_shares_its_memory() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed: no tensor to import")
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    with prism_core.use_numpy_backend():
        y = prism_core.from_dlpack(t)
    assert isinstance(y, np.ndarray)
    t[1, 2] = -7.0
    assert y[1, 2] == -7.0  # the same memory, not a copy


@BOTH
@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, "x"])
def test_from_dlpack_refuses_what_has_no_dlpack(via: Callable[..., Any], value: Any) -> None:
    with pytest.raises(TypeError, match=r"from_dlpack: x must be an array that supports DLPack"):
        via("from_dlpack", value)


# -- the conformance suite on the new ops ----------------------------------------------------
def test_the_cases_of_the_new_ops() -> None:
    for name in NEW_OPS:
        assert input_cases(name), name
        for args, kwargs in input_cases(name).values():
            direct(name, *args, **kwargs)  # the reference computes every case
    assert set(input_cases("clip")) == {*conformance_shapes(), "bounds"}
    assert set(input_cases("triu_indices")) == {"standard", "empty", "one", "odd"}
    assert input_cases("triu_indices", "float64") == {}
    (arrays,), _ = input_cases("stack")["strided"]
    assert isinstance(arrays, list) and all(not a.flags.c_contiguous for a in arrays)
    assert {k for k, calls in keyword_cases("linalg.qr").items() if calls} == {"mode"}


def conformance_shapes() -> tuple[str, ...]:
    from prism_core.testing import SHAPES

    return SHAPES


class Boxed(np.ndarray):
    """The arrays of the ``boxed`` backend: NumPy's, of their own type."""


class BoxedBackend(prism_core.extending.Backend):
    name = "boxed"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism_core.extending.Availability:
        return prism_core.extending.Availability(True)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        return np.asarray(obj, dtype=dtype).view(Boxed)

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, Boxed) or not hasattr(value, "__dlpack__")

    def empty(self, shape: Any, dtype: Any) -> Any:
        return np.empty(tuple(shape), dtype=dtype).view(Boxed)


@pytest.fixture
def boxed() -> Iterator[list[str]]:
    """Variants of the ``boxed`` backend; yields the containers its joins were given."""
    seen: list[str] = []

    def join(fn: Callable[..., Any]) -> Callable[..., Any]:
        def variant(arrays: Any, /, *, axis: Any = 0) -> Any:
            if not all(isinstance(a, Boxed) for a in arrays):
                raise TypeError("given arrays that are not the backend's own")
            seen.append(type(arrays).__name__)
            return fn([np.asarray(a) for a in arrays], axis=axis).view(Boxed)

        return variant

    def qr_signs_flipped(x: Any, /, *, mode: str = "reduced") -> Any:
        q, r = np.linalg.qr(np.asarray(x), mode=mode)
        return QRResult((-q).view(Boxed), (-r).view(Boxed))

    def qr_not_triangular(x: Any, /, *, mode: str = "reduced") -> Any:
        """x == Q @ R with Q orthogonal, but R is not triangular (square Q: rows <= columns)."""
        x = np.asarray(x)
        q, _ = np.linalg.qr(data(x.shape[0], x.shape[0], dtype=x.dtype, seed=9))
        return QRResult(q.view(Boxed), (q.conj().T @ x).view(Boxed))

    for op, fn, name in [
        ("stack", join(np.stack), "boxed.stack"),
        ("concat", join(np.concatenate), "boxed.concat"),
        ("linalg.qr", qr_signs_flipped, "boxed.qr_signs"),
        ("linalg.qr", qr_not_triangular, "boxed.qr_square"),
    ]:
        prism_core.extending.kernel(op, backend="boxed", priority=-50, name=name)(fn)
    try:
        yield seen
    finally:
        remove_variants(lambda v: v.backend == "boxed")


def run_checks(subject: str) -> dict[str, Any]:
    """The checks of results (not of errors' words: the variants here call NumPy directly)."""
    return {
        c.name: c.run()
        for c in conformance_checks(BoxedBackend())
        if c.subject == subject and c.check in ("values", "dtype", "type", "kwarg")
    }


def test_sequences_of_arrays_reach_variants_as_the_backends_arrays(boxed: list[str]) -> None:
    for subject in ("boxed.stack", "boxed.concat"):
        results = run_checks(subject)
        assert results, subject
        failed = {n: r.detail for n, r in results.items() if r.status != "passed"}
        assert not failed, failed
        assert f"{subject}-values-complex64-strided" in results
        assert f"{subject}-kwarg-axis" in results
    assert {"list", "tuple"} <= set(boxed)  # the container the caller gave is kept


def test_qr_is_compared_by_what_is_unique(boxed: list[str]) -> None:
    flipped = run_checks("boxed.qr_signs")
    assert flipped and all(r.status == "passed" for r in flipped.values()), flipped
    square = run_checks("boxed.qr_square")
    detail = square["boxed.qr_square-values-float64-standard"].detail
    assert detail.startswith("R is not upper triangular: values differ"), detail
    assert square["boxed.qr_square-values-float64-one"].status == "passed"  # 1x1: triangular


def test_the_numpy_backend_conforms_on_the_new_ops() -> None:
    report = check_backend("numpy")
    assert report.ok, str(report)
    names = {r.name for r in report.passed}
    for name in NEW_OPS:
        assert any(n.startswith(f"numpy.{name}-values-") for n in names), name
        assert f"numpy.{name}-type-{input_dtype(name)}" in names, name
    assert "numpy.clip-values-float32-bounds" in names
    assert "numpy.sort-kwarg-stable" in names and "numpy.triu_indices-kwarg-m" in names


def input_dtype(name: str) -> str:
    from prism_core.testing._conformance import DTYPES

    return DTYPES[name][0]
