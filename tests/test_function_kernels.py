"""Real NumPy-style kernels (``benchmarks/kernels``) wrapped unchanged by ``prism_core.function``
and run pinned to numpy, torch (CPU) and jax, as issue 34's held-out suite runs them: each
kernel module's ``np`` bound to a namespace that looks names up in ``prism_core`` first and
NumPy second.

Each case compares with plain NumPy on the same inputs: the outputs, and every argument the
kernel updates in place.  Integer results match exactly; floating results within a tight
relative tolerance (a backend may sum in another order).  JAX without x64 holds no float64, so
its cases run on float32 inputs and are compared with NumPy on those same float32 inputs.  A
kernel that updates arrays in place is declined on JAX with the reason, never run with a lost
update.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from benchmarks import kernels

#: What these placements hold on jax is JAX's default, 32-bit mode (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jax_without_x64")

BACKENDS = ("numpy", "torch", "jax")
#: Small sizes: the whole module runs in seconds.
SIZE = 16
#: float64 everywhere but JAX (which, without x64, holds no float64: float32 there).
DTYPES = {"numpy": "float64", "torch": "float64", "jax": "float32"}
#: (rtol, atol) per dtype: a different summation order, never a different answer.
TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-6)}
#: What these kernels cannot do yet: (kernel, backend) -> why (strict xfail).
BUGS: dict[tuple[str, str], str] = {
    ("histogram", "jax"): (
        "histogram's counts are NumPy's int64, which JAX holds only with x64, so the op in the "
        "body has no jax variant in JAX's default mode (DispatchError 'no variant of histogram "
        "can run'); the placement should decline jax up front with that reason instead"
    ),
}

DECLINED = "updates arrays in place; jax arrays are immutable"


@pytest.fixture(autouse=True)
def plugins() -> Iterator[Any]:
    """The installed torch and jax plugins, loaded through their entry points (the suite's
    environment loads none by itself); a case on a backend whose plugin is missing skips."""
    yield prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("torch", "jax")))
    prism.extending.reload_plugins()


def _require(plugins: Any, backend: str) -> None:
    record = plugins.records.get(backend)
    if backend != "numpy" and (record is None or record.status != "loaded"):
        pytest.skip(f"prism-plugin-{backend} is not installed and loadable in this environment")


def _cases() -> Iterator[Any]:
    for name in kernels.NAMES:
        for backend in BACKENDS:
            marks = []
            if (name, backend) in BUGS:
                marks.append(pytest.mark.xfail(strict=True, reason=BUGS[name, backend]))
            yield pytest.param(name, backend, id=f"{name}-{backend}", marks=marks)


def _arrays(value: Any) -> list[Any]:
    """The results as a flat list (a tuple of results, or one)."""
    return list(value) if isinstance(value, tuple) else [value]


def _assert_same(got: Any, want: Any, dtype: str, what: str) -> None:
    assert isinstance(got, np.ndarray | np.generic), f"{what}: {type(got)} is not NumPy's"
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, what
    assert got.dtype.kind == want.dtype.kind, f"{what}: {got.dtype} against {want.dtype}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        rtol, atol = TOLERANCE[dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def _placed(module: ModuleType) -> Any:
    return prism.function(kernels.bind(module).kernel)


@pytest.mark.parametrize(("name", "backend"), list(_cases()))
def test_a_kernel_pinned_to_a_backend_matches_numpy(plugins: Any, name: str, backend: str) -> None:
    _require(plugins, backend)
    module = kernels.load(name)
    dtype = DTYPES[backend]
    args = module.example(SIZE, dtype)
    before = copy.deepcopy(args)
    reference_args = copy.deepcopy(args)
    want = module.kernel(*reference_args)  # plain NumPy on the same inputs
    F = _placed(module)
    if backend == "jax" and module.MUTATES:
        with prism.use_backend("jax"), pytest.raises(prism.BackendError, match=DECLINED):
            F(*args)
        assert F.declined == {"jax": DECLINED}
        for got, was in zip(args, before, strict=True):  # no partial update left behind
            if isinstance(was, np.ndarray):
                np.testing.assert_array_equal(got, was)
        return
    with prism.use_backend(backend):
        got, report = F.run(*args)
    assert report.backend == backend  # it ran whole there, no fallback
    assert not report.fallbacks
    got_items, want_items = _arrays(got), _arrays(want)
    assert len(got_items) == len(want_items)
    for i, (g, w) in enumerate(zip(got_items, want_items, strict=True)):
        _assert_same(g, w, dtype, f"{name} on {backend}: result {i}")
    # The arguments: every in-place update is the caller's, exactly as NumPy made it.
    for i, (g, w) in enumerate(zip(args, reference_args, strict=True)):
        if isinstance(w, np.ndarray):
            _assert_same(g, w, dtype, f"{name} on {backend}: argument {i}")
        else:
            assert g == w


@pytest.mark.parametrize("name", kernels.NAMES)
def test_a_kernel_in_automatic_mode_runs_where_its_arguments_live(name: str) -> None:
    module = kernels.load(name)
    args = module.example(SIZE)
    reference_args = copy.deepcopy(args)
    want = module.kernel(*reference_args)
    got, report = _placed(module).run(*args)
    assert report.backend == "numpy" and report.moves == []
    for i, (g, w) in enumerate(zip(_arrays(got), _arrays(want), strict=True)):
        _assert_same(g, w, "float64", f"{name} automatic: result {i}")
    for g, w in zip(args, reference_args, strict=True):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def test_the_namespace_looks_in_prism_first_then_numpy() -> None:
    ns = kernels.PrismFirst()
    assert ns.zeros is prism.zeros and ns.linalg.vector_norm is prism.linalg.vector_norm
    assert ns.fft.rfft is prism.fft.rfft
    assert ns.newaxis is None and ns.pi == np.pi  # NumPy's, where Prism has no such name
    module = kernels.load("heat")
    bound = kernels.bind(module)
    assert module.np is np and isinstance(bound.np, kernels.PrismFirst)


@pytest.mark.parametrize("name", kernels.NAMES)
def test_a_kernel_in_automatic_mode_after_tuning_matches_numpy(name: str) -> None:
    """The held-out suite's last step: ``prism.tuning.tune(F, *args)``, then ``F(*args)`` in
    automatic mode, wherever the tuner put it (float32 inputs: JAX is a candidate too)."""
    tune = prism.tuning.tune
    if "placed function" not in (tune.__doc__ or ""):
        pytest.skip("prism_core.tuning.tune does not take a placed function in this version")
    module = kernels.load(name)
    F = _placed(module)
    tune(F, *module.example(SIZE, "float32"), budget_s=0.5, progress=False)
    args = module.example(SIZE, "float32")
    reference_args = copy.deepcopy(args)
    want = module.kernel(*reference_args)
    got, report = F.run(*args)
    assert report.backend in BACKENDS
    for i, (g, w) in enumerate(zip(_arrays(got), _arrays(want), strict=True)):
        _assert_same(g, w, "float32", f"{name} tuned, on {report.backend}: result {i}")
    for i, (g, w) in enumerate(zip(args, reference_args, strict=True)):
        if isinstance(w, np.ndarray):
            _assert_same(g, w, "float32", f"{name} tuned, on {report.backend}: argument {i}")
