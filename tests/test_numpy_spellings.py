"""NumPy's spellings that Prism accepts (issue 34, item 7; docs/array-api.md, "NumPy's
spellings"): a kernel written for NumPy, its ``np`` a namespace that looks names up in
``prism_core`` first and NumPy second, runs through Prism's dispatch on NumPy arrays, and on
torch tensors and JAX arrays under ``use_backend``, with NumPy's values and dtypes.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy
import pytest

import prism_core

from .conftest import load_bundled_plugin


class _PrismFirst:
    """What such kernels are given as ``np``: Prism's name where it has one, else NumPy's."""

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(prism_core, name)
        except AttributeError:
            return getattr(numpy, name)


def _kernel(np: Any, n: int, x: Any, v: Any) -> tuple[Any, ...]:
    """NumPy-style code, as real kernels write it."""
    counts, edges = np.histogram(v, 5)
    rows, columns = np.ogrid[0:n, 0:1:3j]
    return (
        np.zeros((n, n), np.int32),
        np.ones((2, n), np.float32),
        np.full((2, 3), 7, np.int64),
        np.triu(x, 1),
        np.tril(x, -1),
        np.arctan2(x, x + 1.0),
        np.arcsin(x / 4.0),
        np.absolute(x - 1.0),
        np.outer(v, v),
        counts,
        edges,
        np.cov(x),
        np.cov(x, rowvar=False, bias=True),
        np.amax(x, axis=0),
        np.amin(x, axis=1),
        np.concatenate([v, v]),
        np.transpose(x),
        np.add.outer(v, v),
        np.multiply.outer(x, v[:2]),
        np.greater.outer(v, x[0]),
        np.subtract.outer([1, 2], v),
        np.add.outer([1, 2], [3, 4, 5]),
        np.mgrid[0:n, 0:4],
        np.mgrid[0:1:0.25],
        np.mgrid[0:4, 0:1:3j],
        np.mgrid[-1:1:5j],
        np.mgrid[0.5:2:0.5, 1:3],
        rows,
        columns,
        rows + columns,
        np.ogrid[0:n],
    )


_X = numpy.arange(12.0).reshape(3, 4) % 5 - 1.5
_V = numpy.array([0.5, -1.0, 2.0, 3.5, 0.25])
_EXPECTED = _kernel(numpy, 3, _X, _V)


def _check(results: tuple[Any, ...], to_numpy: Any) -> None:
    assert len(results) == len(_EXPECTED)
    for i, (got, want) in enumerate(zip(results, _EXPECTED, strict=True)):
        got = to_numpy(got)
        assert got.dtype == want.dtype, (i, got.dtype, want.dtype)
        assert got.shape == want.shape, (i, got.shape, want.shape)
        numpy.testing.assert_allclose(got, want, rtol=1e-13, atol=0, err_msg=str(i))


def test_a_numpy_kernel_runs_on_numpy_arrays_through_prism() -> None:
    results = _kernel(_PrismFirst(), 3, _X, _V)
    for r in results:
        assert isinstance(r, numpy.ndarray)
    _check(results, numpy.asarray)


@pytest.fixture
def torch_plugin() -> Iterator[Any]:
    load_bundled_plugin("torch")
    import torch

    yield torch
    prism_core.extending.reload_plugins()


@pytest.fixture
def jax_x64() -> Iterator[Any]:
    """The jax plugin, with JAX in 64-bit mode (NumPy's float64 and int64), restored after."""
    jax = pytest.importorskip("jax")
    load_bundled_plugin("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", before)
    prism_core.extending.reload_plugins()


def test_a_numpy_kernel_runs_on_torch_under_use_backend(torch_plugin: Any) -> None:
    torch = torch_plugin
    with prism_core.use_backend("torch"):
        results = _kernel(_PrismFirst(), 3, torch.as_tensor(_X), torch.as_tensor(_V))
    for r in results:
        assert isinstance(r, torch.Tensor)
    _check(results, lambda t: t.numpy())


def test_a_numpy_kernel_runs_on_jax_under_use_backend(jax_x64: Any) -> None:
    jnp = pytest.importorskip("jax.numpy")
    with prism_core.use_backend("jax"):
        results = _kernel(_PrismFirst(), 3, jnp.asarray(_X), jnp.asarray(_V))
    for r in results:
        assert isinstance(r, jax_x64.Array)
    _check(results, numpy.asarray)


def test_numpy_spellings_are_the_standard_functions() -> None:
    """NumPy's names are aliases of the standard's ops: the same function, not a copy."""
    for numpy_name, name in {
        "arctan2": "atan2",
        "arccos": "acos",
        "arcsinh": "asinh",
        "absolute": "abs",
        "invert": "bitwise_invert",
        "amax": "max",
        "concatenate": "concat",
        "power": "pow",
    }.items():
        assert getattr(prism_core, numpy_name) is getattr(prism_core.array_api, name)
    assert prism_core.outer is prism_core.linalg.outer
    # Not in the standard's namespace: it stays the standard's.
    for name in ("arctan2", "absolute", "amax", "outer", "cov", "histogram"):
        assert not hasattr(prism_core.array_api, name), name


@pytest.mark.parametrize("backend", ["numpy", "torch", "jax"])
def test_grids_are_of_numpys_types_on_the_backend_in_scope(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """``ogrid`` of several slices is a tuple, as NumPy 2's; ``mgrid`` one array; both of the
    backend in scope, made from Python numbers alone."""
    array_type: Any = numpy.ndarray
    if backend == "torch":
        array_type = request.getfixturevalue("torch_plugin").Tensor
    elif backend == "jax":
        array_type = request.getfixturevalue("jax_x64").Array
    with prism_core.use_backend(backend):
        open_grid = prism_core.ogrid[0:2, 0:3]
        dense = prism_core.mgrid[0:2, 0:3]
        product = prism_core.multiply.outer(2, [1.0, 2.0])
    assert type(open_grid) is type(numpy.ogrid[0:2, 0:3]) is tuple
    assert [tuple(a.shape) for a in open_grid] == [(2, 1), (1, 3)]
    assert type(prism_core.ogrid[0:2,]) is tuple
    for made in (*open_grid, dense, product):
        assert isinstance(made, array_type), type(made)
    assert tuple(dense.shape) == (2, 2, 3)
    numpy.testing.assert_array_equal(numpy.asarray(product), [2.0, 4.0])


def test_every_binary_elementwise_op_has_numpys_outer() -> None:
    from prism_core.kernel.records.families import RECORDS

    binary = [r for r in RECORDS if r.work == "elementwise" and r.arity == 2]
    assert {"add", "multiply", "subtract", "maximum", "power", "greater", "equal"} <= {
        r.name for r in binary
    }
    a, b = numpy.arange(1, 4), numpy.arange(1, 3)
    for record in binary:
        function = getattr(prism_core, record.name)
        doc = inspect.getdoc(function.outer) or ""
        assert doc.startswith(f"{record.name}.outer(a, b, /): "), doc
        assert f"``numpy.{record.numpy.rpartition(':')[2]}.outer(a, b)``" in doc
        ufunc = getattr(numpy, record.numpy.rpartition(":")[2])
        want = ufunc.outer(a, b)
        got = function.outer(a, b)
        assert got.dtype == want.dtype, record.name
        numpy.testing.assert_array_equal(got, want, err_msg=record.name)
    assert prism_core.pow.outer is prism_core.power.outer  # one op, one function
    for unary in ("sin", "abs", "where", "clip", "matmul"):
        assert not hasattr(getattr(prism_core, unary), "outer"), unary


@pytest.mark.parametrize(
    ("key", "error", "message"),
    [
        (1, TypeError, r"mgrid\[\.\.\.\]: 1 is not a slice; mgrid\[\.\.\.\] takes slices"),
        ((slice(0, 3), 2), TypeError, "2 is not a slice"),
        (slice(0, None), ValueError, r"mgrid\[0:\] has no stop"),
        (slice(0, 5, 0), ValueError, r"mgrid\[0:5:0\]: the step must not be zero"),
        (slice("a", 3), TypeError, r"the start 'a' is not a real number"),
        ((), TypeError, r"mgrid\[\(\)\] has no axis"),
    ],
)
def test_grids_refuse_what_they_do_not_take_saying_what_they_take(
    key: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as raised:
        prism_core.mgrid[key]
    assert "start:stop:Nj" in str(raised.value)
    with pytest.raises(error, match=message.replace("mgrid", "ogrid")):
        prism_core.ogrid[key]
