"""Prism's conformance suite on the CUDA backend: for real on a GPU host; without a GPU, the
suite reports the backend unavailable with its reason and skips the array checks, and the
plugin's CuPy code path runs the whole suite with NumPy standing in for CuPy."""

from __future__ import annotations

import types

import numpy as np
import pytest
from prism_plugin_cuda.backend import CudaBackend

import prism_core
from prism_core.testing import check_backend

VARIANTS = {
    "cuda.matmul",
    "cuda.tensor_core_matmul",
    "cuda.add",
    "cuda.multiply",
    "cuda.sum",
    "cuda.linalg.solve",
    "cuda.linalg.svd",
    "cuda.fft.fft",
}


def test_conformance() -> None:
    report = check_backend("cuda")
    report.raise_for_failures()
    availability = prism_core.plugins().backend("cuda").availability()
    if availability:
        # On a GPU: every variant of the plugin was run on the standard inputs and compared.
        assert {r.subject for r in report.passed} >= VARIANTS, str(report)
    else:
        assert report.skipped[-1].detail == f"backend unavailable: {availability.reason}"


def _numpy_as_cupy() -> types.ModuleType:
    """NumPy with what CuPy has besides NumPy's API: ``asnumpy``, ``cuda.runtime``, and
    reductions that give 0-d arrays (CuPy never returns NumPy scalars)."""
    cupy = types.ModuleType("cupy")
    for name in ("asarray", "empty", "ndarray", "matmul", "add", "multiply", "float64", "linalg"):
        setattr(cupy, name, getattr(np, name))
    cupy.fft = np.fft  # type: ignore[attr-defined]
    cupy.from_dlpack = np.from_dlpack  # type: ignore[attr-defined]
    cupy.asnumpy = np.asarray  # type: ignore[attr-defined]
    cupy.sum = lambda *a, **k: np.asarray(np.sum(*a, **k))  # type: ignore[attr-defined]
    cupy.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        runtime=types.SimpleNamespace(deviceSynchronize=lambda: None)
    )
    cupy.__version__ = np.__version__  # type: ignore[attr-defined]
    return cupy


@pytest.fixture
def cupy_path(monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The dispatching backend on its CuPy code path, with NumPy standing in for CuPy."""
    backend = prism_core.plugins().backend("cuda")
    assert isinstance(backend, CudaBackend)
    monkeypatch.setattr(backend, "_availability", prism_core.Availability(True, "", "np"))
    monkeypatch.setattr(backend, "_module", _numpy_as_cupy())
    monkeypatch.setattr(backend, "framework", "cupy")
    return backend


def test_the_cupy_code_path_conforms(cupy_path: CudaBackend) -> None:
    """What runs without a GPU: every variant's CuPy code path, every check of the suite."""
    report = check_backend("cuda")
    assert report.ok, str(report)
    ran = {r.subject for r in report.passed if r.check == "values"}
    assert ran == VARIANTS
    passed = {r.name for r in report.passed}
    for name in (
        "cuda.fft.fft-dtype-complex64",
        "cuda.fft.fft-kwarg-norm",
        "cuda.linalg.svd-type-float32",
        "cuda.linalg.solve-values-float64-vector",
        "cuda.sum-kwarg-dtype",
        "cuda.matmul-values-float32-fortran",
    ):
        assert name in passed, name
    # Small inputs stay on NumPy: the suite skips them with can_run's reason.
    skipped = {r.name: r.detail for r in report.skipped}
    assert skipped["cuda.add-values-float64-one"] == (
        "can_run declines these inputs: too small to be worth a GPU transfer (1 elements, "
        "fewer than 4096)"
    )
    assert skipped["cuda.matmul-values-int32-standard"].startswith("can_run declines")
