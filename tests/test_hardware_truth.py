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
    from prism_core._description.topology import transfer_path

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
