"""On a real NVIDIA GPU: the backend's arrays, Prism's conformance suite, every op against
NumPy, and dispatch.  Every test here is skipped, with the backend's reason, where CuPy cannot
use a GPU (as on the machines CI runs on); run ``pytest -rs`` to see why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from prism_plugin_cuda.backend import CudaBackend

import prism_core
from prism_core.testing import check_backend

#: Every op the plugin has a variant of.
OPS = sorted({v.op for v in CudaBackend().variants()})
NEEDS_GPU = "needs an NVIDIA GPU with CUDA"
KDL_CUDA = 2  # DLPack device type of CUDA device memory
#: Why the suite skips a variant's values altogether.
WHOLE_OP_SKIPS = ("no standard inputs for ", "random numbers differ between backends")


@pytest.fixture
def gpu(cuda_backend: CudaBackend) -> CudaBackend:
    state = cuda_backend.availability()
    if not state:
        pytest.skip(f"{NEEDS_GPU} ({state.reason})")
    return cuda_backend


def _on_gpu(array: Any) -> bool:
    return int(array.__dlpack_device__()[0]) == KDL_CUDA


def _host(backend: CudaBackend, result: Any) -> Any:
    """A result on the host, after checking it is the backend's (CuPy arrays, also inside the
    named tuples)."""
    if isinstance(result, list):  # meshgrid's, as the standard says
        return [_host(backend, r) for r in result]
    if isinstance(result, tuple):
        items = [_host(backend, r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    assert backend.owns(result) and _on_gpu(result), f"{type(result)} is not a CuPy array"
    return backend.to_numpy(result)


def _present_nvidia() -> str:
    found = [
        d.description.device_type
        for d in prism_core.hardware.present_devices().devices
        if d.description.vendor == "nvidia"
    ]
    if not found:
        pytest.skip(f"{NEEDS_GPU} that Prism detects (no NVIDIA device was detected)")
    return found[0]


# -- the backend's arrays ---------------------------------------------------------------------


def test_round_trip(gpu: CudaBackend) -> None:
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    device = gpu.asarray(host)
    assert _on_gpu(device) and gpu.owns(device) and gpu.is_native(device)
    back = gpu.to_numpy(device)
    assert isinstance(back, np.ndarray) and back.dtype == np.float32
    np.testing.assert_array_equal(back, host)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int32", "bool"])
def test_asarray_with_a_dtype(gpu: CudaBackend, dtype: str) -> None:
    back = gpu.to_numpy(gpu.asarray([[0, 1], [2, 3]], dtype=dtype))
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, np.array([[0, 1], [2, 3]], dtype=dtype))


def test_empty(gpu: CudaBackend) -> None:
    device = gpu.empty((2, 3), np.float32)
    assert _on_gpu(device)
    assert (device.shape, device.dtype) == ((2, 3), np.float32)


def test_from_dlpack_shares_device_memory(gpu: CudaBackend) -> None:
    source = gpu.asarray(np.zeros((4, 4), dtype=np.float32))
    imported = gpu.from_dlpack(source)
    assert _on_gpu(imported)
    source[1, 2] = 42.0  # written through the source, seen through the import: no copy
    gpu.synchronize()
    assert gpu.to_numpy(imported)[1, 2] == 42.0


def test_from_dlpack_copies_host_arrays_to_the_gpu(gpu: CudaBackend) -> None:
    host = np.linspace(0.0, 1.0, 7)
    imported = gpu.from_dlpack(host)
    assert _on_gpu(imported)
    host[0] = 5.0  # a copy: the GPU array does not change
    np.testing.assert_array_equal(gpu.to_numpy(imported), np.linspace(0.0, 1.0, 7))
    readonly = np.arange(3.0)
    readonly.flags.writeable = False
    np.testing.assert_array_equal(gpu.to_numpy(gpu.to_device(readonly)), [0.0, 1.0, 2.0])


def test_synchronize_and_capabilities(gpu: CudaBackend) -> None:
    gpu.synchronize()
    caps = gpu.capabilities()
    assert caps["framework"] == "cupy"
    assert caps["devices"], caps
    assert all(d["memory_bytes"] > 0 for d in caps["devices"])


# -- the conformance suite and every op -------------------------------------------------------


def test_conformance_on_the_gpu(gpu: CudaBackend) -> None:
    report = check_backend("cuda")
    report.raise_for_failures()
    values = [r for r in report.results if r.check == "values"]
    whole = {r.subject for r in values if r.detail.startswith(WHOLE_OP_SKIPS)}
    ran = {r.subject for r in values if r.status == "passed"}
    assert ran == {r.subject for r in values} - whole, str(report)


@pytest.mark.parametrize("op", OPS)
def test_each_op_on_the_gpu(
    gpu: CudaBackend,
    sample_call: Callable[[str], Any],
    run_cuda: Callable[..., Any],
    reference_of: Callable[..., Any],
    agrees: Callable[..., None],
    op: str,
) -> None:
    """Every op from NumPy inputs (moved to the GPU as dispatch moves them), against NumPy;
    the results are CuPy arrays on the GPU."""
    args, kwargs = sample_call(op)
    expected = reference_of(op, *args, **kwargs)
    result = run_cuda(op, *args, **kwargs)
    if op == "to_numpy":
        assert isinstance(result, np.ndarray)
        actual = result
    else:
        actual = _host(gpu, result)
    agrees(op, args, expected, actual)


def test_a_singular_matrix_is_numpys_error(gpu: CudaBackend, run_cuda: Callable[..., Any]) -> None:
    singular = np.ones((64, 64))
    with pytest.raises(np.linalg.LinAlgError, match=r"^Singular matrix$"):
        run_cuda("linalg.inv", singular)
    with pytest.raises(np.linalg.LinAlgError, match=r"^Singular matrix$"):
        run_cuda("linalg.solve", singular, np.ones(64))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        run_cuda("linalg.cholesky", -np.eye(64))


def test_float16_matmul_on_the_gpu(
    gpu: CudaBackend, run_cuda: Callable[..., Any], sample_call: Callable[[str], Any]
) -> None:
    (a, _), _ = sample_call("matmul")
    a = a.astype(np.float16)
    result = _host(gpu, run_cuda("matmul", a, a))
    assert result.dtype == np.float16
    want = a.astype(np.float32) @ a.astype(np.float32)
    np.testing.assert_allclose(result.astype(np.float32), want, rtol=2e-2, atol=0.5)


# -- dispatch ---------------------------------------------------------------------------------


def test_use_backend_returns_cupy_arrays(gpu: CudaBackend) -> None:
    """Under ``use_backend("cupy")`` (the alias), NumPy arguments move to the GPU, results are
    CuPy arrays, and creation ops create on the GPU."""
    _present_nvidia()
    a = np.random.default_rng(1).standard_normal((64, 64))
    with prism_core.use_backend("cupy"):
        product = prism_core.matmul(a, a)
        zeros = prism_core.zeros((3, 4), dtype="float32")
        drawn = prism_core.random.normal((5,), seed=7)
    assert gpu.owns(product) and gpu.owns(zeros) and gpu.owns(drawn)
    np.testing.assert_allclose(gpu.to_numpy(product), a @ a, rtol=1e-10)
    assert zeros.dtype == np.float32 and _on_gpu(zeros)
    np.testing.assert_array_equal(gpu.to_numpy(drawn), np.random.default_rng(7).normal(size=5))


def test_automatic_mode_keeps_data_where_it_is(gpu: CudaBackend) -> None:
    """CuPy in, CuPy out, on the GPU (even when small: there is no transfer to save); NumPy
    in, NumPy out in automatic mode, and CuPy out inside a scope naming the GPU (a named
    device's results are its backend's arrays: docs/backends.md, "Where a call runs")."""
    device_type = _present_nvidia()
    a = np.random.default_rng(2).standard_normal((64, 64))
    assert isinstance(prism_core.add(a, a), np.ndarray)
    with prism_core.device(device_type):
        moved = prism_core.add(a, a)
        on_gpu = gpu.asarray(a)
        decision = prism_core.explain("add", on_gpu, on_gpu)
        result = prism_core.add(on_gpu, on_gpu)
    assert gpu.owns(moved)
    np.testing.assert_allclose(gpu.to_numpy(moved), a + a)
    assert decision.chosen == "cuda.add"
    assert decision.data_movement == ()
    assert gpu.owns(result)
    np.testing.assert_allclose(gpu.to_numpy(result), a + a)
    tiny = gpu.asarray(np.ones(16))
    assert gpu.owns(prism_core.add(tiny, tiny))
