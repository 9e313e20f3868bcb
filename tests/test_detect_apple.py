"""Detection of the Apple silicon GPU (``prism_core.apple_silicon``): parsing recorded ``sysctl``
and ``system_profiler`` output (tests/data/host_tools/apple, sources in its README) on any host,
mapping it to the GPU description (never the chip's CPU description of the same name), and
running stand-in tools on ``PATH`` through a real subprocess with the platform set to macOS, up
to the device ``present_devices`` makes of it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from prism_core import apple_silicon
from prism_core.apple_silicon import (
    SYSCTL_COMMAND,
    SYSTEM_PROFILER_COMMAND,
    AppleChip,
    AppleGpu,
    detect,
    detection_from_macos,
    match_apple_gpu,
    parse_displays,
    parse_sysctl,
)
from prism_core.kernel.contract.backend import DetectedDevice, Detection
from prism_core.kernel.host import match_detected_device

from .conftest import detected_through_plugin, shipped_library
from .stand_ins import SLEEP, printing, stand_in

DATA = Path(__file__).parent / "data" / "host_tools" / "apple"
LIB = shipped_library()
GiB = 2**30
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="the stand-ins are shell scripts")


def sample(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# -- parsing ----------------------------------------------------------------------------------


def test_parse_sysctl() -> None:
    assert parse_sysctl(sample("sysctl-m4-max.txt")) == AppleChip("Apple M4 Max", 128 * GiB)
    assert parse_sysctl(sample("sysctl-m3-max.txt")) == AppleChip("Apple M3 Max", 64 * GiB)
    assert parse_sysctl("Apple M4 Max\n") == AppleChip("Apple M4 Max", None)
    assert parse_sysctl("Apple M4 Max\nlots\n") == AppleChip("Apple M4 Max", None)
    assert parse_sysctl("") == AppleChip(None, None)


def test_parse_displays() -> None:
    assert parse_displays(sample("system_profiler-m4-max.json")) == (
        [AppleGpu("Apple M4 Max", 40, True)],
        "",
    )
    assert parse_displays(sample("system_profiler-m3-max.json")) == (
        [AppleGpu("Apple M3 Max", 40, True)],
        "",
    )
    assert parse_displays(sample("system_profiler-intel-mac.json")) == (
        [
            AppleGpu("Intel UHD Graphics 630", None, False),
            AppleGpu("AMD Radeon Pro 5500M", None, False),
        ],
        "",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (sample("system_profiler-text.txt"), "system_profiler printed no JSON"),
        ("", "system_profiler printed no JSON"),
        ('{"SPDisplaysDataType": "text"}', "system_profiler printed JSON without an"),
        ("[]", "system_profiler printed JSON without an"),
    ],
)
def test_parse_displays_garbage(text: str, expected: str) -> None:
    gpus, problem = parse_displays(text)
    assert gpus == [] and problem.startswith(expected)


def test_entries_without_a_name_are_skipped() -> None:
    text = '{"SPDisplaysDataType": [{"sppci_bus": "x"}, 3, {"_name": "Apple M3 Max"}]}'
    assert parse_displays(text) == ([AppleGpu("Apple M3 Max", None, True)], "")


# -- mapping through the shipped library --------------------------------------------------------


def test_the_gpu_description_is_chosen_not_the_cpu_one() -> None:
    desc, note = match_apple_gpu("Apple M4 Max", 40, LIB)
    assert desc is not None and desc.device_type == "apple.m4-max-gpu" and note == ""
    assert desc.kind == "gpu"
    m3, _ = match_apple_gpu("Apple M3 Max", 40, LIB)
    assert m3 is not None and m3.device_type == "apple.m3-max-gpu"
    assert match_apple_gpu("Apple M9 Ultra", 80, LIB) == (None, "")


def test_the_kernel_s_match_takes_the_cpu_for_the_shared_name() -> None:
    """Why this module filters by kind: ``match_detected_device`` has no kind filter, and the
    CPU file of the M4 Max (the longer lineage) wins the chip's name.  This test records the
    kernel's behaviour; if the kernel learns a kind filter, it changes."""
    found = match_detected_device(LIB, product_name="Apple M4 Max")
    assert found is not None and found.device_type == "apple.m4-max-cpu"


def test_another_configuration_is_noted() -> None:
    desc, note = match_apple_gpu("Apple M4 Max", 32, LIB)
    assert desc is not None and desc.device_type == "apple.m4-max-gpu"
    assert note == (
        "the 32-core GPU of the Apple M4 Max is described by apple.m4-max-gpu (40 cores): no "
        "description of its 32-core configuration"
    )


def test_m4_max_from_its_outputs() -> None:
    found = detection_from_macos(
        sample("sysctl-m4-max.txt"), sample("system_profiler-m4-max.json"), LIB
    )
    assert found == Detection(
        (DetectedDevice("apple.m4-max-gpu", 0, "Apple M4 Max", memory_bytes=128 * GiB),), ""
    )


def test_m3_max_from_its_outputs() -> None:
    found = detection_from_macos(
        sample("sysctl-m3-max.txt"), sample("system_profiler-m3-max.json"), LIB
    )
    assert found == Detection(
        (DetectedDevice("apple.m3-max-gpu", 0, "Apple M3 Max", memory_bytes=64 * GiB),), ""
    )


def test_the_chip_names_the_gpu_when_system_profiler_fails() -> None:
    found = detection_from_macos(
        sample("sysctl-m4-max.txt"), sample("system_profiler-text.txt"), LIB
    )
    assert [d.device_type for d in found.devices] == ["apple.m4-max-gpu"]
    assert found.reason.startswith("system_profiler printed no JSON")
    alone = detection_from_macos(sample("sysctl-m3-max.txt"), None, LIB)
    assert [d.device_type for d in alone.devices] == ["apple.m3-max-gpu"]


def test_an_intel_mac_has_no_apple_gpu() -> None:
    found = detection_from_macos(
        sample("sysctl-intel-mac.txt"), sample("system_profiler-intel-mac.json"), LIB
    )
    assert found == Detection(
        (),
        "no Apple GPU here (system_profiler lists 'Intel UHD Graphics 630', 'AMD Radeon Pro "
        "5500M': an Intel Mac?)",
    )


def test_an_unknown_chip_is_named() -> None:
    text = '{"SPDisplaysDataType": [{"sppci_model": "Apple M9 Ultra", "sppci_cores": "80"}]}'
    found = detection_from_macos("Apple M9 Ultra\n", text, LIB)
    assert found.devices == ()
    assert "no Apple GPU description matches 'Apple M9 Ultra'" in found.reason
    assert "kind gpu" in found.reason


def test_nothing_readable() -> None:
    assert detection_from_macos(None, "garbage", LIB).devices == ()
    assert detection_from_macos("", None, LIB) == Detection(
        (), "neither sysctl nor system_profiler named an Apple chip"
    )


# -- running the tools --------------------------------------------------------------------------


@pytest.fixture
def mac(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """macOS as far as detection can tell: the platform set to darwin, an empty directory that
    is all of ``PATH``, and no system directory to fall back on."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", str(directory))
    monkeypatch.setattr(apple_silicon, "PLATFORM", "darwin")
    monkeypatch.setattr(apple_silicon, "SYSTEM_DIRS", ())
    return directory


def test_not_macos() -> None:
    assert detect(LIB, platform="linux") == Detection(
        (), "not macOS (the platform is 'linux'): no Apple GPU"
    )


@pytest.mark.skipif(sys.platform == "darwin", reason="this host is a Mac")
def test_this_host_is_not_a_mac() -> None:
    assert detect(LIB).reason.startswith("not macOS")


def test_no_tools(mac: Path) -> None:
    assert detect(LIB) == Detection(
        (), "sysctl not found on PATH; system_profiler not found on PATH"
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_tools_run(mac: Path) -> None:
    printing(
        mac,
        {
            SYSCTL_COMMAND: DATA / "sysctl-m4-max.txt",
            SYSTEM_PROFILER_COMMAND: DATA / "system_profiler-m4-max.json",
        },
    )
    assert detect(LIB) == Detection(
        (DetectedDevice("apple.m4-max-gpu", 0, "Apple M4 Max", memory_bytes=128 * GiB),), ""
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_the_platform_argument_overrides_the_module(mac: Path) -> None:
    printing(
        mac,
        {
            SYSCTL_COMMAND: DATA / "sysctl-m3-max.txt",
            SYSTEM_PROFILER_COMMAND: DATA / "system_profiler-m3-max.json",
        },
    )
    assert [d.device_type for d in detect(LIB, platform="darwin").devices] == ["apple.m3-max-gpu"]
    assert detect(LIB, platform="win32").devices == ()


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_a_failing_system_profiler(mac: Path) -> None:
    printing(mac, {SYSCTL_COMMAND: DATA / "sysctl-m4-max.txt"})
    body = "echo 'system_profiler: SPDisplaysDataType failed' >&2\nexit 1"
    stand_in(mac, "system_profiler", {SYSTEM_PROFILER_COMMAND: body})
    found = detect(LIB)
    assert [d.device_type for d in found.devices] == ["apple.m4-max-gpu"]
    assert found.reason == (
        "system_profiler failed with exit status 1: system_profiler: SPDisplaysDataType failed"
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_hanging_tools_time_out(mac: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(apple_silicon, "APPLE_TIMEOUT_S", 1)
    stand_in(mac, "sysctl", {SYSCTL_COMMAND: f"exec '{SLEEP}' 30"})
    stand_in(mac, "system_profiler", {SYSTEM_PROFILER_COMMAND: f"exec '{SLEEP}' 30"})
    assert detect(LIB) == Detection(
        (), "sysctl did not answer within 1 s; system_profiler did not answer within 1 s"
    )


@POSIX_ONLY
@pytest.mark.timeout(60)
def test_garbage(mac: Path) -> None:
    stand_in(mac, "sysctl", {SYSCTL_COMMAND: "echo 'sysctl: unknown oid'"})
    printing(mac, {SYSTEM_PROFILER_COMMAND: DATA / "system_profiler-text.txt"})
    found = detect(LIB)
    assert found.devices == ()
    assert found.reason.startswith("system_profiler printed no JSON")
    assert "no Apple GPU here (the chip is 'sysctl: unknown oid')" in found.reason


def test_detection_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def list(self, **kwargs: Any) -> Any:
            raise RuntimeError("the library broke")

    monkeypatch.setattr(apple_silicon, "_run", lambda command: ("Apple M4 Max\n", ""))
    assert detect(Broken(), platform="darwin") == Detection(
        (), "Apple GPU detection failed: RuntimeError: the library broke"
    )


# -- what present_devices makes of it ------------------------------------------------------------


@POSIX_ONLY
@pytest.mark.timeout(120)
def test_present_device_is_the_gpu(
    mac: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    printing(
        mac,
        {
            SYSCTL_COMMAND: DATA / "sysctl-m4-max.txt",
            SYSTEM_PROFILER_COMMAND: DATA / "system_profiler-m4-max.json",
        },
    )
    mine = detected_through_plugin(monkeypatch, tmp_path, "apple_silicon", "metal")
    assert [(d.device_type, d.index, d.name, d.memory_bytes) for d in mine] == [
        ("apple.m4-max-gpu", 0, "Apple M4 Max", 128 * GiB)
    ]
    assert mine[0].description.kind == "gpu"
    assert mine[0].description.compute_units == 40
