"""Facts of the shipped device library: generations, FP8 variants, what software sees of
multi-die packages, and the features and flags each file must declare rather than describe.

These tests read the real files in ``hardware/`` through the real library; the mechanics they
rely on (``succeeds``, ``partitions``, detection) are tested on their own in test_library.py,
test_schema.py and test_host.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from prism_core import DeviceDescription, DeviceLibrary, SearchEntry

from .conftest import HARDWARE


def shipped() -> DeviceLibrary:
    """The shipped library alone (no plugin directories, no cache), also at collection time."""
    return DeviceLibrary([SearchEntry(HARDWARE, "builtin")], use_cache=False)


LIB = shipped()


@pytest.fixture(scope="module")
def lib() -> DeviceLibrary:
    assert LIB.problems == []
    return LIB


# -- generations (issue 7, item 23) -----------------------------------------------------------

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
