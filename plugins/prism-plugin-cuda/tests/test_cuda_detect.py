"""Detection: parsing ``nvidia-smi`` output, mapping names through the real device library, and
running the command (a stand-in ``nvidia-smi`` script on ``PATH``; the real one where there is
one)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from prism_plugin_cuda.plugin import prism_detect_devices

import prism_core
from prism_core import nvidia_smi as detect_module
from prism_core.nvidia_smi import (
    NVIDIA_SMI_COMMAND,
    SmiGpu,
    detect,
    detection_from_smi,
    parse_nvidia_smi,
)

#: Output of ``nvidia-smi --query-gpu=index,name,uuid,memory.total --format=csv,noheader,nounits``
#: on a host with an H100 SXM5 80GB and a GeForce RTX 4090: the names and memory sizes (MiB) are
#: those the driver reports for these boards.
H100_UUID = "GPU-5c3b7e1a-96d2-0f4e-8a1b-2d7c9e4f6a30"
RTX_4090_UUID = "GPU-e2a4c6d8-1b3f-5a7c-9e0d-4f6b8a2c1e35"
SMI_OUTPUT = f"""\
0, NVIDIA H100 80GB HBM3, {H100_UUID}, 81559
1, NVIDIA GeForce RTX 4090, {RTX_4090_UUID}, 24564
"""
NO_DRIVER_MESSAGE = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
    "that the latest NVIDIA driver is installed and running."
)
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a shell script")


# -- parsing ----------------------------------------------------------------------------------


def test_parse() -> None:
    gpus, unreadable = parse_nvidia_smi(SMI_OUTPUT)
    assert unreadable == []
    assert gpus == [
        SmiGpu(0, "NVIDIA H100 80GB HBM3", H100_UUID, 81559 << 20),
        SmiGpu(1, "NVIDIA GeForce RTX 4090", RTX_4090_UUID, 24564 << 20),
    ]


def test_parse_placeholders_blank_lines_and_garbage() -> None:
    text = "\n0, NVIDIA L4, [N/A], [N/A]\n\nnot a csv line\nx, NVIDIA L4, GPU-1, 100\n"
    gpus, unreadable = parse_nvidia_smi(text)
    assert gpus == [SmiGpu(0, "NVIDIA L4", None, None)]
    assert unreadable == ["not a csv line", "x, NVIDIA L4, GPU-1, 100"]


def test_parse_a_name_with_a_comma() -> None:
    gpus, _ = parse_nvidia_smi("3, NVIDIA Acme, Rev B, GPU-abc, 1024\n")
    assert gpus == [SmiGpu(3, "NVIDIA Acme, Rev B", "GPU-abc", 1024 << 20)]


# -- mapping through the real library ---------------------------------------------------------


def test_names_map_to_device_types(library: prism_core.hardware.DeviceLibrary) -> None:
    found = detection_from_smi(SMI_OUTPUT, library)
    assert isinstance(found, prism_core.extending.Detection)
    assert [(d.index, d.device_type) for d in found.devices] == [
        (0, "nvidia.h100-sxm"),  # a shipped description
        (1, "nvidia.rtx-4090"),  # this plugin's description
    ]
    h100 = found.devices[0]
    assert isinstance(h100, prism_core.extending.DetectedDevice)
    assert h100.name == "NVIDIA H100 80GB HBM3"
    assert h100.uuid == H100_UUID
    assert h100.memory_bytes == 81559 << 20
    assert found.reason == ""
    for device in found.devices:
        assert device.device_type in library


def test_every_plugin_board_is_detected_by_its_driver_name(
    library: prism_core.hardware.DeviceLibrary,
) -> None:
    text = (
        "0, NVIDIA RTX 6000 Ada Generation, GPU-a, 49140\n"
        "1, NVIDIA L40S, GPU-b, 46068\n"
        "2, NVIDIA L4, GPU-c, 23034\n"
    )
    found = detection_from_smi(text, library)
    assert [d.device_type for d in found.devices] == [
        "nvidia.rtx-6000-ada",
        "nvidia.l40s",
        "nvidia.l4",
    ]


def test_matching_is_case_insensitive_and_whole_name(
    library: prism_core.hardware.DeviceLibrary,
) -> None:
    text = (
        "0, nvidia geforce rtx 4090, GPU-a, 24564\n"
        "1, NVIDIA GeForce RTX 4090 D, GPU-b, 24564\n"  # a different board: no fullmatch
        "2, NVIDIA Quadro P1000, GPU-c, 4096\n"
    )
    found = detection_from_smi(text, library)
    assert [d.device_type for d in found.devices] == ["nvidia.rtx-4090"]
    assert "'NVIDIA GeForce RTX 4090 D'" in found.reason
    assert "'NVIDIA Quadro P1000'" in found.reason
    assert "detection.product_names" in found.reason


def test_nothing_listed(library: prism_core.hardware.DeviceLibrary) -> None:
    assert detection_from_smi("", library) == prism_core.extending.Detection(
        (), "nvidia-smi lists no GPU"
    )


def test_unreadable_output_is_reported(library: prism_core.hardware.DeviceLibrary) -> None:
    found = detection_from_smi("something else entirely\n", library)
    assert found.devices == ()
    assert "could not be read: something else entirely" in found.reason


# -- running nvidia-smi -----------------------------------------------------------------------


def _stand_in(directory: Path, body: str) -> Path:
    """An ``nvidia-smi`` that answers only the exact query the plugin must make."""
    directory.mkdir(exist_ok=True)
    script = directory / "nvidia-smi"
    expected = " ".join(NVIDIA_SMI_COMMAND[1:])
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$*" != "{expected}" ]; then echo "unexpected arguments: $*" >&2; exit 2; fi\n'
        f"{body}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def test_no_nvidia_smi(
    library: prism_core.hardware.DeviceLibrary, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect(library) == prism_core.extending.Detection(
        (), "nvidia-smi not found: no NVIDIA driver on this host"
    )


@POSIX_ONLY
def test_runs_nvidia_smi(
    library: prism_core.hardware.DeviceLibrary, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = _stand_in(tmp_path / "bin", f"cat <<'EOF'\n{SMI_OUTPUT}EOF")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    found = prism_detect_devices(library)
    assert [d.device_type for d in found.devices] == ["nvidia.h100-sxm", "nvidia.rtx-4090"]
    assert found.reason == ""


@POSIX_ONLY
def test_through_prism(
    library: prism_core.hardware.DeviceLibrary, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = _stand_in(tmp_path / "bin", f"cat <<'EOF'\n{SMI_OUTPUT}EOF")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    detections = prism_core.extending.PluginSet().detect(library)
    assert [d.device_type for d in detections["cuda"].devices] == [
        "nvidia.h100-sxm",
        "nvidia.rtx-4090",
    ]


@POSIX_ONLY
def test_nvidia_smi_without_a_driver(
    library: prism_core.hardware.DeviceLibrary, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = _stand_in(tmp_path / "bin", f'echo "{NO_DRIVER_MESSAGE}"\nexit 9')
    monkeypatch.setenv("PATH", str(bin_dir))
    assert detect(library) == prism_core.extending.Detection(
        (), f"nvidia-smi failed with exit status 9: {NO_DRIVER_MESSAGE}"
    )


def test_nvidia_smi_that_hangs(
    library: prism_core.hardware.DeviceLibrary, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def hang(*args: Any, **kwargs: Any) -> Any:
        assert kwargs["timeout"] == 10
        raise subprocess.TimeoutExpired(args[0], kwargs["timeout"])

    monkeypatch.setattr(detect_module, "_which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(subprocess, "run", hang)
    assert detect(library) == prism_core.extending.Detection(
        (), "nvidia-smi did not answer within 10 s"
    )


def test_detection_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def list(self, **kwargs: Any) -> Any:
            raise RuntimeError("the library broke")

    monkeypatch.setattr(detect_module, "_which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(detect_module, "run_nvidia_smi", lambda exe: (SMI_OUTPUT, ""))
    found = detect(Broken())
    assert found.devices == ()
    assert found.reason == "NVIDIA detection failed: RuntimeError: the library broke"


def test_this_host(library: prism_core.hardware.DeviceLibrary) -> None:
    """Whatever this host has, detection answers; without nvidia-smi it says so."""
    found = prism_core.extending.PluginSet().detect(library)["cuda"]
    assert isinstance(found, prism_core.extending.Detection)
    if shutil.which("nvidia-smi") is None:
        assert found == prism_core.extending.Detection(
            (), "nvidia-smi not found: no NVIDIA driver on this host"
        )
    else:
        assert found.devices or found.reason
