"""The manipulation and indexing functions of ``prism_core.array_api`` against
``array-api-strict``, the reference implementation of the standard's semantics.

Hypothesis draws the shapes (0-d and empty included where the function takes them), every
dtype (bool, int8..uint64, float32/64 with NaN and infinities, complex64/128) and the keyword
arguments (axes as ints, negative ones and tuples; shifts; counts as ints and as arrays of any
integer dtype; indices negative and of any integer dtype).  Each function runs through Prism's
dispatch on NumPy arrays (the NumPy reference) and under ``use_backend("torch")`` (the torch
plugin's variants), and its result must have the values, dtype and shape that
``array_api_strict`` gives, and be a tuple where the standard's is.  These functions move
elements and compute none: results are compared exactly (NaN equal to NaN).

The functions Prism had before (``reshape``, ``expand_dims``, ``moveaxis``, ``stack``,
``concat``) are checked the same way.  Then the errors Prism adds where NumPy would do something
else or say something vaguer: each names the argument at fault, on NumPy and on torch.
"""

from __future__ import annotations

import sys
import types
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
from prism_core._broadcasting import broadcast_shapes  # noqa: E402
from prism_core.kernel.records.manipulation import ROWS  # noqa: E402

from .array_api_dtypes import NOT_ON_TORCH  # noqa: E402

#: The standard's manipulation and indexing functions: the family's records but those of the
#: ops Prism had first (and ``transpose``, NumPy's, which is not the standard's).
OLDER = ("reshape", "expand_dims", "moveaxis", "stack", "concat")
NEW = tuple(row.name for row in ROWS if row.name not in (*OLDER, "transpose"))
FUNCTIONS = (*NEW, *OLDER)
#: Every dtype of the standard; torch has too few functions for the wide unsigned ones to be
#: Prism dtypes on torch.
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
)  # fmt: skip
INDEX_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

Call = tuple[tuple[Any, ...], dict[str, Any]]


def test_every_manipulation_function_of_the_standard_is_here() -> None:
    """The family is the standard's: each function ``array_api_strict`` has is on
    ``prism_core.array_api`` and on ``prism_core``, and is the op's function."""
    assert set(FUNCTIONS) <= set(strict.__all__)
    for name in FUNCTIONS:
        op = prism_core.get_op(name)
        assert getattr(xp, name) is op.function, name
        assert getattr(prism_core, name) is op.function, name
    assert xp.broadcast_shapes is broadcast_shapes  # a function of shapes, not an op
    assert "broadcast_shapes" in strict.__all__
    # The rows are the standard's manipulation and indexing functions that were missing.
    assert set(NEW) == {
        "broadcast_arrays", "broadcast_to", "flip", "permute_dims", "repeat", "roll",
        "squeeze", "tile", "unstack", "take", "take_along_axis",
    }  # fmt: skip
    assert all(row.standard for row in ROWS if row.name != "transpose")


# -- drawing calls -----------------------------------------------------------------------------


def _dtypes(backend: str) -> list[str]:
    return [d for d in DTYPES if backend == "numpy" or d not in NOT_ON_TORCH]


@st.composite
def _array(draw: st.DrawFn, backend: str, shape: tuple[int, ...] | None = None, **kw: int) -> Any:
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=kw.get("min_dims", 0), max_dims=3, min_side=0,
                                      max_side=4))  # fmt: skip
    dtype = np.dtype(draw(st.sampled_from(_dtypes(backend))))
    return draw(hnp.arrays(dtype, shape))


def _axis(draw: st.DrawFn, ndim: int, extra: int = 0) -> int:
    """An axis of ``ndim + extra`` dimensions, negative ones too."""
    n = ndim + extra
    return draw(st.integers(-n, n - 1))


@st.composite
def _indices(
    draw: st.DrawFn, backend: str, size: int, shape: tuple[int, ...], axis: int = 0
) -> Any:
    """Indices into an axis of ``size`` (negative ones too), of any integer dtype, of ``shape``
    (none along ``axis`` when there is nothing to index)."""
    names = [d for d in INDEX_DTYPES if backend == "numpy" or d not in NOT_ON_TORCH]
    dtype = np.dtype(draw(st.sampled_from(names)))
    if size == 0:
        shape = tuple(0 if d == axis else n for d, n in enumerate(shape))
    low = 0 if dtype.kind == "u" else max(-size, int(np.iinfo(dtype).min))
    high = min(size - 1, int(np.iinfo(dtype).max))
    return draw(hnp.arrays(dtype, shape, elements=st.integers(low, max(low, high))))


@st.composite
def _call(draw: st.DrawFn, name: str, backend: str) -> Call:
    """Arguments for ``name`` that the standard defines a result for."""
    if name == "broadcast_arrays":
        shapes = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=draw(st.integers(1, 3)), min_dims=0, max_dims=3, max_side=4
        ))  # fmt: skip
        return tuple(draw(_array(backend, s)) for s in shapes.input_shapes), {}
    if name == "broadcast_to":
        target = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
        keep = draw(st.integers(0, len(target)))
        shape = tuple(d if draw(st.booleans()) else 1 for d in target[len(target) - keep :])
        return (draw(_array(backend, shape)), target), {}
    if name == "reshape":
        x = draw(_array(backend))
        shape = draw(st.sampled_from([(x.size,), (-1,), (1, x.size), (x.size, 1, 1)]))
        return (x, shape), {}
    needs_axis = name in ("unstack", "take", "take_along_axis", "moveaxis", "concat")
    x = draw(_array(backend, min_dims=1 if needs_axis else 0))
    ndim = x.ndim
    if name == "flip":
        choices = [st.none(), hnp.valid_tuple_axes(ndim)]
        if ndim:
            choices.append(st.integers(-ndim, ndim - 1))
        return (x,), {"axis": draw(st.one_of(choices))}
    if name == "permute_dims":
        axes = draw(st.permutations(range(ndim)))
        return (x, tuple(a - ndim if draw(st.booleans()) else a for a in axes)), {}
    if name == "squeeze":
        at = draw(st.integers(0, ndim))
        x = np.expand_dims(x, at)
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        axis = draw(st.one_of(st.sampled_from(ones), st.lists(
            st.sampled_from(ones), min_size=1, unique=True).map(tuple)))  # fmt: skip
        return (x, axis), {}
    if name == "unstack":
        return (x,), {"axis": _axis(draw, ndim)}
    if name == "roll":
        shifts = st.integers(-10, 10)
        if draw(st.booleans()) or not ndim:
            return (x, draw(shifts)), ({"axis": None} if draw(st.booleans()) else {})
        axes = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=3))
        if len(axes) == 1 and draw(st.booleans()):
            return (x, draw(shifts)), {"axis": axes[0]}
        return (x, tuple(draw(shifts) for _ in axes)), {"axis": tuple(axes)}
    if name == "repeat":
        axis = None if not ndim or draw(st.booleans()) else _axis(draw, ndim)
        length = x.size if axis is None else x.shape[axis]
        if draw(st.booleans()):
            repeats: Any = draw(st.integers(0, 3))
        else:
            names = [d for d in INDEX_DTYPES if backend == "numpy" or d not in NOT_ON_TORCH]
            counts = draw(st.sampled_from([1, length]))
            repeats = draw(hnp.arrays(np.dtype(draw(st.sampled_from(names))), (counts,),
                                      elements=st.integers(0, 3)))  # fmt: skip
        return (x, repeats), ({} if axis is None and draw(st.booleans()) else {"axis": axis})
    if name == "tile":
        reps = draw(st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple))
        return (x, reps), {}
    if name == "take":
        axis = _axis(draw, ndim)
        count = draw(st.integers(0, 5))
        indices = draw(_indices(backend, x.shape[axis], (count,)))
        if ndim == 1 and draw(st.booleans()):
            return (x, indices), {}
        return (x, indices), {"axis": axis}
    if name == "take_along_axis":
        axis = _axis(draw, ndim)
        shape = tuple(
            draw(st.integers(0, 4)) if d == axis % ndim else draw(st.sampled_from([1, n]))
            for d, n in enumerate(x.shape)
        )
        indices = draw(_indices(backend, x.shape[axis], shape, axis % ndim))
        return (x, indices), ({} if axis == -1 and draw(st.booleans()) else {"axis": axis})
    if name == "expand_dims":
        return (x,), {"axis": _axis(draw, ndim, extra=1)}
    if name == "moveaxis":
        return (x, _axis(draw, ndim), _axis(draw, ndim)), {}
    if name == "stack":
        dtype = x.dtype
        arrays = [x, *(draw(hnp.arrays(dtype, x.shape)) for _ in range(draw(st.integers(0, 2))))]
        return (arrays,), {"axis": _axis(draw, ndim, extra=1)}
    assert name == "concat"
    axis = _axis(draw, ndim)
    arrays = [x]
    for _ in range(draw(st.integers(0, 2))):
        shape = list(x.shape)
        shape[axis] = draw(st.integers(0, 3))
        arrays.append(draw(hnp.arrays(x.dtype, tuple(shape))))
    if draw(st.booleans()):
        return (arrays,), {"axis": None}
    return (arrays,), {"axis": axis}


# -- comparing with array_api_strict -------------------------------------------------------------


def _to_strict(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return strict.asarray(value)
    if isinstance(value, list):
        return [_to_strict(v) for v in value]
    return value


def _reference(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    result = getattr(strict, name)(*(_to_strict(a) for a in args), **kwargs)
    if isinstance(result, (tuple, list)):
        return tuple(np.from_dlpack(r) for r in result)
    return np.from_dlpack(result)


def _compare(name: str, actual: Any, expected: Any) -> None:
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), (name, type(actual))
        assert len(actual) == len(expected), (name, len(actual), len(expected))
        for a, e in zip(actual, expected, strict=True):
            _compare(name, a, e)
        return
    actual = np.asarray(prism_core.to_numpy(actual))
    assert actual.dtype == expected.dtype, (name, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (name, actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected, err_msg=name, strict=True)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_on_numpy_as_the_standard(name: str) -> None:
    @SETTINGS
    @given(call=_call(name, "numpy"))
    def check(call: Call) -> None:
        args, kwargs = call
        expected = _reference(name, args, kwargs)
        actual = getattr(xp, name)(*args, **kwargs)
        # NumPy arrays, or NumPy's scalars where NumPy gives one (``flip`` of a 0-d array), as
        # the NumPy reference does for every op.
        items = actual if isinstance(expected, tuple) else (actual,)
        assert all(isinstance(a, (np.ndarray, np.generic)) for a in items), (name, type(actual))
        _compare(name, actual, expected)

    check()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_on_torch_as_the_standard(name: str, torch_plugin: Any) -> None:
    torch = torch_plugin

    @SETTINGS
    @given(call=_call(name, "torch"))
    def check(call: Call) -> None:
        args, kwargs = call
        expected = _reference(name, args, kwargs)
        with prism_core.use_backend("torch"):
            actual = getattr(xp, name)(*args, **kwargs)
        items = actual if isinstance(actual, tuple) else (actual,)
        assert all(isinstance(a, torch.Tensor) for a in items), (name, type(actual))
        _compare(name, actual, expected)

    check()


def test_views_where_the_standard_allows_them() -> None:
    """The view ops return views on NumPy (the row's ``work`` says so): nothing is copied."""
    x = np.arange(24.0).reshape(2, 3, 4)
    for result in (
        xp.permute_dims(x, (2, 0, 1)),
        xp.squeeze(x[:, :1], 1),
        xp.broadcast_to(x, (5, 2, 3, 4)),
        xp.flip(x, axis=0),
        *xp.unstack(x, axis=1),
        xp.broadcast_arrays(x, np.ones(4))[0],
        xp.broadcast_arrays(np.ones(4), x)[1],
    ):
        assert np.shares_memory(result, x)
    assert not np.shares_memory(xp.roll(x, 1), x)


def test_broadcast_shapes() -> None:
    assert broadcast_shapes() == ()
    assert broadcast_shapes((5, 1, 4), (3, 1), (4,)) == (5, 3, 4)
    assert broadcast_shapes((0,), (1,), ()) == (0,)
    assert broadcast_shapes(3, (2, 1)) == np.broadcast_shapes(3, (2, 1))  # NumPy's int shapes

    @SETTINGS
    @given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_side=5))
    def check(shapes: Any) -> None:
        assert broadcast_shapes(*shapes.input_shapes) == shapes.result_shape

    check()


# -- errors that name the argument at fault -------------------------------------------------------


@pytest.fixture(params=["numpy", "torch"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each error on the NumPy reference and on the torch variants (which share its checks)."""
    if request.param == "numpy":
        yield "numpy"
        return
    request.getfixturevalue("torch_plugin")
    yield "torch"


def _raises(
    backend: str, error: type[Exception], match: str, fn: Callable[..., Any], *args: Any, **kw: Any
) -> None:
    with prism_core.use_backend(backend), pytest.raises(error, match=match):
        fn(*args, **kw)


def test_squeeze_requires_axes_of_size_one(backend: str) -> None:
    x = np.ones((2, 1, 3))
    _raises(backend, ValueError, r"axis 2 of x has size 3, not 1", xp.squeeze, x, (1, 2))
    _raises(backend, ValueError, "axis is required", xp.squeeze, x, None)
    _raises(backend, np.exceptions.AxisError, "axis 3 is out of bounds", xp.squeeze, x, 3)
    _raises(backend, ValueError, "names an axis twice", xp.squeeze, x, (1, -2))


def test_permute_dims_requires_axes(backend: str) -> None:
    _raises(backend, TypeError, "axes must be a tuple of ints", xp.permute_dims, np.ones(2), None)


def test_take_rules(backend: str) -> None:
    x = np.arange(6.0).reshape(2, 3)
    i = np.array([0, 1])
    _raises(backend, ValueError, r"take: axis is required when x has more than one", xp.take, x, i)
    _raises(
        backend, TypeError, "take: indices must be an array of an integer dtype, not float64",
        xp.take, x, np.array([0.0]), axis=0,
    )  # fmt: skip
    _raises(backend, IndexError, "index 3 is out of bounds for axis 1 with size 3",
            xp.take, x, np.array([0, 3]), axis=1)  # fmt: skip
    _raises(backend, IndexError, "index -3 is out of bounds", xp.take, x, np.array([-3]), axis=0)


def test_take_along_axis_rules(backend: str) -> None:
    x = np.arange(6.0).reshape(2, 3)
    i = np.array([[0], [2]])
    _raises(backend, TypeError, "axis must be an int, not NoneType",
            xp.take_along_axis, x, i, axis=None)  # fmt: skip
    _raises(backend, ValueError, r"indices must have as many dimensions as x \(2\); it has 1",
            xp.take_along_axis, x, np.array([0]))  # fmt: skip
    _raises(backend, TypeError, "take_along_axis: indices must be an array of an integer dtype",
            xp.take_along_axis, x, i.astype(bool))  # fmt: skip
    _raises(backend, IndexError, "index 3 is out of bounds for axis 1",
            xp.take_along_axis, x, i + 1)  # fmt: skip


def test_repeat_counts(backend: str) -> None:
    x = np.arange(3.0)
    _raises(backend, ValueError, "repeats must be >= 0, not -1", xp.repeat, x, -1)
    _raises(backend, ValueError, "repeats must be >= 0; it has a negative count",
            xp.repeat, x, np.array([1, -1, 1]))  # fmt: skip
    _raises(backend, TypeError, "repeats must be an int or an array of an integer dtype, not float",
            xp.repeat, x, 2.0)  # fmt: skip
    _raises(backend, TypeError, "an integer dtype, not float64", xp.repeat, x, np.array([1.0]))
    _raises(backend, ValueError, r"repeats has 2 counts; it needs one per element along the "
            r"axis \(3\)", xp.repeat, x, np.array([1, 2]))  # fmt: skip
    _raises(backend, ValueError, "a 1-D array", xp.repeat, x, np.ones((1, 3), dtype=int))


def test_unstack_and_shapes(backend: str) -> None:
    _raises(backend, ValueError, "unstack: x must have at least one dimension",
            xp.unstack, np.array(1.0))  # fmt: skip
    _raises(backend, ValueError, "broadcast", xp.broadcast_to, np.ones(3), (2, 4))
    _raises(backend, ValueError, "broadcast", xp.broadcast_arrays, np.ones(2), np.ones(3))
    _raises(backend, ValueError, "negative", xp.tile, np.ones(3), (-1,))


def test_broadcast_shapes_errors() -> None:
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) do not broadcast: along "
                       r"axis -1 their sizes are 3 and 4"):  # fmt: skip
        broadcast_shapes((2, 3), (1,), (4,))
    with pytest.raises(TypeError, match=r"shape 1 must be a tuple of ints, not \(2.0,\)"):
        broadcast_shapes((1,), (2.0,))
    with pytest.raises(ValueError, match=r"shape 0 \(-1,\) has a negative size"):
        broadcast_shapes((-1,))


# -- the CuPy plugin's own code, with NumPy standing in for CuPy ----------------------------------


def test_the_cuda_functions_check_what_cupy_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy wraps indices out of range and takes no uint64 counts: the ``cuda`` backend's
    functions check the indices and cast the counts (run here with NumPy as ``cupy``)."""
    cuda = pytest.importorskip("prism_plugin_cuda.backend", reason="prism-plugin-cuda")
    monkeypatch.setitem(sys.modules, "cupy", np)
    backend = cuda.CudaBackend()
    backend._xp = np
    ops = ("take", "take_along_axis", "repeat", "broadcast_arrays", "unstack")
    manipulation = types.SimpleNamespace(**{op: backend.function(op) for op in ops})
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 3"):
        manipulation.take(x, np.array([5]), axis=1)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 1"):
        manipulation.take_along_axis(x, np.array([[-4]]))
    np.testing.assert_array_equal(
        manipulation.repeat(x, np.array([2], dtype=np.uint64), axis=1), np.repeat(x, 2, axis=1)
    )
    np.testing.assert_array_equal(
        manipulation.repeat(x, np.array([0, 1]), axis=0), np.repeat(x, [0, 1], axis=0)
    )
    assert isinstance(manipulation.broadcast_arrays(x, np.ones(3)), tuple)
    assert len(manipulation.unstack(x, axis=-1)) == 3
