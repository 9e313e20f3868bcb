"""The plugin's variants: what its ``prism_variants`` hook contributes, how the dispatcher judges
them (on simulated NVIDIA devices, and in automatic mode on this host), the backend's argument
conversions, and the implementations: on the CuPy code path with NumPy standing in for CuPy
(CuPy's API is NumPy's) everywhere, and for real where CuPy or torch can use a GPU.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import types
from typing import Any

import numpy as np
import pytest
from prism_plugin_cuda import ops
from prism_plugin_cuda.backend import CudaBackend
from prism_plugin_cuda.variants import MIN_ELEMENTS, variants

import prism_core
from prism_core import ArraySpec

NEEDS_GPU = "needs an NVIDIA GPU with CUDA"
KDL_CUDA = 2  # DLPack device type of CUDA device memory
TOO_SMALL_16x16 = "can_run: too small to be worth a GPU transfer (256 elements, fewer than 4096)"
GPU_REQUIRES = {"vendor": "nvidia", "kind": "gpu"}
#: op -> (variant, the shapes of a call large enough for the GPU, of one too small for it)
OPS: dict[str, tuple[str, list[tuple[int, ...]], list[tuple[int, ...]]]] = {
    "add": ("cuda.add", [(4096,), (4096,)], [(16,), (16,)]),
    "multiply": ("cuda.multiply", [(64, 64), (64,)], [(4, 4), (4,)]),
    "sum": ("cuda.sum", [(64, 64)], [(63, 64)]),
    "linalg.solve": ("cuda.linalg.solve", [(64, 64), (64,)], [(16, 16), (16,)]),
    "linalg.svd": ("cuda.linalg.svd", [(128, 32)], [(16, 16)]),
    "fft.fft": ("cuda.fft.fft", [(4096,)], [(4095,)]),
}


def _verdict(decision: prism_core.Decision, variant: str) -> prism_core.Candidate:
    return next(c for c in decision.candidates if c.variant == variant)


def _specs(shapes: list[tuple[int, ...]], dtype: str = "float32") -> list[ArraySpec]:
    return [ArraySpec(s, dtype) for s in shapes]


@pytest.fixture
def cuda_backend(library: prism_core.DeviceLibrary) -> CudaBackend:
    """The backend instance dispatch uses (the one discovery created)."""
    backend = prism_core.plugins().backend("cuda")
    assert isinstance(backend, CudaBackend)
    return backend


# -- what the hook contributes ----------------------------------------------------------------


def test_the_hook_contributes_the_variants(library: prism_core.DeviceLibrary) -> None:
    record = prism_core.plugins().records["cuda"]
    assert "prism_variants" in record.hooks
    by_name = {v.name: v for v in record.variants}
    assert set(by_name) == {
        "cuda.matmul",
        "cuda.tensor_core_matmul",
        "cuda.add",
        "cuda.multiply",
        "cuda.sum",
        "cuda.linalg.solve",
        "cuda.linalg.svd",
        "cuda.fft.fft",
    }
    for v in record.variants:
        assert v.backend == "cuda"
        assert v.source == "plugin:cuda"
        assert v.can_run is not None, v.name  # every one keeps small calls on NumPy
        assert not v.reference
    # The lazy form: the implementations are imported when dispatch first chooses one (then
    # the variant keeps the function: asked of a fresh list, which the earlier tests, the
    # conformance suite among them, have not run).
    fresh = {v.name: v for v in variants()}
    for v in fresh.values():
        assert isinstance(v.fn, str) and v.fn.startswith("prism_plugin_cuda.ops:"), v.fn
    assert fresh["cuda.tensor_core_matmul"].fn == fresh["cuda.matmul"].fn
    assert fresh["cuda.matmul"].fn == "prism_plugin_cuda.ops:matmul"
    plain, tensor_cores = by_name["cuda.matmul"], by_name["cuda.tensor_core_matmul"]
    assert (plain.priority, plain.dtype_support) == (10, False)
    assert plain.requirement == prism_core.Requirement(GPU_REQUIRES)
    assert (tensor_cores.priority, tensor_cores.dtype_support) == (20, True)
    assert tensor_cores.requirement == prism_core.Requirement(
        {"vendor": "nvidia", "tensor_cores": ">=3"}
    )
    for v in record.variants:
        if v.name != "cuda.tensor_core_matmul":
            assert (v.priority, v.requirement) == (10, prism_core.Requirement(GPU_REQUIRES))
    # Every variant is one of an op users call, and reaches it.
    for v in record.variants:
        assert v.name in {w.name for w in prism_core.get_op(v.op).variants}


def test_the_variants_list_is_fresh_each_time() -> None:
    assert [v.name for v in variants()] == [v.name for v in variants()]
    assert variants()[0] is not variants()[0]


PROBE = textwrap.dedent(
    """
    import json, sys
    import prism_core
    from prism_core import ArraySpec

    ps = prism_core.plugins()
    assert ps.records["cuda"].status == "loaded", ps.records["cuda"].reason
    assert len(ps.records["cuda"].variants) == 8
    big = ArraySpec((4096, 4096), "bfloat16")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        assert prism_core.explain("matmul", big, big).chosen == "cuda.tensor_core_matmul"
        for op in ("add", "multiply", "linalg.solve"):
            prism_core.explain(op, ArraySpec((64, 64)), ArraySpec((64, 64)))
        for op in ("sum", "linalg.svd", "fft.fft"):
            prism_core.explain(op, ArraySpec((64, 64)))
    prism_core.explain("matmul", ArraySpec((64, 64)), ArraySpec((64, 64)))  # automatic mode
    print(json.dumps([m for m in ("torch", "cupy", "prism_plugin_cuda.ops") if m in sys.modules]))
    """
)


def test_discovery_and_explain_import_no_framework() -> None:
    """Listing the variants and explaining decisions imports neither CuPy nor torch, nor the
    module of the implementations (availability, in automatic mode, may import a framework only
    where one is installed)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    imported = set(json.loads(proc.stdout))
    assert "prism_plugin_cuda.ops" not in imported
    installed = {m for m in ("torch", "cupy") if _importable(m)}
    assert imported <= installed  # only availability's probe, and only of what is there


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


# -- selection on simulated devices -----------------------------------------------------------


def test_h100_chooses_the_tensor_core_variant_for_bf16(library: prism_core.DeviceLibrary) -> None:
    a = ArraySpec((4096, 4096), "bfloat16")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen == "cuda.tensor_core_matmul"
    assert (decision.chosen_backend, decision.chosen_device) == ("cuda", "nvidia.h100-sxm")
    assert decision.simulated is True
    assert decision.executed == "numpy.matmul"  # simulated: the reference computes
    assert _verdict(decision, "cuda.matmul").accepted  # eligible too, ranked after
    numpy_verdict = _verdict(decision, "numpy.matmul")
    assert not numpy_verdict.accepted
    assert numpy_verdict.reasons == (
        "'numpy' does not drive nvidia.h100-sxm (kind is 'gpu', required 'cpu')",
    )
    ranked = [c.variant for c in decision.candidates if c.accepted]
    assert ranked == ["cuda.tensor_core_matmul", "cuda.matmul"]


def test_l4_rejects_the_tensor_core_variant_in_fp64(library: prism_core.DeviceLibrary) -> None:
    a = ArraySpec((4096, 4096), "float64")
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    tensor_cores = _verdict(decision, "cuda.tensor_core_matmul")
    assert not tensor_cores.accepted
    assert tensor_cores.reasons == ("nvidia.l4: no feature accelerates matmul in fp64",)
    assert decision.chosen == "cuda.matmul"
    assert decision.chosen_device == "nvidia.l4"


def test_h100_fp32_is_not_a_tensor_core_type(library: prism_core.DeviceLibrary) -> None:
    """The tensor cores take fp32 only as TF32, which the descriptions list apart."""
    a = ArraySpec((4096, 4096), "float32")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen == "cuda.matmul"
    assert _verdict(decision, "cuda.tensor_core_matmul").reasons == (
        "nvidia.h100-sxm: no feature accelerates matmul in fp32",
    )


def test_a_small_matmul_on_a_simulated_gpu_has_no_variant(
    library: prism_core.DeviceLibrary,
) -> None:
    """Too small for the GPU, and NumPy does not drive a GPU: nothing is chosen, and the
    decision says why for each candidate."""
    a = ArraySpec((16, 16), "bfloat16")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen is None
    assert decision.chosen_backend is None
    assert decision.executed == "numpy.matmul"
    for name in ("cuda.tensor_core_matmul", "cuda.matmul"):
        verdict = _verdict(decision, name)
        assert not verdict.accepted
        assert verdict.device == "nvidia.h100-sxm"  # the device accepted it; the call did not
        assert verdict.reasons == (TOO_SMALL_16x16,)
    assert _verdict(decision, "numpy.matmul").reasons == (
        "'numpy' does not drive nvidia.h100-sxm (kind is 'gpu', required 'cpu')",
    )
    assert "chosen: none: no installed variant can run here" in str(decision)


def test_the_threshold_is_the_largest_array(library: prism_core.DeviceLibrary) -> None:
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        at = prism_core.explain("matmul", *_specs([(64, 64), (64, 1)]))
        below = prism_core.explain("matmul", *_specs([(63, 64), (64, 1)]))
    assert MIN_ELEMENTS == 4096
    assert at.chosen == "cuda.matmul"
    assert below.chosen is None
    assert _verdict(below, "cuda.matmul").reasons == (
        "can_run: too small to be worth a GPU transfer (4032 elements, fewer than 4096)",
    )


def test_integer_matmul_stays_off_the_gpu(library: prism_core.DeviceLibrary) -> None:
    a = ArraySpec((4096, 4096), "int32")
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen is None
    assert _verdict(decision, "cuda.matmul").reasons == (
        "can_run: matmul on the GPU takes floating-point or complex arrays, not int32",
    )
    assert _verdict(decision, "cuda.tensor_core_matmul").reasons == (
        "nvidia.l4: no feature accelerates matmul in int32",
    )


def test_other_gpus_are_not_driven(library: prism_core.DeviceLibrary) -> None:
    a = ArraySpec((4096, 4096), "float16")
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    for name in ("cuda.matmul", "cuda.tensor_core_matmul"):
        (reason,) = _verdict(decision, name).reasons
        assert reason.startswith("'cuda' does not drive amd.mi300x ("), reason


@pytest.mark.parametrize("op", sorted(OPS))
def test_each_op_on_a_simulated_gpu(library: prism_core.DeviceLibrary, op: str) -> None:
    variant, large, small = OPS[op]
    with prism_core.device("nvidia.l4", simulate=True):
        big = prism_core.explain(op, *_specs(large))
        little = prism_core.explain(op, *_specs(small))
    assert big.chosen == variant
    assert (big.chosen_backend, big.chosen_device) == ("cuda", "nvidia.l4")
    assert big.executed == f"numpy.{op}"
    assert little.chosen is None
    (reason,) = _verdict(little, variant).reasons
    assert reason.startswith("can_run: too small to be worth a GPU transfer ("), reason


@pytest.mark.parametrize("op", ["linalg.solve", "linalg.svd"])
@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_linalg_takes_what_cusolver_takes(
    library: prism_core.DeviceLibrary, op: str, dtype: str
) -> None:
    variant, large, _ = OPS[op]
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain(op, *_specs(large, dtype))
    assert decision.chosen is None
    assert _verdict(decision, variant).reasons == (
        "can_run: linear algebra on the GPU takes float32, float64, complex64 or complex128 "
        f"arrays, not {dtype}",
    )


def test_a_simulated_call_computes_on_numpy(library: prism_core.DeviceLibrary) -> None:
    a = np.arange(64 * 64, dtype=np.float16).reshape(64, 64) % 7
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        result = prism_core.matmul(a, a)
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen == "cuda.tensor_core_matmul"
    assert decision.data_movement == ()  # simulated: NumPy takes its arrays as they are
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, np.matmul(a, a))


# -- automatic mode on this host --------------------------------------------------------------


@pytest.mark.parametrize("op", sorted(OPS))
def test_automatic_mode_on_this_host(
    library: prism_core.DeviceLibrary, cuda_backend: CudaBackend, op: str
) -> None:
    variant, large, _ = OPS[op]
    decision = prism_core.explain(op, *_specs(large))
    state = cuda_backend.availability()
    verdict = _verdict(decision, variant)
    if not state:  # no GPU framework here: the backend says why, and NumPy runs the call
        assert not verdict.accepted
        assert verdict.reasons == (f"backend 'cuda' is not available: {state.reason}",)
        assert decision.chosen == f"numpy.{op}"
        assert decision.simulated is False
    elif decision.chosen != f"numpy.{op}":  # a GPU this plugin drives is present
        assert decision.chosen in {variant, "cuda.tensor_core_matmul"}
    else:  # CUDA works, but no NVIDIA GPU Prism describes was detected
        assert all("does not drive" in r for r in verdict.reasons), verdict.reasons


def test_without_a_gpu_calls_run_on_numpy(cuda_backend: CudaBackend) -> None:
    if cuda_backend.availability():
        return  # on a GPU host, test_dispatch_on_the_gpu covers calls
    a = np.ones((64, 64))
    result = prism_core.matmul(a, a)
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, np.full((64, 64), 64.0))


# -- the backend's conversions ----------------------------------------------------------------


class _FakeTensor:
    """A stand-in torch tensor: where it lives, and what was done to it."""

    def __init__(self, is_cuda: bool, source: Any = None) -> None:
        self.is_cuda = is_cuda
        self.source = source

    def cuda(self) -> _FakeTensor:
        return _FakeTensor(True, self.source)

    def __dlpack__(self, **kwargs: Any) -> Any:  # pragma: no cover - never exported here
        raise NotImplementedError


def _fake_torch(*, dlpack_error: BaseException | None = None) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.Tensor = _FakeTensor  # type: ignore[attr-defined]
    torch.dtype = type("dtype", (), {})  # type: ignore[attr-defined]

    def from_dlpack(obj: Any) -> _FakeTensor:
        if dlpack_error is not None:
            raise dlpack_error
        return obj if isinstance(obj, _FakeTensor) else _FakeTensor(False, obj)

    def as_tensor(obj: Any, dtype: Any = None, device: Any = None) -> _FakeTensor:
        assert device == "cuda"
        return _FakeTensor(True, obj)

    torch.from_dlpack = from_dlpack  # type: ignore[attr-defined]
    torch.as_tensor = as_tensor  # type: ignore[attr-defined]
    return torch


def _running_on(backend: CudaBackend, framework: str, module: types.ModuleType) -> None:
    backend._availability = prism_core.Availability(True, version=f"{framework} (stand-in)")
    backend._module, backend.framework = module, framework


def test_is_native_before_a_framework_is_found() -> None:
    backend = CudaBackend()  # not probed: nothing imported
    assert backend.is_native(1.5) and backend.is_native(3) and backend.is_native(True)
    assert not backend.is_native(np.ones(3))
    assert not backend.is_native([1.0, 2.0])
    assert backend.framework is None


def test_is_native_on_torch_takes_only_cuda_tensors() -> None:
    backend = CudaBackend()
    _running_on(backend, "torch", _fake_torch())
    assert backend.is_native(_FakeTensor(is_cuda=True))
    assert not backend.is_native(_FakeTensor(is_cuda=False))
    assert not backend.is_native(np.ones(3))
    assert not backend.is_native([1.0])
    assert backend.is_native(2.0) and backend.is_native(1j)


def test_is_native_on_cupy_takes_only_cupy_arrays() -> None:
    backend = CudaBackend()
    fake_cupy = types.ModuleType("cupy")
    fake_cupy.ndarray = type("ndarray", (), {})  # type: ignore[attr-defined]
    _running_on(backend, "cupy", fake_cupy)
    assert backend.is_native(fake_cupy.ndarray())  # type: ignore[attr-defined]
    assert not backend.is_native(np.ones(3))
    assert backend.is_native(2.0)


def test_from_dlpack_on_torch_moves_host_arrays_to_the_gpu() -> None:
    backend = CudaBackend()
    _running_on(backend, "torch", _fake_torch())
    host = np.arange(3.0)
    moved = backend.from_dlpack(host)
    assert isinstance(moved, _FakeTensor) and moved.is_cuda and moved.source is host
    on_gpu = _FakeTensor(is_cuda=True)
    assert backend.from_dlpack(on_gpu) is on_gpu  # already there: as it is
    listed = backend.from_dlpack([1.0, 2.0])  # no DLPack: through asarray, onto the GPU
    assert listed.is_cuda and listed.source == [1.0, 2.0]


def test_from_dlpack_on_torch_copies_what_dlpack_refuses() -> None:
    backend = CudaBackend()
    _running_on(backend, "torch", _fake_torch(dlpack_error=BufferError("read-only array")))
    host = np.arange(3.0)
    host.flags.writeable = False
    moved = backend.from_dlpack(host)
    assert moved.is_cuda and moved.source is host


# -- the implementations, on the CuPy path with NumPy standing in for CuPy --------------------


@pytest.fixture
def numpy_as_cupy(cuda_backend: CudaBackend, monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The dispatching backend running "CuPy", which is NumPy here (CuPy mirrors its API)."""
    monkeypatch.setattr(cuda_backend, "_availability", prism_core.Availability(True, "", "np"))
    monkeypatch.setattr(cuda_backend, "_module", np)
    monkeypatch.setattr(cuda_backend, "framework", "cupy")
    return cuda_backend


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


def test_cupy_path_implementations(numpy_as_cupy: CudaBackend, rng: np.random.Generator) -> None:
    a = rng.standard_normal((64, 64))
    b = rng.standard_normal((64, 64)).astype(np.float32)
    v = rng.standard_normal(64)
    np.testing.assert_allclose(ops.matmul(a, b), a @ b)
    np.testing.assert_array_equal(ops.add(a, 2.0), a + 2.0)
    np.testing.assert_array_equal(ops.multiply(b, v), b * v)
    np.testing.assert_allclose(ops.sum_(a), a.sum())
    total = ops.sum_(b, axis=0, dtype="float64", keepdims=True)
    assert total.dtype == np.float64 and total.shape == (1, 64)
    np.testing.assert_allclose(ops.linalg_solve(a, v), np.linalg.solve(a, v))
    svd = ops.linalg_svd(a, full_matrices=False)
    assert isinstance(svd, ops.SVDResult)
    np.testing.assert_allclose((svd.U * svd.S) @ svd.Vh, a, atol=1e-10)
    np.testing.assert_allclose(svd.S, np.linalg.svd(a).S)
    x = rng.standard_normal(4096)
    np.testing.assert_allclose(ops.fft_fft(x, norm="ortho"), np.fft.fft(x, norm="ortho"))
    ints = ops.fft_fft(np.arange(4096))
    assert ints.dtype == np.complex128
    np.testing.assert_allclose(ints, np.fft.fft(np.arange(4096)), atol=1e-6)


def test_cupy_path_errors_are_the_callers(numpy_as_cupy: CudaBackend) -> None:
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        ops.linalg_svd(np.ones(8))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        ops.fft_fft(np.ones(8), n=0)
    with pytest.raises(ValueError, match="Invalid norm value"):
        ops.fft_fft(np.ones(8), norm="sideways")
    with pytest.raises(TypeError, match="cupy has no bfloat16"):
        ops.sum_(np.ones(8), dtype="bfloat16")


def test_the_implementations_say_when_there_is_no_gpu(cuda_backend: CudaBackend) -> None:
    state = cuda_backend.availability()
    if state:
        return  # a GPU is usable: the tests below run the implementations on it
    with pytest.raises(RuntimeError, match=re.escape(f"not available: {state.reason}")):
        ops.matmul(np.ones((64, 64)), np.ones((64, 64)))


# -- on a GPU ---------------------------------------------------------------------------------


@pytest.fixture
def gpu(cuda_backend: CudaBackend) -> CudaBackend:
    state = cuda_backend.availability()
    if not state:
        pytest.skip(f"{NEEDS_GPU} ({state.reason})")
    return cuda_backend


def _on_gpu(array: Any) -> bool:
    return int(array.__dlpack_device__()[0]) == KDL_CUDA


def _host(backend: CudaBackend, array: Any) -> Any:
    assert _on_gpu(array), f"{type(array)} is not on the GPU"
    return backend.to_numpy(array)


def test_each_op_on_the_gpu(gpu: CudaBackend, rng: np.random.Generator) -> None:
    """Every implementation on the real GPU, from NumPy inputs, against NumPy."""
    a = rng.standard_normal((64, 64))
    b = rng.standard_normal((64, 64))
    v = rng.standard_normal(64)
    x = rng.standard_normal(4096)
    np.testing.assert_allclose(_host(gpu, ops.matmul(a, b)), a @ b, rtol=1e-10)
    np.testing.assert_allclose(_host(gpu, ops.add(a, b)), a + b)
    np.testing.assert_allclose(_host(gpu, ops.add(a, 2.0)), a + 2.0)
    np.testing.assert_allclose(_host(gpu, ops.multiply(a, v)), a * v)
    np.testing.assert_allclose(_host(gpu, ops.sum_(a)), a.sum(), rtol=1e-10)
    np.testing.assert_allclose(
        _host(gpu, ops.sum_(a, axis=1, keepdims=True)), a.sum(axis=1, keepdims=True), rtol=1e-10
    )
    np.testing.assert_allclose(_host(gpu, ops.linalg_solve(a, v)), np.linalg.solve(a, v), rtol=1e-8)
    np.testing.assert_allclose(
        _host(gpu, ops.linalg_solve(a, b)), np.linalg.solve(a, b), rtol=1e-8, atol=1e-10
    )
    u, s, vh = ops.linalg_svd(a)
    np.testing.assert_allclose(_host(gpu, s), np.linalg.svd(a).S, rtol=1e-10)
    np.testing.assert_allclose((_host(gpu, u) * _host(gpu, s)) @ _host(gpu, vh), a, atol=1e-10)
    np.testing.assert_allclose(_host(gpu, ops.fft_fft(x)), np.fft.fft(x), rtol=1e-9, atol=1e-9)
    single = _host(gpu, ops.fft_fft(x.astype(np.float32)))
    assert single.dtype == np.complex64


def test_gpu_inputs_stay_on_the_gpu(gpu: CudaBackend) -> None:
    host = np.arange(16.0).reshape(4, 4)
    a = gpu.asarray(host)  # small, but already there: no transfer to save
    product = ops.matmul(a, a)
    assert gpu.is_native(product)
    np.testing.assert_allclose(_host(gpu, product), host @ host)


def test_float16_matmul_on_the_gpu(gpu: CudaBackend, rng: np.random.Generator) -> None:
    a = rng.standard_normal((64, 64)).astype(np.float16)
    result = _host(gpu, ops.matmul(a, a))
    assert result.dtype == np.float16
    np.testing.assert_allclose(
        result.astype(np.float32), a.astype(np.float32) @ a.astype(np.float32), rtol=2e-2, atol=0.1
    )


def _present_nvidia(gpu: CudaBackend) -> str:
    found = [
        d.description.device_type
        for d in prism_core.present_devices().devices
        if d.description.vendor == "nvidia"
    ]
    if not found:
        pytest.skip(f"{NEEDS_GPU} that Prism detects (no NVIDIA device was detected)")
    return found[0]


def test_dispatch_on_the_gpu(gpu: CudaBackend, rng: np.random.Generator) -> None:
    """Through the dispatcher: large NumPy arrays move to the GPU and the result stays there;
    small NumPy arrays stay on NumPy; small arrays already on the GPU stay there."""
    device_type = _present_nvidia(gpu)
    a = rng.standard_normal((64, 64))
    with prism_core.device(device_type):
        decision = prism_core.explain("add", a, a)
        result = prism_core.add(a, a)
        assert decision.chosen == "cuda.add"
        assert decision.data_movement == (
            "argument 0: numpy.ndarray -> cuda through DLPack",
            "argument 1: numpy.ndarray -> cuda through DLPack",
        )
        assert gpu.is_native(result)
        np.testing.assert_allclose(gpu.to_numpy(result), a + a)
        on_gpu = prism_core.multiply(result, 0.5)
        assert gpu.is_native(on_gpu)
        np.testing.assert_allclose(gpu.to_numpy(on_gpu), a)
    small = np.ones(16)
    out = prism_core.add(small, small)  # automatic mode: too small for the GPU
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, np.full(16, 2.0))
    tiny = gpu.asarray(np.ones(16))
    assert gpu.is_native(prism_core.add(tiny, tiny))
