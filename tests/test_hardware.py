"""Facts of the shipped device library: generations, FP8 variants, what software sees of
multi-die packages, and the features and flags each file must declare rather than describe.

These tests read the real files in ``hardware/`` through the real library; the mechanics they
rely on (``succeeds``, ``partitions``, detection) are tested on their own in test_library.py,
test_schema.py and test_host.py.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest

from prism_core.hardware import DeviceDescription, DeviceLibrary, SearchEntry
from prism_core.kernel.host import match_detected_device, software_devices

from .conftest import HARDWARE

GiB = 2**30


def shipped() -> DeviceLibrary:
    """The shipped library alone (no plugin directories, no cache), also at collection time."""
    return DeviceLibrary([SearchEntry(HARDWARE, "builtin")], use_cache=False)


LIB = shipped()


@pytest.fixture(scope="module")
def lib() -> DeviceLibrary:
    assert LIB.problems == []
    return LIB


# -- generations -----------------------------------------------------------

#: Vendor lines, oldest first, that the library must declare with `succeeds`. The checks below
#: run over *every* `succeeds` link in the library, these lines included.
LINES = [
    ["nvidia.ampere", "nvidia.ada", "nvidia.hopper", "nvidia.blackwell"],
    ["amd.cdna2", "amd.cdna3"],
    ["arm.neoverse-v1", "arm.neoverse-v2"],
    ["aws.graviton2", "aws.graviton3", "aws.graviton4"],
    ["aws.trainium", "aws.trainium2"],
]


def generation_links(
    library: DeviceLibrary,
) -> Iterator[tuple[DeviceDescription, DeviceDescription]]:
    """(newer, older) for every description that names its predecessor with `succeeds`."""
    for desc in library.list(include_abstract=True):
        if desc.succeeds is not None:
            yield desc, library.get(desc.succeeds)


LINKS = sorted(generation_links(LIB), key=lambda pair: pair[0].device_type)


@pytest.mark.parametrize("line", LINES, ids=lambda line: line[-1])
def test_vendor_lines_are_declared(lib: DeviceLibrary, line: list[str]) -> None:
    for older, newer in itertools.pairwise(line):
        assert lib.get(newer).succeeds == older


def test_every_line_of_the_library_is_checked() -> None:
    declared = {(new.device_type, old.device_type) for new, old in LINKS}
    wanted = {(new, old) for line in LINES for old, new in itertools.pairwise(line)}
    assert wanted <= declared


@pytest.mark.parametrize(
    ("newer", "older"), LINKS, ids=[f"{n.device_type}<-{o.device_type}" for n, o in LINKS]
)
def test_a_newer_generation_keeps_the_features_of_the_older(
    newer: DeviceDescription, older: DeviceDescription
) -> None:
    """Every feature of the predecessor is kept, at a version at least as high, unless the
    newer file lists it under `dropped_features` (with the reason)."""
    dropped = set(newer.dropped_features)
    missing = set(older.features) - set(newer.features) - dropped
    assert not missing, (
        f"{newer.device_type} succeeds {older.device_type} but lacks {sorted(missing)}; declare "
        "them, or list them under dropped_features with the reason"
    )
    assert dropped <= set(older.features), "only a feature the predecessor has can be dropped"
    assert not dropped & set(newer.features), "a dropped feature cannot also be declared"
    assert all(reason.strip() for reason in newer.dropped_features.values())
    for name in set(older.features) & set(newer.features):
        old, new = older.features[name], newer.features[name]
        assert new.version_satisfies(f">={old.version}"), (name, old.version, new.version)


@pytest.mark.parametrize(
    "device_type", ["nvidia.h100-pcie", "nvidia.h100-sxm", "nvidia.h200", "nvidia.b200"]
)
def test_hopper_and_blackwell_gpus_have_what_ampere_has(
    lib: DeviceLibrary, device_type: str
) -> None:
    gpu = lib.get(device_type)
    for name in ("structured_sparsity", "async_copy", "mig"):
        assert gpu.has_feature(name), f"{device_type} lacks {name}"
    assert gpu.satisfies({"structured_sparsity": True, "mig": True}).ok


def test_ada_says_it_has_no_mig(lib: DeviceLibrary) -> None:
    l4 = lib.get("nvidia.l4")
    assert not l4.has_feature("mig")
    assert "mig" in lib.get("nvidia.ada").dropped_features
    assert l4.has_feature("structured_sparsity") and l4.has_feature("async_copy")


# -- FP8 variants (item 24) ---------------------------------------------------------------------


@pytest.mark.parametrize("device_type", ["amd.cdna3", "amd.mi300x"])
def test_cdna3_fp8_is_fnuz_only(lib: DeviceLibrary, device_type: str) -> None:
    dev = lib.get(device_type)
    for op in ("matmul", "conv2d"):
        assert dev.supports(op, "fp8_e4m3fnuz") and dev.supports(op, "fp8_e5m2fnuz")
        assert not dev.supports(op, "fp8_e4m3") and not dev.supports(op, "fp8_e5m2")
    assert not dev.satisfies({"supports": {"matmul": "fp8_e4m3"}}).ok


def test_mi300x_peaks_name_the_fnuz_types(lib: DeviceLibrary) -> None:
    mi300x = lib.get("amd.mi300x")
    assert mi300x.peak("fp8_e4m3fnuz") == pytest.approx(2614.9)
    assert mi300x.peak("fp8_e5m2fnuz") == pytest.approx(2614.9)
    assert mi300x.peak("fp8_e4m3") is None and mi300x.peak("fp8_e5m2") is None


def test_ocp_fp8_devices_keep_the_ocp_names(lib: DeviceLibrary) -> None:
    for device_type in ("nvidia.h100-sxm", "nvidia.l4", "nvidia.b200"):
        dev = lib.get(device_type)
        assert dev.supports("matmul", "fp8_e4m3") and not dev.supports("matmul", "fp8_e4m3fnuz")


# -- what software sees of multi-die packages (item 25) -----------------------------------------


def global_memory(desc: DeviceDescription) -> int:
    size = desc.memory_bytes
    assert size is not None, desc.device_type
    return size


def test_a_detected_mi250x_is_two_gpus_of_110_cus_and_64_gib(lib: DeviceLibrary) -> None:
    """ROCm shows each GCD as its own PCI function named after the module; each maps to one
    GCD, so one MI250X is two devices whose sum is the module."""
    found = [
        match_detected_device(
            lib, vendor_id="0x1002", device_id="0x740c", product_name="AMD Instinct MI250X"
        )
        for _gcd in range(2)
    ]
    assert all(d is not None for d in found)
    gcds = [d for d in found if d is not None]
    assert {d.device_type for d in gcds} == {"amd.mi250x-gcd"}
    for gcd in gcds:
        assert gcd.compute_units == 110
        assert global_memory(gcd) == 64 * GiB
        assert gcd.isa == "gfx90a"
    module = lib.get("amd.mi250x")
    assert module.compute_units == 220 and global_memory(module) == 128 * GiB
    assert sum(d.compute_units or 0 for d in gcds) == module.compute_units
    assert [d.device_type for d in software_devices(module, lib)] == ["amd.mi250x-gcd"] * 2


def test_the_mi250x_module_is_never_matched_as_one_device(lib: DeviceLibrary) -> None:
    for name in ("AMD Instinct MI250X", "AMD Instinct MI250X/MI250"):
        for device_id in ("0x740c", "0x7408"):
            found = match_detected_device(
                lib, vendor_id="0x1002", device_id=device_id, product_name=name
            )
            assert found is not None and found.device_type == "amd.mi250x-gcd"


def test_a_max_1550_is_two_stacks_in_flat_mode(lib: DeviceLibrary) -> None:
    card = match_detected_device(
        lib,
        vendor_id="0x8086",
        device_id="0x0bd5",
        product_name="Intel(R) Data Center GPU Max 1550",
    )
    assert card is not None and card.device_type == "intel.max-1550"
    stacks = software_devices(card, lib)  # FLAT is the driver's default
    assert [s.device_type for s in stacks] == ["intel.max-1550-stack"] * 2
    assert all(s.compute_units == 64 and global_memory(s) == 64 * GiB for s in stacks)
    assert card.partition().mode == "flat"  # type: ignore[union-attr]
    assert software_devices(card, lib, mode="composite") == (card,)


def test_a_wormhole_n300_is_two_chips(lib: DeviceLibrary) -> None:
    # tt-smi lists each ASIC ("n300 L" on PCIe, "n300 R" behind it); lspci lists the card once.
    for board in ("n300 L", "n300 R"):
        chip = match_detected_device(
            lib, vendor_id="0x1e52", device_id="0x401e", product_name=board
        )
        assert chip is not None and chip.device_type == "tenstorrent.wormhole-n300-chip"
        assert chip.compute_units == 64 and global_memory(chip) == 12 * GiB
    card = lib.get("tenstorrent.wormhole-n300")
    chips = software_devices(card, lib)
    assert [c.device_type for c in chips] == ["tenstorrent.wormhole-n300-chip"] * 2
    # The PCI id is shared with the n150: without a product name nothing is claimed.
    assert match_detected_device(lib, vendor_id="0x1e52", device_id="0x401e") is None


def test_a_trainium2_is_four_logical_cores_by_default(lib: DeviceLibrary) -> None:
    chip = match_detected_device(lib, vendor_id="0x1d0f", device_id="0x7364")
    assert chip is not None and chip.device_type == "aws.trainium2"
    lnc2 = software_devices(chip, lib)
    assert [d.device_type for d in lnc2] == ["aws.trainium2-lnc2"] * 4
    assert all(d.compute_units == 2 and global_memory(d) == 24 * GiB for d in lnc2)
    lnc1 = software_devices(chip, lib, mode="lnc1")
    assert [d.device_type for d in lnc1] == ["aws.trainium2-lnc1"] * 8
    assert all(d.compute_units == 1 for d in lnc1)


PACKAGES = [d for d in LIB.list() if d.partitions]


def test_the_four_multi_die_packages_are_partitioned() -> None:
    names = {d.device_type for d in PACKAGES}
    assert {
        "amd.mi250x",
        "intel.max-1550",
        "tenstorrent.wormhole-n300",
        "aws.trainium2",
    } <= names


@pytest.mark.parametrize("package", PACKAGES, ids=lambda d: d.device_type)
def test_partitions_add_up_to_the_package(lib: DeviceLibrary, package: DeviceDescription) -> None:
    """In every mode, the devices software sees never hold more than the package has."""
    for part in package.partitions:
        devices = software_devices(package, lib, mode=part.mode)
        assert len(devices) == part.count
        total_units = sum(d.compute_units or 0 for d in devices)
        assert total_units <= package.compute_units, part.mode  # MIG leaves SMs unused
        shared = [d for d in devices if (m := d.memory_level("global")) and m.scope != "device"]
        if not shared:
            assert sum(global_memory(d) for d in devices) <= global_memory(package), part.mode
        for dtype, peak in package.peak_tflops.items():
            got = sum(d.peak(dtype) or 0 for d in devices)
            assert got <= peak * 1.001, (part.mode, dtype, got, peak)


# -- declared, not only described (item 26) -----------------------------------------------------


def test_trainium2_declares_structured_sparsity(lib: DeviceLibrary) -> None:
    for device_type in ("aws.trainium2", "aws.trainium2-lnc2", "aws.trainium2-lnc1"):
        assert lib.get(device_type).has_feature("structured_sparsity"), device_type


def test_ascend_910b_declares_its_hbm_bandwidth(lib: DeviceLibrary) -> None:
    glob = lib.get("huawei.ascend-910b").memory_level("global")
    assert glob is not None and glob.bandwidth_gbps


CPU_DECLARATIONS = {
    # Linux /proc/cpuinfo (and archspec) flag -> the feature that names it in the file.
    "intel.sapphirerapids": {
        "avx512ifma": "avx512_ifma",
        "avx_vnni": "avx_vnni",
        "avx512vbmi": "avx512_vbmi",
        "avx512_vbmi2": "avx512_vbmi2",
        "avx512_vpopcntdq": "avx512_vpopcntdq",
        "avx512_bitalg": "avx512_bitalg",
        "gfni": "gfni",
    },
    "amd.zen4": {
        "avx512ifma": "avx512_ifma",
        "avx512vbmi": "avx512_vbmi",
        "avx512_vbmi2": "avx512_vbmi2",
        "avx512_vpopcntdq": "avx512_vpopcntdq",
        "avx512_bitalg": "avx512_bitalg",
        "gfni": "gfni",
    },
}


@pytest.mark.parametrize("device_type", sorted(CPU_DECLARATIONS))
def test_cpu_extensions_are_flags_and_features(lib: DeviceLibrary, device_type: str) -> None:
    for leaf in [
        device_type,
        *(d.device_type for d in lib.list(kind="cpu") if d.is_a(device_type)),
    ]:
        cpu = lib.get(leaf)
        for flag, feature in CPU_DECLARATIONS[device_type].items():
            assert flag in cpu.cpu_flags, f"{leaf} does not list the flag {flag}"
            assert cpu.has_feature(feature), f"{leaf} does not declare the feature {feature}"
            assert cpu.satisfies({f"flag:{flag}": True}).ok


def test_zen4_has_no_vex_avx_vnni(lib: DeviceLibrary) -> None:
    # Zen 4 has AVX512-VNNI but not the VEX-encoded AVX-VNNI (that came with Zen 5).
    assert "avx_vnni" not in lib.get("amd.zen4").cpu_flags


def _comment_near(path: str, key_pattern: str) -> str:
    """The comment lines around the first line matching ``key_pattern``."""
    lines = (HARDWARE / path).read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if re.search(key_pattern, line))
    return "\n".join(lines[max(0, at - 6) : at + 6])


def test_b200_bandwidth_disagreement_is_stated_with_both_sources() -> None:
    text = _comment_near("nvidia/b200.yaml", r"bandwidth_gbps: 7700")
    assert "7.7" in text and "8.0" in text
    assert "https://www.nvidia.com/en-us/data-center/hgx/" in text
    assert "https://www.nvidia.com/en-us/data-center/dgx-b200/" in text


def test_neuron_gb_and_gib_disagreement_is_stated_with_both_sources() -> None:
    text = _comment_near("aws/trainium2.yaml", r"size_bytes: 103079215104")
    assert "GiB" in text and "GB" in text.replace("GiB", "")
    assert "trainium2" in text and "logical-neuroncore-config" in text
