"""The CUDA side: which variant dispatch chooses on NVIDIA devices, why the CUDA variants are
rejected where torch has no CUDA (a CPU-only build), their per-call checks, and, on a host
where torch can use a GPU, the conformance suite and the values of every op on it.

Without a GPU the devices are simulated from their descriptions
(``prism_core.device(name, simulate=True)``): dispatch decides as it would on the hardware, and
runs the NumPy reference.  The tests marked ``gpu`` need a real one and skip without it.  The
other vendors' accelerators (AMD on ROCm, Intel XPU, Apple MPS, Ascend NPU) are
``test_torch_accelerators.py``'s.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from prism_plugin_torch.backend import TorchBackend
from prism_plugin_torch.runtime import cuda_unavailable
from prism_plugin_torch.variants import gpu_check, host_check, tensor_core_check

import prism_core
from prism_core import ArraySpec

NO_GPU = f"needs an NVIDIA GPU that torch can use: {cuda_unavailable()}"
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_GPU)


def _specs(dtype: str, *shapes: tuple[int, ...]) -> list[ArraySpec]:
    return [ArraySpec(s, dtype) for s in shapes]


def _candidate(decision: prism_core.Decision, variant: str) -> prism_core.Candidate:
    return next(c for c in decision.candidates if c.variant == variant)


# -- selection on simulated devices ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bf16", "float16", "float64"])
def test_an_h100_multiplies_on_its_tensor_cores(dtype: str) -> None:
    """The H100 is simulated from its description (no GPU is needed): its fourth-generation
    tensor cores accelerate matmul in bf16, fp16 and fp64, so the tensor-core variant wins."""
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", *_specs(dtype, (1024, 1024), (1024, 1024)))
    assert decision.chosen == "torch.cuda.tensor_core_matmul"
    assert decision.chosen_device == "nvidia.h100-sxm"
    assert decision.executed == "numpy.matmul"  # a simulation runs the reference
    assert _candidate(decision, "torch.cuda.matmul").accepted
    assert (
        "nvidia.h100-sxm: kind is 'gpu', required 'cpu'"
        in _candidate(decision, "torch.matmul").reasons
    )


def test_fp32_is_not_shown_on_the_tensor_cores() -> None:
    """On an H100 (simulated from its description) an fp32 product is plain cuBLAS: the tensor
    cores take fp32 only as TF32, when ``torch.backends.cuda.matmul.allow_tf32`` is set."""
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", *_specs("float32", (512, 512), (512, 512)))
    assert decision.chosen == "torch.cuda.matmul"
    assert _candidate(decision, "torch.cuda.tensor_core_matmul").reasons == (
        "nvidia.h100-sxm: no feature accelerates matmul in fp32",
    )


def test_an_l4_has_no_fp64_tensor_cores() -> None:
    """The L4 is simulated from its description: Ada's tensor cores take bf16 but not fp64."""
    with prism_core.device("nvidia.l4", simulate=True):
        fp64 = prism_core.explain("matmul", *_specs("float64", (256, 256), (256, 256)))
        bf16 = prism_core.explain("matmul", *_specs("bf16", (256, 256), (256, 256)))
    assert fp64.chosen == "torch.cuda.matmul"
    assert _candidate(fp64, "torch.cuda.tensor_core_matmul").reasons == (
        "nvidia.l4: no feature accelerates matmul in fp64",
    )
    assert bf16.chosen == "torch.cuda.tensor_core_matmul"


def test_integer_products_are_not_shown_on_the_tensor_cores() -> None:
    """An A100 (simulated from its description) accelerates int8, but torch.matmul has no
    integer product on the GPU: the variant declines, and torch.cuda.matmul runs it."""
    with prism_core.device("nvidia.a100-sxm-80gb", simulate=True):
        decision = prism_core.explain("matmul", *_specs("int8", (64, 64), (64, 64)))
    assert decision.chosen == "torch.cuda.matmul"
    assert _candidate(decision, "torch.cuda.tensor_core_matmul").reasons == (
        "can_run: torch.matmul runs no int8 product on the tensor cores; torch.cuda.matmul "
        "computes it",
    )


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("zeros", ((3, 3),)),
        ("random.normal", ((3,),)),
        ("triu_indices", (4,)),
        ("add", tuple(_specs("float32", (8,), (8,)))),
        ("linalg.svd", tuple(_specs("float64", (8, 8)))),
        ("fft.fft", tuple(_specs("complex64", (64,)))),
        ("stack", ([ArraySpec((3,), "float32"), ArraySpec((3,), "float32")],)),
    ],
)
def test_every_op_chooses_the_gpu_on_a_named_nvidia_device(op: str, args: tuple[Any, ...]) -> None:
    """An L4 simulated from its description: creation ops and array ops alike choose their
    torch.cuda variant (a device named in scope is where the caller wants the work)."""
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain(op, *args)
    assert decision.chosen == f"torch.cuda.{op}", str(decision)


# -- without CUDA ---------------------------------------------------------------------------------


FAKE_GPU_HOST = textwrap.dedent(
    """
    import prism_core


    @prism_core.extending.hookimpl
    def prism_detect_devices(library):
        return prism_core.extending.Detection(
            [prism_core.extending.DetectedDevice(
                "nvidia.h100-sxm", index=0, name="NVIDIA H100 80GB HBM3"
            )]
        )
    """
)


@pytest.fixture
def host_with_an_h100(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A host whose detection reports an H100 (a test plugin, through a real entry point),
    while torch, a CPU-only build here, cannot use it."""
    site = tmp_path / "site"
    info = site / "prism_test_fake_gpu-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: prism-test-fake-gpu\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[prism.plugins]\nfakegpu = prism_test_fake_gpu_host\n", encoding="utf-8"
    )
    (site / "prism_test_fake_gpu_host.py").write_text(FAKE_GPU_HOST, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PRISM_PLUGINS", "torch,fakegpu")
    prism_core.extending.reload_plugins()
    yield
    monkeypatch.setenv("PRISM_PLUGINS", "torch")
    prism_core.extending.reload_plugins()


@pytest.mark.skipif(torch.cuda.is_available(), reason="torch can use a GPU here")
def test_without_cuda_the_gpu_variants_are_rejected_with_the_reason(
    host_with_an_h100: None,
) -> None:
    """A present H100 (not simulated), a torch without CUDA: explain says why torch cannot run
    there (on a CPU-only build, naming the CUDA build to install), and the call runs on the
    CPU."""
    assert cuda_unavailable() is not None
    h100 = prism_core.hardware.get_device("nvidia.h100-sxm")
    (why,) = prism_core.extending.plugins().backend("torch").can_drive(h100).reasons
    if torch.version.cuda is None and torch.version.hip is None:  # said from its files
        assert why.startswith(
            f"torch {torch.__version__} is not a CUDA build (torch.version.cuda is None); NVIDIA "
            "GPUs need a CUDA build of torch: pip install torch --index-url "
        ), why
    else:
        assert why.startswith(f"CUDA is not available: {cuda_unavailable()}"), why
    with prism_core.device("nvidia.h100-sxm"):
        decision = prism_core.explain("matmul", *_specs("bf16", (64, 64), (64, 64)))
    assert decision.chosen is None
    for variant in ("torch.cuda.matmul", "torch.cuda.tensor_core_matmul"):
        reasons = _candidate(decision, variant).reasons
        assert reasons == (f"'torch' does not drive nvidia.h100-sxm ({why})",), reasons
    x = np.ones((64, 64))
    automatic = prism_core.explain("matmul", x, x)
    assert automatic.chosen == "numpy.matmul"
    reasons = _candidate(automatic, "torch.cuda.matmul").reasons
    assert f"'torch' does not drive nvidia.h100-sxm ({why})" in reasons
    with prism_core.use_backend("torch"):
        assert isinstance(prism_core.matmul(x, x), torch.Tensor)  # on the CPU


@pytest.mark.skipif(torch.cuda.is_available(), reason="torch can use a GPU here")
def test_without_cuda_creation_on_the_gpu_is_declined() -> None:
    """Creation without a named device, where torch cannot use an NVIDIA GPU: the reason is
    the one the backend gives for an NVIDIA GPU (a CPU-only build: which build to install)."""
    check = gpu_check("zeros")
    h100 = prism_core.hardware.get_device("nvidia.h100-sxm")
    (why,) = prism_core.extending.plugins().backend("torch").can_drive(h100).reasons
    assert check((3, 3)) == why
    if torch.version.cuda is None and torch.version.hip is None:
        assert f"torch {torch.__version__} is not a CUDA build" in why


def test_creation_without_a_named_device_stays_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where torch can use a GPU (here as if it could: a CUDA build, simulated, whose
    ``cuda_unavailable`` answers None),
    creation ops make CPU tensors, as ``torch.zeros`` does, unless a GPU is named in scope;
    so ``use_backend("torch")`` puts created and computed host data on one device."""
    from prism_plugin_torch import build, runtime

    simulated = build.TorchBuild("2.13.0+cu130", cuda="13.0", source="simulated")
    monkeypatch.setattr(build, "torch_build", lambda: simulated)
    monkeypatch.setattr(runtime, "cuda_unavailable", lambda: None)
    check = gpu_check("zeros")
    assert check((3, 3)) == (
        "no device is named: torch.zeros makes its tensors on the CPU, torch's default device "
        "(name the GPU with prism.device(...) to make them there)"
    )
    with prism_core.device("nvidia.l4", simulate=True):
        assert check((3, 3)) is True


def test_per_call_checks() -> None:
    """Which of the two variants takes a call, by where its data is (an object standing in for
    a tensor on the GPU: only its ``is_cuda`` is read)."""
    on_gpu = types.SimpleNamespace(shape=(4,), dtype=np.dtype("float32"), is_cuda=True)
    on_host = torch.ones(4)
    host, gpu = host_check("add"), gpu_check("add")
    assert host(on_host, on_host) is True
    assert host(on_gpu, on_host) == "the data is on the GPU; torch.cuda.add runs it there"
    assert host([on_host, on_gpu]) == "the data is on the GPU; torch.cuda.add runs it there"
    assert host(on_host, min=on_gpu) == "the data is on the GPU; torch.cuda.add runs it there"
    assert host(np.ones(4), 2.0) is True
    assert gpu(on_gpu, on_host) is True
    assert gpu(on_host, on_host) == "the data is in host memory; torch.add runs it there"
    assert gpu(np.ones(4), 1.0) == "the data is in host memory; torch.add runs it there"
    with prism_core.device("nvidia.l4", simulate=True):
        assert gpu(on_host, on_host) is True  # the caller named the device
    cores = tensor_core_check()
    assert cores(on_gpu, on_gpu) is True
    int_on_gpu = types.SimpleNamespace(shape=(4,), dtype=np.dtype("int8"), is_cuda=True)
    assert "no int8 product on the tensor cores" in str(cores(int_on_gpu, int_on_gpu))


def test_the_accelerator_functions_are_the_cpu_ones_on_the_device() -> None:
    """Every ``torch.<op>`` has its ``torch.cuda.<op>``, ``torch.xpu.<op>``, ``torch.mps.<op>``
    and ``torch.npu.<op>``, whose functions the same backend makes for those targets (made
    here without the devices: nothing runs)."""
    backend = prism_core.extending.plugins().backend("torch")
    assert isinstance(backend, TorchBackend)
    variants = prism_core.extending.plugins().records["torch"].variants
    names = {v.name for v in variants}
    cpu_ops = [v.op for v in variants if v.requirement.mapping == {"kind": "cpu"}]
    assert len(cpu_ops) > 100
    npu = importlib.util.find_spec("torch_npu") is not None
    for target in backend.targets[1:]:
        for op in cpu_ops:
            assert f"torch.{target.name}.{op}" in names, (target.name, op)
            if target.name == "npu" and not npu:
                # torch knows the device type "npu" only once torch_npu registers it.
                with pytest.raises(ImportError, match="torch's npu device needs torch_npu"):
                    backend.function(op, target)
                continue
            assert callable(backend.function(op, target)), (target.name, op)


# -- on a real GPU --------------------------------------------------------------------------------


@pytest.fixture
def gpu() -> prism_core.hardware.DeviceDescription:
    """The description of the GPU torch uses (matched by its product name)."""
    if not torch.cuda.is_available():
        pytest.skip(NO_GPU)
    name = torch.cuda.get_device_name(0)
    found = prism_core.hardware.match_detected_device(product_name=name)
    if found is None:
        pytest.skip(f"no device description matches the GPU {name!r}")
    return found


@pytest.mark.gpu
@needs_gpu
@pytest.mark.timeout(900)
def test_conformance_on_the_gpu(gpu: prism_core.hardware.DeviceDescription) -> None:
    """The suite on the GPU: inside a scope naming it, the backend makes its arrays there, the
    torch.cuda variants take them (and the CPU variants decline them).  The scope simulates the
    device so that it needs no detection plugin; the variants run on the real GPU all the same
    (the suite calls them directly)."""
    from prism_core.testing import check_backend

    backend = prism_core.extending.plugins().backend("torch")
    assert isinstance(backend, TorchBackend)
    with prism_core.device(gpu, simulate=True):
        assert backend.asarray([1.0]).is_cuda
        report = check_backend("torch")
    report.raise_for_failures()
    ran = {r.subject for r in report.passed if r.check == "values"}
    assert "torch.cuda.matmul" in ran and "torch.cuda.fft.fft" in ran, str(report)
    assert "torch.cuda.tensor_core_matmul" in ran


def _cases() -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    from test_torch_ops import CASES

    return CASES


@pytest.mark.gpu
@needs_gpu
def test_every_op_on_the_gpu_as_numpy() -> None:
    """Every case of test_torch_ops on the GPU (``torch.cuda.<op>``'s functions, given NumPy
    arrays, which they move there): the values are NumPy's, the results stay on the GPU."""
    from test_torch_ops import _run_reference, _same, _to_numpy, _variant

    for op, args, kwargs in _cases():
        expected = _run_reference(op, args, kwargs)
        actual = _variant(f"torch.cuda.{op}")(*args, **kwargs)
        if op != "to_numpy":
            for t in actual if isinstance(actual, tuple) else (actual,):
                assert t.is_cuda, op
            actual = _to_numpy(actual)
        _same(op, expected, actual, args)


@pytest.mark.gpu
@needs_gpu
def test_dispatch_on_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tensors on the GPU in automatic mode, and NumPy arrays in a scope naming the GPU, run on
    it.  Dispatch needs the GPU among the host's devices: a plugin that detects NVIDIA GPUs
    (prism-plugin-cuda) finds it."""
    found = {e.name for e in importlib.metadata.entry_points(group="prism.plugins")}
    if "cuda" not in found:
        pytest.skip("needs a plugin that detects NVIDIA GPUs (prism-plugin-cuda) installed")
    monkeypatch.setenv("PRISM_PLUGINS", "torch,cuda")
    prism_core.extending.reload_plugins()
    try:
        present = [
            d for d in prism_core.hardware.present_devices().devices if d.description.kind == "gpu"
        ]
        assert present, prism_core.hardware.present_devices()
        t = torch.ones((256, 256), device="cuda")
        out = prism_core.matmul(t, t)
        assert out.is_cuda
        assert prism_core.explain("matmul", t, t).chosen.startswith("torch.cuda.")
        x = np.ones((256, 256))
        with prism_core.device(present[0].description):
            anywhere = prism_core.add(x, x)  # torch's or CuPy's array: either is on the GPU
            with prism_core.use_backend("torch"):
                on_gpu = prism_core.add(x, x)
        assert int(anywhere.__dlpack_device__()[0]) == 2  # kDLCUDA
        assert isinstance(on_gpu, torch.Tensor) and on_gpu.is_cuda
    finally:
        monkeypatch.setenv("PRISM_PLUGINS", "torch")
        prism_core.extending.reload_plugins()
