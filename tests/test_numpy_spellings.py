"""NumPy's spellings that Prism accepts (issue 34, item 7; docs/array-api.md, "NumPy's
spellings"): a kernel written for NumPy, its ``np`` a namespace that looks names up in
``prism_core`` first and NumPy second, runs through Prism's dispatch on NumPy arrays, and on
torch tensors and JAX arrays under ``use_backend``, with NumPy's values and dtypes.
"""

from __future__ import annotations

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
