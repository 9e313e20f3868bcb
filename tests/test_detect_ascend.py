"""Detection of Huawei Ascend NPUs (``prism_core.npu_smi``): the recorded ``npu-smi info`` tables
in tests/data/host_tools/ascend (README.md there says where each comes from), parsed, mapped
through the shipped descriptions, run as a stand-in executable on ``PATH`` (a real subprocess)
and made present devices through a real plugin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from prism_core import npu_smi
from prism_core.kernel.contract.backend import Detection
from prism_core.npu_smi import (
    NPU_SMI_COMMAND,
    NpuChip,
    detect,
    detection_from_npu_smi,
    parse_npu_smi_info,
)

from .conftest import detected_through_plugin, shipped_library
from .stand_ins import SLEEP, printing, stand_in

SAMPLES = Path(__file__).parent / "data" / "host_tools" / "ascend"
MIB = 1 << 20
LIB = shipped_library()
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a shell script")
#: ``npu-smi info`` on an Atlas 800T A2.
A2_910B3: dict[tuple[str, ...], Path] = {NPU_SMI_COMMAND: SAMPLES / "npu-smi-info-910b3.txt"}
BUSES = [f"0000:{b}:00.0" for b in ("C1", "C2", "81", "82", "01", "02", "41", "42")]


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


# -- parsing ------------------------------------------------------------------------------------


def test_an_atlas_800t_a2_with_eight_910b3() -> None:
    chips, version, unreadable = parse_npu_smi_info(sample("npu-smi-info-910b3.txt"))
    assert (version, unreadable) == ("24.1.1", [])
    assert chips == [
        NpuChip(i, 0, "910B3", "OK", bus, None, 65536 * MIB) for i, bus in enumerate(BUSES)
    ]
    found = detection_from_npu_smi(sample("npu-smi-info-910b3.txt"), LIB)
    assert found.reason == ""
    assert [(d.device_type, d.index, d.name, d.uuid) for d in found.devices] == [
        ("huawei.ascend-910b", i, "Ascend910B3", bus) for i, bus in enumerate(BUSES)
    ]
    assert {(d.memory_bytes, d.driver, d.partition_mode) for d in found.devices} == {
        (64 << 30, "24.1.1", None)
    }


def test_two_chips_per_npu_and_a_name_without_a_description() -> None:
    """An Atlas A3 lists two chips per NPU, with their physical ids; its ``Ascend910`` (the
    910_93) has no description, which the reason says."""
    chips, version, _ = parse_npu_smi_info(sample("npu-smi-info-a3.txt"))
    assert version == "25.2.1"
    assert [(c.npu, c.chip, c.phy_id, c.bus_id) for c in chips] == [
        (0, 0, 0, "0000:9D:00.0"),
        (0, 1, 1, "0000:9F:00.0"),
        (1, 0, 2, "0000:99:00.0"),
        (1, 1, 3, "0000:9B:00.0"),
    ]
    found = detection_from_npu_smi(sample("npu-smi-info-a3.txt"), LIB)
    assert found == Detection(
        (),
        "no device description matches the NPU name 'Ascend910' (a description needs a "
        "detection.product_names pattern for it)",
    )


def test_a_910b4_with_32_gb_and_an_unreadable_row() -> None:
    text = sample("npu-smi-info-910b3.txt").replace("910B3", "910B4").replace("65536", "32768")
    text = text.replace("| 7     910B4 ", "| x     910B4 ", 1)
    chips, _, unreadable = parse_npu_smi_info(text)
    assert len(chips) == 7 and {c.memory_bytes for c in chips} == {32768 * MIB}
    # The row with no NPU number, and the second row of its chip, which then has no first.
    assert len(unreadable) == 2 and unreadable[0].startswith("| x     910B4")
    assert "0000:42:00.0" in unreadable[1]
    found = detection_from_npu_smi(text, LIB)
    assert [d.device_type for d in found.devices] == ["huawei.ascend-910b"] * 7
    assert found.reason.startswith("npu-smi printed rows that could not be read: | x     910B4")


def test_garbage() -> None:
    assert detection_from_npu_smi("dcmi module initialize failed. ret is -8005\n", LIB) == (
        Detection(
            (),
            "npu-smi info lists no NPU; its output begins 'dcmi module initialize failed. "
            "ret is -8005'",
        )
    )
    assert detection_from_npu_smi("", LIB) == Detection((), "npu-smi info lists no NPU")


# -- running npu-smi ----------------------------------------------------------------------------


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_detect_runs_npu_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(printing(tmp_path / "bin", A2_910B3)))
    found = detect(LIB)
    assert found == detection_from_npu_smi(sample("npu-smi-info-910b3.txt"), LIB)
    assert len(found.devices) == 8


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_no_npu_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect(LIB) == Detection((), "npu-smi not found: no Ascend driver on this host")


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_failing_npu_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'echo "dcmi module initialize failed. ret is -8005"; exit 255'
    bin_dir = stand_in(tmp_path / "bin", "npu-smi", {NPU_SMI_COMMAND: body})
    monkeypatch.setenv("PATH", str(bin_dir))
    assert detect(LIB) == Detection(
        (), "npu-smi failed with exit status 255: dcmi module initialize failed. ret is -8005"
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_hanging_npu_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npu_smi, "NPU_SMI_TIMEOUT_S", 1)
    bin_dir = stand_in(tmp_path / "bin", "npu-smi", {NPU_SMI_COMMAND: f"exec {SLEEP} 30"})
    monkeypatch.setenv("PATH", str(bin_dir))
    assert detect(LIB) == Detection((), "npu-smi did not answer within 1 s")


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_an_npu_smi_printing_garbage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = stand_in(
        tmp_path / "bin", "npu-smi", {NPU_SMI_COMMAND: 'printf "\\001\\002garbage\\n"'}
    )
    monkeypatch.setenv("PATH", str(bin_dir))
    found = detect(LIB)
    assert found == Detection(
        (), "npu-smi info lists no NPU; its output begins '\\x01\\x02garbage'"
    )


def test_detection_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def list(self, **kwargs: Any) -> Any:
            raise RuntimeError("the library broke")

    monkeypatch.setattr(npu_smi, "_which", lambda name: "/usr/local/sbin/npu-smi")
    monkeypatch.setattr(npu_smi, "run_npu_smi", lambda exe: (sample("npu-smi-info-910b3.txt"), ""))
    assert detect(Broken()) == Detection(
        (), "Ascend detection failed: RuntimeError: the library broke"
    )


@POSIX_ONLY
def test_driver_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(npu_smi, "DRIVER_FILES", (str(tmp_path / "davinci_manager"),))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert npu_smi.driver_absent() == (
        "no Ascend driver on this host (no npu-smi on PATH, no /dev/davinci_manager)"
    )
    (tmp_path / "davinci_manager").touch()
    assert npu_smi.driver_absent() is None


# -- present devices ----------------------------------------------------------------------------


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_npus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(printing(tmp_path / "bin", A2_910B3)))
    mine = detected_through_plugin(monkeypatch, tmp_path, "npu_smi", "npu")
    assert [(d.device_type, d.index, d.uuid) for d in mine] == [
        ("huawei.ascend-910b", i, bus) for i, bus in enumerate(BUSES)
    ]
    assert {d.description.compute_units for d in mine} == {24}
    assert {d.memory_bytes for d in mine} == {64 << 30}
