"""Discovery: the plugin is found through its real entry point, contributes the backend and a
variant of every op for the CPU and the GPU, imports no torch to be listed, and works (NumPy
runs, the backend says why not) where torch cannot be imported."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import prism_plugin_torch.build
import pytest
from prism_plugin_torch.backend import TorchBackend
from torch_testing import builtin_ops, run_python, subprocess_env

import prism_core

#: A guard against a hung child process, not a performance expectation.
GUARD_S = 300


def test_found_through_its_entry_point() -> None:
    (ep,) = [e for e in importlib.metadata.entry_points(group="prism.plugins") if e.name == "torch"]
    assert ep.value == "prism_plugin_torch.plugin"
    assert ep.dist is not None and ep.dist.name == "prism-plugin-torch"
    record = prism_core.extending.plugins().records["torch"]
    assert record.status == "loaded"
    assert record.distribution == "prism-plugin-torch"
    assert record.backends == ["torch"]
    assert not record.problems
    assert {
        "prism_backends",
        "prism_variants",
        "prism_plugin_info",
        "prism_detect_devices",
    } <= set(record.hooks)
    assert record.info["requires"] == ["torch>=2.1", "array-api-compat>=1.16"]
    assert isinstance(prism_core.extending.plugins().backend("torch"), TorchBackend)
    assert prism_core.extending.plugins().backend(
        "pytorch"
    ) is prism_core.extending.plugins().backend("torch")


def test_a_variant_per_target_of_every_op_of_the_catalogue() -> None:
    """``torch.<op>`` on the CPU and ``torch.cuda.<op>`` on NVIDIA and AMD GPUs (CUDA or ROCm,
    whichever the build has) for every op Prism declares, and the tensor-core matmul; all made
    lazily, so that discovery imports none (``test_listing_plugins_imports_no_torch``).  The
    installed torch (a CPU-only build here) has no XPU, MPS or NPU target: their variants are
    declared only by a build that has them (test_torch_accelerators.py)."""
    record = prism_core.extending.plugins().records["torch"]
    by_name = {v.name: v for v in record.variants}
    ops = builtin_ops()
    facts = prism_plugin_torch.build.torch_build()
    has = {"xpu": facts.xpu is not None, "mps": facts.mps, "npu": facts.npu is not None}
    accelerators = {
        "cuda": {"vendor": ("nvidia", "amd"), "kind": "gpu"},
        "xpu": {"vendor": "intel", "kind": "gpu"},
        "mps": {"vendor": "apple", "kind": "gpu"},
        "npu": {"vendor": "huawei", "kind": "npu"},
    }
    accelerators = {k: v for k, v in accelerators.items() if has.get(k, True)}
    expected = {f"torch.{op}" for op in ops} | {
        f"torch.{target}.{op}" for target in accelerators for op in ops
    }
    gpu_only = {"torch.cuda.tensor_core_matmul", "torch.cuda.genomics.sw_align_batch"}
    assert set(by_name) == expected | gpu_only
    for op in ops:
        cpu = by_name[f"torch.{op}"]
        assert cpu.op == op and cpu.backend == "torch"
        assert cpu.requirement.mapping == {"kind": "cpu"} and cpu.priority == 0
        assert cpu.placement is not None
        for target, requires in accelerators.items():
            gpu = by_name[f"torch.{target}.{op}"]
            assert (gpu.op, gpu.backend) == (op, "torch")
            assert gpu.requirement.mapping == requires
            assert gpu.priority == 10
            assert gpu.placement is not None
    tensor_core = by_name["torch.cuda.tensor_core_matmul"]
    assert tensor_core.requirement.mapping == {"vendor": "nvidia", "tensor_cores": ">=3"}
    assert tensor_core.dtype_support and tensor_core.priority == 20
    aligner = by_name["torch.cuda.genomics.sw_align_batch"]
    assert aligner.op == "genomics.sw_align_batch"
    assert aligner.requirement.mapping == {
        "vendor": "nvidia",
        "kind": "gpu",
        "compute_capability": ">=7.5",
    }
    # The same CUDA function: the tensor cores are cuBLAS's choice, not another kernel.
    assert tensor_core.fn is by_name["torch.cuda.matmul"].fn
    assert aligner.fn == "prism_plugin_torch.genomics:sw_align_batch_cuda"
    for v in record.variants:
        # Each function is made on its first call (the backend's, or named as "module:name").
        assert callable(v.fn) or v.fn.startswith("prism_plugin_torch."), v.name
        assert v.source == "plugin:torch"


def test_the_new_ops_of_the_catalogue_are_there() -> None:
    """The numerics ops each have their torch variants (a guard for this repository: the
    hook skips ops an older prism-core does not declare)."""
    names = {v.op for v in prism_core.extending.plugins().records["torch"].variants}
    for op in (
        "stack",
        "concat",
        "where",
        "clip",
        "maximum",
        "minimum",
        "argmax",
        "argmin",
        "sort",
        "cumulative_sum",
        "linalg.norm",
        "linalg.vector_norm",
        "linalg.matrix_norm",
        "linalg.qr",
        "linalg.cholesky",
        "triu_indices",
        "requires_grad",
        "detach",
        "from_dlpack",
    ):
        assert op in names, op


@pytest.mark.timeout(GUARD_S)
def test_listing_plugins_imports_no_torch() -> None:
    run_python(
        textwrap.dedent(
            """
            import sys
            import prism_core

            ps = prism_core.extending.plugins()
            assert ps.records["torch"].status == "loaded", ps.records["torch"].reason
            assert len(ps.records["torch"].variants) > 100
            backend = ps.backend("torch")
            assert not backend.owns(1.0) and backend.is_native(1.0)
            assert "torch" not in sys.modules, "listing plugins imported torch"
            assert "prism_plugin_torch.overrides" not in sys.modules
            assert "array_api_compat" not in sys.modules
            """
        ),
        timeout=GUARD_S,
    )


@pytest.mark.timeout(GUARD_S)
def test_the_plugins_command_imports_no_torch() -> None:
    """``prism plugins``, run for real, with Python's import log: no torch in it."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "prism_core", "plugins"],
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        env=subprocess_env(),
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "torch" in proc.stdout  # the plugin is listed
    imported = [line.rpartition("|")[2].strip() for line in proc.stderr.splitlines()]
    assert "prism_plugin_torch.variants" in imported  # the hooks ran
    assert not [m for m in imported if m == "torch" or m.startswith("torch.")]


#: ``prism doctor --json`` on a host whose NVIDIA driver is (or is not) seen: the torch backend's
#: part of the report, and whether torch was imported.
DOCTOR = """
import contextlib, io, json, sys
from prism_core import nvidia_smi
from prism_core._cli import main

nvidia_smi._which = lambda command: None  # no nvidia-smi on PATH
nvidia_smi.DRIVER_FILES = {files!r}
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["doctor", "--json"]) == 0
torch = json.loads(out.getvalue())["plugins"]["backends"]["torch"]
print(json.dumps({{"torch": torch, "imported": "torch" in sys.modules}}))
"""


@pytest.mark.timeout(GUARD_S)
@pytest.mark.parametrize("driver", [False, True], ids=["no driver", "a driver"])
def test_the_doctor_imports_torch_only_where_a_gpu_may_be(tmp_path: Path, driver: bool) -> None:
    """Without an NVIDIA driver, ``prism doctor`` reports torch installed at its version and
    CUDA unavailable, with the reason, without importing torch (about a second); where a driver
    is, it imports torch and reports what torch says."""
    files = (str(tmp_path),) if driver else ()
    found = json.loads(run_python(DOCTOR.format(files=files), timeout=GUARD_S).stdout)
    version = importlib.metadata.version("torch")
    torch = found["torch"]
    assert (torch["available"], torch["version"]) == (True, version), torch
    assert found["imported"] is driver
    capabilities = torch["capabilities"]
    if driver:
        assert capabilities["torch"] == version and "threads" in capabilities, capabilities
    else:
        from prism_plugin_torch.build import torch_build

        facts = torch_build()  # read from torch's files, as the child read them
        assert capabilities == {
            "torch": version,
            "imported": False,
            "build": {
                "cuda": facts.cuda,
                "hip": facts.hip,
                "xpu": facts.xpu,
                "mps": facts.mps,
                "torch_npu": facts.npu,
                "read_from": "torch/version.py",
            },
            "accelerators": {},
            "cuda_available": False,
            "cuda_reason": "no NVIDIA driver on this host (no nvidia-smi on PATH, no "
            "/proc/driver/nvidia)",
        }


#: Put on PYTHONPATH as sitecustomize: ``import torch`` fails as on a host without torch.
NO_TORCH = """
import sys


class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoTorch())
"""


@pytest.mark.timeout(GUARD_S)
def test_without_torch_the_backend_says_why_and_numpy_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_TORCH, encoding="utf-8")
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        import prism_core
        from prism_core.testing import check_backend

        ps = prism_core.extending.plugins()
        assert ps.records["torch"].status == "loaded", ps.records["torch"].reason
        backend = ps.backend("torch")
        availability = backend.availability()
        assert not availability and availability.reason == "torch not installed", availability

        x = np.arange(6.0).reshape(2, 3)
        out = prism_core.matmul(x, x.T)
        assert type(out) is np.ndarray and np.array_equal(out, x @ x.T)
        decision = prism_core.explain("matmul", x, x.T)
        assert decision.chosen == "numpy.matmul", decision
        said = {c.variant: c.reasons for c in decision.candidates}
        assert said["torch.matmul"] == (
            "backend 'torch' is not available: torch not installed",
        ), said

        try:
            prism_core.use_backend("pytorch")
        except prism_core.PrismError as exc:
            assert "torch not installed" in str(exc), exc
        else:
            raise AssertionError("use_backend('pytorch') did not say why torch cannot run")

        report = check_backend("torch")
        assert report.ok, str(report)
        assert report.skipped[-1].detail == "backend unavailable: torch not installed"
        assert "torch" not in sys.modules
        print("ok")
        """
    )
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = run_python(code, timeout=GUARD_S, PYTHONPATH=path)
    assert proc.stdout.strip() == "ok"


SMI_H100 = "0, NVIDIA H100 80GB HBM3, GPU-5d2c1b7e-0000-0000-0000-000000000001, 81559\n"


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in nvidia-smi is a shell script")
@pytest.mark.timeout(GUARD_S)
def test_finds_the_gpus_without_the_cuda_plugin(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With this plugin alone (the conftest loads only it), an NVIDIA GPU is present: its
    detection asks nvidia-smi (here a stand-in answering the real query), imports no torch."""
    from prism_core.nvidia_smi import NVIDIA_SMI_COMMAND

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    expected = " ".join(NVIDIA_SMI_COMMAND[1:])
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$*" != "{expected}" ]; then echo "unexpected: $*" >&2; exit 2; fi\n'
        f"printf '%s' '{SMI_H100}'\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    detections = prism_core.extending.PluginSet().detect(prism_core.hardware.DeviceLibrary())
    assert [(d.device_type, d.uuid) for d in detections["torch"].devices] == [
        ("nvidia.h100-sxm", "GPU-5d2c1b7e-0000-0000-0000-000000000001")
    ]
    assert "cuda" not in detections  # the cuda plugin is not loaded here
