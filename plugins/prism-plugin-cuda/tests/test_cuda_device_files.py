"""The device files the plugin ships, and the plugin as Prism sees it through its entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from prism_plugin_cuda import __version__
from prism_plugin_cuda.backend import CudaBackend
from prism_plugin_cuda.plugin import HARDWARE_DIR

import prism_core

SHIPPED = {"nvidia.rtx-4090", "nvidia.rtx-6000-ada", "nvidia.l40s"}
MODELINE = "# yaml-language-server: $schema="


def _files() -> list[Path]:
    return sorted(HARDWARE_DIR.rglob("*.yaml"))


def test_the_hardware_dir_is_inside_the_installed_package() -> None:
    import prism_plugin_cuda

    assert Path(prism_plugin_cuda.__file__).resolve().parent / "hardware" == HARDWARE_DIR
    assert {p.name for p in _files()} == {"rtx-4090.yaml", "rtx-6000-ada.yaml", "l40s.yaml"}


def test_prism_validate_accepts_the_directory() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", "validate", "--json", str(HARDWARE_DIR)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["valid"] is True
    assert report["files"] == len(_files())
    assert {r["device_type"] for r in report["reports"]} == SHIPPED


def test_validate_paths_finds_no_problem() -> None:
    reports = prism_core.hardware.validate_paths([HARDWARE_DIR], use_cache=False)
    assert [r.problems for r in reports if not r.valid] == []
    assert {r.device_type for r in reports} == SHIPPED


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_file_style(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith(MODELINE)
    assert "format_version: 1" in lines
    assert lines[0].endswith("/schemas/device.schema.json")


@pytest.mark.parametrize("device_type", sorted(SHIPPED))
def test_devices_resolve_on_the_shipped_families(
    library: prism_core.hardware.DeviceLibrary, device_type: str
) -> None:
    d = library.get(device_type)
    assert d.origin == "plugin:cuda"
    assert d.path is not None and d.path.resolve().is_relative_to(HARDWARE_DIR)
    assert d.lineage == (device_type, "nvidia.ada", "nvidia.gpu")
    assert (d.vendor, d.kind, d.abstract, d.isa) == ("nvidia", "gpu", False, "sm_89")
    assert d.attribute("compute_capability") == "8.9"
    assert d.supports("matmul", "fp8_e4m3")  # inherited from nvidia.ada's tensor cores
    assert d.peak("fp64") is None  # Ada has no FP64 Tensor Cores; no figure is claimed
    # The FP32 figure is SMs x 128 lanes x 2 (FMA) x boost clock.
    assert d.compute_units is not None
    expected = d.compute_units * 128 * 2 * d.clock_mhz["boost"] / 1e6
    assert d.peak("fp32") == pytest.approx(expected, rel=0.005)
    # Dense Tensor Core figures: BF16 is at least twice FP32 and FP8 twice BF16.
    bf16, fp8 = d.peak("bf16"), d.peak("fp8_e4m3")
    assert bf16 is not None and fp8 is not None
    assert bf16 >= 2 * expected * 0.99
    assert fp8 == pytest.approx(2 * bf16, rel=0.02)  # the L40S datasheet rounds unevenly
    assert d.memory_bytes is not None and d.memory_bytes >= 24 << 30


def test_rtx_4090_numbers(library: prism_core.hardware.DeviceLibrary) -> None:
    d = library.get("nvidia.rtx-4090")
    assert d.name == "NVIDIA GeForce RTX 4090"
    assert d.compute_units == 128
    assert d.memory_bytes == 24 << 30
    glob = d.memory_level("global")
    assert glob is not None and glob.bandwidth_gbps == 1008
    assert d.peak_tflops["fp32"] == 82.6
    assert d.tdp_watts == 450


def test_rtx_6000_ada_numbers(library: prism_core.hardware.DeviceLibrary) -> None:
    d = library.get("nvidia.rtx-6000-ada")
    assert d.name == "NVIDIA RTX 6000 Ada Generation"
    assert d.compute_units == 142
    assert d.memory_bytes == 48 << 30
    assert d.peak_tflops["fp32"] == 91.1
    assert d.tdp_watts == 300


def test_the_plugin_loads_through_its_entry_point() -> None:
    ps = prism_core.extending.plugins()
    record = ps.records["cuda"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert (record.distribution, record.version) == ("prism-plugin-cuda", __version__)
    assert record.target == "prism_plugin_cuda.plugin"
    assert record.backends == ["cuda"]
    assert [p.resolve() for p in record.hardware_dirs] == [HARDWARE_DIR]
    assert record.info["requires"] == ["cupy-cuda12x>=14.2"]
    assert record.info["description"]
    assert set(record.hooks) == {
        "prism_plugin_info",
        "prism_hardware_dirs",
        "prism_backends",
        "prism_detect_devices",
        "prism_variants",
    }
    ops = {v.op for v in CudaBackend().variants()}
    assert len(record.variants) == len(ops) + 1  # and cuda.tensor_core_matmul
