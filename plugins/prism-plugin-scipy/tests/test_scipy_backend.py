"""The ``scipy`` backend: availability, capabilities, NumPy arrays, and Prism's conformance
suite on every variant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy
from prism_plugin_scipy.backend import ScipyBackend

import prism_core
from prism_core.testing import check_backend

HERE = Path(__file__).resolve().parent


@pytest.fixture
def backend() -> ScipyBackend:
    found = prism_core.extending.plugins().backend("scipy")
    assert isinstance(found, ScipyBackend)
    return found


def test_available_with_scipys_version(backend: ScipyBackend) -> None:
    state = backend.availability()
    assert state
    assert state.version == scipy.__version__
    assert state.reason == ""


def test_an_old_scipy_is_unavailable_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scipy, "__version__", "1.9.3")
    state = ScipyBackend().availability()
    assert not state
    assert state.reason == (
        "scipy 1.9.3 is installed; the scipy backend needs scipy>=1.10 "
        "(pip install -U 'scipy>=1.10')"
    )


def test_capabilities_name_versions_blas_and_fft_workers(backend: ScipyBackend) -> None:
    caps = backend.capabilities()
    json.dumps(caps)  # prism doctor prints them
    assert caps["scipy"] == scipy.__version__
    assert caps["numpy"] == np.__version__
    assert caps["blas"], "threadpoolctl sees no BLAS, though scipy.linalg is imported"
    for pool in caps["blas"]:
        assert pool["user_api"] == "blas"
        assert pool["of"] in ("scipy", "numpy", "shared")
        assert pool["num_threads"] >= 1
    assert any(pool["of"] in ("scipy", "shared") for pool in caps["blas"])
    workers = caps["fft_workers_from"]
    assert caps["fft_workers"] == workers["workers"] >= 1
    known = [n for n in (workers["described_cores"], workers["usable_cpus"]) if n]
    known += [workers["blas_threads"]] if workers["blas_threads"] else []
    assert caps["fft_workers"] == min(known)


def test_doctor_shows_the_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prism_core", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "scipy" in done.stdout
    assert "fft_workers" in done.stdout


def test_arrays_are_numpys(backend: ScipyBackend) -> None:
    x = backend.asarray([[1, 2], [3, 4]], dtype=prism_core.float32)
    assert type(x) is np.ndarray and x.dtype == np.float32
    assert backend.to_numpy(x) is x
    e = backend.empty((2, 3), np.dtype("complex64"))
    assert e.shape == (2, 3) and e.dtype == np.complex64
    shared = backend.from_dlpack(x)
    assert np.shares_memory(shared, x)
    assert backend.from_dlpack([1.0, 2.0]).tolist() == [1.0, 2.0]


def test_takes_numpy_arrays_and_scalars_and_owns_nothing(backend: ScipyBackend) -> None:
    for value in (np.zeros(3), np.float32(1.5), 1, 2.5, 1j, True):
        assert backend.is_native(value), value
    for value in ([1.0], "text", memoryview(b"ab"), None):
        assert not backend.is_native(value), value
    for value in (np.zeros(3), 1.0, [1.0]):
        assert backend.owns(value) is False


ALL_VARIANTS = {
    "scipy.matmul",
    "scipy.linalg.solve",
    "scipy.linalg.inv",
    "scipy.linalg.svd",
    "scipy.linalg.eigh",
    "scipy.linalg.eig",
    "scipy.fft.fft",
    "scipy.fft.ifft",
    "scipy.fft.rfft",
    "scipy.convolve",
    "scipy.linalg.det",
    "scipy.linalg.eigvalsh",
    "scipy.linalg.svdvals",
    "scipy.linalg.pinv",
    "scipy.fft.fftn",
    "scipy.fft.ifftn",
    "scipy.fft.rfftn",
    "scipy.fft.irfftn",
    "scipy.fft.irfft",
    "scipy.fft.hfft",
    "scipy.fft.ihfft",
}


def test_conformance() -> None:
    report = check_backend("scipy")
    report.raise_for_failures()
    ran = {r.subject for r in report.passed if r.check == "values"}
    # The suite's convolutions (4096 by 64 points) are below the measured crossover: NumPy's.
    assert ran == ALL_VARIANTS - {"scipy.convolve"}
    skipped = {r.name: r.detail for r in report.skipped}
    assert "too short for an FFT" in skipped["scipy.convolve-values-float64-standard"]
    assert "not int64 and int64" in skipped["scipy.matmul-values-int64-standard"]


def test_conformance_below_the_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The implementations on every input of the suite, with the size thresholds of the
    checks set to nothing: FFT convolution of 1 by 1 points, Cholesky for 1 by 1 matrices."""
    from prism_plugin_scipy import ops, variants

    monkeypatch.setattr(variants, "CONVOLVE_MIN_SHORT", 1)
    monkeypatch.setattr(variants, "CONVOLVE_MIN_SIZE", 1)
    monkeypatch.setattr(ops, "CHOLESKY_MIN_N", 1)
    report = check_backend("scipy")
    report.raise_for_failures()
    ran = {r.subject for r in report.passed if r.check == "values"}
    assert ran == ALL_VARIANTS
    passed = {r.name for r in report.passed}
    for name in (
        "scipy-roundtrip-float32",
        "scipy-from_dlpack",
        "scipy.matmul-values-complex64-fortran",
        "scipy.matmul-values-float32-strided",
        "scipy.linalg.solve-values-float64-vector",
        "scipy.linalg.svd-type-float32",
        "scipy.linalg.svd-kwarg-full_matrices",
        "scipy.linalg.eig-dtype-float64",
        "scipy.linalg.eigh-values-complex64-strided",
        "scipy.fft.fft-dtype-complex64",
        "scipy.fft.rfft-kwarg-norm",
        "scipy.convolve-values-float32-standard",
        "scipy.convolve-values-complex64-one",
        "scipy.convolve-kwarg-mode",
    ):
        assert name in passed, f"{name} did not pass:\n{report}"
    # What the variants decline is skipped with their reason, never failed.
    skipped = {r.name: r.detail for r in report.skipped}
    assert "integers exactly" in skipped["scipy.convolve-values-int64-standard"]


@pytest.mark.timeout(300)
def test_the_pytest_plugin_runs_the_suite(tmp_path: Path) -> None:
    """``pytest --prism-backend scipy``: one test per check, in a pytest of its own."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--prism-backend",
            "scipy",
            "-k",
            "linalg.svd or fft.rfft",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tail = done.stdout.strip().splitlines()[-1]
    assert "passed" in tail and "failed" not in tail, done.stdout
