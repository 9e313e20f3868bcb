"""Detection of Intel GPUs (``prism_core.intel_xpu``): parsing recorded ``xpu-smi`` and
``sycl-ls`` output (tests/data/host_tools/intel, sources in its README), mapping it through the
shipped device library, and running stand-in tools on ``PATH`` through a real subprocess, up to
the devices ``present_devices`` makes of them: a Max 1550 is two stacks in FLAT mode and one
card in COMPOSITE mode."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

import prism_core
from prism_core import intel_xpu
from prism_core.intel_xpu import (
    HIERARCHY_VARIABLE,
    SYCL_LS_COMMAND,
    XPU_SMI_COMMAND,
    IntelGpu,
    detect,
    detection_from_sycl_ls,
    detection_from_xpu_smi,
    hierarchy_mode,
    match_intel_gpu,
    parse_sycl_ls,
    parse_xpu_smi,
)
from prism_core.kernel.contract.backend import DetectedDevice, Detection

from .conftest import detected_through_plugin, shipped_library
from .stand_ins import SLEEP, printing, stand_in

DATA = Path(__file__).parent / "data" / "host_tools" / "intel"
LIB = shipped_library()
MAX_1550 = "Intel(R) Data Center GPU Max 1550"
MAX_1100 = "Intel(R) Data Center GPU Max 1100"
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="the stand-ins are shell scripts")


def sample(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# -- parsing ----------------------------------------------------------------------------------


def test_parse_xpu_smi_max_1100() -> None:
    gpus, problem = parse_xpu_smi(sample("xpu-smi-discovery-max1100.json"))
    assert problem == ""
    assert gpus == [
        IntelGpu(0, MAX_1100, "0x0bda", "00000000-0000-0029-0000-002f0bda8086"),
        IntelGpu(1, MAX_1100, "0x0bda", "00000000-0000-009a-0000-002f0bda8086"),
    ]


def test_parse_xpu_smi_placeholder_names_keep_their_pci_ids() -> None:
    gpus, problem = parse_xpu_smi(sample("xpu-smi-discovery-generic-name.json"))
    assert problem == ""
    assert [(g.index, g.name, g.pci_device_id) for g in gpus] == [
        (0, "Intel(R) Graphics [0x0bd5]", "0x0bd5"),
        (1, "Intel(R) Graphics [0x020a]", "0x020a"),
    ]


def test_parse_xpu_smi_keeps_physical_functions_only_where_listed() -> None:
    text = (
        '{"device_list": ['
        '{"device_id": 0, "device_name": "X", "device_function_type": "physical"},'
        '{"device_id": 1, "device_name": "X", "device_function_type": "virtual"},'
        '{"device_id": 2, "device_name": "", "device_type": "GPU"},'
        '{"device_id": 3, "device_name": "Y", "device_type": "NPU"}, 7]}'
    )
    gpus, _ = parse_xpu_smi(text)
    assert [g.index for g in gpus] == [0]
    only_virtual = (
        '{"device_list": [{"device_id": 4, "device_name": "X", "device_function_type": "virtual"}]}'
    )
    assert [g.index for g in parse_xpu_smi(only_virtual)[0]] == [4]  # a VM sees its VFs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No GPU devices found.\n", "xpu-smi printed no JSON"),
        ("", "xpu-smi printed no JSON (expected {\"device_list\": [...]}): 'nothing'"),
        ('{"devices": []}', "xpu-smi printed JSON without a device_list"),
        ("[1, 2]", "xpu-smi printed JSON without a device_list"),
    ],
)
def test_parse_xpu_smi_garbage(text: str, expected: str) -> None:
    gpus, problem = parse_xpu_smi(text)
    assert gpus == [] and problem.startswith(expected)


def test_parse_sycl_ls_current_format_takes_level_zero_lines() -> None:
    gpus, unreadable = parse_sycl_ls(sample("sycl-ls-flat-max1550.txt"))
    assert unreadable == []
    assert gpus == [
        IntelGpu(0, MAX_1550, backend="level_zero", driver="1.3.29735"),
        IntelGpu(1, MAX_1550, backend="level_zero", driver="1.3.29735"),
    ]


def test_parse_sycl_ls_2023_format() -> None:
    gpus, unreadable = parse_sycl_ls(sample("sycl-ls-composite-max1550.txt"))
    assert unreadable == []
    assert gpus == [IntelGpu(0, MAX_1550, backend="level_zero", driver="1.3.25733")]
    three, _ = parse_sycl_ls(sample("sycl-ls-composite-three-cards.txt"))
    assert [(g.index, g.name, g.backend) for g in three] == [
        (i, MAX_1550, "level_zero") for i in range(3)
    ]


def test_parse_sycl_ls_2025_format_strips_the_ip_version() -> None:
    gpus, _ = parse_sycl_ls(sample("sycl-ls-flat-two-cards.txt"))
    assert [(g.index, g.name, g.driver) for g in gpus] == [
        (i, MAX_1550, "1.6.33578+51") for i in range(4)
    ]


def test_parse_sycl_ls_falls_back_to_opencl_and_skips_other_devices() -> None:
    gpus, _ = parse_sycl_ls(sample("sycl-ls-arc-a770-opencl-only.txt"))
    assert gpus == [
        IntelGpu(1, "Intel(R) Arc(TM) A770 Graphics", backend="opencl", driver="23.17.26241.33")
    ]
    assert parse_sycl_ls(sample("sycl-ls-no-gpu.txt")) == ([], [])


def test_parse_sycl_ls_placeholder_name_and_broken_lines() -> None:
    text = (
        "Warning: ONEAPI_DEVICE_SELECTOR environment variable is set to level_zero:*.\n"
        "[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Graphics [0x0bd5] 1.3 "
        "[1.3.26918]\n"
        "[level_zero:gpu] half a line\n"
    )
    gpus, unreadable = parse_sycl_ls(text)
    assert gpus == [
        IntelGpu(
            0, "Intel(R) Graphics [0x0bd5]", "0x0bd5", backend="level_zero", driver="1.3.26918"
        )
    ]
    assert unreadable == ["[level_zero:gpu] half a line"]


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, "flat"),
        ("FLAT", "flat"),
        ("COMPOSITE", "composite"),
        (" composite", "composite"),
        ("COMBINED", "flat"),
        ("nonsense", "flat"),
    ],
)
def test_hierarchy_mode(value: str | None, mode: str) -> None:
    env = {} if value is None else {HIERARCHY_VARIABLE: value}
    assert hierarchy_mode(env) == mode


# -- mapping through the shipped library --------------------------------------------------------


def test_names_and_pci_ids_map_to_descriptions() -> None:
    def kind(name: str, pci: str | None) -> str | None:
        found = match_intel_gpu(name, pci, LIB)
        return None if found is None else found.device_type

    assert kind(MAX_1550, None) == "intel.max-1550"
    assert kind(MAX_1550, "0x0bd5") == "intel.max-1550"
    assert kind(MAX_1100, "0x0bda") == "intel.max-1100"
    assert kind("intel(r) data center gpu max 1100", None) == "intel.max-1100"  # case ignored
    assert kind("Intel(R) Graphics [0x0bd5]", "0x0bd5") == "intel.max-1550"  # by PCI id alone
    assert kind("Intel(R) Graphics [0x0bda]", "0x0bda") == "intel.max-1100"
    assert kind(MAX_1100, "0x0bd5") is None  # a listed id that differs rules the file out
    assert kind(f"{MAX_1550} (engineering sample)", None) is None  # the whole name must match
    assert kind("Intel(R) Graphics [0x020a]", "0x020a") is None  # no description of it
    # A real name is never claimed by PCI id alone when the file names its products.
    assert kind("Intel(R) Arc(TM) A770 Graphics", "0x0bd5") is None


def test_xpu_smi_cards_in_flat_and_composite_mode() -> None:
    text = sample("xpu-smi-discovery-max1550.json")
    flat = detection_from_xpu_smi(text, LIB, mode="flat")
    assert flat == Detection(
        (
            DetectedDevice(
                "intel.max-1550",
                0,
                MAX_1550,
                "00000000-0000-0018-0000-002f0bd58086",
                partition_mode="flat",
            ),
            DetectedDevice(
                "intel.max-1550",
                1,
                MAX_1550,
                "00000000-0000-0042-0000-002f0bd58086",
                partition_mode="flat",
            ),
        ),
        "",
    )
    composite = detection_from_xpu_smi(text, LIB, mode="composite")
    assert [d.partition_mode for d in composite.devices] == ["composite", "composite"]


def test_a_card_without_partitions_has_no_mode() -> None:
    found = detection_from_xpu_smi(sample("xpu-smi-discovery-max1100.json"), LIB, mode="flat")
    assert [(d.device_type, d.index, d.partition_mode) for d in found.devices] == [
        ("intel.max-1100", 0, None),
        ("intel.max-1100", 1, None),
    ]


def test_xpu_smi_unknown_devices_are_named() -> None:
    found = detection_from_xpu_smi(sample("xpu-smi-discovery-generic-name.json"), LIB)
    assert [d.device_type for d in found.devices] == ["intel.max-1550"]
    assert "'Intel(R) Graphics [0x020a]'" in found.reason
    assert "detection.product_names" in found.reason
    assert detection_from_xpu_smi('{"device_list": []}', LIB) == Detection(
        (), "xpu-smi lists no GPU"
    )


def test_sycl_ls_flat_stacks_are_grouped_into_cards() -> None:
    one = detection_from_sycl_ls(sample("sycl-ls-flat-max1550.txt"), LIB, mode="flat")
    assert one == Detection(
        (DetectedDevice("intel.max-1550", 0, MAX_1550, partition_mode="flat", driver="1.3.29735"),),
        "",
    )
    two = detection_from_sycl_ls(sample("sycl-ls-flat-two-cards.txt"), LIB, mode="flat")
    assert [(d.device_type, d.index, d.partition_mode) for d in two.devices] == [
        ("intel.max-1550", 0, "flat"),
        ("intel.max-1550", 1, "flat"),
    ]


def test_sycl_ls_composite_lists_cards() -> None:
    found = detection_from_sycl_ls(sample("sycl-ls-composite-three-cards.txt"), LIB, "composite")
    assert [(d.device_type, d.index, d.partition_mode) for d in found.devices] == [
        ("intel.max-1550", i, "composite") for i in range(3)
    ]
    assert found.reason == ""


def test_sycl_ls_stacks_that_make_no_whole_card_are_stacks() -> None:
    found = detection_from_sycl_ls(sample("sycl-ls-composite-three-cards.txt"), LIB, mode="flat")
    assert [(d.device_type, d.index, d.partition_mode) for d in found.devices] == [
        ("intel.max-1550-stack", i, None) for i in range(3)
    ]
    assert "lists 3 stacks of intel.max-1550 in flat mode" in found.reason
    assert "reported as intel.max-1550-stack" in found.reason


def test_sycl_ls_without_gpus_says_so() -> None:
    found = detection_from_sycl_ls(sample("sycl-ls-no-gpu.txt"), LIB)
    assert found.devices == ()
    assert found.reason.startswith("sycl-ls lists no GPU (it printed '[opencl:cpu][opencl:0]")
    arc = detection_from_sycl_ls(sample("sycl-ls-arc-a770-opencl-only.txt"), LIB)
    assert arc.devices == ()
    assert "'Intel(R) Arc(TM) A770 Graphics'" in arc.reason
    assert detection_from_sycl_ls("", LIB) == Detection((), "sycl-ls lists no GPU")


# -- running the tools --------------------------------------------------------------------------


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory that is all of ``PATH``."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", str(directory))
    monkeypatch.delenv(HIERARCHY_VARIABLE, raising=False)
    return directory


def test_no_tools(bin_dir: Path) -> None:
    assert detect(LIB) == Detection(
        (),
        "neither xpu-smi (Intel XPU Manager) nor sycl-ls (oneAPI) is on PATH: no Intel GPU "
        "tools on this host",
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_xpu_smi_runs(bin_dir: Path) -> None:
    printing(bin_dir, {XPU_SMI_COMMAND: DATA / "xpu-smi-discovery-max1550.json"})
    found = detect(LIB)
    assert [(d.device_type, d.partition_mode) for d in found.devices] == [
        ("intel.max-1550", "flat")
    ] * 2
    assert found.reason == ""


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_sycl_ls_answers_where_xpu_smi_is_missing(bin_dir: Path) -> None:
    printing(bin_dir, {SYCL_LS_COMMAND: DATA / "sycl-ls-flat-max1550.txt"})
    found = detect(LIB)
    assert [(d.device_type, d.partition_mode) for d in found.devices] == [
        ("intel.max-1550", "flat")
    ]
    assert found.reason == "xpu-smi not found on PATH"


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_sycl_ls_answers_where_xpu_smi_fails(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HIERARCHY_VARIABLE, "COMPOSITE")  # as on the host of the capture
    stand_in(
        bin_dir, "xpu-smi", {XPU_SMI_COMMAND: "echo 'Error: Failed to connect to XPUM' >&2\nexit 3"}
    )
    printing(bin_dir, {SYCL_LS_COMMAND: DATA / "sycl-ls-composite-max1550.txt"})
    found = detect(LIB)
    assert [(d.device_type, d.partition_mode) for d in found.devices] == [
        ("intel.max-1550", "composite")
    ]
    assert found.reason == "xpu-smi failed with exit status 3: Error: Failed to connect to XPUM"


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_both_tools_fail(bin_dir: Path) -> None:
    printing(bin_dir, {XPU_SMI_COMMAND: DATA / "xpu-smi-no-device.txt"})
    stand_in(bin_dir, "sycl-ls", {SYCL_LS_COMMAND: "exit 1"})
    assert detect(LIB) == Detection(
        (),
        "xpu-smi printed no JSON (expected {\"device_list\": [...]}): 'No GPU devices found.'; "
        "sycl-ls failed with exit status 1",
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_hanging_tool_times_out(bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intel_xpu, "XPU_TIMEOUT_S", 1)
    stand_in(bin_dir, "xpu-smi", {XPU_SMI_COMMAND: f"exec '{SLEEP}' 30"})
    stand_in(bin_dir, "sycl-ls", {SYCL_LS_COMMAND: "printf 'garbage\\n'"})
    assert detect(LIB) == Detection(
        (),
        "xpu-smi did not answer within 1 s; sycl-ls lists no GPU (it printed 'garbage')",
    )


def test_detection_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def list(self, **kwargs: Any) -> Any:
            raise RuntimeError("the library broke")

    monkeypatch.setattr(intel_xpu, "_which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(
        intel_xpu, "run_xpu_smi", lambda exe: (sample("xpu-smi-discovery-max1550.json"), "")
    )
    assert detect(Broken()) == Detection(
        (), "Intel GPU detection failed: RuntimeError: the library broke"
    )


# -- what present_devices makes of it ------------------------------------------------------------


def present(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    return detected_through_plugin(monkeypatch, tmp_path, "intel_xpu", "xpu")


@POSIX_ONLY
@pytest.mark.timeout(120)
@pytest.mark.parametrize("hierarchy", [None, "FLAT", "COMBINED"])
def test_present_max_1550s_in_flat_mode_are_their_stacks(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hierarchy: str | None
) -> None:
    if hierarchy is not None:
        monkeypatch.setenv(HIERARCHY_VARIABLE, hierarchy)
    printing(bin_dir, {XPU_SMI_COMMAND: DATA / "xpu-smi-discovery-max1550.json"})
    mine = present(monkeypatch, tmp_path)
    assert [(d.device_type, d.index, d.package, d.partition) for d in mine] == [
        ("intel.max-1550-stack", 0, "intel.max-1550", 0),
        ("intel.max-1550-stack", 1, "intel.max-1550", 1),
        ("intel.max-1550-stack", 2, "intel.max-1550", 0),
        ("intel.max-1550-stack", 3, "intel.max-1550", 1),
    ]
    assert sum(d.description.compute_units or 0 for d in mine) == 2 * 128  # not 4 x 128
    assert mine[0].uuid == "00000000-0000-0018-0000-002f0bd58086"


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_max_1550s_in_composite_mode_are_cards(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HIERARCHY_VARIABLE, "COMPOSITE")
    printing(bin_dir, {XPU_SMI_COMMAND: DATA / "xpu-smi-discovery-max1550.json"})
    mine = present(monkeypatch, tmp_path)
    assert [(d.device_type, d.index, d.package) for d in mine] == [
        ("intel.max-1550", 0, None),
        ("intel.max-1550", 1, None),
    ]
    assert mine[0].description.compute_units == 128


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_sycl_ls_stacks(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    printing(bin_dir, {SYCL_LS_COMMAND: DATA / "sycl-ls-flat-max1550.txt"})
    mine = present(monkeypatch, tmp_path)
    assert [(d.device_type, d.index, d.package, d.driver) for d in mine] == [
        ("intel.max-1550-stack", 0, "intel.max-1550", "1.3.29735"),
        ("intel.max-1550-stack", 1, "intel.max-1550", "1.3.29735"),
    ]


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_max_1100s(bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    printing(bin_dir, {XPU_SMI_COMMAND: DATA / "xpu-smi-discovery-max1100.json"})
    mine = present(monkeypatch, tmp_path)
    assert [(d.device_type, d.index, d.package) for d in mine] == [
        ("intel.max-1100", 0, None),
        ("intel.max-1100", 1, None),
    ]
    assert mine[0].description.memory_bytes == 48 * 2**30


@pytest.mark.timeout(120)
def test_present_devices_note_why_there_is_none(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert detected_through_plugin(monkeypatch, tmp_path, "intel_xpu", "xpu") == []
    found = prism_core.hardware.present_devices()
    assert found.notes["xpu"].startswith("neither xpu-smi (Intel XPU Manager) nor sycl-ls")


def test_this_host() -> None:
    """Whatever this host has, detection answers with devices or a reason; without either tool
    it says so."""
    found = detect(LIB)
    assert isinstance(found, Detection)
    assert found.devices or found.reason
    if shutil.which("xpu-smi") is None and shutil.which("sycl-ls") is None:
        assert "no Intel GPU tools" in found.reason
