"""The accelerators beyond NVIDIA's: AMD GPUs (``torch.cuda.<op>`` on a ROCm build), Intel GPUs
(``torch.xpu.<op>``), Apple GPUs (``torch.mps.<op>``, no float64) and Huawei Ascend NPUs
(``torch.npu.<op>``, with torch_npu); what the installed build is, read without importing
torch (``prism_plugin_torch.build``); the reasons, naming what to install, that ``prism
explain`` and ``prism doctor`` give where the build lacks a vendor's backend; and the
detection hook, which asks every vendor's detection module.

The devices are simulated from their descriptions (``prism_core.device(name, simulate=True)``):
dispatch decides as it would on the hardware, and runs the NumPy reference.  The builds other
than the one installed here (a CPU-only torch) are simulated too, by replacing
``build.torch_build``: no ROCm, XPU, macOS or torch_npu build can be installed on this host.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from prism_plugin_torch import build, plugin
from prism_plugin_torch.backend import MPS_HOLDS, TorchBackend
from prism_plugin_torch.build import TorchBuild
from prism_plugin_torch.variants import accelerator_check, host_check
from torch_testing import run_python

import prism_core
from prism_core import ArraySpec

#: The build installed here, as its files say it (a CPU-only torch on CI).
HERE = build.torch_build()
CPU_ONLY = HERE.cuda is None and HERE.hip is None and HERE.xpu is None
needs_cpu_only = pytest.mark.skipif(
    not CPU_ONLY, reason=f"the installed torch is not a CPU-only build ({HERE})"
)

ROCM = TorchBuild("2.13.0+rocm7.1", hip="7.1.25424", source="simulated")
CUDA = TorchBuild("2.13.0+cu130", cuda="13.0", source="simulated")
XPU = TorchBuild("2.13.0+xpu", xpu="20250301", source="simulated")
MACOS = TorchBuild("2.13.0", mps=True, source="simulated")
ASCEND = TorchBuild("2.13.0+cpu", npu="2.13.0", source="simulated")


def _specs(dtype: str, *shapes: tuple[int, ...]) -> list[ArraySpec]:
    return [ArraySpec(s, dtype) for s in shapes]


#: The targets a CUDA or ROCm build does not have.
_OTHER_TARGETS = ("torch.xpu.", "torch.mps.", "torch.npu.")


def _candidate(decision: prism_core.Decision, variant: str) -> prism_core.Candidate:
    return next(c for c in decision.candidates if c.variant == variant)


def _explain(device: str, dtype: str = "float32", op: str = "matmul") -> prism_core.Decision:
    with prism_core.device(device, simulate=True):
        return prism_core.explain(op, *_specs(dtype, (64, 64), (64, 64)))


@pytest.fixture
def simulate_build() -> Iterator[Any]:
    """Replace the build facts every decision reads (``build.torch_build``) with ``facts``: a
    simulation, since no such build can be installed here.  Plugins are reloaded each time
    (and after the test), so that no plan cached for one build serves another."""
    with pytest.MonkeyPatch.context() as patch:

        def simulate(facts: TorchBuild) -> None:
            patch.setattr(build, "torch_build", lambda: facts)
            prism_core.extending.reload_plugins()

        yield simulate
    prism_core.extending.reload_plugins()


@pytest.fixture
def backend() -> TorchBackend:
    found = prism_core.extending.plugins().backend("torch")
    assert isinstance(found, TorchBackend)
    return found


# -- the variants ---------------------------------------------------------------------------------


REQUIRES = {
    "cuda": {"vendor": ("nvidia", "amd"), "kind": "gpu"},
    "xpu": {"vendor": "intel", "kind": "gpu"},
    "mps": {"vendor": "apple", "kind": "gpu"},
    "npu": {"vendor": "huawei", "kind": "npu"},
}


@pytest.mark.parametrize(
    ("facts", "targets"),
    [
        (None, {"cuda"}),
        (ROCM, {"cuda"}),
        (XPU, {"cuda", "xpu"}),
        (MACOS, {"cuda", "mps"}),
        (ASCEND, {"cuda", "npu"}),
    ],
    ids=["installed", "rocm", "xpu", "macos", "ascend"],
)
def test_one_variant_per_target_the_build_has_of_every_op(
    simulate_build: Any, facts: TorchBuild | None, targets: set[str]
) -> None:
    """``torch.<target>.<op>`` for ``cuda`` (NVIDIA's GPUs on a CUDA build, AMD's on a ROCm
    build: declared with every build, so that explain says what a device would need) and for
    each other target the build has, each requiring its vendor and kind, priority 10; none for
    a target the build cannot have.  The builds but the installed one are simulated."""
    if facts is not None:
        simulate_build(facts)
    elif not CPU_ONLY:
        pytest.skip(f"the installed torch is not a CPU-only build ({HERE})")
    by_name = {v.name: v for v in prism_core.extending.plugins().records["torch"].variants}
    for target, requires in REQUIRES.items():
        for op in ("matmul", "add", "zeros", "fft.fft", "linalg.svd"):
            variant = by_name.get(f"torch.{target}.{op}")
            if target not in targets:
                assert variant is None, (target, op)
                continue
            assert variant is not None, (target, op)
            assert variant.requirement.mapping == requires, variant.name
            assert variant.priority == 10 and variant.placement is not None


# -- AMD: torch.cuda on a ROCm build --------------------------------------------------------------


def test_a_rocm_build_runs_torch_cuda_on_an_mi300x(simulate_build: Any) -> None:
    """The MI300X is simulated from its description, and torch as a ROCm build (a simulation:
    no ROCm build of torch can be installed on this host): torch.cuda is the AMD GPU, and
    ``prism explain`` chooses ``torch.cuda.matmul``.  The tensor-core variant is NVIDIA's."""
    simulate_build(ROCM)
    decision = _explain("amd.mi300x")
    assert decision.chosen == "torch.cuda.matmul", str(decision)
    assert decision.chosen_device == "amd.mi300x"
    assert decision.executed == "numpy.matmul"  # a simulation runs the reference
    assert _candidate(decision, "torch.cuda.tensor_core_matmul").reasons == (
        "amd.mi300x: vendor is 'amd', required 'nvidia'",
        "amd.mi300x: amd.mi300x has no feature or attribute 'tensor_cores' (required '>=3')",
    )
    # A ROCm build has no XPU, MPS or NPU target: no variant of those is declared.
    assert not [c.variant for c in decision.candidates if c.variant.startswith(_OTHER_TARGETS)]


@pytest.mark.timeout(120)
def test_prism_explain_chooses_torch_cuda_on_an_mi300x_with_rocm(
    simulate_build: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line says the same (``prism explain``, run in this process so that the
    simulated ROCm build holds)."""
    from prism_core._cli import main

    simulate_build(ROCM)
    main(["explain", "matmul", "--device", "amd.mi300x", "--dtype", "float32", "--json"])
    decision = json.loads(capsys.readouterr().out)
    assert decision["chosen"] == "torch.cuda.matmul", decision


@needs_cpu_only
def test_a_cpu_build_says_why_not_on_an_mi300x() -> None:
    """The installed CPU-only torch on a simulated MI300X: explain names the build it is and
    the ROCm build to install."""
    decision = _explain("amd.mi300x")
    assert decision.chosen is None
    assert _candidate(decision, "torch.cuda.matmul").reasons == (
        f"'torch' does not drive amd.mi300x (torch {HERE.version} is not a ROCm build "
        "(torch.version.hip is None); AMD GPUs need a ROCm build of torch: pip install torch "
        "--index-url https://download.pytorch.org/whl/rocmX.Y, X.Y the host's ROCm version "
        "(https://pytorch.org/get-started/locally/))",
    )


def test_a_cuda_build_says_why_not_on_an_mi300x_and_rocm_on_an_h100(simulate_build: Any) -> None:
    """A CUDA build (simulated) is no ROCm build, and a ROCm build drives no NVIDIA GPU."""
    simulate_build(CUDA)
    (reason,) = _candidate(_explain("amd.mi300x"), "torch.cuda.matmul").reasons
    assert (
        "torch 2.13.0+cu130 is not a ROCm build (torch.version.hip is None; it is a CUDA 13.0 "
        "build); AMD GPUs need a ROCm build of torch"
    ) in reason, reason
    assert _explain("nvidia.h100-sxm").chosen == "torch.cuda.matmul"
    simulate_build(ROCM)
    decision = _explain("nvidia.h100-sxm", "bf16")
    assert decision.chosen is None
    for variant in ("torch.cuda.matmul", "torch.cuda.tensor_core_matmul"):
        (reason,) = _candidate(decision, variant).reasons
        assert reason.startswith(
            "'torch' does not drive nvidia.h100-sxm (torch 2.13.0+rocm7.1 is a ROCm build "
            "(torch.version.hip is '7.1.25424'), whose torch.cuda is an AMD GPU; NVIDIA GPUs "
            "need a CUDA build of torch: pip install torch --index-url "
            "https://download.pytorch.org/whl/cuXYZ"
        ), reason


def test_the_gpu_architectures_the_build_compiled_for(simulate_build: Any) -> None:
    """Where torch has said which architectures its kernels are for (``arch_list``, known
    once torch is imported), an AMD GPU's ``isa`` must be one of them, and an NVIDIA GPU's
    compute capability must have a cubin of its major version (no higher minor) or PTX."""
    simulate_build(TorchBuild("2.13.0+rocm7.1", hip="7.1", arch_list=("gfx90a", "gfx1100")))
    (reason,) = _candidate(_explain("amd.mi300x"), "torch.cuda.matmul").reasons
    assert reason == (
        "'torch' does not drive amd.mi300x (torch 2.13.0+rocm7.1 has no kernels for gfx942 "
        "(amd.mi300x's isa; it was built for gfx90a, gfx1100); it needs a ROCm build compiled "
        "for gfx942)"
    )
    simulate_build(TorchBuild("2.13.0+rocm7.1", hip="7.1", arch_list=("gfx90a", "gfx942")))
    assert _explain("amd.mi300x").chosen == "torch.cuda.matmul"
    features = TorchBuild("2.13.0+rocm7.1", hip="7.1", arch_list=("gfx942:sramecc+:xnack-",))
    simulate_build(features)  # target features after the processor
    assert _explain("amd.mi300x").chosen == "torch.cuda.matmul"
    simulate_build(TorchBuild("2.13.0+cu130", cuda="13.0", arch_list=("sm_80", "sm_86")))
    (reason,) = _candidate(_explain("nvidia.h100-sxm"), "torch.cuda.matmul").reasons
    assert "has no kernels for compute capability 9.0 (nvidia.h100-sxm; it was built for " in (
        reason
    )
    assert _explain("nvidia.l4").chosen == "torch.cuda.matmul"  # 8.9 runs sm_86's cubins
    simulate_build(TorchBuild("2.13.0+cu130", cuda="13.0", arch_list=("sm_80", "compute_80")))
    assert _explain("nvidia.h100-sxm").chosen == "torch.cuda.matmul"  # PTX, compiled by the driver


# -- Apple: MPS, without float64 ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_mps_refuses_what_metal_lacks(simulate_build: Any, dtype: str) -> None:
    """An M4 Max GPU (simulated from its description) and torch for macOS on Apple silicon
    (simulated: this host is not a Mac): float64 and complex128 are never sent to MPS."""
    simulate_build(MACOS)
    decision = _explain("apple.m4-max-gpu", dtype)
    assert decision.chosen is None, str(decision)
    (reason,) = _candidate(decision, "torch.mps.matmul").reasons
    assert reason == (
        f"torch holds no {dtype} on apple.m4-max-gpu (it holds {', '.join(sorted(MPS_HOLDS))})"
    )


@pytest.mark.parametrize("dtype", ["float32", "float16", "bf16", "complex64"])
def test_mps_takes_single_and_half_precision(simulate_build: Any, dtype: str) -> None:
    simulate_build(MACOS)
    decision = _explain("apple.m4-max-gpu", dtype)
    assert decision.chosen == "torch.mps.matmul", str(decision)
    assert decision.chosen_device == "apple.m4-max-gpu"


def test_mps_is_only_in_torch_for_macos_on_arm64(simulate_build: Any) -> None:
    simulate_build(CUDA)
    # No torch.mps variant is declared: every torch variant says what the device would need.
    (reason,) = _candidate(_explain("apple.m4-max-gpu"), "torch.matmul").reasons
    assert reason.startswith(
        "'torch' does not drive apple.m4-max-gpu (torch 2.13.0+cu130 is not built with MPS "
        "(only torch for macOS on Apple silicon is; this is "
    ), reason
    assert "Apple GPUs need torch for macOS on Apple silicon: pip install torch" in reason


def test_the_dtypes_held_per_device(backend: TorchBackend) -> None:
    mps = backend.dtypes(prism_core.hardware.get_device("apple.m4-max-gpu"))
    assert mps == MPS_HOLDS
    assert "float64" not in mps and "complex128" not in mps and "float32" in mps
    for other in ("nvidia.h100-sxm", "amd.mi300x", "intel.max-1550-stack", "generic.x86-64-v3"):
        assert backend.dtypes(prism_core.hardware.get_device(other)) is None, other
    assert backend.dtypes() is None


# -- Intel: XPU, Huawei: NPU ----------------------------------------------------------------------


def test_an_xpu_build_runs_on_a_max_1550_stack(simulate_build: Any) -> None:
    """One stack of a Max 1550 (simulated from its description) and an XPU build of torch
    (simulated): ``torch.xpu.matmul``; with a CUDA build, why not and what to install."""
    simulate_build(XPU)
    decision = _explain("intel.max-1550-stack")
    assert decision.chosen == "torch.xpu.matmul", str(decision)
    assert _candidate(decision, "torch.cuda.matmul").reasons == (
        "intel.max-1550-stack: vendor is 'intel', required 'nvidia' or 'amd'",
    )
    simulate_build(CUDA)
    (reason,) = _candidate(_explain("intel.max-1550-stack"), "torch.matmul").reasons
    assert reason == (
        "'torch' does not drive intel.max-1550-stack (torch 2.13.0+cu130 is not an XPU build "
        "(torch.version.xpu is None); Intel GPUs need an XPU build of torch: pip install torch "
        "--index-url https://download.pytorch.org/whl/xpu, with Intel's GPU driver "
        "(https://docs.pytorch.org/docs/stable/notes/get_start_xpu.html))"
    )


def test_torch_npu_runs_on_an_ascend_910b(simulate_build: Any) -> None:
    """An Ascend 910B (simulated from its description; its kind is npu) with torch_npu
    installed (simulated): ``torch.npu.matmul``; without torch_npu, why not."""
    simulate_build(ASCEND)
    decision = _explain("huawei.ascend-910b", "float16")
    assert decision.chosen == "torch.npu.matmul", str(decision)
    assert decision.chosen_device == "huawei.ascend-910b"
    simulate_build(TorchBuild("2.13.0+cpu"))
    (reason,) = _candidate(_explain("huawei.ascend-910b"), "torch.matmul").reasons
    assert reason == (
        "'torch' does not drive huawei.ascend-910b (torch_npu is not installed beside torch "
        "2.13.0+cpu; Huawei Ascend NPUs need torch_npu, Ascend's adapter for torch: pip install "
        "torch-npu, of the installed torch's version, with Ascend's CANN toolkit "
        "(https://github.com/Ascend/pytorch))"
    )


def test_a_vendor_torch_has_no_backend_for(backend: TorchBackend) -> None:
    verdict = backend.can_drive(prism_core.hardware.get_device("tenstorrent.wormhole-n300-chip"))
    assert not verdict
    assert verdict.reasons[0].endswith("vendor is 'tenstorrent'")


# -- per-call checks ------------------------------------------------------------------------------


def test_the_placement_of_the_accelerator_variants() -> None:
    """Host data stays on the CPU unless a device is named; CPU and meta tensors are in no
    accelerator (a tensor on the GPU is stood for by an object with ``is_cuda``)."""
    on_gpu = types.SimpleNamespace(shape=(4,), dtype="float32", is_cuda=True)
    cpu, meta = torch.ones(4), torch.ones(4, device="meta")
    for target in ("xpu", "mps", "npu"):
        check = accelerator_check("add", target)
        assert check(cpu, cpu) == "the data is in host memory; torch.add runs it there"
        assert check(on_gpu, cpu) == "the data is on the GPU; torch.cuda.add runs it there"
        assert check.__name__ == f"on_{target}[add]"
    assert accelerator_check("add", "cuda")(on_gpu, cpu) is True
    assert host_check("add")(meta, cpu) is True
    with prism_core.device("intel.max-1550-stack", simulate=True):
        assert accelerator_check("add", "xpu")(cpu, cpu) is True  # the caller named it


# -- the build facts ------------------------------------------------------------------------------


def test_the_build_is_read_without_importing_torch() -> None:
    """In a fresh interpreter, the facts come from torch's files (``torch/version.py``), and
    agree with what torch says once imported."""
    code = textwrap.dedent(
        """
        import sys
        from prism_plugin_torch import build

        before = build.torch_build()
        assert "torch" not in sys.modules, "reading the build imported torch"
        assert before.source == "torch/version.py", before
        import torch

        after = build.torch_build()
        assert after.source.startswith("torch.version"), after
        assert (before.version, before.cuda, before.hip, before.xpu) == (
            torch.__version__, torch.version.cuda, torch.version.hip, torch.version.xpu
        ), (before, after)
        assert (after.version, after.cuda, after.hip) == (before.version, before.cuda, before.hip)
        print("ok")
        """
    )
    assert run_python(code).stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.5.1+rocm6.2", {"hip": "6.2"}),
        ("2.5.1+cu121", {"cuda": "12.1"}),
        ("2.9.0+cu130", {"cuda": "13.0"}),
        ("2.7.0+xpu", {"xpu": "xpu"}),
        ("2.13.0+cpu", {}),
        ("2.5.1", {}),
    ],
)
def test_the_local_tag_where_version_py_cannot_be_read(
    version: str, expected: dict[str, str]
) -> None:
    assert build._from_local_tag(version) == expected


def test_the_local_tag_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_from_version_file", lambda: None)
    monkeypatch.setattr(
        build, "_distribution_version", lambda name: "2.5.1+rocm6.2" if name == "torch" else None
    )
    build._facts.cache_clear()
    try:
        facts = build._facts(False)
    finally:
        build._facts.cache_clear()
    assert (facts.version, facts.hip, facts.cuda) == ("2.5.1+rocm6.2", "6.2", None)
    assert facts.source == "the installed torch's version"


def test_what_each_build_lacks() -> None:
    assert build.lacks("amd", ROCM) is None and build.lacks("nvidia", CUDA) is None
    cpu_only = TorchBuild("2.13.0+cpu")
    assert build.lacks("nvidia", cpu_only, simulated=True) is None  # as its CUDA build would
    assert build.lacks("nvidia", cpu_only) == (
        "torch 2.13.0+cpu is not a CUDA build (torch.version.cuda is None); NVIDIA GPUs need a "
        "CUDA build of torch: pip install torch --index-url https://download.pytorch.org/whl/"
        "cuXYZ, XYZ a CUDA version the driver supports (https://pytorch.org/get-started/locally/)"
    )
    assert build.lacks("amd", ROCM, simulated=True) is None
    assert build.lacks("amd", cpu_only, simulated=True) is not None  # no ROCm build assumed
    assert build.lacks("intel", XPU) is None and build.lacks("apple", MACOS) is None
    assert build.lacks("huawei", ASCEND) is None
    assert build.lacks("tenstorrent", CUDA) is None and build.lacks(None, CUDA) is None
    missing = build.lacks("amd", TorchBuild(None))
    assert missing is not None and missing.startswith("torch is not installed; AMD GPUs need")


# -- prism doctor ---------------------------------------------------------------------------------


FAKE_AMD_HOST = textwrap.dedent(
    """
    import prism_core


    @prism_core.extending.hookimpl
    def prism_detect_devices(library):
        return prism_core.extending.Detection(
            [prism_core.extending.DetectedDevice(
                "amd.mi300x", index=0, name="AMD Instinct MI300X", uuid="GPU-amd-0"
            )]
        )
    """
)


@pytest.fixture
def host_with_an_mi300x(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A host whose detection reports an MI300X (a test plugin, through a real entry point),
    beside the installed torch."""
    site = tmp_path / "site"
    info = site / "prism_test_fake_amd-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: prism-test-fake-amd\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[prism.plugins]\nfakeamd = prism_test_fake_amd_host\n", encoding="utf-8"
    )
    (site / "prism_test_fake_amd_host.py").write_text(FAKE_AMD_HOST, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PRISM_PLUGINS", "torch,genomics,fakeamd")
    prism_core.extending.reload_plugins()
    yield
    monkeypatch.setenv("PRISM_PLUGINS", "torch,genomics")
    prism_core.extending.reload_plugins()


@needs_cpu_only
@pytest.mark.timeout(300)
def test_the_doctor_names_the_rocm_build_for_a_present_amd_gpu(host_with_an_mi300x: None) -> None:
    """An MI300X is present and torch is a CPU-only build: ``prism doctor`` shows, in the
    torch backend's capabilities, that torch cannot drive it and which build to install."""
    from prism_core._cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["doctor", "--json"]) == 0
    report = json.loads(out.getvalue())
    torch_report = report["plugins"]["backends"]["torch"]
    accelerators = torch_report["capabilities"]["accelerators"]
    assert list(accelerators) == ["amd.mi300x"], accelerators
    assert accelerators["amd.mi300x"].startswith(
        f"torch {HERE.version} is not a ROCm build (torch.version.hip is None); AMD GPUs need a "
        "ROCm build of torch: pip install torch --index-url https://download.pytorch.org/whl/rocm"
    )
    assert torch_report["capabilities"]["build"]["hip"] is None


# -- detection ------------------------------------------------------------------------------------


def _detector(devices: tuple[Any, ...] = (), reason: str = "", fail: bool = False) -> Any:
    module = types.ModuleType("fake")

    def detect(library: Any) -> prism_core.extending.Detection:
        if fail:
            raise RuntimeError("a bug")
        return prism_core.extending.Detection(devices, reason)

    module.detect = detect  # type: ignore[attr-defined]
    return module


def test_detection_asks_every_vendor_and_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook concatenates the devices of every vendor's module and joins their reasons; a
    module that raises is a reason, not a failure; one this prism-core lacks is left out."""
    Dev = prism_core.extending.DetectedDevice
    h100, mi300x = Dev("nvidia.h100-sxm", uuid="GPU-1"), Dev("amd.mi300x", uuid="GPU-2")
    fakes = {
        "nvidia_smi": _detector((h100,)),
        "amd_smi": _detector((mi300x,)),
        "intel_xpu": _detector(reason="no Intel GPU"),
        "apple_silicon": _detector(fail=True),
    }
    for name, module in fakes.items():
        monkeypatch.setitem(sys.modules, f"prism_core.{name}", module)
    monkeypatch.setitem(sys.modules, "prism_core.npu_smi", None)  # as if it were not there
    monkeypatch.setattr(plugin, "_TOOLS", {})  # every module is asked, whatever is on PATH
    found = plugin.prism_detect_devices(prism_core.hardware.DeviceLibrary())
    assert list(found.devices) == [h100, mi300x]
    assert found.reason == (
        "no Intel GPU; prism_core.apple_silicon.detect raised RuntimeError: a bug"
    ), found.reason


@pytest.mark.timeout(120)
def test_detection_with_prism_core_s_modules(tmp_path: Path) -> None:
    """With prism-core's own detection modules and no vendor tool on PATH, in a fresh process:
    no device, a sentence per vendor, and the modules of the vendors whose tools are absent are
    not imported (nor Apple's off macOS): a first call does not pay for them."""
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(Path(plugin.__file__).parents[1])!r})
        import prism_core
        from prism_plugin_torch import plugin
        found = plugin.prism_detect_devices(prism_core.hardware.DeviceLibrary())
        loaded = [m for m in ("amd_smi", "intel_xpu", "npu_smi", "apple_silicon")
                  if "prism_core." + m in sys.modules]
        print(json.dumps([len(found.devices), found.reason, loaded]))
        """
    )
    env = {**os.environ, "PATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=100
    )
    assert out.returncode == 0, out.stderr
    count, reason, loaded = json.loads(out.stdout)
    assert count == 0
    assert reason.startswith("nvidia-smi not found"), reason
    assert "amd-smi and rocm-smi: not found on PATH" in reason
    assert "xpu-smi and sycl-ls: not found on PATH" in reason
    assert "npu-smi: not found on PATH" in reason
    assert ("not macOS" in reason) == (sys.platform != "darwin")
    assert loaded == ([] if sys.platform != "darwin" else ["apple_silicon"])


@pytest.mark.timeout(120)
def test_doctor_asks_the_driver_of_the_build_s_gpus(tmp_path: Path) -> None:
    """Before torch is imported, the capabilities say why CUDA is unavailable from the driver
    torch.cuda would use: AMD's on a ROCm build (simulated), not NVIDIA's."""
    code = textwrap.dedent(
        f"""
        import json, sys
        from prism_core import amd_smi
        from prism_plugin_torch import build
        from prism_plugin_torch.backend import TorchBackend
        from prism_plugin_torch.build import TorchBuild

        build.torch_build = lambda: TorchBuild("2.13.0+rocm7.1", hip="7.1", source="simulated")
        amd_smi.DRIVER_FILES = ({str(tmp_path / "kfd")!r},)
        caps = TorchBackend().capabilities()
        print(json.dumps([caps["cuda_reason"], "torch" in sys.modules]))
        """
    )
    reason, imported = json.loads(run_python(code, PATH=str(tmp_path)).stdout)
    assert reason.startswith("no AMD GPU driver on this host"), reason
    assert not imported
