"""The ``cuda`` backend: its reasons on a host without a GPU, and real arrays on one with a GPU.

The reasons are tested with stand-in ``cupy``/``torch`` modules put in ``sys.modules`` (the real
ones are put back afterwards); the array tests run only where CuPy or torch can use a GPU.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prism_plugin_cuda.backend import CudaBackend, CudaUnavailableError

import prism_core

NO_DRIVER = (
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
    "installed a driver from http://www.nvidia.com/Download/index.aspx"
)
KDL_CUDA = 2  # DLPack device type of CUDA device memory
NEEDS_GPU = "needs an NVIDIA GPU with CUDA"


# -- stand-ins for the frameworks -------------------------------------------------------------


def _raiser(exc: Exception) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


def fake_torch(version: str, cuda_build: str | None, init_error: Exception) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.__version__ = version  # type: ignore[attr-defined]
    torch.version = types.SimpleNamespace(cuda=cuda_build)  # type: ignore[attr-defined]
    torch.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        is_available=lambda: False, device_count=lambda: 0, init=_raiser(init_error)
    )
    return torch


def fake_cupy(version: str, error: Exception) -> types.ModuleType:
    cupy = types.ModuleType("cupy")
    cupy.__version__ = version  # type: ignore[attr-defined]
    runtime = types.SimpleNamespace(getDeviceCount=_raiser(error))
    cupy.cuda = types.SimpleNamespace(runtime=runtime)  # type: ignore[attr-defined]
    return cupy


@pytest.fixture
def frameworks(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Set what ``import cupy`` and ``import torch`` give: a module, or ``None`` (not installed)."""

    def install(*, cupy: types.ModuleType | None, torch: types.ModuleType | None) -> None:
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        monkeypatch.setitem(sys.modules, "torch", torch)

    return install


# -- identity ---------------------------------------------------------------------------------


def test_backend_identity(library: prism_core.DeviceLibrary) -> None:
    backend = prism_core.plugins().backend("cuda")
    assert isinstance(backend, CudaBackend)
    assert isinstance(backend, prism_core.Backend)
    assert (backend.name, backend.priority) == ("cuda", 10)
    assert dict(backend.drives) == {"vendor": "nvidia", "kind": "gpu"}
    assert backend.description
    assert backend.can_drive(library.get("nvidia.h100-sxm"))
    assert backend.can_drive(library.get("nvidia.rtx-4090"))
    assert not backend.can_drive(library.get("amd.mi300x"))
    assert not backend.can_drive(library.get("intel.sapphirerapids"))


def test_creating_the_backend_imports_nothing(frameworks: Callable[..., None]) -> None:
    frameworks(cupy=None, torch=None)
    backend = CudaBackend()
    assert backend.framework is None
    assert backend._availability is None


# -- reasons ----------------------------------------------------------------------------------


def test_neither_framework_installed(frameworks: Callable[..., None]) -> None:
    frameworks(cupy=None, torch=None)
    state = CudaBackend().availability()
    assert isinstance(state, prism_core.Availability)
    assert not state
    assert state.reason == "neither cupy nor torch is installed"
    assert state.version is None


def test_torch_without_a_driver(frameworks: Callable[..., None]) -> None:
    frameworks(cupy=None, torch=fake_torch("2.3.1", "12.1", RuntimeError(NO_DRIVER)))
    state = CudaBackend().availability()
    assert not state
    assert state.reason == f"torch 2.3.1 is installed but CUDA is not available: {NO_DRIVER}"


def test_torch_warns_why(frameworks: Callable[..., None]) -> None:
    too_old = (
        "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
        "Please update your GPU driver."
    )

    def is_available() -> bool:
        warnings.warn(too_old, UserWarning, stacklevel=2)
        return False

    torch = fake_torch("2.3.1", "12.1", RuntimeError("not reached"))
    torch.cuda.is_available = is_available  # type: ignore[attr-defined]
    frameworks(cupy=None, torch=torch)
    state = CudaBackend().availability()  # the warning is the reason, not a warning to the user
    assert state.reason == f"torch 2.3.1 is installed but CUDA is not available: {too_old}"


def test_cpu_only_torch(frameworks: Callable[..., None]) -> None:
    error = AssertionError("Torch not compiled with CUDA enabled")
    frameworks(cupy=None, torch=fake_torch("2.4.0+cpu", None, error))
    state = CudaBackend().availability()
    assert not state
    assert state.reason == (
        "torch 2.4.0+cpu is installed but CUDA is not available: this torch build has no CUDA "
        "support (a CPU-only build)"
    )


def test_both_installed_and_neither_sees_a_gpu(frameworks: Callable[..., None]) -> None:
    no_device = RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    frameworks(
        cupy=fake_cupy("13.3.0", no_device),
        torch=fake_torch("2.3.1", "12.1", RuntimeError(NO_DRIVER)),
    )
    state = CudaBackend().availability()
    assert not state
    assert state.reason == (
        "cupy 13.3.0 is installed but CUDA is not available: cudaErrorNoDevice: no "
        f"CUDA-capable device is detected; torch 2.3.1 is installed but CUDA is not available: "
        f"{NO_DRIVER}"
    )


def test_a_framework_that_breaks_on_import(
    frameworks: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "cupy"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            raise ImportError(
                "CuPy failed to load libcublas.so.12: OSError: libcublas.so.12: cannot open "
                "shared object file: No such file or directory"
            )
            """
        )
    )
    frameworks(cupy=None, torch=None)
    monkeypatch.delitem(sys.modules, "cupy")
    monkeypatch.syspath_prepend(str(tmp_path))
    state = CudaBackend().availability()
    assert not state
    assert state.reason == (
        "cupy cannot be imported: ImportError: CuPy failed to load libcublas.so.12: OSError: "
        "libcublas.so.12: cannot open shared object file: No such file or directory"
    )
    assert "cupy" not in sys.modules


def test_array_methods_say_why_they_cannot_run(frameworks: Callable[..., None]) -> None:
    frameworks(cupy=None, torch=None)
    backend = CudaBackend()
    calls: list[Callable[[], Any]] = [
        lambda: backend.asarray([1.0]),
        lambda: backend.to_numpy(np.zeros(1)),
        lambda: backend.from_dlpack(np.zeros(1)),
        lambda: backend.empty((2,), "float32"),
        backend.synchronize,
    ]
    for call in calls:
        with pytest.raises(CudaUnavailableError, match="neither cupy nor torch is installed"):
            call()
    assert backend.capabilities() == {
        "available": False,
        "reason": "neither cupy nor torch is installed",
    }


def test_availability_on_this_host() -> None:
    """Whatever this host has, the backend answers without raising, with a reason when not."""
    state = CudaBackend().availability()
    if state:
        assert state.version is not None
        assert state.version.split()[0] in {"cupy", "torch"}
    else:
        assert state.reason
        installed = [m for m in ("cupy", "torch") if importlib.util.find_spec(m) is not None]
        if not installed:
            assert state.reason == "neither cupy nor torch is installed"
        else:
            assert any(state.reason.startswith(m) for m in installed)


# -- on a GPU ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu() -> CudaBackend:
    backend = CudaBackend()
    state = backend.availability()
    if not state:
        pytest.skip(f"{NEEDS_GPU} ({state.reason})")
    return backend


def _on_gpu(array: Any) -> bool:
    return int(array.__dlpack_device__()[0]) == KDL_CUDA


def test_round_trip(gpu: CudaBackend) -> None:
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    device = gpu.asarray(host)
    assert _on_gpu(device)
    back = gpu.to_numpy(device)
    assert isinstance(back, np.ndarray)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, host)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int32", "bool"])
def test_asarray_with_a_dtype(gpu: CudaBackend, dtype: str) -> None:
    device = gpu.asarray([[0, 1], [2, 3]], dtype=dtype)
    back = gpu.to_numpy(device)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, np.array([[0, 1], [2, 3]], dtype=dtype))


def test_empty(gpu: CudaBackend) -> None:
    device = gpu.empty((2, 3), np.float32)
    assert _on_gpu(device)
    back = gpu.to_numpy(device)
    assert (back.shape, back.dtype) == ((2, 3), np.float32)


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
    np.testing.assert_array_equal(gpu.to_numpy(imported), host)


def test_synchronize_and_capabilities(gpu: CudaBackend) -> None:
    gpu.synchronize()
    caps = gpu.capabilities()
    assert caps["framework"] == gpu.framework
    assert caps["devices"], caps
