"""The MLX plugin as users get it: found through its entry point, conformant on the CPU,
honest about the dtypes MLX computes on each device, NumPy's errors for MLX's, the calls that
would crash MLX declined before they run, and Apple's GPU declined, with the reason, where MLX
has no Metal."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism

mx = pytest.importorskip(
    "mlx.core", reason="the mlx backend's variants need MLX (mlx on macOS, mlx[cpu] on Linux)"
)

SOURCE = Path(__file__).parents[1] / "src" / "prism_plugin_mlx" / "plugin.py"
IS_APPLE_SILICON = mx.is_available(mx.gpu) and sys.platform == "darwin"


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with only this plugin."""
    environ = {**os.environ, "PRISM_PLUGINS": "mlx", "PRISM_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=240,
        env=environ,
        check=False,
    )


def test_found_through_its_entry_point_with_a_variant_per_target() -> None:
    record = prism.extending.plugins().records["mlx"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert record.backends == ["mlx"]
    names = {v.name for v in record.variants}
    assert {"mlx.matmul", "mlx.gpu.matmul", "mlx.linalg.inv", "mlx.to_numpy"} <= names


@pytest.mark.timeout(600)  # 13,000 checks, in this process: seconds
def test_the_conformance_suite_passes() -> None:
    from prism_core.testing import check_backend

    report = check_backend("mlx")
    assert report.failed == [], str(report)
    assert len(report.passed) > 5000


def test_results_are_mlx_arrays_that_numpy_code_gets_back_as_numpy() -> None:
    a = np.arange(6.0).reshape(2, 3)
    with prism.use_backend("mlx"):
        out = prism.matmul(a, a.T)
        host = prism.to_numpy(out)
        assert isinstance(prism.std(mx.array([1.0, 2.0, 4.0]), correction=1), mx.array)
    assert isinstance(out, mx.array) and out.dtype == mx.float64  # never MLX's float32
    assert isinstance(host, np.ndarray) and host.flags.writeable
    np.testing.assert_allclose(host, a @ a.T)


def test_dtypes_are_what_mlx_computes_on_each_device() -> None:
    backend = prism.extending.plugins().backend("mlx")
    cpu = prism.hardware.get_device("apple.m4-max-cpu")
    gpu = prism.hardware.get_device("apple.m4-max-gpu")
    assert "complex128" not in backend.dtypes(cpu)
    assert {"float64", "complex64", "bfloat16"} <= backend.dtypes(cpu)
    assert "float64" not in backend.dtypes(gpu)  # Metal has no double; MLX's float64 is CPU-only


def test_complex128_is_declined_with_the_reason_not_computed_in_complex64() -> None:
    z = np.ones((2, 2), dtype=np.complex128)
    reasons = {c.variant: c.reasons for c in prism.explain("matmul", z, z).candidates}
    assert any("mlx holds no complex128" in r for r in reasons["mlx.matmul"])


@pytest.mark.parametrize(
    ("call", "reference"),
    [
        (lambda: prism.linalg.inv(np.zeros((2, 2))), lambda: np.linalg.inv(np.zeros((2, 2)))),
        (
            lambda: prism.matmul(np.ones((2, 3)), np.ones((2, 3))),
            lambda: np.ones((2, 3)) @ np.ones((2, 3)),
        ),
    ],
    ids=["singular-inv", "matmul-shapes"],
)
def test_a_callers_mistake_raises_numpys_exception_in_numpys_words(call, reference) -> None:
    """MLX raises at evaluation (it is lazy): inside the variant, where NumPy's words replace
    MLX's."""
    with pytest.raises(Exception) as numpy_said:  # noqa: PT011 - whatever NumPy raises
        reference()
    with prism.use_backend("mlx"), pytest.raises(type(numpy_said.value)) as prism_said:
        call()
    assert str(prism_said.value) == str(numpy_said.value)


def test_an_empty_matrix_is_declined_not_crashed_on() -> None:
    """MLX's LAPACK calls divide by zero on a 0x0 matrix (SIGFPE): declined before they run."""
    empty = np.zeros((0, 0))
    decision = prism.explain("linalg.inv", empty)
    (candidate,) = [c for c in decision.candidates if c.variant == "mlx.linalg.inv"]
    assert any("an empty array: mlx.core.linalg" in r for r in candidate.reasons)
    np.testing.assert_array_equal(prism.linalg.inv(empty), np.linalg.inv(empty))  # the reference


@pytest.mark.skipif(IS_APPLE_SILICON, reason="MLX has Metal here: the GPU is driven")
def test_apple_s_gpu_is_declined_with_the_reason_where_mlx_has_no_metal() -> None:
    backend = prism.extending.plugins().backend("mlx")
    gpu = prism.hardware.get_device("apple.m4-max-gpu")
    verdict = backend.can_drive(gpu)
    assert not verdict
    assert "MLX has no GPU here" in " ".join(verdict.reasons)
    with prism.device("apple.m4-max-gpu", simulate=True):
        assert backend.can_drive(gpu)  # a simulated device: its description alone decides
    nvidia = backend.can_drive(prism.hardware.get_device("nvidia.h100-sxm"))
    assert not nvidia and "Apple's GPUs only" in " ".join(nvidia.reasons)


@pytest.mark.skipif(not IS_APPLE_SILICON, reason="needs Apple silicon, where MLX has Metal")
def test_on_apple_silicon_the_gpu_is_driven_without_float64() -> None:
    backend = prism.extending.plugins().backend("mlx")
    gpu = prism.hardware.get_device("apple.m4-max-gpu")
    assert backend.can_drive(gpu)
    with prism.use_backend("mlx"):
        out = prism.matmul(np.ones((4, 4)), np.ones((4, 4)))  # no device named: the CPU
    assert out.dtype == mx.float64


def test_the_doctor_and_listing_import_no_mlx() -> None:
    run = _fresh(
        """
        import sys, prism_core as prism
        backend = prism.extending.plugins().backend("mlx")
        print(bool(backend.availability()), sorted(backend.capabilities()))
        a = prism.ArraySpec((4, 4), "float32")
        prism.explain("matmul", a, a)
        print("mlx" in sys.modules)
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "False"


def test_the_plugin_is_at_most_150_lines() -> None:
    """What a library like MLX needs beyond a few lines belongs in the backend kit."""
    assert len(SOURCE.read_text(encoding="utf-8").splitlines()) <= 150
