"""Detection of AMD GPUs (``prism_core.amd_smi``): the recorded outputs of ``amd-smi`` and
``rocm-smi`` in tests/data/host_tools/amd (README.md there says where each comes from), parsed,
mapped through the shipped descriptions, run as stand-in executables on ``PATH`` (a real
subprocess), and made present devices through a real plugin: an MI300X in CPX mode is eight
XCDs, an MI250X two GCDs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import prism_core
from prism_core import amd_smi
from prism_core.amd_smi import (
    AMD_SMI_LIST_COMMAND,
    AMD_SMI_STATIC_COMMAND,
    AMD_SMI_STATIC_PLAIN_COMMAND,
    ROCM_SMI_COMMAND,
    AmdGpu,
    detect,
    detection_from_gpus,
    parse_amd_smi,
    parse_rocm_smi,
)
from prism_core.host_tools import which
from prism_core.kernel.contract.backend import Detection

from .conftest import detected_through_plugin, shipped_library
from .stand_ins import SLEEP, printing, stand_in

SAMPLES = Path(__file__).parent / "data" / "host_tools" / "amd"
MIB = 1 << 20
GIB = 1 << 30
LIB = shipped_library()
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="the stand-ins are shell scripts")


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def amd_smi_host(mode: str) -> tuple[list[AmdGpu], str]:
    return parse_amd_smi(
        sample(f"amd-smi-static-mi300x-{mode}.json"), sample(f"amd-smi-list-mi300x-{mode}.json")
    )


# -- parsing ------------------------------------------------------------------------------------


def test_amd_smi_on_an_mi300x_host_in_spx() -> None:
    gpus, problem = amd_smi_host("spx")
    assert problem == ""
    assert [g.index for g in gpus] == list(range(8))
    assert {(g.name, g.device_id) for g in gpus} == {("AMD Instinct MI300X", "0x74a1")}
    assert {g.memory_bytes for g in gpus} == {196592 * MIB}
    assert {(g.compute_partition, g.memory_partition) for g in gpus} == {("spx", "nps1")}
    assert {g.driver for g in gpus} == {"6.12.12"}
    assert len({g.uuid for g in gpus}) == 8 and all(g.uuid for g in gpus)
    found = detection_from_gpus(gpus, LIB)
    assert found.reason == ""
    assert [(d.device_type, d.index, d.partition_mode) for d in found.devices] == [
        ("amd.mi300x", i, "spx-nps1") for i in range(8)
    ]
    assert {d.memory_bytes for d in found.devices} == {196592 * MIB}
    assert [d.uuid for d in found.devices] == [g.uuid for g in gpus]


def test_amd_smi_on_an_mi300x_host_in_cpx() -> None:
    """Eight packages in CPX/NPS4 are 64 GPUs; each package's partitions share its UUID in
    amd-smi (it is made of the ASIC serial), so each is made unique by its partition id."""
    gpus, problem = amd_smi_host("cpx")
    assert problem == ""
    assert len(gpus) == 64
    assert {(g.compute_partition, g.memory_partition) for g in gpus} == {("cpx", "nps4")}
    assert [g.partition_id for g in gpus] == list(range(8)) * 8
    assert len({g.uuid for g in gpus}) == 8  # as amd-smi lists them
    found = detection_from_gpus(gpus, LIB)
    assert found.reason == ""
    assert {(d.device_type, d.partition_mode) for d in found.devices} == {
        ("amd.mi300x", "cpx-nps4")
    }
    assert {d.memory_bytes for d in found.devices} == {24574 * MIB}
    uuids = [d.uuid or "" for d in found.devices]
    assert len(set(uuids)) == 64
    assert uuids[:2] == [f"{gpus[0].uuid}/0", f"{gpus[0].uuid}/1"]


def test_rocm_smi_on_an_mi300x_host() -> None:
    gpus, problem = parse_rocm_smi(sample("rocm-smi-mi300x-spx.json"))
    assert problem == ""
    assert [(g.index, g.name, g.device_id) for g in gpus] == [
        (i, "AMD Instinct MI300X", "0x74a1") for i in range(8)
    ]
    assert {g.memory_bytes for g in gpus} == {206141652992}
    assert {g.driver for g in gpus} == {"6.8.5"}
    assert all(g.uuid and g.uuid.startswith("0x") for g in gpus)
    found = detection_from_gpus(gpus, LIB, "rocm-smi")
    assert {(d.device_type, d.partition_mode) for d in found.devices} == {
        ("amd.mi300x", "spx-nps1")
    }


def test_rocm_smi_reporting_the_whole_memory_for_each_partition() -> None:
    """rocm-smi of ROCm 6.3/6.4 shows each CPX partition with the package's 192 GiB: each is
    then reported with its equal share, which the partition's description recognises."""
    gpus, _ = parse_rocm_smi(sample("rocm-smi-mi300x-cpx.json"))
    assert len(gpus) == 64 and {g.memory_bytes for g in gpus} == {206141652992}
    found = detection_from_gpus(gpus, LIB, "rocm-smi")
    assert {(d.device_type, d.partition_mode) for d in found.devices} == {
        ("amd.mi300x", "cpx-nps1")
    }
    assert {d.memory_bytes for d in found.devices} == {206141652992 // 8}
    assert len({d.uuid for d in found.devices}) == 64


def test_rocm_smi_on_an_mi250x_host_finds_the_gcds() -> None:
    gpus, problem = parse_rocm_smi(sample("rocm-smi-mi250x.json"))
    assert problem == ""
    found = detection_from_gpus(gpus, LIB, "rocm-smi")
    assert [(d.device_type, d.index) for d in found.devices] == [
        ("amd.mi250x-gcd", i) for i in range(8)
    ]
    assert {d.memory_bytes for d in found.devices} == {68702699520}
    assert {d.partition_mode for d in found.devices} == {None}  # rocm-smi: not supported
    assert found.reason == ""


def test_a_name_no_description_matches_is_said() -> None:
    """An HPE MI250X whose VBIOS names it after its board: the PCI id alone claims nothing
    (0x7408's description also requires its product name)."""
    gpus, _ = parse_rocm_smi(sample("rocm-smi-mi250x-hpe.json"))
    assert [(g.name, g.device_id) for g in gpus] == [
        ("AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "0x7408")
    ]
    found = detection_from_gpus(gpus, LIB, "rocm-smi")
    assert found.devices == ()
    assert found.reason == (
        "no device description matches the AMD GPU 'AMD INSTINCT MI200 (MCM) OAM LC MBA HPE "
        "C2' (PCI device 0x7408); a description needs detection.pci device_ids and "
        "detection.product_names that match it"
    )


def test_garbage_and_warnings() -> None:
    gpus, problem = parse_amd_smi(sample("garbage-truncated.txt"))
    assert gpus == []
    assert problem == (
        "amd-smi printed no JSON list of GPUs (no complete JSON document: cut short, or not "
        "JSON); its output begins '{'"
    )
    _, problem = parse_rocm_smi("Segmentation fault\n")
    assert problem == (
        "rocm-smi printed no JSON object of cards (no complete JSON document: cut short, or not "
        "JSON); its output begins 'Segmentation fault'"
    )
    # A warning line before the document (amd-smi's missing render/video groups) is passed over.
    warned = "WARNING: User is missing the following required groups: render, video.\n"
    gpus, problem = parse_amd_smi(warned + sample("amd-smi-static-mi300x-spx.json"))
    assert problem == "" and len(gpus) == 8
    assert detection_from_gpus([], LIB).reason == "amd-smi lists no GPU"


def test_older_amd_smi_memory_text_and_missing_fields() -> None:
    text = (
        '[{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "device_id": "0x74a1"}, '
        '"vram": {"size": "196592 MB"}}, {"gpu": 1, "asic": "N/A", "vram": "N/A"}]'
    )
    gpus, problem = parse_amd_smi(text)
    assert problem == ""
    assert gpus == [
        AmdGpu(0, "AMD Instinct MI300X", "0x74a1", memory_bytes=196592 * MIB),
        AmdGpu(1, None),
    ]
    found = detection_from_gpus(gpus, LIB)
    # Without a partition mode the package is reported as is; without a name, nothing matches.
    assert [(d.device_type, d.partition_mode) for d in found.devices] == [("amd.mi300x", None)]
    assert "'(no name)' (PCI device unknown)" in found.reason


# -- running the tools --------------------------------------------------------------------------


def samples(answers: dict[tuple[str, ...], str]) -> dict[tuple[str, ...], Path]:
    """Each command's sample file, from its name."""
    return {command: SAMPLES / name for command, name in answers.items()}


def only_on_path(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    monkeypatch.setenv("PATH", str(directory))


SPX = {
    AMD_SMI_STATIC_COMMAND: "amd-smi-static-mi300x-spx.json",
    AMD_SMI_LIST_COMMAND: "amd-smi-list-mi300x-spx.json",
}


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_detect_runs_amd_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(monkeypatch, printing(tmp_path / "bin", samples(SPX)))
    found = detect(LIB)
    assert found.reason == ""
    assert [(d.device_type, d.partition_mode) for d in found.devices] == [
        ("amd.mi300x", "spx-nps1")
    ] * 8
    assert found == detection_from_gpus(amd_smi_host("spx")[0], LIB)


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_an_amd_smi_without_partition_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An amd-smi that refuses --partition is asked again without it; the UUIDs are left out
    where ``list`` fails."""
    answers = {AMD_SMI_STATIC_PLAIN_COMMAND: "amd-smi-static-mi300x-spx.json"}
    only_on_path(monkeypatch, printing(tmp_path / "bin", samples(answers)))
    found = detect(LIB)
    assert len(found.devices) == 8
    assert {(d.device_type, d.uuid) for d in found.devices} == {("amd.mi300x", None)}


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_rocm_smi_where_amd_smi_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = stand_in(tmp_path / "bin", "amd-smi", otherwise='echo "ERROR: no AMD GPUs"; exit 1')
    printing(bin_dir, samples({ROCM_SMI_COMMAND: "rocm-smi-mi250x.json"}))
    only_on_path(monkeypatch, bin_dir)
    found = detect(LIB)
    assert [d.device_type for d in found.devices] == ["amd.mi250x-gcd"] * 8


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_no_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(monkeypatch, tmp_path)
    assert detect(LIB) == Detection((), "neither amd-smi nor rocm-smi found: no ROCm on this host")


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_failing_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'echo "AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded" >&2; exit 3'
    only_on_path(monkeypatch, stand_in(tmp_path / "bin", "amd-smi", otherwise=body))
    assert detect(LIB) == Detection(
        (), "amd-smi failed with exit status 3: AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded"
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_hanging_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(amd_smi, "AMD_SMI_TIMEOUT_S", 1)
    bin_dir = stand_in(tmp_path / "bin", "amd-smi", otherwise=f"exec {SLEEP} 30")
    stand_in(bin_dir, "rocm-smi", otherwise=f"exec {SLEEP} 30")
    only_on_path(monkeypatch, bin_dir)
    assert detect(LIB) == Detection(
        (), "amd-smi did not answer within 1 s; rocm-smi did not answer within 1 s"
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_tool_printing_garbage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        AMD_SMI_STATIC_COMMAND: "garbage-truncated.txt",
        AMD_SMI_LIST_COMMAND: "garbage-truncated.txt",
    }
    only_on_path(monkeypatch, printing(tmp_path / "bin", samples(answers)))
    assert detect(LIB) == Detection(
        (),
        (
            "amd-smi printed no JSON list of GPUs (no complete JSON document: cut short, or not "
            "JSON); its output begins '{'"
        ),
    )


def test_detection_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def list(self, **kwargs: Any) -> Any:
            raise RuntimeError("the library broke")

    monkeypatch.setattr(amd_smi, "_which", lambda name: f"/opt/rocm/bin/{name}")
    monkeypatch.setattr(amd_smi, "_run", lambda exe, command: (sample(SPX[command]), ""))
    found = detect(Broken())
    assert found == Detection((), "AMD detection failed: RuntimeError: the library broke")


@POSIX_ONLY
def test_driver_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(amd_smi, "DRIVER_FILES", (str(tmp_path / "no-kfd"),))
    only_on_path(monkeypatch, tmp_path)
    assert amd_smi.driver_absent() == (
        "no AMD GPU driver on this host (no amd-smi or rocm-smi on PATH, no /dev/kfd)"
    )
    only_on_path(monkeypatch, stand_in(tmp_path / "bin", "rocm-smi"))
    assert amd_smi.driver_absent() is None
    only_on_path(monkeypatch, tmp_path)
    (tmp_path / "no-kfd").touch()
    assert amd_smi.driver_absent() is None


# -- present devices ----------------------------------------------------------------------------


def present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: Any) -> list[Any]:
    only_on_path(monkeypatch, printing(tmp_path / "bin", samples(answers)))
    return detected_through_plugin(monkeypatch, tmp_path, "amd_smi", "rocm")


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_mi300x_packages_in_spx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = present(tmp_path, monkeypatch, SPX)
    assert [(d.device_type, d.index, d.package) for d in mine] == [
        ("amd.mi300x", i, None) for i in range(8)
    ]
    assert sum(d.description.compute_units or 0 for d in mine) == 8 * 304


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_mi300x_xcds_in_cpx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        AMD_SMI_STATIC_COMMAND: "amd-smi-static-mi300x-cpx.json",
        AMD_SMI_LIST_COMMAND: "amd-smi-list-mi300x-cpx.json",
    }
    mine = present(tmp_path, monkeypatch, answers)
    assert [(d.device_type, d.index, d.package) for d in mine] == [
        ("amd.mi300x-xcd", i, "amd.mi300x") for i in range(64)
    ]
    assert sum(d.description.compute_units or 0 for d in mine) == 8 * 304  # not 64 x 304
    assert {d.memory_bytes for d in mine} == {24574 * MIB}


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_xcds_where_rocm_smi_reports_whole_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = present(tmp_path, monkeypatch, {ROCM_SMI_COMMAND: "rocm-smi-mi300x-cpx.json"})
    assert len(mine) == 64  # not 64 x 8
    assert {(d.device_type, d.package) for d in mine} == {("amd.mi300x-xcd", "amd.mi300x")}


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_mi250x_gcds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = present(tmp_path, monkeypatch, {ROCM_SMI_COMMAND: "rocm-smi-mi250x.json"})
    assert [(d.device_type, d.index) for d in mine] == [("amd.mi250x-gcd", i) for i in range(8)]
    assert {d.description.compute_units for d in mine} == {110}
    assert {d.memory_bytes for d in mine} == {68702699520}
    assert sum(d.description.memory_bytes or 0 for d in mine) == 8 * 64 * GIB


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_devices_say_why_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(monkeypatch, tmp_path)
    assert detected_through_plugin(monkeypatch, tmp_path, "amd_smi", "rocm") == []
    found = prism_core.hardware.present_devices()
    assert found.notes["rocm"] == "neither amd-smi nor rocm-smi found: no ROCm on this host"


def test_this_host() -> None:
    """Whatever this host has, detection answers."""
    found = detect(LIB)
    assert isinstance(found, Detection)
    assert found.devices or found.reason
    if which("amd-smi") is None and which("rocm-smi") is None:
        assert found.reason == "neither amd-smi nor rocm-smi found: no ROCm on this host"
