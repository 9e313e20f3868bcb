"""Partition modes with several dimensions and unequal parts (format 2 of the device files), and
how one device a driver shows maps to the partition it is.

No GPU is needed, and none is faked by mocking Prism: what a driver reports is simulated from
the shipped descriptions themselves. ROCm's eight devices of an MI300X in CPX mode are made from
``amd.mi300x``'s partitions and ``amd.mi300x-xcd``'s memory; ``nvidia-smi``'s MIG listing from
``nvidia.h100-sxm``'s ``all-balanced`` parts and each MIG profile's ``mig_profile`` attribute.
They reach Prism as a driver's report does: through a real plugin's ``prism_detect_devices``
and, for ``nvidia-smi``, a stand-in command on ``PATH`` that ``prism_core.nvidia_smi`` runs.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import prism_core
from prism_core.kernel.description.device import DeviceDescription, Partition, PartitionPart
from prism_core.kernel.description.library import DeviceLibrary, SearchEntry
from prism_core.kernel.host import match_detected_device, software_devices
from prism_core.kernel.partition_match import match_partition
from prism_core.nvidia_smi import (
    NVIDIA_SMI_COMMAND,
    NVIDIA_SMI_LIST_COMMAND,
    SmiMigDevice,
    detection_from_smi,
    parse_mig_listing,
)

from .conftest import HARDWARE, SEED, problems_of, put_distribution_on_path, shipped_library

GiB = 2**30
LIB = shipped_library()
PACKAGES = [d for d in LIB.list() if d.partitions]
WriteYaml = Callable[[str, str], Path]


@pytest.fixture(scope="module")
def lib() -> DeviceLibrary:
    assert LIB.problems == []
    return LIB


# -- the schema -------------------------------------------------------------------------------

FORMAT_2 = """\
format_version: 2
device_type: x.package
partitions:
  - mode: whole
    dimensions: {compute: one, memory: one}
    device_type: x.package
    count: 1
  - mode: mixed
    dimensions: {compute: split, memory: one}
    parts:
      - {device_type: x.big, count: 1}
      - {device_type: x.small, count: 2, host_link: false, product_names: ['X small .*']}
"""


def test_format_2_partition_entries_are_accepted() -> None:
    assert problems_of(FORMAT_2) == []


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            "{mode: m, device_type: x.die, count: 2, parts: [{device_type: x.die, count: 2}]}",
            "d.yaml:4:45: $.partitions[0].parts: parts cannot be given together with device_type "
            "and count; give one or the other",
        ),
        (
            "{mode: m, count: 2, parts: [{device_type: x.die, count: 2}]}",
            "d.yaml:4:25: $.partitions[0].parts: count and parts cannot be given together; give "
            "one of them",
        ),
        (
            "{mode: m}",
            "d.yaml:4:5: $.partitions[0]: needs the keys device_type and count, or parts",
        ),
        (
            "{mode: m, parts: [{device_type: x.die}]}",
            "d.yaml:4:23: $.partitions[0].parts[0]: missing required key 'count'",
        ),
    ],
)
def test_an_entry_gives_device_type_and_count_or_parts(entry: str, expected: str) -> None:
    assert problems_of(f"format_version: 2\ndevice_type: x.y\npartitions:\n  - {entry}\n") == [
        expected
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [("dimensions", "{compute: cpx}"), ("parts", "[{device_type: x.die, count: 2}]")],
)
def test_dimensions_and_parts_are_keys_of_format_2(key: str, value: str) -> None:
    extra = "" if key == "parts" else "\n    device_type: x.die\n    count: 2"
    head = "format_version: 1\ndevice_type: x.y\npartitions:\n  - mode: m\n"
    text = f"{head}    {key}: {value}{extra}\n"
    (found,) = problems_of(text)
    assert found.startswith(f"d.yaml:5:5: $.partitions[0].{key}: {key} is a key of format 2")
    assert "format_version: 2" in found
    assert problems_of(text.replace("format_version: 1", "format_version: 2")) == []


def test_dimension_values_are_free_but_modes_and_their_dimensions_are_unique() -> None:
    # Values are the vendor's words, not a vocabulary of Prism's.
    assert problems_of(FORMAT_2.replace("compute: split", "compute: zpx")) == []
    twice = FORMAT_2.replace("mode: mixed", "mode: whole")
    assert problems_of(twice) == [
        "d.yaml:8:11: $.partitions[1].mode: partitions has two entries with mode 'whole' (the "
        "first at line 4); give each mode one entry"
    ]
    same = FORMAT_2.replace("compute: split", "compute: one")
    assert problems_of(same) == [
        "d.yaml:9:17: $.partitions[1].dimensions: partitions has two entries with dimensions "
        "{'compute': 'one', 'memory': 'one'} (the first at line 5); the dimensions of a mode "
        "tell it from the others"
    ]


def test_a_part_s_product_names_must_compile() -> None:
    (found,) = problems_of(FORMAT_2.replace("'X small .*'", "'X small ('"))
    assert found.startswith("d.yaml:12:")
    assert "$.partitions[1].parts[1].product_names[0]: 'X small (' is not a valid regular" in found


def test_format_1_partitions_keep_working(lib: DeviceLibrary) -> None:
    # An entry of format 1 is one part; the positional constructor of format 1 still works.
    flat = Partition("flat", "x.die", 2, "two dies")
    assert flat.parts == (PartitionPart("x.die", 2),) and flat.device_types == ("x.die",) * 2
    assert flat.dimensions == {}
    for device_type, mode, part in [
        ("amd.mi250x", "default", "amd.mi250x-gcd"),
        ("intel.max-1550", "flat", "intel.max-1550-stack"),
        ("aws.trainium2", "lnc1", "aws.trainium2-lnc1"),
    ]:
        package = lib.get(device_type)
        assert package.data.get("format_version", 1) in (1, 2)
        found = package.partition(mode)
        assert found is not None and found.device_type == part
        assert [p.device_type for p in found.parts] == [part]
    (report,) = prism_core.hardware.validate_paths([SEED])
    assert report.problems == []


# -- selecting a mode ---------------------------------------------------------------------------


def test_a_mode_is_selected_by_its_dimensions(lib: DeviceLibrary) -> None:
    mi300x = lib.get("amd.mi300x")
    cpx4 = mi300x.partition(compute="cpx", memory="nps4")
    assert cpx4 is not None and cpx4.mode == "cpx-nps4"
    assert dict(cpx4.dimensions) == {"compute": "cpx", "memory": "nps4"}
    assert cpx4.device_type == "amd.mi300x-xcd" and cpx4.count == 8
    assert mi300x.partition("cpx-nps4", compute="cpx") is cpx4
    default = mi300x.partition()
    assert default is not None and default.mode == "spx-nps1"
    spx = mi300x.partition(compute="spx")  # one memory mode goes with SPX
    assert spx is default
    with pytest.raises(
        LookupError, match=r"2 partition modes with compute='cpx': cpx-nps1, cpx-nps4"
    ):
        mi300x.partition(compute="cpx")
    with pytest.raises(LookupError, match=r"no partition mode with compute='dpx', memory='nps4'"):
        mi300x.partition(compute="dpx", memory="nps4")
    with pytest.raises(
        LookupError, match=r"no partition dimension 'colour'; its dimensions: compute"
    ):
        mi300x.partition(colour="red")
    with pytest.raises(LookupError, match=r"has no partition mode 'cpx'; its modes: spx-nps1"):
        mi300x.partition("cpx")
    with pytest.raises(LookupError, match="software sees it as one device"):
        lib.get("amd.mi250x-gcd").partition(compute="cpx")
    with pytest.raises(LookupError, match="its dimensions: none"):
        lib.get("nvidia.h100-sxm").partition(compute="cpx")


def test_the_mi300x_modes_are_the_driver_s_combinations(lib: DeviceLibrary) -> None:
    modes = {p.mode: dict(p.dimensions) for p in lib.get("amd.mi300x").partitions}
    assert modes == {
        f"{c}-{m}": {"compute": c, "memory": m}
        for c, m in [
            ("spx", "nps1"),
            ("dpx", "nps1"),
            ("qpx", "nps1"),
            ("qpx", "nps4"),
            ("cpx", "nps1"),
            ("cpx", "nps4"),
        ]
    }


# -- every partition resolves and adds up ------------------------------------------------------


@pytest.mark.parametrize("package", PACKAGES, ids=lambda d: d.device_type)
def test_every_part_resolves_in_the_shipped_library(
    lib: DeviceLibrary, package: DeviceDescription
) -> None:
    for mode in package.partitions:
        seen = software_devices(package, lib, mode=mode.mode)
        assert [d.device_type for d in seen] == list(mode.device_types)
        assert len(seen) == mode.count == sum(p.count for p in mode.parts)
        for device in seen:
            assert not device.abstract
            assert device.device_type == package.device_type or not device.partitions
        # No mode shows more than the package has (MIG layouts leave SMs unused).
        assert sum(d.compute_units or 0 for d in seen) <= (package.compute_units or 0)
        memory = [d.memory_level("global") for d in seen]
        if all(m is not None and m.scope == "device" for m in memory):
            assert sum(d.memory_bytes or 0 for d in seen) <= (package.memory_bytes or 0)
        for dtype, peak in package.peak_tflops.items():
            assert sum(d.peak(dtype) or 0 for d in seen) <= peak * 1.001, (mode.mode, dtype)


def test_an_mi300x_xcd_is_an_eighth_of_the_package(lib: DeviceLibrary) -> None:
    package = prism_core.hardware.get_device("amd.mi300x")
    xcd = prism_core.hardware.get_device("amd.mi300x-xcd")
    assert xcd.compute_units == 38 and package.compute_units == 8 * 38
    assert xcd.memory_bytes == 24 * GiB and package.memory_bytes == 192 * GiB
    for dtype, peak in package.peak_tflops.items():
        assert xcd.peak(dtype) == pytest.approx(peak / 8, rel=1e-5), dtype
    for unit in ("matrix", "vector"):
        assert xcd.peak_for("fp64", unit) == pytest.approx(package.peak_for("fp64", unit) / 8)
    for mode in ("qpx-nps1", "dpx-nps1", "cpx-nps4"):
        seen = software_devices(package, lib, mode=mode)
        assert sum(d.compute_units or 0 for d in seen) == 304
        assert sum(d.memory_bytes or 0 for d in seen) == 192 * GiB


def test_mig_layouts_of_an_h100(lib: DeviceLibrary) -> None:
    h100 = lib.get("nvidia.h100-sxm")
    default = h100.partition()
    assert default is not None and default.mode == "all-disabled"
    assert software_devices(h100, lib) == (h100,)
    balanced = h100.partition("all-balanced")
    assert balanced is not None and balanced.device_type is None and balanced.count == 4
    seen = software_devices(h100, lib, mode="all-balanced")
    assert [d.attribute("mig_profile") for d in seen] == [
        "3g.40gb",
        "2g.20gb",
        "1g.10gb",
        "1g.10gb",
    ]
    assert [d.compute_units for d in seen] == [60, 32, 16, 16]
    sevens = software_devices(h100, lib, mode="all-1g.10gb")
    assert len(sevens) == 7 and sum(d.compute_units or 0 for d in sevens) == 112  # of 132
    for mode in h100.partitions:
        for profile in {lib.get(t) for t in mode.device_types} - {h100}:
            share = (profile.compute_units or 0) / 132
            assert profile.peak("bf16") == pytest.approx(989.4 * share, rel=1e-4)
            assert profile.peak_for("fp64", "vector") == pytest.approx(34 * share, rel=1e-4)


def test_an_n300_is_an_l_chip_on_pcie_and_an_r_chip_behind_it(lib: DeviceLibrary) -> None:
    card = lib.get("tenstorrent.wormhole-n300")
    mode = card.partition()
    assert mode is not None and mode.device_type == "tenstorrent.wormhole-n300-chip"
    left, right = mode.parts
    assert (left.count, left.host_link, left.product_names) == (1, True, ("n300 L",))
    assert (right.count, right.host_link, right.product_names) == (1, False, ("n300 R",))
    for name, host_link in (("n300 L", True), ("n300 R", False)):
        found = match_partition(card, lib, name=name)
        assert found is not None and found.part.host_link is host_link
        assert found.description.device_type == "tenstorrent.wormhole-n300-chip"


def test_a_part_that_is_not_in_the_library_is_located(
    tmp_path: Path, write_yaml: WriteYaml
) -> None:
    write_yaml("d/die.yaml", "device_type: lab.die\nkind: gpu\ncompute_units: 4\n")
    write_yaml(
        "d/module.yaml",
        """\
        format_version: 2
        device_type: lab.module
        kind: gpu
        partitions:
          - mode: split
            parts:
              - {device_type: lab.die, count: 1}
              - {device_type: lab.dye, count: 1}
        """,
    )
    lib = DeviceLibrary([SearchEntry(tmp_path / "d", "user")], use_cache=False)
    (problem,) = lib.problems
    assert problem.json_path == "$.partitions[0].parts[1].device_type"
    assert (problem.line, problem.column) == (8, 10)
    assert "partition device type 'lab.dye' is not defined" in problem.message
    assert "did you mean 'lab.die'" in problem.message
    assert "lab.module" not in lib and "lab.die" in lib


# -- what a driver reports of one device ---------------------------------------------------------


def test_match_partition_by_what_a_driver_reports(lib: DeviceLibrary) -> None:
    mi300x = lib.get("amd.mi300x")
    xcd = lib.get("amd.mi300x-xcd")
    assert xcd.memory_bytes is not None
    by_units = match_partition(mi300x, lib, name="AMD Instinct MI300X", compute_units=38)
    assert by_units is not None and by_units.description is xcd and not by_units.whole
    assert by_units.modes == ("cpx-nps1", "cpx-nps4")  # a device does not tell the memory mode
    assert by_units.evidence == ("compute_units",)  # the XCD has no name of its own
    # ROCm reports a little less than the size; what it reports of a whole MI300X is the package.
    by_memory = match_partition(mi300x, lib, memory_bytes=xcd.memory_bytes - 512 * 2**20)
    assert by_memory is not None and by_memory.description is xcd
    whole = match_partition(mi300x, lib, name="AMD Instinct MI300X", memory_bytes=191 * GiB)
    assert whole is not None and whole.whole and whole.modes == ("spx-nps1",)
    quarter = match_partition(mi300x, lib, memory_bytes=48 * GiB, memory="nps4")
    assert quarter is not None and quarter.description.device_type == "amd.mi300x-qpx"
    assert quarter.modes == ("qpx-nps4",)
    only = match_partition(mi300x, lib, compute_units=38, mode="cpx-nps4")
    assert only is not None and only.modes == ("cpx-nps4",)
    # Facts that contradict every candidate, or no facts at all, identify nothing.
    assert match_partition(mi300x, lib, compute_units=38, memory_bytes=48 * GiB) is None
    assert match_partition(mi300x, lib) is None
    assert match_partition(lib.get("amd.mi250x-gcd"), lib, compute_units=110) is None


def test_a_detected_pci_function_maps_to_its_partition(lib: DeviceLibrary) -> None:
    ids = {"vendor_id": "0x1002", "device_id": "0x74a1", "product_name": "AMD Instinct MI300X"}
    package = match_detected_device(lib, **ids)
    assert package is not None and package.device_type == "amd.mi300x"
    for units, device_type in [(38, "amd.mi300x-xcd"), (76, "amd.mi300x-qpx"), (304, "amd.mi300x")]:
        found = match_detected_device(lib, **ids, compute_units=units)  # type: ignore[arg-type]
        assert found is not None and found.device_type == device_type


ROCM_CPX_PLUGIN = """\
from prism_core.extending import DetectedDevice, Detection, hookimpl

@hookimpl
def prism_detect_devices(library):
    # What ROCm shows of one MI300X in CPX mode, simulated from the descriptions: as many GPUs as
    # the package's cpx-nps4 mode has, each named after the package and with the memory of one
    # XCD partition (less the little the driver keeps).
    package = library.get("amd.mi300x")
    mode = package.partition(compute="cpx", memory="nps4")
    xcd = library.get(mode.device_type)
    name = "AMD Instinct MI300X"
    return Detection(tuple(
        DetectedDevice(package.device_type, index=i, name=name, uuid=f"rocm-{i}",
                       memory_bytes=xcd.memory_bytes - (32 << 20), driver="6.10.5")
        for i in range(mode.count)
    ))
"""


def install_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, source: str) -> None:
    """A real plugin distribution named ``name`` on ``sys.path``, the only plugin loaded."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    module = f"prism_test_{name.replace('-', '_')}"
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    put_distribution_on_path(
        monkeypatch, site, f"prism-test-{name}", "1.0", f"[prism.plugins]\n{name} = {module}\n"
    )
    monkeypatch.setenv("PRISM_PLUGINS", name)


def test_an_mi300x_in_cpx_mode_is_eight_xcds_not_eight_mi300xs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(monkeypatch, tmp_path, "rocm-cpx", ROCM_CPX_PLUGIN)
    found = prism_core.hardware.present_devices()
    mine = [d for d in found.devices if d.source == "rocm-cpx"]
    assert [(d.device_type, d.index, d.package, d.partition) for d in mine] == [
        ("amd.mi300x-xcd", i, "amd.mi300x", None) for i in range(8)
    ]
    assert sum(d.description.compute_units or 0 for d in mine) == 304  # not 8 x 304
    assert {d.memory_bytes for d in mine} == {24 * GiB - (32 << 20)}  # what the driver said
    assert [d.uuid for d in mine] == [f"rocm-{i}" for i in range(8)]
    json.dumps([d.as_dict() for d in mine])
    # The performance model sees the partition's numbers.
    model = prism_core.tuning.PerformanceModel(host_device_type=None)
    figures = model.figures(mine[0])
    assert figures.device_type == "amd.mi300x-xcd" and figures.compute_units == 38
    assert figures.bandwidth_gbps == pytest.approx(5300 / 8)
    peak = figures.peak("fp64", "matrix")
    assert peak is not None and peak[0] == pytest.approx(163.4 / 8)


# -- MIG through nvidia-smi ------------------------------------------------------------------------

H100_UUID = "GPU-5c3b7e1a-96d2-0f4e-8a1b-2d7c9e4f6a30"
L4_UUID = "GPU-e2a4c6d8-1b3f-5a7c-9e0d-4f6b8a2c1e35"
#: Output of NVIDIA_SMI_COMMAND on a host with an H100 SXM5 and an L4 (names and memory as the
#: driver reports them).
QUERY = (
    f"0, NVIDIA H100 80GB HBM3, {H100_UUID}, 81559, 550.54.15\n"
    f"1, NVIDIA L4, {L4_UUID}, 23034, 550.54.15\n"
)


def mig_listing(library: DeviceLibrary, mode: str) -> str:
    """``nvidia-smi -L`` on that host with the H100 in MIG layout ``mode``, simulated from the
    descriptions: one line per instance of the mode's parts, named by its ``mig_profile``."""
    profiles = [
        str(d.attribute("mig_profile"))
        for d in software_devices(library.get("nvidia.h100-sxm"), library, mode=mode)
    ]
    lines = [f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {H100_UUID})"]
    lines += [
        f"  MIG {p:<12}Device {i:>2}: (UUID: MIG-{i:08d}-aaaa-bbbb-cccc-dddddddddddd)"
        for i, p in enumerate(profiles)
    ]
    lines.append(f"GPU 1: NVIDIA L4 (UUID: {L4_UUID})")
    return "\n".join(lines) + "\n"


def test_the_mig_listing_parses(lib: DeviceLibrary) -> None:
    text = mig_listing(lib, "all-balanced")
    assert parse_mig_listing(text) == [
        SmiMigDevice(0, profile, i, f"MIG-{i:08d}-aaaa-bbbb-cccc-dddddddddddd")
        for i, profile in enumerate(["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"])
    ]
    assert parse_mig_listing("  MIG 1g.10gb Device 0: (UUID: MIG-x)\nnothing\n") == []


def test_a_mig_instance_is_named_as_cuda_names_it(lib: DeviceLibrary) -> None:
    found = detection_from_smi(QUERY, lib, mig_listing(lib, "all-balanced"))
    assert [(d.device_type, d.index, d.name, d.memory_bytes) for d in found.devices] == [
        ("nvidia.h100-sxm", 0, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", None),
        ("nvidia.h100-sxm", 1, "NVIDIA H100 80GB HBM3 MIG 2g.20gb", None),
        ("nvidia.h100-sxm", 2, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", None),
        ("nvidia.h100-sxm", 3, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", None),
        ("nvidia.l4", 4, "NVIDIA L4", 23034 << 20),
    ]
    assert {d.driver for d in found.devices} == {"550.54.15"}
    # Without MIG devices in the listing, the query's GPUs as before.
    plain = detection_from_smi(QUERY, lib, f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {H100_UUID})\n")
    assert plain == detection_from_smi(QUERY, lib)
    assert [(d.index, d.uuid) for d in plain.devices] == [(0, H100_UUID), (1, L4_UUID)]


@pytest.mark.parametrize("profile", ["1g.10gb", "1g.10gb+me", "1g.20gb", "3g.40gb", "7g.80gb"])
def test_a_mig_instance_maps_to_its_profile(lib: DeviceLibrary, profile: str) -> None:
    h100 = lib.get("nvidia.h100-sxm")
    found = match_partition(h100, lib, name=f"NVIDIA H100 80GB HBM3 MIG {profile}")
    assert found is not None and not found.whole
    assert found.description.attribute("mig_profile") == profile.removesuffix("+me")
    assert found.evidence == ("name",)
    # The whole GPU (MIG disabled) is the package itself.
    whole = match_partition(h100, lib, name="NVIDIA H100 80GB HBM3", memory_bytes=81559 << 20)
    assert whole is not None and whole.whole and whole.modes == ("all-disabled",)


SMI_PLUGIN = """\
from prism_core.extending import hookimpl
from prism_core.nvidia_smi import detect

@hookimpl
def prism_detect_devices(library):
    return detect(library)
"""


def stand_in(directory: Path, query: str, listing: str | None) -> Path:
    """An ``nvidia-smi`` that answers the query and, unless ``listing`` is ``None``, ``-L``;
    any other arguments fail, as an unknown option does."""
    directory.mkdir(exist_ok=True)
    script = directory / "nvidia-smi"
    lines = ["#!/bin/sh", f'if [ "$*" = "{" ".join(NVIDIA_SMI_COMMAND[1:])}" ]; then']
    lines += ["cat <<'EOF'", query.rstrip("\n"), "EOF", "exit 0", "fi"]
    if listing is not None:
        lines += [f'if [ "$*" = "{" ".join(NVIDIA_SMI_LIST_COMMAND[1:])}" ]; then']
        lines += ["cat <<'EOF'", listing.rstrip("\n"), "EOF", "exit 0", "fi"]
    lines += ['echo "unexpected arguments: $*" >&2', "exit 2"]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a shell script")
@pytest.mark.parametrize("lists", [True, False], ids=["mig-listed", "listing-fails"])
def test_present_mig_instances_are_their_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lists: bool
) -> None:
    """nvidia-smi run by prism_core.nvidia_smi: with MIG instances listed, each is an instance
    of its profile's description; where ``-L`` fails, the GPUs as the query saw them."""
    listing = mig_listing(LIB, "all-balanced") if lists else None
    bin_dir = stand_in(tmp_path / "bin", QUERY, listing)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    install_plugin(monkeypatch, tmp_path, "smi", SMI_PLUGIN)
    found = prism_core.hardware.present_devices()
    mine = [(d.device_type, d.index, d.package) for d in found.devices if d.source == "smi"]
    if not lists:
        assert mine == [("nvidia.h100-sxm", 0, None), ("nvidia.l4", 1, None)]
        return
    assert mine == [
        ("nvidia.h100-sxm-mig-3g.40gb", 0, "nvidia.h100-sxm"),
        ("nvidia.h100-sxm-mig-2g.20gb", 1, "nvidia.h100-sxm"),
        ("nvidia.h100-sxm-mig-1g.10gb", 2, "nvidia.h100-sxm"),
        ("nvidia.h100-sxm-mig-1g.10gb", 3, "nvidia.h100-sxm"),
        ("nvidia.l4", 4, None),
    ]
    units = [d.description.compute_units for d in found.devices if d.source == "smi"]
    assert units == [60, 32, 16, 16, 58]


#: ``nvidia-smi -L`` on the H100 host with MIG on: one 3g.40gb GPU instance split into three
#: compute instances of one compute slice each (``nvidia-smi mig -cci`` three times: CUDA and the
#: listing name each ``1c.3g.40gb``), and a second 3g.40gb with its one default compute instance.
#: The layout is the MIG user guide's ("MIG Device Names": a GI split into CIs) and nvidia-smi's.
COMPUTE_INSTANCES = f"""\
GPU 0: NVIDIA H100 80GB HBM3 (UUID: {H100_UUID})
  MIG 1c.3g.40gb     Device  0: (UUID: MIG-0b8e0f57-63e4-5b1c-9d0a-6f1c2e7a9b01)
  MIG 1c.3g.40gb     Device  1: (UUID: MIG-4c2d9a18-0f7e-5a3b-8e61-2b9f7d4c3a02)
  MIG 1c.3g.40gb     Device  2: (UUID: MIG-91f6b3c4-7d2a-5e8f-a0c5-3d8e1f6b7c03)
  MIG 3g.40gb        Device  3: (UUID: MIG-d7a5e2f9-1b4c-5f0d-b9e3-8c2a6d1f4e04)
GPU 1: NVIDIA L4 (UUID: {L4_UUID})
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a shell script")
def test_a_compute_instance_is_its_share_of_its_gpu_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``1c.3g.40gb`` is one of the 3g.40gb GPU instance's three compute slices: the GPU
    instance's part with a third of its SMs and compute rates and all of its (shared) memory,
    never a whole H100."""
    bin_dir = stand_in(tmp_path / "bin", QUERY, COMPUTE_INSTANCES)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    install_plugin(monkeypatch, tmp_path, "smi", SMI_PLUGIN)
    found = [d for d in prism_core.hardware.present_devices().devices if d.source == "smi"]
    assert [(d.device_type, d.index, d.package) for d in found] == [
        *[("nvidia.h100-sxm-mig-3g.40gb", i, "nvidia.h100-sxm") for i in range(4)],
        ("nvidia.l4", 4, None),
    ]
    cis, whole_gi = found[:3], found[3]
    gi = whole_gi.description  # the GPU instance's own description, as the library has it
    assert gi.compute_units == 60 and gi.attribute("mig_profile") == "3g.40gb"
    assert [d.description.compute_units for d in cis] == [20, 20, 20]  # 60 SMs, not 3 x 132
    assert [d.name for d in cis] == ["NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb"] * 3
    ci = cis[0].description
    assert ci.is_a("nvidia.h100-sxm-mig-3g.40gb") and ci.is_a("nvidia.hopper")
    assert ci.attribute("mig_profile") == "1c.3g.40gb"
    assert ci.attribute("mig_gpu_instance") == "3g.40gb"
    assert ci.peak("fp16") == pytest.approx(gi.peak("fp16") / 3)
    assert ci.peak_for("fp16", "matrix") == pytest.approx(gi.peak_for("fp16", "matrix") / 3)
    assert ci.memory_bytes == gi.memory_bytes  # the GPU instance's memory, shared
    assert "1 of the 3 compute slices" in ci.data["description"]
    model = prism_core.tuning.PerformanceModel(host_device_type=None)
    assert model.figures(cis[0]).compute_units == 20


@pytest.mark.parametrize(
    ("profile", "gi_type", "sms"),
    [
        ("1c.3g.40gb", "nvidia.h100-sxm-mig-3g.40gb", 20),
        ("2c.3g.40gb", "nvidia.h100-sxm-mig-3g.40gb", 40),
        ("2c.4g.40gb", "nvidia.h100-sxm-mig-4g.40gb", 32),
        ("1c.7g.80gb", "nvidia.h100-sxm-mig-7g.80gb", 19),
    ],
)
def test_a_compute_instance_name_maps_to_its_gpu_instance(
    lib: DeviceLibrary, profile: str, gi_type: str, sms: int
) -> None:
    h100 = lib.get("nvidia.h100-sxm")
    found = match_partition(h100, lib, name=f"NVIDIA H100 80GB HBM3 MIG {profile}")
    assert found is not None and not found.whole
    assert found.description.device_type == gi_type
    assert found.description.compute_units == sms
    assert found.slices == (int(profile[0]), int(profile.split(".")[1][0]))
    assert found.evidence == ("name",)
    # A GPU instance itself is all of its compute slices.
    gi = match_partition(h100, lib, name=f"NVIDIA H100 80GB HBM3 MIG {profile.split('.', 1)[1]}")
    assert gi is not None and gi.slices is None and gi.description is lib.get(gi_type)


@pytest.mark.parametrize("profile", ["4c.3g.40gb", "0c.3g.40gb", "1c.5g.40gb"])
def test_an_impossible_compute_instance_matches_nothing(lib: DeviceLibrary, profile: str) -> None:
    h100 = lib.get("nvidia.h100-sxm")
    assert match_partition(h100, lib, name=f"NVIDIA H100 80GB HBM3 MIG {profile}") is None


def test_a_reported_package_is_shared_by_its_parts_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin that reports the package and a mode of unequal parts gets the parts, the
    package's memory shared by their sizes, and each part's host link."""
    source = """\
from prism_core.extending import DetectedDevice, Detection, hookimpl

@hookimpl
def prism_detect_devices(library):
    return Detection((
        DetectedDevice("nvidia.h100-sxm", index=0, name="H100", uuid="GPU-h",
                       memory_bytes=80 * 2**30, partition_mode="all-balanced"),
        DetectedDevice("tenstorrent.wormhole-n300", index=0, name="n300", uuid="card-0",
                       memory_bytes=24 * 2**30),
    ))
"""
    install_plugin(monkeypatch, tmp_path, "packages", source)
    found = [d for d in prism_core.hardware.present_devices().devices if d.source == "packages"]
    h100 = [d for d in found if d.package == "nvidia.h100-sxm"]
    assert [d.description.attribute("mig_profile") for d in h100] == [
        "3g.40gb",
        "2g.20gb",
        "1g.10gb",
        "1g.10gb",
    ]
    # The package's memory by the instances' sizes, none more than its own (MIG keeps some).
    assert [d.memory_bytes for d in h100] == [d.description.memory_bytes for d in h100]
    assert [d.memory_bytes for d in h100] == [int(g * GiB) for g in (39.5, 19.625, 9.75, 9.75)]
    assert [d.partition for d in h100] == [0, 1, 2, 3]
    n300 = [d for d in found if d.package == "tenstorrent.wormhole-n300"]
    assert [(d.device_type, d.host_link, d.memory_bytes) for d in n300] == [
        ("tenstorrent.wormhole-n300-chip", True, 12 * GiB),
        ("tenstorrent.wormhole-n300-chip", False, 12 * GiB),
    ]


# -- the command line ---------------------------------------------------------------------------


def prism(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_prism_schema_describes_dimensions_and_parts(tmp_path: Path) -> None:
    shown = prism("schema", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    schema = json.loads(shown.stdout)
    entry = schema["definitions"]["partition"]["properties"]
    for key in ("dimensions", "parts"):
        assert "Format 2." in entry[key]["description"]
    part = schema["definitions"]["partition_part"]["properties"]
    assert set(part) == {"device_type", "count", "host_link", "product_names", "description"}
    assert "n300" in part["host_link"]["description"]


def test_prism_devices_lists_the_partitions(tmp_path: Path) -> None:
    shown = prism("devices", "--vendor", "amd", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    rows = {row["device_type"]: row for row in json.loads(shown.stdout)}
    assert (rows["amd.mi300x-xcd"]["compute_units"], rows["amd.mi300x-xcd"]["memory_bytes"]) == (
        38,
        24 * GiB,
    )
    assert rows["amd.mi300x"]["compute_units"] == 304
    text = prism("devices", "--vendor", "nvidia", cwd=tmp_path).stdout
    for profile in ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"):
        assert f"nvidia.h100-sxm-mig-{profile}" in text
    show = prism("show", "amd.mi300x", cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    assert "mode: cpx-nps4, dimensions: {compute: cpx, memory: nps4}" in show.stdout


def test_prism_validate_locates_a_bad_partition_entry(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "format_version: 2\ndevice_type: lab.bad\npartitions:\n"
        "  - mode: m\n    device_type: lab.die\n    count: 2\n"
        "    parts: [{device_type: lab.die, count: 2}]\n",
        encoding="utf-8",
    )
    shown = prism("validate", str(bad), cwd=tmp_path)
    assert shown.returncode == 1
    assert (
        "bad.yaml:7:5: $.partitions[0].parts: parts cannot be given together with device_type "
        "and count" in shown.stdout
    )
    shipped = prism("validate", "hardware/amd", "hardware/nvidia", cwd=HARDWARE.parent)
    assert shipped.returncode == 0, shipped.stdout
    assert "ok       hardware/amd/mi300x-xcd.yaml (amd.mi300x-xcd)" in shipped.stdout
