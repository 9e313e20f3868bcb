"""Topology (format 2): the schema's ``links`` and the memory levels' ``remote_bandwidth_gbps``
and ``usable_bytes``, the accessors on the shipped descriptions, the paths copies take
(``TransferPath``), and what they change in the split's modelled ratio and records.

No GPU is needed: the devices the split runs on are simulated from their descriptions (their
parts run on NumPy, labelled so), and the performance model predicts from the descriptions.
Arrays in device memory are stood for by a NumPy array whose ``__dlpack_device__`` says CUDA
(the protocol Prism reads to tell where an array is), under a simulated device's scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core._transfer_paths import transfer_path
from prism_core.hardware import Link, TransferPath
from prism_core.kernel.description.library import DeviceLibrary, SearchEntry
from prism_core.kernel.description.topology import device_link_total, host_link_total
from prism_core.tuning import PerformanceModel

from .conftest import problems_of, run_prism, shipped_library

LIB = shipped_library()


# -- the schema -------------------------------------------------------------------------------

GOOD = """\
format_version: 2
device_type: acme.x1
host_link: {interface: pcie5-x16, bandwidth_gbps: 128}
device_link: {interface: acme-link, bandwidth_gbps: 400}
links:
  - {kind: host, interface: pcie5-x16, count: 1, per_direction_gbps: 64}
  - {kind: peer, peer: external, interface: acme-link, count: 8, per_direction_gbps: 25}
  - {kind: peer, peer: in_package, interface: acme-fabric, count: 2, per_direction_gbps: 100}
memory_hierarchy:
  - {level: global, size_bytes: 1000, usable_bytes: 990, remote_bandwidth_gbps: 50}
"""


def test_a_format_2_file_with_links_and_memory_fields_is_valid() -> None:
    assert problems_of(GOOD) == []


def test_a_peer_on_a_host_link_is_a_problem_at_its_line() -> None:
    text = GOOD.replace("per_direction_gbps: 64}", "per_direction_gbps: 64, peer: external}")
    assert problems_of(text) == [
        "d.yaml:6:74: $.links[0].peer: peer is for links of kind peer; a host link ends at the "
        "host CPU: drop it, or make the link kind: peer"
    ]


def test_a_peer_device_type_on_a_host_link_is_a_problem_too() -> None:
    text = GOOD.replace(
        "per_direction_gbps: 64}", "per_direction_gbps: 64, peer_device_type: acme.x2}"
    )
    [problem] = problems_of(text)
    assert problem.startswith("d.yaml:6:") and "$.links[0].peer_device_type" in problem


def test_a_peer_link_must_say_where_its_other_end_is() -> None:
    text = GOOD.replace("peer: external, ", "")
    assert problems_of(text) == [
        "d.yaml:7:5: $.links[1]: a peer link says where its other end is: peer: in_package (a "
        "sibling die of the same package) or peer: external (another package)"
    ]


@pytest.mark.parametrize(
    ("old", "new", "where", "says"),
    [
        ("count: 8", "count: 0", "d.yaml:7:", "at least 1"),
        ("per_direction_gbps: 25", "per_direction_gbps: 0", "d.yaml:7:", "greater than 0"),
        ("kind: host", "kind: cpu", "d.yaml:6:", "one of: host, peer"),
        ("peer: external", "peer: remote", "d.yaml:7:", "one of: in_package, external"),
    ],
)
def test_bad_fields_are_schema_errors_at_their_lines(
    old: str, new: str, where: str, says: str
) -> None:
    [problem] = problems_of(GOOD.replace(old, new))
    assert problem.startswith(where) and says in problem, problem


def test_a_format_1_file_using_links_gets_the_version_problem_at_its_line() -> None:
    text = GOOD.replace("format_version: 2", "format_version: 1")
    found = problems_of(text)
    assert found[0] == (
        "d.yaml:5:1: $.links: links is a key of format 2 of the device-file format, and this "
        "file says format_version: 1: add `format_version: 2` at its top "
        '(docs/device-files.md, "Format versions")'
    )
    # The memory levels' new fields are format 2's too.
    assert sorted(p.split(": ")[1] for p in found[1:]) == [
        "$.memory_hierarchy[0].remote_bandwidth_gbps",
        "$.memory_hierarchy[0].usable_bytes",
    ]


def test_host_link_must_be_the_total_of_the_host_links() -> None:
    # 64 is one direction of the one host link: the both-ways total is 128.
    text = GOOD.replace("bandwidth_gbps: 128}", "bandwidth_gbps: 64}")
    assert problems_of(text) == [
        "d.yaml:3:51: $.host_link.bandwidth_gbps: host_link.bandwidth_gbps is 64, but links "
        "give 128 for it: both directions of every host link, 2 x count x per_direction_gbps; "
        "make them agree (links is the truth, the format-1 key its total)"
    ]


def test_device_link_is_the_total_of_the_external_links_else_the_in_package_ones() -> None:
    # 2 x 8 x 25 = 400 over the external links; the in-package ones do not count beside them.
    assert problems_of(GOOD.replace("bandwidth_gbps: 400", "bandwidth_gbps: 800")) != []
    # Without external links, device_link is the in-package links' total: 2 x 2 x 100 = 400.
    only_in_package = GOOD.replace(
        "  - {kind: peer, peer: external, interface: acme-link, count: 8, "
        "per_direction_gbps: 25}\n",
        "",
    )
    assert problems_of(only_in_package) == []


def test_usable_bytes_cannot_exceed_size_bytes() -> None:
    [problem] = problems_of(GOOD.replace("usable_bytes: 990", "usable_bytes: 1001"))
    assert problem.startswith("d.yaml:10:")
    assert "usable_bytes 1001 is more than size_bytes 1000" in problem


def test_prism_validate_reports_a_link_problem_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "x1.yaml"
    path.write_text(GOOD.replace("count: 8", "count: 0"), encoding="utf-8")
    proc = run_prism(tmp_path, "validate", str(path))
    assert proc.returncode == 1
    assert "x1.yaml:7:" in proc.stdout and "$.links[1].count" in proc.stdout


def test_prism_schema_shows_the_new_keys(tmp_path: Path) -> None:
    proc = run_prism(tmp_path, "schema")
    assert proc.returncode == 0, proc.stderr
    for key in ('"links"', '"remote_bandwidth_gbps"', '"usable_bytes"', '"per_direction_gbps"'):
        assert key in proc.stdout
    assert "bandwidth of one link in one direction" in proc.stdout.lower()


# -- the accessors on the shipped files ---------------------------------------------------------


def test_h100_sxm_has_18_nvlink4_links_whose_total_is_its_device_link() -> None:
    h100 = LIB.get("nvidia.h100-sxm")
    [nvlink] = [link for link in h100.links if link.kind == "peer"]
    assert (nvlink.interface, nvlink.count, nvlink.per_direction_gbps) == ("nvlink4", 18, 25.0)
    assert nvlink.peer == "external" and nvlink.derived_from is None
    assert nvlink.one_way_gbps == 450 and nvlink.total_gbps == 900
    assert nvlink.total_gbps == h100.data["device_link"]["bandwidth_gbps"]
    assert h100.host_bandwidth_per_direction() == 64.0  # not host_link's 128, both ways


def test_the_gcd_reaches_its_sibling_over_the_in_package_link() -> None:
    gcd = LIB.get("amd.mi250x-gcd")
    link = gcd.peer_link(gcd)
    assert link is not None and link.in_package
    assert (link.interface, link.count, link.one_way_gbps) == ("infinity-fabric", 4, 200.0)
    assert link.total_gbps == gcd.data["device_link"]["bandwidth_gbps"] == 400
    assert gcd.peer_link(gcd, in_package=True) == link
    assert gcd.peer_link(gcd, in_package=False) is None  # no external links per GCD
    assert gcd.peer_link(LIB.get("nvidia.h100-sxm")) is None
    assert gcd.host_bandwidth_per_direction() == 32.0
    assert gcd.memory_level("global").remote_bandwidth_gbps == 200  # type: ignore[union-attr]


def test_the_mi250x_module_has_a_host_link_per_gcd() -> None:
    module = LIB.get("amd.mi250x")
    assert module.host_bandwidth_per_direction() == 64.0  # 2 x 32
    assert host_link_total(module.links) == module.data["host_link"]["bandwidth_gbps"] == 128


def test_every_shipped_file_with_links_agrees_with_its_format_1_totals() -> None:
    checked = 0
    for desc in LIB:
        if "links" not in desc.data:
            continue
        for key, total in (
            ("host_link", host_link_total(desc.links)),
            ("device_link", device_link_total(desc.links)),
        ):
            if key in desc.data and total is not None:
                assert total == pytest.approx(desc.data[key]["bandwidth_gbps"]), (desc, key)
                checked += 1
    assert checked >= 10


def test_a_format_1_link_stands_for_one_link_carrying_half_its_total_each_way() -> None:
    l4 = LIB.get("nvidia.l4")
    assert "links" not in l4.data
    [host] = l4.links
    assert host == Link("host", "pcie4-x16", 1, 32.0, derived_from="host_link")
    assert l4.host_bandwidth_per_direction() == 32.0
    assert "half of host_link 64" in host.describe()


def test_usable_and_physical_memory(tmp_path: Path) -> None:
    h100 = LIB.get("nvidia.h100-sxm")
    assert h100.memory_bytes == 80 * 2**30
    assert h100.usable_memory_bytes is None  # no vendor figure: not guessed
    (tmp_path / "x1.yaml").write_text(GOOD, encoding="utf-8")
    desc = DeviceLibrary([SearchEntry(tmp_path, "user")], use_cache=False).get("acme.x1")
    assert desc.memory_bytes == 1000 and desc.usable_memory_bytes == 990
    level = desc.memory_level("global")
    assert level is not None and (level.size_bytes, level.usable_bytes) == (1000, 990)
    assert level.remote_bandwidth_gbps == 50


# -- the paths of copies ------------------------------------------------------------------------


def test_transfer_paths_between_host_and_devices() -> None:
    h100, gcd, cpu = (
        LIB.get(t) for t in ("nvidia.h100-sxm", "amd.mi250x-gcd", "generic.x86-64-v4")
    )
    to_gpu = transfer_path(None, h100)
    assert isinstance(to_gpu, TransferPath) and to_gpu.one_way_gbps == 64.0
    assert to_gpu.seconds(64 * 10**9) == pytest.approx(1.0)  # one way: 64 GB/s, not 128
    assert transfer_path(cpu, h100) == to_gpu  # a CPU's memory is host memory
    back = transfer_path(h100, None)
    assert back is not None and back.destination == "host" and back.one_way_gbps == 64.0
    assert transfer_path(h100, h100) == TransferPath("nvidia.h100-sxm", "nvidia.h100-sxm")
    across = transfer_path(gcd, h100)  # no link between them: through host memory
    assert across is not None and len(across.hops) == 2
    assert across.one_way_gbps == 32.0
    assert across.seconds(96 * 10**9) == pytest.approx(96 / 32 + 96 / 64)
    assert "through host memory" in across.describe()
    # Trainium2's description gives no host link: the path is not known.
    assert transfer_path(None, LIB.get("aws.trainium2")) is None


# -- the split ----------------------------------------------------------------------------------

SLOW = """\
format_version: 2
device_type: acme.h100-slow-link
name: An H100 SXM behind a PCIe 3.0 x4 link
extends: nvidia.h100-sxm
links:
  - {kind: host, interface: pcie3-x4, count: 1, per_direction_gbps: 4}
"""

DIES = {
    "die-a.yaml": """\
format_version: 2
device_type: acme.die-a
extends: nvidia.h100-sxm
links:
  - {kind: host, interface: pcie5-x16, count: 1, per_direction_gbps: 64}
  - {kind: peer, peer: in_package, peer_device_type: acme.die-b, interface: acme-fabric,
     count: 4, per_direction_gbps: 100}
""",
    "die-b.yaml": """\
format_version: 2
device_type: acme.die-b
extends: nvidia.h100-sxm
links:
  - {kind: host, interface: pcie5-x16, count: 1, per_direction_gbps: 64}
  - {kind: peer, peer: in_package, peer_device_type: acme.die-a, interface: acme-fabric,
     count: 4, per_direction_gbps: 100}
""",
    "slow.yaml": SLOW,
}


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Descriptions of the user's own (PRISM_HARDWARE_PATH) that change only the links."""
    lib = tmp_path / "acme"
    lib.mkdir()
    for name, text in DIES.items():
        (lib / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("PRISM_HARDWARE_PATH", str(lib))
    prism.hardware.reload_devices()
    yield
    monkeypatch.delenv("PRISM_HARDWARE_PATH")
    prism.hardware.reload_devices()


def moved(*arrays: np.ndarray) -> int:
    return sum(a.nbytes for a in arrays)


def test_a_parts_transfer_is_modelled_one_way_over_the_host_link() -> None:
    a, b = np.ones((1000, 64)), np.ones((64, 32))
    _, record = prism.pipelines.split(
        "matmul",
        a,
        b,
        targets=["numpy", "nvidia.h100-sxm"],
        ratio=[1, 3],
        simulate=True,
        return_record=True,
    )
    cpu, gpu = record.parts
    assert cpu.transfer_s is None  # the host's own part moves nothing
    rows = gpu.stop - gpu.start
    nbytes = moved(a[:rows], b, np.ones((rows, 32)))
    # One way at a time at 64 GB/s: the both-ways 128 would give half this.
    assert gpu.transfer_s == pytest.approx(nbytes / 64e9, rel=1e-12)
    assert gpu.transfer == (
        "host -> nvidia.h100-sxm over the pcie5-x16 host link (64 GB/s each way, 128 both ways)"
    )
    text = record.describe()
    assert "transfer ~" in text and "modelled (host -> nvidia.h100-sxm" in text
    assert gpu.as_dict()["transfer_s"] == gpu.transfer_s


def test_auto_gives_a_device_behind_a_slower_link_a_smaller_share(acme: None) -> None:
    # The same GPU, its inherited host_link (128 GB/s) unchanged: only `links` differs, and it
    # is the truth. Before the model read the links, both got the same share.
    a, b = np.ones((8192, 256)), np.ones((256, 256))
    shares = {}
    for gpu in ("nvidia.h100-sxm", "acme.h100-slow-link"):
        _, record = prism.pipelines.split(
            "matmul",
            a,
            b,
            targets=["numpy", gpu],
            ratio="auto",
            simulate=True,
            return_record=True,
        )
        assert record.ratio_source == "modelled"
        shares[gpu] = record.parts[1].ratio
    assert shares["acme.h100-slow-link"] < shares["nvidia.h100-sxm"]
    slow = prism.hardware.get_device("acme.h100-slow-link")
    assert slow.data["host_link"]["bandwidth_gbps"] == 128  # inherited, and not what counts
    assert slow.host_bandwidth_per_direction() == 4.0
    prediction = PerformanceModel().predict(
        "add", ((10**6,), (10**6,)), "float32", slow, on_device=False
    )
    assert prediction.transfer_s == pytest.approx(3 * 4 * 10**6 / 4e9, rel=1e-12)


class OnDevice(np.ndarray):
    """A NumPy array that says, through the DLPack protocol, that it is in CUDA memory: what a
    device array tells Prism, on a machine without one."""

    def __dlpack_device__(self) -> tuple[int, int]:  # type: ignore[override]
        return (2, 0)  # kDLCUDA, device 0


def test_data_on_a_die_goes_to_its_sibling_over_the_in_package_link(acme: None) -> None:
    a = np.ones((4096, 256)).view(OnDevice)
    b = np.ones((256, 256)).view(OnDevice)
    with prism.device("acme.die-a", simulate=True):
        out, record = prism.pipelines.split(
            "matmul",
            a,
            b,
            targets=["acme.die-b", "nvidia.h100-sxm", "cpu"],
            ratio="auto",
            simulate=True,
            return_record=True,
        )
    np.testing.assert_array_equal(np.asarray(out), np.asarray(a) @ np.asarray(b))
    sibling, other, cpu = record.parts
    assert sibling.transfer is not None and "links in the package" in sibling.transfer
    assert other.transfer is not None and "through host memory" in other.transfer
    assert cpu.transfer is not None and cpu.transfer.startswith("acme.die-a -> host over")
    rows = sibling.stop - sibling.start
    nbytes = moved(np.ones((rows, 256)), np.ones((256, 256)), np.ones((rows, 256)))
    assert sibling.transfer_s == pytest.approx(nbytes / 400e9, rel=1e-12)  # 4 x 100 each way
    # The same compute on either GPU: the sibling, 400 GB/s away against 32 through the host
    # (64 out, then 64 in), takes the larger share.
    assert record.ratio_source == "modelled"
    assert sibling.ratio > other.ratio


def test_arrays_in_host_memory_start_on_the_host_under_a_device_scope(acme: None) -> None:
    a, b = np.ones((512, 64)), np.ones((64, 64))
    with prism.device("acme.die-a", simulate=True):
        _, record = prism.pipelines.split(
            "matmul", a, b, targets=["acme.die-b"], simulate=True, return_record=True
        )
    [part] = record.parts
    assert part.transfer is not None and part.transfer.startswith("host -> acme.die-b")


# -- figures too large to compute with --------------------------------------------------------


def test_figures_too_large_to_compute_with_are_refused_at_their_lines() -> None:
    """1024 links of 1e306 GB/s each way overflow to inf, and a copy over them would cost 0 s:
    every figure has a bound that keeps what Prism computes from it finite."""
    text = (
        "format_version: 2\ndevice_type: acme.z\n"
        "peak_tflops: {fp32: 1.0e+300}\n"  # 3
        "host_link: {bandwidth_gbps: 1.7e+308}\n"  # 4
        "links:\n"
        "  - {kind: host, interface: pcie5-x16, count: 1024, per_direction_gbps: 1.0e+306}\n"  # 6
    )
    says = "is out of range; expected a number greater than 0 and at most 1000000000000"
    assert problems_of(text) == [
        f"d.yaml:3:21: $.peak_tflops.fp32: the number 1e+300 {says}",
        f"d.yaml:4:29: $.host_link.bandwidth_gbps: the number 1.7e+308 {says}",
        f"d.yaml:6:73: $.links[0].per_direction_gbps: the number 1e+306 {says}",
    ]


def test_no_link_computation_overflows_to_inf() -> None:
    """Links made in code are not validated: what overflows is not a bandwidth (``None``: not
    published), so no copy is costed at 0 s over it."""
    huge = Link("host", "pcie5-x16", 1024, 1e306)
    assert huge.one_way_gbps is None and huge.total_gbps is None
    big = Link("host", "pcie5-x16", 1, 1e308)  # finite alone, inf twice over
    assert big.one_way_gbps == 1e308 and big.total_gbps is None
    links = (big, Link("host", "pcie4-x16", 1, 1e308))
    assert host_link_total(links) is None
    desc = prism.hardware.DeviceDescription(
        "acme.z",
        {"device_type": "acme.z", "kind": "gpu", "links": [huge.as_dict(), links[1].as_dict()]},
    )
    assert desc.host_bandwidth_per_direction() == 1e308
    two = prism.hardware.DeviceDescription(
        "acme.z", {"device_type": "acme.z", "kind": "gpu", "links": [x.as_dict() for x in links]}
    )
    assert two.host_bandwidth_per_direction() is None
    assert transfer_path(None, two) is None  # not costed, rather than 0 s
    path = transfer_path(None, desc)
    assert path is not None and path.seconds(10**9) > 0
