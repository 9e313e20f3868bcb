"""Datasheet facts of the shipped device files, pinned to the vendor figures a datasheet audit
checked: the FP8 formats AWS Neuron computes, Trainium/Inferentia2 int8, the MI250X's int4 and
links, the Wormhole's FP8 figure, the Neuron on-chip memories, Trainium2's per-core FP32 peak
and the B200's memory bandwidth.

Each test reads the real files in ``hardware/`` through the real library (no plugin
directories, no cache); the vendor pages behind each number are cited in the files themselves,
and the tests that check a documented disagreement read those comments.
"""

from __future__ import annotations

import re

import pytest

from prism_core.hardware import DeviceDescription, DeviceLibrary

from .conftest import HARDWARE, shipped_library

MiB = 2**20

LIB = shipped_library()

#: Every concrete AWS Neuron device of the library, with its NeuronCore generation.
NEURON = sorted(d.device_type for d in LIB.list() if d.is_a("aws.neuron"))
NEURONCORE_V2 = ["aws.inferentia2", "aws.trainium"]
NEURONCORE_V3 = ["aws.trainium2", "aws.trainium2-lnc1", "aws.trainium2-lnc2"]


@pytest.fixture(scope="module")
def lib() -> DeviceLibrary:
    assert LIB.problems == []
    return LIB


def _text(path: str) -> str:
    return (HARDWARE / path).read_text(encoding="utf-8")


def _comment_near(path: str, key_pattern: str, before: int = 12, after: int = 4) -> str:
    """The lines around the first line of ``path`` matching ``key_pattern``."""
    lines = _text(path).splitlines()
    at = next(i for i, line in enumerate(lines) if re.search(key_pattern, line))
    return "\n".join(lines[max(0, at - before) : at + after])


def test_the_neuron_devices_are_the_five_known_ones() -> None:
    """The lists below cover every Neuron device; a new one must be added to them."""
    assert sorted(NEURONCORE_V2 + NEURONCORE_V3) == NEURON


# -- 1. Neuron FP8 is IEEE-style E4M3 (with infinities) and E3M4, never E4M3FN ----------------


@pytest.mark.parametrize("device_type", NEURON)
def test_neuron_fp8_is_ieee_e4m3_and_e3m4_not_fn(lib: DeviceLibrary, device_type: str) -> None:
    """Neuron's data-types page lists FP8_e4m3, FP8_e5m2 and FP8_e3m4; the compiler rejects
    E4M3FN on Trn1/Trn2 (NCC_EVRF051), so the OCP key ``fp8_e4m3`` must not be claimed."""
    dev = lib.get(device_type)
    for op in ("matmul", "conv2d"):
        assert dev.supports(op, "fp8_e4m3_ieee"), (device_type, op)
        assert dev.supports(op, "fp8_e3m4"), (device_type, op)
        assert dev.supports(op, "fp8_e5m2"), (device_type, op)
        assert not dev.supports(op, "fp8_e4m3"), (device_type, op)
    assert dev.peak("fp8_e4m3") is None
    assert dev.peak("fp8_e4m3_ieee") == dev.peak("fp8_e5m2")
    assert dev.satisfies({"supports": {"matmul": ["fp8_e4m3_ieee", "fp8_e3m4"]}}).ok
    assert not dev.satisfies({"supports": {"matmul": "fp8_e4m3"}}).ok


@pytest.mark.parametrize(
    ("device_type", "e4m3", "e3m4"),
    [
        # NeuronCore-v2: cFP8 at the BF16 rate (the chip pages' 190 FP16/BF16/cFP8/TF32).
        ("aws.trainium", 190, 190),
        ("aws.inferentia2", 190, 190),
        # NeuronCore-v3: FP8_E4/FP8_E5 at twice the BF16 rate, FP8_E3 at the BF16 rate (NKI).
        ("aws.trainium2", 1299, 667),
        ("aws.trainium2-lnc1", 158, 79),
        ("aws.trainium2-lnc2", 316, 158),
    ],
)
def test_neuron_fp8_peaks(lib: DeviceLibrary, device_type: str, e4m3: float, e3m4: float) -> None:
    dev = lib.get(device_type)
    assert dev.peak("fp8_e4m3_ieee") == e4m3
    assert dev.peak("fp8_e3m4") == e3m4
    assert dev.peak("fp8_e3m4") == dev.peak("bf16")


# -- 2. Trainium / Inferentia2 int8: not claimed, both sources in the file ------------------


@pytest.mark.parametrize("device_type", NEURONCORE_V2)
def test_neuroncore_v2_claims_no_int8_matrix_path(lib: DeviceLibrary, device_type: str) -> None:
    """The chip pages say 380 INT8 TOPS, but the NKI guide lists no int8 TensorE input and
    the compiler has no integer matmul path: neither supports() nor peak() claims it."""
    dev = lib.get(device_type)
    assert not dev.supports("matmul", "int8") and not dev.supports("conv2d", "int8")
    assert dev.peak("int8") is None
    assert not dev.satisfies({"supports": {"matmul": "int8"}}).ok


@pytest.mark.parametrize("path", ["aws/trainium.yaml", "aws/inferentia2.yaml"])
def test_int8_decision_cites_both_sides(path: str) -> None:
    text = _text(path)
    assert "380 INT8 TOPS" in text
    assert "nki/guides/architecture/trainium_inferentia2_arch.html" in text
    assert "compiler/error-codes/EVRF035.html" in text


def test_every_peak_beyond_fp32_is_a_type_the_device_multiplies(lib: DeviceLibrary) -> None:
    """A peak for a data type that no feature computes in matmul contradicts supports():
    the model would predict a matmul that dispatch refuses (fp32/fp64 run on plain cores)."""
    contradictions = [
        (d.device_type, dtype)
        for d in lib.list()
        for dtype in d.peak_tflops
        if dtype not in ("fp64", "fp32") and not d.supports("matmul", dtype)
    ]
    assert contradictions == []


# -- 4. MI250X: no int4 matrix path, two PCIe links, the sibling GCD's Infinity Fabric -------


@pytest.mark.parametrize("device_type", ["amd.mi250x", "amd.mi250x-gcd"])
def test_mi250x_has_no_int4_peak(lib: DeviceLibrary, device_type: str) -> None:
    dev = lib.get(device_type)
    assert dev.peak("int4") is None and not dev.supports("matmul", "int4")
    assert dev.peak("int8") is not None and dev.supports("matmul", "int8")


def test_mi250x_package_host_link_is_two_pcie4_x16(lib: DeviceLibrary) -> None:
    package, gcd = lib.get("amd.mi250x"), lib.get("amd.mi250x-gcd")
    assert gcd.data["host_link"]["bandwidth_gbps"] == 64  # one PCIe 4.0 x16, both ways
    assert package.data["host_link"]["bandwidth_gbps"] == 128  # two of them, one per GCD


def test_mi250x_gcd_links_to_its_sibling(lib: DeviceLibrary) -> None:
    link = lib.get("amd.mi250x-gcd").data["device_link"]
    assert link == {"interface": "infinity-fabric", "bandwidth_gbps": 400}


# -- 5. Wormhole n300: the FP8 figure is the feature's E5M2 ----------------------------------


@pytest.mark.parametrize(
    ("device_type", "fp8"),
    [("tenstorrent.wormhole-n300", 466), ("tenstorrent.wormhole-n300-chip", 233)],
)
def test_wormhole_fp8_peak_names_the_e5m2_it_computes(
    lib: DeviceLibrary, device_type: str, fp8: float
) -> None:
    dev = lib.get(device_type)
    assert dev.peak("fp8") is None
    assert dev.peak("fp8_e5m2") == fp8
    assert dev.supports("matmul", "fp8_e5m2")


# -- 7. Neuron on-chip memories: SBUF and PSUM per NeuronCore --------------------------------


@pytest.mark.parametrize("device_type", NEURON)
def test_neuron_devices_declare_sbuf_and_psum_per_core(
    lib: DeviceLibrary, device_type: str
) -> None:
    dev = lib.get(device_type)
    sbuf, psum = dev.memory_level("shared"), dev.memory_level("psum")
    assert sbuf is not None and psum is not None, device_type
    assert sbuf.scope == "compute_unit" and psum.scope == "compute_unit"
    assert sbuf.technology == "sram" and psum.technology == "sram"
    expected_sbuf = 24 * MiB if device_type in NEURONCORE_V2 else 28 * MiB
    assert sbuf.size_bytes == expected_sbuf
    assert psum.size_bytes == 2 * MiB


def _levels(dev: DeviceDescription) -> list[str]:
    return [m.level for m in dev.memory]


@pytest.mark.parametrize("device_type", NEURON)
def test_neuron_memory_is_listed_from_hbm_inwards(lib: DeviceLibrary, device_type: str) -> None:
    assert _levels(lib.get(device_type)) == ["global", "shared", "psum"]


# -- 8. Trainium2 per-core FP32: the NKI figure, the disagreement stated --------------------


@pytest.mark.parametrize(
    ("device_type", "cores"), [("aws.trainium2-lnc1", 1), ("aws.trainium2-lnc2", 2)]
)
def test_trainium2_fp32_peaks_are_nki_per_core(
    lib: DeviceLibrary, device_type: str, cores: int
) -> None:
    """20 dense FP32 TFLOP/s per NeuronCore-v3 (NKI), not the chip's 181 divided by 8; the
    chip's own file keeps the chip page's 181, which eight cores at 20 stay below."""
    assert lib.get(device_type).peak("fp32") == 20 * cores
    assert lib.get("aws.trainium2").peak("fp32") == 181


@pytest.mark.parametrize("path", ["aws/trainium2-lnc1.yaml", "aws/trainium2-lnc2.yaml"])
def test_trainium2_fp32_disagreement_is_stated(path: str) -> None:
    text = _comment_near(path, r"^\s+fp32:")
    assert "181" in text and "20 FP32" in text
    assert "nki/guides/architecture/trainium2_arch.html" in text


# -- 6. Max 1550: its Xe Links, of unpublished bandwidth -------------------------------------


def test_max_1550_declares_its_xe_links_without_inventing_a_bandwidth(lib: DeviceLibrary) -> None:
    """16 Xe Links a card, 8 a stack, and the stacks' link in the package; Intel publishes no
    Xe Link bandwidth, so none is given and no copy is costed over them."""
    from prism_core._transfer_paths import transfer_path

    card, stack = lib.get("intel.max-1550"), lib.get("intel.max-1550-stack")
    xe = [link for link in card.links if link.interface == "xe-link"]
    assert [(link.count, link.peer, link.per_direction_gbps) for link in xe] == [
        (16, "external", None)
    ]
    assert "device_link" not in card.data  # no total to give
    assert card.host_bandwidth_per_direction() == 64  # its PCIe 5 x16, unchanged
    sibling = stack.peer_link(stack, in_package=True)
    assert sibling is not None and sibling.interface == "emib" and sibling.one_way_gbps is None
    assert "bandwidth not published" in sibling.describe()
    assert [link.count for link in stack.links if link.interface == "xe-link"] == [8]
    # Between two cards: the Xe Link is known to connect them, but a copy's cost is not, so
    # the path goes through host memory over the PCIe links, whose bandwidth is published.
    path = transfer_path(card, lib.get("nvidia.h100-sxm"))
    assert path is not None and all(hop.kind == "host" for hop in path.hops)


# -- 9. B200: NVIDIA's per-GPU memory bandwidth ----------------------------------------------


def test_b200_memory_bandwidth_is_the_per_gpu_figure(lib: DeviceLibrary) -> None:
    glob = lib.get("nvidia.b200").memory_level("global")
    assert glob is not None and glob.bandwidth_gbps == 7700


# -- 10. Issue 33, datasheet gaps: Trainium2 sparsity, TPU v5e links, MIG tables, links ----------

#: NeuronCore-v3 sparse matmul (NKI Trainium2 guide): the dense BF16 rate times the compression
#: ratio M/N of an N:M pattern, at most 4; FP8 (dense at twice BF16, in the double-FP8 mode that
#: sparse matmul cannot use) gains half of that, and nothing on the 2x patterns.
TRN2_SPEEDUPS = {
    "bf16": {"4:16": 4, "4:12": 3, "4:8": 2, "2:8": 4, "2:4": 2, "1:4": 4, "1:2": 2},
    "fp8_e5m2": {"4:16": 2, "4:12": 1.5, "2:8": 2, "1:4": 2},
}


@pytest.mark.parametrize("device_type", NEURONCORE_V3)
def test_trainium2_sparsity_never_exceeds_m_over_n(lib: DeviceLibrary, device_type: str) -> None:
    dev = lib.get(device_type)
    for entry in dev.sparsity:
        assert entry.speedup <= entry.group / entry.kept, (entry.pattern, entry.speedup)
    for dtype, expected in TRN2_SPEEDUPS.items():
        found = {e.pattern: e.speedup for e in dev.sparsity if e.applies("matmul", dtype)}
        assert found == expected, dtype
    # The best pattern reaches AWS's 316 sparse TFLOP/s a core: 79 dense BF16 x 4, 158 FP8 x 2.
    core = lib.get("aws.trainium2-lnc1")
    assert core.peak("bf16") * 4 == core.peak("fp8_e5m2") * 2 == 316


def test_trainium2_sparsity_cites_the_nki_guide() -> None:
    text = _comment_near("aws/neuroncore-v3.yaml", r"^sparsity:", before=22, after=0)
    assert "4x compression ratio" in text and "cannot be combined" in text
    assert "trainium2_arch" in text


def test_docs_trainium2_sparsity_example_is_the_file() -> None:
    docs = (HARDWARE.parent / "docs" / "device-files.md").read_text(encoding="utf-8")
    assert '{pattern: "1:2", data_types: [bf16, fp16, tf32], speedup: 4}' not in docs
    assert '{pattern: "1:2", data_types: [bf16, fp16, tf32], speedup: 2}' in docs
    assert "[('4:16', 4.0), ('4:12', 3.0), ('4:8', 2.0)]" in docs


def test_tpu_v5e_has_googles_four_ici_links(lib: DeviceLibrary) -> None:
    """Google: 4 ICI ports, 400 GB/s both ways a chip: 400 / (2 x 4) = 50 GB/s a link each way."""
    dev = lib.get("google.tpu-v5e")
    assert [(k.kind, k.interface, k.count, k.per_direction_gbps, k.peer) for k in dev.links] == [
        ("peer", "ici", 4, 50.0, "external")
    ]
    assert dev.data["device_link"]["bandwidth_gbps"] == 2 * 4 * 50
    text = _comment_near("google/tpu-v5e.yaml", r"^links:", before=8, after=0)
    assert "cloud.google.com/tpu/docs/v5e" in text and "400 GB/s / (2 directions x 4 ports)" in text


#: The MIG tables (profile -> SMs, GiB, maximum instances): profiles and counts from NVIDIA's MIG
#: user guide, SMs and memory from nvidia-smi mig -lgip (see each file for the flagged ones).
MIG_TABLES = {
    "nvidia.a100-sxm-80gb": {
        "1g.10gb": (14, 9.50, 7),
        "1g.20gb": (14, 19.50, 4),
        "2g.20gb": (28, 19.50, 3),
        "3g.40gb": (42, 39.25, 2),
        "4g.40gb": (56, 39.25, 1),
        "7g.80gb": (98, 79.00, 1),
    },
    "nvidia.h100-pcie": {
        "1g.10gb": (14, 9.75, 7),
        "1g.20gb": (14, 19.62, 4),
        "2g.20gb": (30, 19.62, 3),
        "3g.40gb": (46, 39.50, 2),
        "4g.40gb": (62, 39.50, 1),
        "7g.80gb": (114, 79.25, 1),
    },
    "nvidia.h200": {
        "1g.18gb": (16, 16.00, 7),
        "1g.35gb": (26, 32.50, 4),
        "2g.35gb": (32, 32.50, 3),
        "3g.71gb": (60, 65.00, 2),
        "4g.71gb": (64, 65.00, 1),
        "7g.141gb": (132, 140.00, 1),
    },
    # SMs from NVIDIA's NVML mock of the B200 (go-nvml), memory the guide's fraction of 180 GiB.
    "nvidia.b200": {
        "1g.23gb": (18, 22.50, 7),
        "1g.45gb": (18, 45.00, 4),
        "2g.45gb": (36, 45.00, 3),
        "3g.90gb": (54, 90.00, 2),
        "4g.90gb": (72, 90.00, 1),
        "7g.180gb": (126, 180.00, 1),
    },
}
GiB = 2**30


@pytest.mark.parametrize("package", sorted(MIG_TABLES))
def test_mig_partition_modes_follow_the_guide(lib: DeviceLibrary, package: str) -> None:
    dev = lib.get(package)
    table = MIG_TABLES[package]
    assert dev.partitions[0].mode == "all-disabled" and dev.partitions[0].device_type == package
    for profile, (sms, gib, most) in table.items():
        mode = dev.partition(f"all-{profile}")
        assert mode.count == most, profile
        (inst,) = {lib.get(t) for t in mode.device_types}
        assert inst.attribute("mig_profile") == profile
        assert inst.compute_units == sms, profile
        assert inst.memory_bytes == round(gib * GiB), profile
        scaled = dev.peak("bf16") * sms / dev.compute_units
        assert inst.peak("bf16") == pytest.approx(scaled, rel=1e-4), profile
    # mig-parted's all-balanced: one 3g, one 2g and two of the smallest 1g profile.
    first, two, three = (next(p for p in table if p.startswith(g)) for g in ("1g", "2g", "3g"))
    balanced = dev.partition("all-balanced")
    assert sorted(lib.get(t).attribute("mig_profile") for t in balanced.device_types) == sorted(
        [three, two, first, first]
    )


def test_h100_pcie_nvlink_bridge_is_twelve_links(lib: DeviceLibrary) -> None:
    dev = lib.get("nvidia.h100-pcie")
    links = [(k.kind, k.interface, k.count, k.per_direction_gbps) for k in dev.links]
    assert links == [("host", "pcie5-x16", 1, 64.0), ("peer", "nvlink4", 12, 25.0)]
    assert dev.data["device_link"]["bandwidth_gbps"] == 600 == 2 * 12 * 25


def test_b200_tf32_disagreement_is_stated(lib: DeviceLibrary) -> None:
    assert lib.get("nvidia.b200").peak("tf32") == 1125
    text = _comment_near("nvidia/b200.yaml", r"^  tf32:", before=5, after=1)
    assert "1.1 dense" in text and "18 / 8 / 2" in text


def test_mi300x_qpx_nps4_disagreement_is_stated(lib: DeviceLibrary) -> None:
    mode = lib.get("amd.mi300x").partition(compute="qpx", memory="nps4")
    assert "only with CPX" in (mode.description or "")
    text = _comment_near("amd/mi300x.yaml", r"^  - mode: qpx-nps4", before=8, after=0)
    assert "aqua_vanjaram.c" in text and "CPX/NPS4" in text


def test_n300_chip_link_total_and_open_question(lib: DeviceLibrary) -> None:
    chip = lib.get("tenstorrent.wormhole-n300-chip")
    (link,) = chip.links
    assert link.count * link.per_direction_gbps == 25  # 200 Gb/s each way, however many ports
    assert "Unresolved (issue 33)" in _text("tenstorrent/wormhole-n300-chip.yaml")
