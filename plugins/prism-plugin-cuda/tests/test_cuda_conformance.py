"""Prism's conformance suite on the ``cuda`` backend, on this host: without a GPU the suite
reports the backend unavailable with its reason and skips the array checks; with NumPy standing
in for CuPy, the whole suite runs the plugin's own code.  On a GPU, ``test_cuda_gpu.py`` runs
the suite on CuPy."""

from __future__ import annotations

import pytest
from prism_plugin_cuda.backend import CudaBackend

import prism_core
from prism_core.testing import check_backend

#: Every op the plugin has a variant of.
OPS = sorted({v.op for v in CudaBackend().variants()})
#: Why the suite skips a variant's values altogether (the op has no standard inputs in the
#: suite, or its values are not comparable between backends).
WHOLE_OP_SKIPS = ("no standard inputs for ", "random numbers differ between backends")


def test_conformance_on_this_host(cuda_backend: CudaBackend) -> None:
    state = cuda_backend.availability()
    if state:
        pytest.skip("a GPU is usable here: test_cuda_gpu.py runs the suite on it")
    report = check_backend("cuda")
    report.raise_for_failures()
    assert [r.name for r in report.passed] == ["cuda-availability"]
    assert report.skipped[-1].detail == f"backend unavailable: {state.reason}"


def test_the_suite_on_the_stand_in(numpy_as_cupy: CudaBackend) -> None:
    """Every check of the suite, over every variant of the plugin, with NumPy standing in for
    CuPy: the plugin's own code (arguments, dtypes, result types) conforms."""
    report = check_backend("cuda")
    assert report.ok, str(report)
    values = [r for r in report.results if r.check == "values"]
    assert {r.subject for r in values} == {f"cuda.{op}" for op in OPS} | {"cuda.tensor_core_matmul"}
    whole = {r.subject for r in values if r.detail.startswith(WHOLE_OP_SKIPS)}
    ran = {r.subject for r in values if r.status == "passed"}
    assert ran == {r.subject for r in values} - whole
    assert {"cuda.matmul", "cuda.linalg.svd", "cuda.fft.rfft", "cuda.einsum"} <= ran
    assert "cuda.random.normal" in whole
    skipped = {r.name: r.detail for r in report.skipped}
    assert skipped["cuda.add-values-float64-one"] == (
        "can_run declines these inputs: too small to be worth a device transfer (1 elements, "
        "fewer than 4096)"
    )
    assert skipped["cuda.matmul-values-int32-standard"].startswith("can_run declines")
    passed = {r.name for r in report.passed}
    for name in (
        "cuda-roundtrip-complex64",
        "cuda.fft.fft-dtype-complex64",
        "cuda.fft.fft-kwarg-norm",
        "cuda.linalg.svd-type-float32",
        "cuda.linalg.solve-values-float64-vector",
        "cuda.sum-kwarg-dtype",
        "cuda.zeros-type-int32",
        "cuda.matmul-values-float32-fortran",
    ):
        assert name in passed, name
    assert prism_core.extending.plugins().backend("cupy") is numpy_as_cupy
