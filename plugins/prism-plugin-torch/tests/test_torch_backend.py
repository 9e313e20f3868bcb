"""The ``torch`` backend: identity, availability and capabilities, its arrays (NumPy and torch
share memory on the CPU), devices, and the numerics hooks (autograd against finite differences,
vmap)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from prism_plugin_torch.backend import TorchBackend, torch_dtype
from prism_plugin_torch.runtime import cuda_unavailable

import prism_core


@pytest.fixture
def backend() -> TorchBackend:
    """The backend instance dispatch uses (the one discovery created)."""
    found = prism_core.extending.plugins().backend("torch")
    assert isinstance(found, TorchBackend)
    return found


# -- identity, availability, capabilities ------------------------------------------------------


def test_identity(backend: TorchBackend) -> None:
    assert backend.name == "torch"
    assert backend.aliases == ("pytorch",)
    assert backend.priority == 0
    assert prism_core.hardware.Requirement(dict(backend.drives)).match(
        prism_core.hardware.get_device("nvidia.h100-sxm")
    )


def test_in_prism_s_backend_registry(backend: TorchBackend) -> None:
    assert prism_core.extending.get_backend("pytorch") is backend
    (info,) = [b for b in prism_core.extending.backends() if b.name == "torch"]
    assert info.aliases == ("pytorch",) and info.plugin == "torch" and info.available
    host = prism_core.hardware.present_devices().devices[0].description
    assert host.device_type in info.drives  # the host CPU
    assert info.capabilities["torch"] == torch.__version__


def test_available_with_the_version(backend: TorchBackend) -> None:
    availability = backend.availability()
    assert availability
    assert availability.version == torch.__version__


def test_capabilities(backend: TorchBackend) -> None:
    caps = backend.capabilities()
    assert caps["torch"] == torch.__version__
    assert caps["cuda"] == (torch.version.cuda or "CPU-only build")
    assert caps["threads"] == {
        "intra_op": torch.get_num_threads(),
        "inter_op": torch.get_num_interop_threads(),
    }
    assert caps["devices"][0] == "cpu"
    assert caps["mkl"] == torch.backends.mkl.is_available()
    assert caps["openmp"] == torch.backends.openmp.is_available()
    if torch.backends.openmp.is_available():
        assert any(line.startswith("OpenMP") for line in caps["parallel"]), caps["parallel"]
    assert caps["cuda_available"] == torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert caps["cuda_reason"] == cuda_unavailable()
        assert caps["devices"] == ["cpu"]
    import json

    json.dumps(caps)  # prism doctor shows them


def test_drives_cpus_and_nvidia_gpus(backend: TorchBackend) -> None:
    assert backend.can_drive(prism_core.hardware.get_device("generic.x86-64-v3"))
    assert backend.can_drive(prism_core.hardware.get_device("generic.aarch64"))
    amd = backend.can_drive(prism_core.hardware.get_device("amd.mi300x"))
    if torch.version.hip is None:  # the other vendors: test_torch_accelerators.py
        assert not amd
        assert amd.reasons[0].startswith(f"torch {torch.__version__} is not a ROCm build")
    tenstorrent = backend.can_drive(
        prism_core.hardware.get_device("tenstorrent.wormhole-n300-chip")
    )
    assert not tenstorrent
    assert tenstorrent.reasons[0].startswith(
        "torch drives CPUs, NVIDIA and AMD GPUs (cuda), Intel GPUs (xpu), Apple GPUs (mps) and "
        "Huawei Ascend NPUs (npu); vendor is 'tenstorrent'"
    )
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        # A simulated device: its description alone decides.
        assert backend.can_drive(prism_core.hardware.get_device("nvidia.h100-sxm"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="torch can use a GPU here")
def test_without_cuda_no_real_nvidia_gpu_is_driven(backend: TorchBackend) -> None:
    """Outside a simulation, a GPU needs CUDA: a CPU-only build of torch says so (from its
    files), and names the build to install; a CUDA build without a GPU, in torch's words."""
    verdict = backend.can_drive(prism_core.hardware.get_device("nvidia.h100-sxm"))
    assert not verdict
    (reason,) = verdict.reasons
    if torch.version.cuda is None and torch.version.hip is None:
        assert cuda_unavailable() == (
            f"torch {torch.__version__} is a CPU-only build (torch.version.cuda and "
            "torch.version.hip are None)"
        )
        assert reason == (
            f"torch {torch.__version__} is not a CUDA build (torch.version.cuda is None); NVIDIA "
            "GPUs need a CUDA build of torch: pip install torch --index-url "
            "https://download.pytorch.org/whl/cuXYZ, XYZ a CUDA version the driver supports "
            "(https://pytorch.org/get-started/locally/)"
        ), reason
    else:
        assert reason.startswith(f"CUDA is not available: {cuda_unavailable()}"), reason


# -- arrays -------------------------------------------------------------------------------------


def test_owns_tensors_only(backend: TorchBackend) -> None:
    assert backend.owns(torch.ones(2))
    assert backend.owns(torch.nn.Parameter(torch.ones(2)))
    for value in (np.ones(2), 1.0, [1.0], "torch", None):
        assert not backend.owns(value), value


def test_is_native_for_tensors_and_python_scalars(backend: TorchBackend) -> None:
    for value in (torch.ones(2), torch.tensor(1), 1, 2.5, 1j, True):
        assert backend.is_native(value), value
    for value in (np.ones(2), np.float64(1.0), [1.0, 2.0]):
        assert not backend.is_native(value), value


def test_numpy_and_torch_share_memory_on_the_cpu(backend: TorchBackend) -> None:
    x = np.arange(12.0).reshape(3, 4)
    t = backend.from_dlpack(x)
    assert isinstance(t, torch.Tensor)
    assert t.data_ptr() == x.__array_interface__["data"][0]
    t[0, 0] = 42.0  # one memory: the array sees the write
    assert x[0, 0] == 42.0
    back = backend.to_numpy(t)
    assert np.shares_memory(back, x)
    strided = x[:, ::2]
    assert np.shares_memory(backend.to_numpy(backend.from_dlpack(strided)), x)
    moved = backend.to_device(x, None)
    assert moved.device.type == "cpu" and moved.data_ptr() == t.data_ptr()
    cpu = prism_core.hardware.get_device("generic.x86-64-v3")
    assert backend.to_device(x, cpu).data_ptr() == t.data_ptr()
    assert backend.asarray(x).data_ptr() == t.data_ptr()
    tensor = torch.arange(5.0)
    assert backend.to_device(tensor, cpu) is tensor
    assert np.shares_memory(backend.to_numpy(tensor), backend.to_numpy(tensor))


def test_what_cannot_be_shared_is_copied(backend: TorchBackend) -> None:
    swapped = np.arange(4.0).astype(">f8")  # DLPack refuses non-native byte order
    t = backend.from_dlpack(swapped)
    assert t.dtype == torch.float64 and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    readonly = np.arange(3.0)
    readonly.flags.writeable = False  # torch could write into it: copied
    copied = backend.from_dlpack(readonly)
    assert copied.tolist() == [0.0, 1.0, 2.0]
    assert not np.shares_memory(copied.numpy(), readonly)
    reversed_view = np.arange(4.0)[::-1]  # negative strides, which torch cannot take
    assert backend.from_dlpack(reversed_view).tolist() == [3.0, 2.0, 1.0, 0.0]
    assert backend.from_dlpack([1.0, 2.0]).dtype == torch.float64  # NumPy's inference
    assert backend.from_dlpack(3).dtype == torch.int64
    with pytest.raises(TypeError, match="torch cannot hold an array of dtype"):
        backend.from_dlpack(np.array(["a"]))


def test_asarray_and_empty_take_every_dtype_form(backend: TorchBackend) -> None:
    x = np.arange(6.0)
    for dtype in (np.float32, np.dtype("float32"), prism_core.float32, "float32", "fp32", "f4"):
        assert backend.asarray(x, dtype=dtype).dtype == torch.float32, dtype
    assert backend.asarray(x, dtype=prism_core.bfloat16).dtype == torch.bfloat16
    assert backend.asarray(x, dtype=torch.float16).dtype == torch.float16
    assert backend.empty((2, 3), np.dtype("int32")).shape == (2, 3)
    assert backend.empty((2, 3), prism_core.complex64).dtype == torch.complex64
    assert torch_dtype(None) is None
    assert torch_dtype(bool) == torch.bool and torch_dtype(prism_core.bool_) == torch.bool
    with pytest.raises(TypeError, match="is not a data type"):
        torch_dtype("no-such-type")


def test_to_numpy_copies_gpu_and_refuses_bfloat16(backend: TorchBackend) -> None:
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        backend.to_numpy(torch.ones(2, dtype=torch.bfloat16))
    z = torch.tensor([1 + 2j]).conj()  # a lazy conjugate view: resolved for NumPy
    assert backend.to_numpy(z).tolist() == [1 - 2j]
    assert backend.to_numpy(torch.ones(2, requires_grad=True)).tolist() == [1.0, 1.0]
    assert backend.to_numpy([1, 2]).tolist() == [1, 2]


def test_synchronize(backend: TorchBackend) -> None:
    backend.synchronize()  # nothing queued on the CPU; never raises


def test_use_backend_by_name_or_alias() -> None:
    x = np.ones((4, 4))
    for name in ("torch", "pytorch"):
        with prism_core.use_backend(name):
            assert prism_core.current_scope().backend == "torch"
            out = prism_core.matmul(x, x)
        assert isinstance(out, torch.Tensor), name
        assert out.tolist() == (x @ x).tolist()


# -- the numerics protocol ----------------------------------------------------------------------


def test_requires_grad_and_detach(backend: TorchBackend) -> None:
    x = torch.arange(3.0)
    tracked = backend.requires_grad(x)
    assert tracked.requires_grad and not x.requires_grad  # x itself is left as it is
    assert tracked.data_ptr() == x.data_ptr()
    assert backend.requires_grad(tracked) is tracked
    assert not backend.requires_grad(tracked, False).requires_grad
    y = (tracked * 2).sum()
    assert not backend.detach(y).requires_grad
    from_numpy = backend.requires_grad(np.arange(3.0))
    assert from_numpy.requires_grad and from_numpy.dtype == torch.float64
    with pytest.raises(TypeError, match="only floating-point and complex arrays"):
        backend.requires_grad(torch.arange(3))
    with prism_core.use_backend("torch"):
        assert prism_core.requires_grad(np.arange(2.0)).requires_grad
        assert not prism_core.detach(prism_core.requires_grad(np.arange(2.0))).requires_grad


def _f(x: object, w: object) -> object:
    """A test function written with Prism's ops: on tensors they dispatch to torch."""
    y = prism_core.matmul(w, x)
    return prism_core.sum(prism_core.exp(prism_core.multiply(0.1, y))) + prism_core.sum(
        prism_core.square(x)
    )


def _f_numpy(x: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(np.exp(0.1 * (w @ x))) + np.sum(x * x))


def _central_differences(x: np.ndarray, w: np.ndarray, step: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += step
        down[i] -= step
        grad[i] = (_f_numpy(up, w) - _f_numpy(down, w)) / (2 * step)
    return grad


def test_value_and_grad_by_autograd_agrees_with_finite_differences(backend: TorchBackend) -> None:
    """The backend's hook on NumPy arguments (made float64 tensors that track gradients)."""
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=5), rng.normal(size=(4, 5))
    value, grad = backend.value_and_grad(_f, 0)(x, w)
    assert isinstance(grad, torch.Tensor) and grad.dtype == torch.float64
    assert float(value) == pytest.approx(_f_numpy(x, w), rel=1e-12)
    np.testing.assert_allclose(grad.numpy(), _central_differences(x, w), rtol=1e-5, atol=1e-7)
    _, grads = backend.value_and_grad(_f, (0, 1))(x, w)
    assert isinstance(grads, tuple) and len(grads) == 2
    np.testing.assert_allclose(grads[0].numpy(), grad.numpy())
    assert grads[1].shape == (4, 5)


def test_prism_value_and_grad_on_torch_agrees_with_finite_differences_on_numpy() -> None:
    """``prism_core.value_and_grad``: autograd on torch tensors, the core's central finite
    differences on NumPy arrays; the two agree to 1e-5."""
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=5), rng.normal(size=(4, 5))
    on_torch = prism_core.value_and_grad(_f, argnums=0)(torch.from_numpy(x), torch.from_numpy(w))
    on_numpy = prism_core.value_and_grad(_f, argnums=0)(x, w)
    assert on_torch.method == "autograd (torch)"
    assert on_numpy.method == "central finite differences"
    assert isinstance(on_torch.grad, torch.Tensor)
    np.testing.assert_allclose(on_torch.grad.numpy(), on_numpy.grad, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(on_torch.grad.numpy(), _central_differences(x, w), rtol=1e-5)
    with prism_core.use_backend("torch"):  # NumPy arguments, differentiated by torch
        named = prism_core.value_and_grad(_f, argnums=(0, 1))(x, w)
    assert named.method == "autograd (torch)"
    np.testing.assert_allclose(named.grad[0].numpy(), on_torch.grad.numpy())


def test_value_and_grad_mistakes(backend: TorchBackend) -> None:
    with pytest.raises(ValueError, match=r"must return a scalar; .* shape \(3,\)"):
        backend.value_and_grad(lambda x: x * 2, 0)(np.ones(3))
    with pytest.raises(TypeError, match="a NumPy array"):
        backend.value_and_grad(lambda x: np.sum(np.asarray(x.detach())), 0)(np.ones(3))
    with pytest.raises(IndexError, match="argnums names argument 2"):
        backend.value_and_grad(lambda x: x.sum(), 2)(np.ones(3))
    # An argument the value does not depend on has a zero gradient.
    _, grads = backend.value_and_grad(lambda x, y: (x * x).sum(), (0, 1))(np.ones(2), np.ones(3))
    assert grads[1].tolist() == [0.0, 0.0, 0.0]


def test_vmap(backend: TorchBackend) -> None:
    def row_norm(v: object) -> object:
        return prism_core.sqrt(prism_core.sum(prism_core.multiply(v, v)))

    x = np.arange(12.0).reshape(3, 4)
    out = backend.vmap(row_norm, 0, 0)(x)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(x, axis=1))
    cols = backend.vmap(row_norm, 1, 0)(x)
    np.testing.assert_allclose(cols.numpy(), np.linalg.norm(x, axis=0))
    through_prism = prism_core.vmap(row_norm)(torch.from_numpy(x))  # torch.func.vmap
    assert isinstance(through_prism, torch.Tensor)
    np.testing.assert_allclose(through_prism.numpy(), np.linalg.norm(x, axis=1))


def test_creating_the_backend_imports_nothing() -> None:
    # The module is imported (this test imports it), and creating an instance probes nothing.
    fresh = TorchBackend()
    assert fresh._availability is None
    assert "prism_plugin_torch.backend" in sys.modules
